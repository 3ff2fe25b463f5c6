/* The cover policy (policy.h): hold as many VMs as a burst uses up before
 * refills catch up, at a high quantile, for traffic that comes in batches.
 *
 * Why: when requests come in batches, the rate a Poisson model plans for
 * (follow, marginal) is the mean's, and a batch finds the pool short by
 * all it takes faster than the refills bring. A request hits when the
 * pool held, as its burst began, at least its deficit: the arrivals since
 * the burst began less the VMs the refills made meanwhile (workers per
 * mean making time), the Lindley recursion D = max(0, D' - dt x workers /
 * make) + 1; a burst begins with an arrival that finds the deficit
 * drained. Raising the target once a burst has begun brings no VM sooner
 * than the refills already do, so what counts is what the pool holds as
 * bursts begin. That depends on how long the pool has been quiet: a batch
 * in a busy hour lands on the last one's deficit, one after a long lull
 * on nothing. So each request's deficit is filed under the state its
 * burst began in, the quiet time before it in mean making times (below
 * 1, 4, 16, ... 4^6, and above), and the target is the q-quantile of the
 * deficits filed under the present state: inside a burst its own, between
 * bursts the quiet time's so far. Counts are per request (as a hit ratio
 * is), old ones fade with a half-life (the traffic's busy and quiet hours
 * are learnt), and a state seen too rarely for its quantile takes all
 * states' histogram. On batches whose rate never changes (a stationary
 * compound Poisson process) it can only match a fixed pool: no policy
 * that does not know when the next batch comes holds less between
 * batches. */
#include "policy.h"

#include <math.h>
#include <string.h>

/* A state seen less than this many times 1 / (1 - q) (in decayed
 * requests) takes all states' histogram. */
#define COVER_MIN_SEEN 2
#define ALL POLICY_COVER_STATES

void policy__cover_start(const struct policy_params *pp,
			 struct policy_cover *c)
{
	memset(c, 0, sizeof(*c));
	c->halflife_s = pp->cover_halflife_s;
	c->q = pp->cover_q;
}

/* The deficit at t >= the newest arrival: its own, drained since. */
static double deficit_at(const struct policy_view *v, double t)
{
	const struct policy_cover *c = &v->cover;
	double drain = (v->workers ? v->workers : 1) / v->make_mean;

	return fmax(0, c->last_d - fmax(0, t - c->last_t) * drain);
}

/* The state of a quiet time: below 1, 4, 16, ... mean making times. */
static unsigned int state_of(const struct policy_view *v, double quiet)
{
	double x = quiet / v->make_mean;
	unsigned int s = 0;

	for (double edge = 1; s < POLICY_COVER_STATES - 1 && x >= edge;
	     edge *= 4)
		s++;
	return s;
}

static void add(struct policy_cover *c, unsigned int row, unsigned int k,
		double inc)
{
	c->w[row][k] += inc;
	c->total[row] += inc;
}

void policy__cover_arrival(struct policy_view *v, double t)
{
	struct policy_cover *c = &v->cover;
	double d, inc;
	unsigned int k;

	if (!(v->make_mean > 0))
		return;
	d = deficit_at(v, t);
	/* a burst begins: in the state of the quiet time before it */
	if (d <= 0)
		c->burst_state = c->last_t || c->last_d
					 ? state_of(v, t - c->last_t)
					 : POLICY_COVER_STATES - 1;
	d += 1;
	c->last_t = t;
	c->last_d = d;
	inc = exp2((t - c->t0) / c->halflife_s);
	if (inc > 1e200) { /* rescale before the weights overflow */
		for (unsigned int s = 0; s <= ALL; s++) {
			for (k = 0; k < POLICY_COVER_BINS; k++)
				c->w[s][k] /= inc;
			c->total[s] /= inc;
		}
		c->t0 = t;
		inc = 1;
	}
	k = (unsigned int)fmin(ceil(d - 1e-9), POLICY_COVER_BINS - 1);
	add(c, c->burst_state, k, inc);
	add(c, ALL, k, inc);
}

static double quantile(const struct policy_cover *c, unsigned int row)
{
	double cum = 0;

	for (unsigned int k = 0; k < POLICY_COVER_BINS; k++) {
		cum += c->w[row][k];
		if (cum >= c->q * c->total[row] * (1 - 1e-12))
			return k;
	}
	return POLICY_COVER_BINS - 1;
}

double policy__cover_target(const struct policy_params *pp,
			    struct policy_view *v, double t)
{
	const struct policy_cover *c = &v->cover;
	unsigned int s;

	(void)pp;
	if (!(v->make_mean > 0) || !(c->total[ALL] > 0))
		return -1;
	s = deficit_at(v, t) > 0 ? c->burst_state : state_of(v, t - c->last_t);
	if (c->total[s] * exp2(-(t - c->t0) / c->halflife_s) * (1 - c->q) <
	    COVER_MIN_SEEN)
		s = ALL;
	return quantile(c, s);
}
