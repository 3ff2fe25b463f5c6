/* The warm-pool simulator (poolsim.h): a binary heap of timed events, the
 * pool's counters, and the five policies' targets. */
#include "poolsim.h"

#include "err.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* pool.c's refill threads look at a following target this often. */
#define TICKS_PER_S 10
/* Weight of the newest making time in its moving average (pool.c). */
#define MAKE_AVG_WEIGHT 0.2
/* A histogram of more bins than this is refused (memory, not time). */
#define HYBRID_MAX_BINS 10000000

/* Kinds in their order among events at the same time; arrivals come
 * from the sorted array, not the heap. */
enum ev_kind { EV_MADE, EV_DONE, EV_ARRIVAL, EV_TIMER };

struct event {
	double t;
	double dur;        /* EV_MADE: its making; EV_DONE: drawn latency */
	enum ev_kind kind;
	bool miss;         /* EV_DONE: the request made its own VM */
	uint64_t seq;      /* FIFO among equal times and kinds */
};

struct heap {
	struct event *e;
	size_t n, cap;
};

/* HYBRID's idle-time histogram: counts and a Fenwick tree over them, so a
 * percentile costs O(log bins), not a scan. */
struct hist {
	unsigned int nbins;
	uint32_t *count;
	uint32_t *tree; /* 1-based */
	uint64_t in, oob;
	double sumsq; /* sum of squared counts, for the CV */
	double win_start, win_end; /* the window after the last arrival */
};

struct sim {
	const struct arrivals *a;
	const struct poolsim_costs *c;
	const struct poolsim_config *cfg;
	struct poolsim_result *out;
	struct stats_rng rng_make, rng_lat, rng_service;
	struct heap q;
	uint64_t seq;
	double now, end, idle_at;
	unsigned int held, making, serving, target;
	size_t *waiting; /* FIFO of waiting requests: [wait_head, wait_tail) */
	size_t wait_head, wait_tail;
	double timer_at; /* the earliest policy timer queued, or INFINITY */

	/* the policies' state */
	bool arrived;
	double last; /* the last arrival */
	struct policy_decay slow, fast;
	double make_avg; /* FOLLOW: moving average of making times, 0 unknown */
	double make_mean, make_cs2; /* MARGINAL: of make_s, squared CV */
	struct hist hist;
};

static const char *const policy_names[POOLSIM_POLICIES] = {
	[POOLSIM_FIXED] = "fixed",
	[POOLSIM_TTL] = "ttl",
	[POOLSIM_HYBRID] = "hybrid",
	[POOLSIM_FOLLOW] = "follow",
	[POOLSIM_MARGINAL] = "marginal",
};

const char *poolsim__policy_name(enum poolsim_policy p)
{
	return (unsigned int)p < POOLSIM_POLICIES ? policy_names[p] : "?";
}

int poolsim__policy_parse(const char *name, enum poolsim_policy *out)
{
	for (unsigned int i = 0; i < POOLSIM_POLICIES; i++) {
		if (name && strcmp(name, policy_names[i]) == 0) {
			*out = (enum poolsim_policy)i;
			return 0;
		}
	}
	return err__set(EINVAL, "poolsim: unknown policy '%s' (fixed, ttl, "
			"hybrid, follow or marginal)", name ? name : "");
}

void poolsim__default_params(struct poolsim_params *p)
{
	memset(p, 0, sizeof(*p));
	p->fixed.n = 1;
	p->ttl.n = 1;
	p->ttl.ttl_s = 600;
	/* Shahrad et al.'s defaults */
	p->hybrid.n = 1;
	p->hybrid.bin_s = 60;
	p->hybrid.range_s = 4 * 3600;
	p->hybrid.head_pct = 5;
	p->hybrid.tail_pct = 99;
	p->hybrid.margin = 0.10;
	p->hybrid.cv_min = 2;
	p->hybrid.min_samples = 10;
	p->hybrid.oob_max = 0.5;
	p->hybrid.forecast_margin = 0.15;
	/* `coldstart pool`'s defaults */
	p->follow.size = 4;
	p->follow.halflife_s = 10;
	p->follow.headroom = 0.5;
	p->marginal.miss_cost_s = 60;
	p->marginal.halflife_s = 30;
	p->marginal.burst_halflife_s = 3;
	p->marginal.burst_z = 3;
}

