/* The warm pool's policies (policy.h): their names, decayed arrival
 * counts, the follow policy's need and the marginal policy's rate and
 * target. */
#include "policy.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static double follow_target(const struct policy_params *pp,
			    struct policy_view *v, double t);
static double marginal_target(const struct policy_params *pp,
			      struct policy_view *v, double t);
static int follow_check(const struct policy_params *pp, char *why,
			size_t len);
static int marginal_check(const struct policy_params *pp, char *why,
			  size_t len);
static int cover_check(const struct policy_params *pp, char *why, size_t len);

/* One row per policy: its name, its target (NULL: a set one), its checks
 * (NULL: none beyond the half-life), whether it has a fast decay and
 * what of the making times it reads (POLICY_READS_*). */
static const struct policy_row {
	const char *name;
	double (*target)(const struct policy_params *pp,
			 struct policy_view *v, double t);
	int (*check)(const struct policy_params *pp, char *why, size_t len);
	bool fast;
	unsigned int reads;
} rows[POOL_POLICIES] = {
	[POOL_FIXED] = { "fixed", NULL, NULL, false, 0 },
	[POOL_FOLLOW] = { "follow", follow_target, follow_check, false,
			  POLICY_READS_MAKE_AVG },
	[POOL_MARGINAL] = { "marginal", marginal_target, marginal_check, true,
			    POLICY_READS_MAKE_MOMENTS },
	[POOL_COVER] = { "cover", policy__cover_target, cover_check, false,
			 POLICY_READS_MAKE_MOMENTS },
};

const char *policy__name(enum pool_policy p)
{
	return (unsigned int)p < POOL_POLICIES ? rows[p].name : "?";
}

int policy__parse(const char *name, enum pool_policy *out)
{
	for (unsigned int i = 0; name && i < POOL_POLICIES; i++) {
		if (!strcmp(name, rows[i].name)) {
			*out = (enum pool_policy)i;
			return 0;
		}
	}
	return -EINVAL;
}

void policy__defaults(struct policy_params *pp)
{
	*pp = (struct policy_params){
		.halflife_s = 10, .headroom = 0.5, .miss_cost_s = 60,
		.burst_halflife_s = 3, .burst_z = 3, .peak_halflife_s = 0,
		.cover_q = 0.99, .cover_halflife_s = 600,
	};
}

/* x within [lo, hi], NaN never */
static bool within(double x, double lo, double hi)
{
	return x >= lo && x <= hi;
}