void poolsim__result_free(struct poolsim_result *r)
{
	if (!r)
		return;
	free(r->latency_s);
	memset(r, 0, sizeof(*r));
}

/* ---- checking the inputs ---- */

static bool finite_in(double x, double lo, double hi)
{
	return isfinite(x) && x >= lo && x <= hi;
}

static int check_samples(const char *name, const double *s, size_t n,
			 bool required, bool positive)
{
	if (!n && required)
		return err__set(EINVAL, "poolsim: no %s samples", name);
	if (n && !s)
		return err__set(EINVAL, "poolsim: %s: %zu samples but no array",
				name, n);
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(s[i]) || s[i] < 0 || (positive && s[i] == 0))
			return err__set(EINVAL, "poolsim: %s sample %zu is %g "
					"(finite and %s 0 s)", name, i, s[i],
					positive ? "above" : "at least");
	}
	return 0;
}

static int check_costs(const struct poolsim_costs *c)
{
	int ret;

	if (!c)
		return err__set(EINVAL, "poolsim: no costs");
	if ((ret = check_samples("hit latency", c->hit_s, c->n_hit, true,
				 false)) ||
	    (ret = check_samples("miss latency", c->miss_s, c->n_miss, true,
				 false)) ||
	    (ret = check_samples("making time", c->make_s, c->n_make, true,
				 true)) ||
	    (ret = check_samples("service time", c->service_s, c->n_service,
				 false, false)))
		return ret;
	if (!finite_in(c->vm_mib, 0, HUGE_VAL))
		return err__set(EINVAL, "poolsim: memory per VM %g MiB "
				"(finite, at least 0)", c->vm_mib);
	return 0;
}

static int check_arrivals(const struct arrivals *a)
{
	if (!a || !a->n || !a->t)
		return err__set(EINVAL, "poolsim: no arrivals");
	if (!isfinite(a->span_s))
		return err__set(EINVAL, "poolsim: time line of %g s",
				a->span_s);
	for (size_t i = 0; i < a->n; i++) {
		if (!finite_in(a->t[i], i ? a->t[i - 1] : 0, HUGE_VAL))
			return err__set(EINVAL, "poolsim: arrival %zu at %g s "
					"(finite, from 0 on, ascending)", i,
					a->t[i]);
	}
	return 0;
}

static int check_n(const char *policy, unsigned int n, unsigned int lo,
		   unsigned int max)
{
	if (n < lo || n > max)
		return err__set(EINVAL, "poolsim: %s: %u VMs (%u to the "
				"maximum, %u)", policy, n, lo, max);
	return 0;
}

static int check_hybrid(const struct poolsim_config *cfg)
{
	const struct poolsim_hybrid *h = &cfg->params.hybrid;

	if (!finite_in(h->bin_s, 1e-6, HUGE_VAL) ||
	    !finite_in(h->range_s, h->bin_s, h->bin_s * HYBRID_MAX_BINS))
		return err__set(EINVAL, "poolsim: hybrid: bins of %g s up to "
				"%g s (bins above 0, the range at least one "
				"bin and at most %u)", h->bin_s, h->range_s,
				HYBRID_MAX_BINS);
	if (!finite_in(h->head_pct, 0, 100) ||
	    !finite_in(h->tail_pct, h->head_pct, 100) ||
	    h->tail_pct == h->head_pct)
		return err__set(EINVAL, "poolsim: hybrid: percentiles %g and "
				"%g (0 <= head < tail <= 100)", h->head_pct,
				h->tail_pct);
	if (!finite_in(h->margin, 0, 0.999) ||
	    !finite_in(h->forecast_margin, 0, 0.999) ||
	    !finite_in(h->oob_max, 0, 1) || !finite_in(h->cv_min, 0, HUGE_VAL))
		return err__set(EINVAL, "poolsim: hybrid: margins %g and %g "
				"([0, 1)), OOB share %g ([0, 1]), CV %g (at "
				"least 0)", h->margin, h->forecast_margin,
				h->oob_max, h->cv_min);
	return check_n("hybrid", h->n, 1, cfg->max);
}

static int check_follow(const struct poolsim_config *cfg)
{
	const struct poolsim_follow *f = &cfg->params.follow;

	if (f->min > cfg->max || f->size < f->min || f->size > cfg->max)
		return err__set(EINVAL, "poolsim: follow: size %u, minimum %u "
				"(min <= size <= max, %u)", f->size, f->min,
				cfg->max);
	if (!finite_in(f->halflife_s, 1e-9, 86400))
		return err__set(EINVAL, "poolsim: follow: half-life %g s "
				"(above 0, at most a day)", f->halflife_s);
	if (!finite_in(f->headroom, 0, 100))
		return err__set(EINVAL, "poolsim: follow: headroom %g (0 to "
				"100)", f->headroom);
	return 0;
}

static int check_marginal(const struct poolsim_config *cfg)
{
	const struct policy_marginal *m = &cfg->params.marginal;

	if (!finite_in(m->miss_cost_s, 1e-9, HUGE_VAL))
		return err__set(EINVAL, "poolsim: marginal: miss cost %g s "
				"(finite, above 0)", m->miss_cost_s);
	if (!finite_in(m->halflife_s, 1e-9, 86400) ||
	    !finite_in(m->burst_halflife_s, 0, m->halflife_s))
		return err__set(EINVAL, "poolsim: marginal: half-lives %g s "
				"and %g s (above 0, at most a day; the burst's "
				"0 or at most the first)", m->halflife_s,
				m->burst_halflife_s);
	if (!finite_in(m->burst_z, 0, HUGE_VAL))
		return err__set(EINVAL, "poolsim: marginal: burst threshold "
				"%g (finite, at least 0)", m->burst_z);
	return 0;
}

static int check_config(const struct poolsim_config *cfg)
{
	const struct poolsim_params *p = &cfg->params;

	if (cfg->workers < 1 || cfg->workers > POOLSIM_MAX_WORKERS)
		return err__set(EINVAL, "poolsim: %u refill workers (1 to %u)",
				cfg->workers, POOLSIM_MAX_WORKERS);
	if (cfg->max < 1 || cfg->max > POOLSIM_MAX_VMS)
		return err__set(EINVAL, "poolsim: maximum %u VMs (1 to %u)",
				cfg->max, POOLSIM_MAX_VMS);
	switch (cfg->policy) {
	case POOLSIM_FIXED:
		return check_n("fixed", p->fixed.n, 0, cfg->max);
	case POOLSIM_TTL:
		if (!finite_in(p->ttl.ttl_s, 1e-9, HUGE_VAL))
			return err__set(EINVAL, "poolsim: ttl: keep-alive %g s "
					"(finite, above 0)", p->ttl.ttl_s);
		return check_n("ttl", p->ttl.n, 1, cfg->max);
	case POOLSIM_HYBRID:
		return check_hybrid(cfg);
	case POOLSIM_FOLLOW:
		return check_follow(cfg);
	case POOLSIM_MARGINAL:
		return check_marginal(cfg);
	}
	return err__set(EINVAL, "poolsim: unknown policy %d", (int)cfg->policy);
}

/* ---- the event queue ---- */

static bool before(const struct event *x, const struct event *y)
{
	if (x->t != y->t)
		return x->t < y->t;
	if (x->kind != y->kind)
		return x->kind < y->kind;
	return x->seq < y->seq;
}

static int push(struct sim *s, struct event ev)
{
	struct heap *h = &s->q;
	size_t i;

	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 64;
		struct event *e = realloc(h->e, cap * sizeof(*e));

		if (!e)
			return err__set(ENOMEM, "poolsim: no memory for %zu "
					"events", cap);
		h->e = e;
		h->cap = cap;
	}
	ev.seq = s->seq++;
	for (i = h->n++; i && before(&ev, &h->e[(i - 1) / 2]); i = (i - 1) / 2)
		h->e[i] = h->e[(i - 1) / 2];
	h->e[i] = ev;
	return 0;
}

static struct event pop(struct heap *h)
{
	struct event top = h->e[0], last = h->e[--h->n];
	size_t i = 0, kid;