static int refuse(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int refuse(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int follow_check(const struct policy_params *pp, char *why,
			size_t len)
{
	if (!within(pp->headroom, 0, 100))
		return refuse(why, len, "headroom %g (0 to 100)",
			      pp->headroom);
	return 0;
}

static int marginal_check(const struct policy_params *pp, char *why,
			  size_t len)
{
	if (!(pp->miss_cost_s > 0 && pp->miss_cost_s <= 86400))
		return refuse(why, len, "miss cost %g s (above 0, at most a "
			      "day)", pp->miss_cost_s);
	if (!within(pp->burst_halflife_s, 0, pp->halflife_s))
		return refuse(why, len, "burst half-life %g s (0, or at most "
			      "the half-life %g s)", pp->burst_halflife_s,
			      pp->halflife_s);
	if (!(pp->burst_z >= 0 && pp->burst_z < 1e6))
		return refuse(why, len, "burst threshold %g (at least 0)",
			      pp->burst_z);
	if (!within(pp->peak_halflife_s, 0, 86400))
		return refuse(why, len, "peak half-life %g s (0, or at most a "
			      "day)", pp->peak_halflife_s);
	return 0;
}

static int cover_check(const struct policy_params *pp, char *why, size_t len)
{
	if (!(pp->cover_q >= 0.5 && pp->cover_q <= 0.99999))
		return refuse(why, len, "cover quantile %g (0.5 to 0.99999)",
			      pp->cover_q);
	if (!(pp->cover_halflife_s > 0 && pp->cover_halflife_s <= 86400 * 30))
		return refuse(why, len, "cover half-life %g s (above 0, at "
			      "most 30 days)", pp->cover_halflife_s);
	return 0;
}

int policy__check(enum pool_policy p, const struct policy_params *pp,
		  char *why, size_t len)
{
	if ((unsigned int)p >= POOL_POLICIES)
		return refuse(why, len, "unknown policy %d", (int)p);
	if (!(pp->halflife_s > 0 && pp->halflife_s <= 86400))
		return refuse(why, len, "half-life %g s (above 0, at most a "
			      "day)", pp->halflife_s);
	return rows[p].check ? rows[p].check(pp, why, len) : 0;
}

void policy__start(enum pool_policy p, const struct policy_params *pp,
		   struct policy_view *v)
{
	v->slow = (struct policy_decay){ .halflife_s = pp->halflife_s };
	v->fast = (struct policy_decay){
		.halflife_s = rows[p].fast ? pp->burst_halflife_s : 0,
	};
	v->peak = (struct policy_peak){ 0 };
	v->arrived = false;
	v->cover.halflife_s = 0;
	if (p == POOL_COVER)
		policy__cover_start(pp, &v->cover);
}

void policy__arrival(struct policy_view *v, double t)
{
	if (v->arrived && t < v->slow.at)
		t = v->slow.at;
	policy__decay_add(&v->slow, t);
	if (v->fast.halflife_s)
		policy__decay_add(&v->fast, t);
	if (v->cover.halflife_s)
		policy__cover_arrival(v, t);
	v->arrived = true;
}

unsigned int policy__reads(enum pool_policy p)
{
	if ((unsigned int)p >= POOL_POLICIES)
		return 0;
	return rows[p].reads | (rows[p].target ? POLICY_SETS_TARGET : 0u);
}

double policy__target(enum pool_policy p, const struct policy_params *pp,
		      struct policy_view *v, double t)
{
	double need;

	if ((unsigned int)p >= POOL_POLICIES || !rows[p].target ||
	    !v->arrived)
		return -1;
	need = rows[p].target(pp, v, t);
	return need < 0 ? -1.0 : (double)policy__clamp(need, v->min, v->max);
}

/* follow: the rate times the making time, once one is known. */
static double follow_target(const struct policy_params *pp,
			    struct policy_view *v, double t)
{
	if (!v->make_avg)
		return -1;
	return policy__follow_need(&v->slow, t, v->make_avg, pp->headroom);
}

/* marginal: its arithmetic below, once a making time is known. */
static double marginal_target(const struct policy_params *pp,
			      struct policy_view *v, double t)
{
	struct policy_marginal m = {
		.miss_cost_s = pp->miss_cost_s, .halflife_s = pp->halflife_s,
		.burst_halflife_s = pp->burst_halflife_s,
		.burst_z = pp->burst_z, .peak_halflife_s = pp->peak_halflife_s,
	};

	if (!v->make_mean)
		return -1;
	return policy__marginal_target(
		policy__marginal_rate(&m, &v->slow, &v->fast, &v->peak, t),
		v->make_mean, v->make_cs2, v->workers, v->max,
		v->wait_on_empty, m.miss_cost_s);
}

double policy__decay_count(const struct policy_decay *d, double t)
{
	return d->count * exp2(-(t - d->at) / d->halflife_s);
}

void policy__decay_add(struct policy_decay *d, double t)
{
	d->count = policy__decay_count(d, t) + 1;
	d->at = t;
}

double policy__decay_rate(const struct policy_decay *d, double t)
{
	return policy__decay_count(d, t) * M_LN2 / d->halflife_s;
}

double policy__follow_need(const struct policy_decay *slow, double t,
			   double make_s, double headroom)
{
	if (policy__decay_count(slow, t) < 0.5)
		return 0;
	return ceil(policy__decay_rate(slow, t) * make_s * (1 + headroom));
}

unsigned int policy__clamp(double need, unsigned int min, unsigned int max)
{
	unsigned int t = need >= max ? max : (unsigned int)need;

	return t < min ? min : t;
}

/* The slow or the fast rate (policy.h). */
static double burst_rate(const struct policy_marginal *m,
			 const struct policy_decay *slow,
			 const struct policy_decay *fast, double t)
{
	double rs = policy__decay_rate(slow, t), rf, noise;

	if (!m->burst_halflife_s)
		return rs;
	rf = policy__decay_rate(fast, t);
	noise = sqrt(rs * M_LN2 / (2 * m->burst_halflife_s));
	/* a burst's end: the fast count has emptied far below the slow */
	if (rf < rs - m->burst_z * noise)
		return rf;
	/* one arrival after a quiet spell is no burst, though it lifts the
	 * fast rate above a low slow one: ask for more than two */
	if (policy__decay_count(fast, t) <= 2)
		return rs;
	return rf > rs + m->burst_z * noise ? rf : rs;
}

/* Clustered arrivals (bursts of tens per second parted by quiet spells
 * of seconds to minutes, as in real inference traces) break the Poisson
 * assumption twice: a burst's first arrivals come faster than any VM is
 * made, so they hit only what the pool still held, and once the decayed
 * counts have emptied in the quiet spell it holds nothing. The peak
 * remembers the burst's rate, decaying, so that the VMs it was worth
 * stay held through a short spell and leave one by one as the spell
 * grows (the next burst ever less likely soon); the marginal arithmetic
 * still decides how many that rate is worth, so at a low miss cost the
 * pool still empties. A steady stream never falls far below its own
 * peak, so it changes little there. */
double policy__marginal_rate(const struct policy_marginal *m,
			     const struct policy_decay *slow,
			     const struct policy_decay *fast,
			     struct policy_peak *peak, double t)
{
	double r = burst_rate(m, slow, fast, t), kept;

	if (!m->peak_halflife_s)
		return r;
	/* the pool's threads may see times a little out of order */
	kept = peak->rate * exp2(-fmax(t - peak->at, 0) / m->peak_halflife_s);
	if (r < kept)
		return kept;
	peak->rate = r;
	peak->at = t;
	return r;
}

/* The largest n up to max whose every step from 0 is worth its idle
 * time (policy.h). The chain of VMs missing from the pool has
 * unnormalised weights w_k, w_0 = 1, w_k / w_(k-1) = ratio(k): a / k up
 * to the workers c; above them M/M/c's geometric tail rho = a / c
 * becomes rho^(2 / (1 + cs2)), the heavy-traffic (Kingman) scaling of a
 * queue's tail with the squared CV cs2 of the service times: exact for
 * exponential makings (cs2 = 1), thinner for the steadier ones hosts
 * measure.
 *
 * Loss system (misses make their own VMs), k in [0, n]: P_miss(n) = b_n =
 * w_n / sum w and E[held](n) = n - e_n with e_n = E[k]; adding state n
 * gives Erlang B's recursion b_n = r b_(n-1) / (1 + r b_(n-1)), r =
 * ratio(n), and e_n = e_(n-1) (1 - b_n) + n b_n; b_0 = 1, e_0 = 0.
 *
 * Delay system (wait_on_empty), k >= 0: P_wait(n) = P(k >= n), so a step
 * to n saves lambda w_(n-1) / W and idles sum_(k<n) w_k / W more; their
 * ratio is lambda h_n, h_n = w_(n-1) / sum_(k<n) w_k, h_1 = 1, h_(n+1) =
 * g / (1 + g) with g = h_n ratio(n). W cancels, so a pool whose refills
 * cannot keep up (W infinite) simply climbs to max. */
unsigned int policy__marginal_target(double lambda, double make_mean,
				     double make_cs2, unsigned int workers,
				     unsigned int max, bool wait_on_empty,
				     double miss_cost_s)
{
	double a = lambda * make_mean;
	unsigned int n, c = workers;
	double tail = pow(a / c, 2 / (1 + make_cs2));
	double b = 1, e = 0, h = 1;

	for (n = 1; n <= max; n++) {
		double saved, idled;

		if (wait_on_empty) {
			if (n > 1) {
				double g = h * (n - 1 <= c ? a / (n - 1)
							   : tail);

				h = g / (1 + g);
			}
			saved = lambda * h;
			idled = 1;
		} else {
			double r = n <= c ? a / n : tail;
			double bn = r * b / (1 + r * b);
			double en = e * (1 - bn) + n * bn;

			saved = lambda * (b - bn);
			idled = 1 - en + e;
			b = bn;
			e = en;
		}
		if (saved * miss_cost_s < idled)
			break;
	}
	return n - 1;
}

void policy__moments(const double *s, size_t n, double *mean, double *cs2)
{
	double sum = 0, sq = 0;

	for (size_t i = 0; i < n; i++)
		sum += s[i];
	*mean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		sq += (s[i] - *mean) * (s[i] - *mean);
	*cs2 = sq / (double)n / (*mean * *mean);
}