	while ((kid = 2 * i + 1) < h->n) {
		if (kid + 1 < h->n && before(&h->e[kid + 1], &h->e[kid]))
			kid++;
		if (!before(&h->e[kid], &last))
			break;
		h->e[i] = h->e[kid];
		i = kid;
	}
	if (h->n)
		h->e[i] = last;
	return top;
}

/* ---- draws ---- */

static double draw(struct stats_rng *rng, const double *s, size_t n)
{
	return n ? s[n == 1 ? 0 : stats__rng_below(rng, n)] : 0;
}

/* ---- rate estimates ---- */

static void note_make_time(struct sim *s, double took)
{
	s->make_avg = s->make_avg ? (1 - MAKE_AVG_WEIGHT) * s->make_avg +
					    MAKE_AVG_WEIGHT * took
				  : took;
}

/* ---- HYBRID ---- */

static int hist_init(struct hist *h, const struct poolsim_config *cfg)
{
	h->nbins = (unsigned int)ceil(cfg->params.hybrid.range_s /
				      cfg->params.hybrid.bin_s - 1e-9);
	h->count = calloc(h->nbins, sizeof(*h->count));
	h->tree = calloc((size_t)h->nbins + 1, sizeof(*h->tree));
	if (!h->count || !h->tree)
		return err__set(ENOMEM, "poolsim: hybrid: no memory for %u "
				"bins", h->nbins);
	return 0;
}

static void hist_add(struct hist *h, double idle_s, double bin_s,
		     double range_s)
{
	unsigned int b;

	if (idle_s >= range_s) {
		h->oob++;
		return;
	}
	b = (unsigned int)(idle_s / bin_s);
	if (b >= h->nbins)
		b = h->nbins - 1;
	h->sumsq += 2.0 * h->count[b] + 1;
	h->count[b]++;
	h->in++;
	for (unsigned int i = b + 1; i <= h->nbins; i += i & -i)
		h->tree[i]++;
}

/* The bin holding percentile pct: the first whose cumulative count
 * reaches pct % of the idle times in bounds (at least one). */
static unsigned int hist_bin_at(const struct hist *h, double pct)
{
	double want = ceil(pct / 100 * (double)h->in - 1e-9);
	uint64_t k = want < 1 ? 1 : (uint64_t)want;
	unsigned int pos = 0, step = 1;

	while (step * 2 <= h->nbins)
		step *= 2;
	for (; step; step /= 2) {
		if (pos + step <= h->nbins && h->tree[pos + step] < k) {
			pos += step;
			k -= h->tree[pos];
		}
	}
	return pos < h->nbins ? pos : h->nbins - 1;
}

static double hist_cv(const struct hist *h)
{
	double mean = (double)h->in / h->nbins;
	double var = h->sumsq / h->nbins - mean * mean;

	return mean > 0 ? sqrt(var > 0 ? var : 0) / mean : 0;
}

/* After an arrival: the idle time since the previous one goes into the
 * histogram and the next window is chosen (poolsim.h). */
static void hybrid_arrival(struct sim *s, double t)
{
	const struct poolsim_hybrid *p = &s->cfg->params.hybrid;
	struct hist *h = &s->hist;
	uint64_t total;
	double idle = t - s->last;

	if (s->arrived)
		hist_add(h, idle, p->bin_s, p->range_s);
	total = h->in + h->oob;
	if (total && total >= p->min_samples &&
	    (double)h->oob > p->oob_max * (double)total) {
		h->win_start = (1 - p->forecast_margin) * idle;
		h->win_end = (1 + p->forecast_margin) * idle;
		s->out->hybrid.forecast++;
	} else if (total < p->min_samples || !h->in ||
		   hist_cv(h) < p->cv_min) {
		h->win_start = 0;
		h->win_end = p->range_s;
		s->out->hybrid.standard++;
	} else {
		double head = hist_bin_at(h, p->head_pct) * p->bin_s;
		double tail = (hist_bin_at(h, p->tail_pct) + 1) * p->bin_s;

		h->win_start = (1 - p->margin) * head;
		h->win_end = (1 + p->margin) * tail;
		s->out->hybrid.histogram++;
	}
	s->out->hybrid.oob = h->oob;
}

/* ---- MARGINAL ---- */

static unsigned int marginal_target(const struct sim *s, double t)
{
	const struct policy_marginal *m = &s->cfg->params.marginal;

	return policy__marginal_target(
		policy__marginal_rate(m, &s->slow, &s->fast, t), s->make_mean,
		s->make_cs2, s->cfg->workers, s->cfg->max,
		s->cfg->wait_on_empty, m->miss_cost_s);
}

/* ---- targets ---- */

/* FOLLOW, as pool_target.c's pool__retarget(): the target is kept until
 * the first arrival and the first making time are known. */
static unsigned int follow_target(const struct sim *s, double t)
{
	const struct poolsim_follow *p = &s->cfg->params.follow;
	double need;

	if (!s->arrived || !s->make_avg)
		return s->target;
	if (policy__decay_count(&s->slow, t) < 0.5)
		need = 0;
	else
		need = ceil(policy__decay_rate(&s->slow, t) * s->make_avg *
			    (1 + p->headroom));
	if (need >= s->cfg->max)
		return s->cfg->max;
	return (unsigned int)need < p->min ? p->min : (unsigned int)need;
}

/* n inside [start, end) after the last arrival, else 0. */
static unsigned int window_target(const struct sim *s, double t,
				  unsigned int n, double start, double end)
{
	return s->arrived && t >= s->last + start && t < s->last + end ? n : 0;
}

static unsigned int policy_target(const struct sim *s, double t)
{
	const struct poolsim_params *p = &s->cfg->params;

	switch (s->cfg->policy) {
	case POOLSIM_FIXED:
		return p->fixed.n;
	case POOLSIM_TTL:
		return window_target(s, t, p->ttl.n, 0, p->ttl.ttl_s);
	case POOLSIM_HYBRID:
		return window_target(s, t, p->hybrid.n, s->hist.win_start,
				     s->hist.win_end);
	case POOLSIM_FOLLOW:
		return follow_target(s, t);
	case POOLSIM_MARGINAL:
		return s->arrived ? marginal_target(s, t) : 0;
	}
	return 0;
}

/* When the target may next change with no event: a window's edge, or
 * the next 100 ms tick while a rate-driven target can still fall. */
static double policy_next(const struct sim *s, double t)
{
	const struct poolsim_params *p = &s->cfg->params;
	double start = 0, end = 0;
	unsigned int lowest = 0; /* a rate-driven target cannot fall below */

	switch (s->cfg->policy) {
	case POOLSIM_FIXED:
		return INFINITY;
	case POOLSIM_TTL:
		end = p->ttl.ttl_s;
		break;
	case POOLSIM_HYBRID:
		start = s->hist.win_start;
		end = s->hist.win_end;
		break;
	case POOLSIM_FOLLOW:
		lowest = p->follow.min;
		/* fall through */
	case POOLSIM_MARGINAL:
		if (!s->arrived || s->target <= lowest)
			return INFINITY;
		return (floor(t * TICKS_PER_S) + 1) / TICKS_PER_S;
	}
	if (!s->arrived || t >= s->last + end)
		return INFINITY;
	return t < s->last + start ? s->last + start : s->last + end;
}

static void policy_arrival(struct sim *s, double t)
{
	switch (s->cfg->policy) {
	case POOLSIM_HYBRID:
		hybrid_arrival(s, t);
		break;
	case POOLSIM_FOLLOW:
	case POOLSIM_MARGINAL:
		policy__decay_add(&s->slow, t);
		if (s->fast.halflife_s)
			policy__decay_add(&s->fast, t);
		break;
	default:
		break;
	}
	s->arrived = true;
	s->last = t;
}

/* ---- the pool ---- */

/* The VMs-held integral up to t (the time line's end at most). */
static void advance(struct sim *s, double t)
{
	double upto = t < s->end ? t : s->end;

	if (upto > s->idle_at) {
		s->out->idle_vm_s += s->held * (upto - s->idle_at);
		s->idle_at = upto;
	}
	s->now = t;
}

static void note_peaks(struct sim *s)
{
	struct poolsim_result *o = s->out;

	if (s->now > s->end)
		return;
	if (s->held > o->peak_held)
		o->peak_held = s->held;
	if (s->held + s->making > o->peak_pool)
		o->peak_pool = s->held + s->making;
	if (s->serving > o->peak_serving)
		o->peak_serving = s->serving;
}

/* Request i has its VM: after `waited` s, plus `drawn` s to its first
 * instruction (a hit's latency, or a miss's, which makes its VM). It
 * runs, and its VM is destroyed when done. */
static int start_request(struct sim *s, size_t i, double drawn, bool miss)
{
	double waited = s->now - s->a->t[i];
	double service = draw(&s->rng_service, s->c->service_s,
			      s->c->n_service);

	s->out->latency_s[i] = waited + drawn;
	s->serving++;
	return push(s, (struct event){ .t = s->now + drawn + service,
				       .dur = drawn, .kind = EV_DONE,
				       .miss = miss });
}

static int miss(struct sim *s, size_t i)
{
	s->out->misses++;
	return start_request(s, i, draw(&s->rng_lat, s->c->miss_s,
					s->c->n_miss), true);
}

/* Request i takes a VM: one held on its arrival (a hit), or one just
 * refilled for it after a wait. */
static int take(struct sim *s, size_t i)
{
	return start_request(s, i, draw(&s->rng_lat, s->c->hit_s,
					s->c->n_hit), false);
}

/* After every event: the target, then reaping, refills, and requests
 * that can no longer wait for a refill; then the policy's next timer. */
static int settle(struct sim *s)
{
	double next;
	int ret;

	s->target = policy_target(s, s->now);
	if (s->target > s->cfg->max)
		s->target = s->cfg->max;
	if (s->held > s->target) {
		s->out->reaped += s->held - s->target;
		s->held = s->target;
	}
	while (s->held + s->making < s->target &&
	       s->making < s->cfg->workers) {
		double d = draw(&s->rng_make, s->c->make_s, s->c->n_make);

		s->making++;
		ret = push(s, (struct event){ .t = s->now + d, .dur = d,
					      .kind = EV_MADE });
		if (ret < 0)
			return ret;
	}
	while (s->wait_head < s->wait_tail && !s->target && !s->making) {
		size_t i = s->waiting[s->wait_head++];

		s->out->wait_s += s->now - s->a->t[i];
		ret = miss(s, i);
		if (ret < 0)
			return ret;
	}
	note_peaks(s);
	next = policy_next(s, s->now);
	if (next < s->timer_at) {
		s->timer_at = next;
		return push(s, (struct event){ .t = next, .kind = EV_TIMER });
	}
	return 0;
}

static int on_arrival(struct sim *s, size_t i)
{
	int ret;

	s->out->requests++;
	policy_arrival(s, s->now);
	if (s->held) {
		s->held--;
		s->out->hits++;
		ret = take(s, i);
		return ret < 0 ? ret : settle(s);
	}
	/* pool.c retargets before deciding whether a refill can come */
	ret = settle(s);
	if (ret < 0)
		return ret;
	if (s->cfg->wait_on_empty && (s->target || s->making)) {
		s->waiting[s->wait_tail++] = i;
		return 0;
	}
	ret = miss(s, i);
	note_peaks(s);
	return ret;
}

static int on_made(struct sim *s, const struct event *ev)
{
	int ret;

	s->making--;
	s->out->makes++;
	if (s->cfg->policy == POOLSIM_FOLLOW)
		note_make_time(s, ev->dur);
	if (s->wait_head < s->wait_tail) {
		size_t i = s->waiting[s->wait_head++];

		s->out->waits++;
		s->out->wait_s += s->now - s->a->t[i];
		ret = take(s, i);
		if (ret < 0)
			return ret;
	} else {
		s->held++;
	}
	return settle(s);
}

static int on_done(struct sim *s, const struct event *ev)
{
	s->serving--;
	/* pool.c learns the making time from a miss's own VM too */
	if (!ev->miss || s->cfg->policy != POOLSIM_FOLLOW)
		return 0;
	note_make_time(s, ev->dur);
	return settle(s);
}

static int step(struct sim *s, size_t *next_arrival)
{
	struct event ev;
	size_t i = *next_arrival;

	if (i < s->a->n &&
	    (!s->q.n || s->a->t[i] < s->q.e[0].t ||
	     (s->a->t[i] == s->q.e[0].t && s->q.e[0].kind > EV_ARRIVAL))) {
		advance(s, s->a->t[i]);
		(*next_arrival)++;
		return on_arrival(s, i);
	}
	ev = pop(&s->q);
	advance(s, ev.t);
	switch (ev.kind) {
	case EV_MADE:
		return on_made(s, &ev);
	case EV_DONE:
		return on_done(s, &ev);
	case EV_TIMER:
		if (ev.t == s->timer_at)
			s->timer_at = INFINITY;
		return settle(s);
	case EV_ARRIVAL:
		break;
	}
	return 0;
}

/* The state at time 0: the first target held, as after pool__start and
 * pool__wait_filled. */
static int sim_init(struct sim *s)
{
	const struct poolsim_config *cfg = s->cfg;
	uint64_t seed = cfg->seed;
	int ret = 0;

	stats__rng_seed(&s->rng_make, stats__splitmix64(&seed));
	stats__rng_seed(&s->rng_lat, stats__splitmix64(&seed));
	stats__rng_seed(&s->rng_service, stats__splitmix64(&seed));
	s->end = s->a->span_s > s->a->t[s->a->n - 1] ? s->a->span_s
						      : s->a->t[s->a->n - 1];
	s->timer_at = INFINITY;
	s->out->duration_s = s->end;
	s->out->latency_s = calloc(s->a->n, sizeof(*s->out->latency_s));
	s->waiting = malloc(s->a->n * sizeof(*s->waiting));
	if (!s->out->latency_s || !s->waiting)
		return err__set(ENOMEM, "poolsim: no memory for %zu requests",
				s->a->n);
	if (cfg->policy == POOLSIM_FIXED)
		s->target = cfg->params.fixed.n;
	if (cfg->policy == POOLSIM_FOLLOW) {
		s->target = cfg->params.follow.size;
		s->slow.halflife_s = cfg->params.follow.halflife_s;
	}
	if (cfg->policy == POOLSIM_MARGINAL) {
		s->slow.halflife_s = cfg->params.marginal.halflife_s;
		s->fast.halflife_s = cfg->params.marginal.burst_halflife_s;
		policy__moments(s->c->make_s, s->c->n_make, &s->make_mean,
			     &s->make_cs2);
	}
	if (cfg->policy == POOLSIM_HYBRID)
		ret = hist_init(&s->hist, cfg);
	s->held = s->target;
	note_peaks(s);
	return ret;
}

static void summarize(struct poolsim_result *o, double vm_mib)
{
	o->peak_mib = o->peak_pool * vm_mib;
	o->hit_ratio = o->requests ? (double)o->hits / (double)o->requests : 0;
}

int poolsim__run(const struct arrivals *a, const struct poolsim_costs *c,
		 const struct poolsim_config *cfg, struct poolsim_result *out)
{
	struct sim s = { .a = a, .c = c, .cfg = cfg, .out = out };
	size_t next = 0;
	int ret;

	if (!out)
		return err__set(EINVAL, "poolsim: no result");
	memset(out, 0, sizeof(*out));
	if (!cfg)
		return err__set(EINVAL, "poolsim: no configuration");
	if ((ret = check_arrivals(a)) || (ret = check_costs(c)) ||
	    (ret = check_config(cfg)))
		return ret;
	ret = sim_init(&s);
	/* past the time line's end only requests still waiting matter */
	while (ret == 0 && (next < a->n || s.q.n) &&
	       (s.wait_head < s.wait_tail ||
		(next < a->n ? a->t[next] : s.q.e[0].t) <= s.end))
		ret = step(&s, &next);
	if (ret == 0)
		advance(&s, s.end);
	if (ret == 0)
		ret = stats__summarize(out->latency_s, a->n, &out->latency);
	if (ret == 0)
		summarize(out, c->vm_mib);
	free(s.q.e);
	free(s.waiting);
	free(s.hist.count);
	free(s.hist.tree);
	if (ret < 0)
		poolsim__result_free(out);
	return ret;
}
