/* The cover policy (policy.h): hold as many VMs as a burst uses up before
 * refills catch up, at a high quantile, for traffic that comes in batches.
 *
 * Why: when requests come in batches, the rate a Poisson model plans for
 * (follow, marginal) is the mean's, and a batch finds the pool short by
 * all it takes faster than the refills bring. A request hits when the
 * pool held, as its burst began, at least its deficit: the arrivals since
 * the burst began less the VMs the refills made meanwhile (workers per
 * mean making time), the Lindley recursion D = max(0, D' - dt x workers /
 * make) + 1. Raising the target once a burst has begun brings no VM
 * sooner than the refills already do, so what counts is what the pool
 * holds between bursts: the q-quantile of the deficits requests met (per
 * request, as a hit ratio is). Old deficits fade with a half-life, so the
 * pool follows the traffic's busy and quiet hours: that is where it holds
 * less than a fixed pool, which must be sized for the busiest. On batches
 * whose rate never changes (a stationary compound Poisson process) it
 * can only match the fixed pool: no policy that does not know when the
 * next batch comes can hold less between batches. */
#include "policy.h"

#include <math.h>
#include <string.h>

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

void policy__cover_arrival(struct policy_view *v, double t)
{
	struct policy_cover *c = &v->cover;
	double d, inc;
	unsigned int k;

	if (!(v->make_mean > 0))
		return;
	d = deficit_at(v, t) + 1;
	c->last_t = t;
	c->last_d = d;
	inc = exp2((t - c->t0) / c->halflife_s);
	if (inc > 1e200) { /* rescale before the weights overflow */
		for (k = 0; k < POLICY_COVER_BINS; k++)
			c->w[k] /= inc;
		c->total /= inc;
		c->t0 = t;
		inc = 1;
	}
	k = (unsigned int)fmin(ceil(d - 1e-9), POLICY_COVER_BINS - 1);
	c->w[k] += inc;
	c->total += inc;
}

double policy__cover_target(const struct policy_params *pp,
			    struct policy_view *v, double t)
{
	const struct policy_cover *c = &v->cover;
	double cum = 0;

	(void)pp;
	(void)t;
	if (!(v->make_mean > 0) || !(c->total > 0))
		return -1;
	for (unsigned int k = 0; k < POLICY_COVER_BINS; k++) {
		cum += c->w[k];
		if (cum >= c->q * c->total * (1 - 1e-12))
			return k;
	}
	return POLICY_COVER_BINS - 1;
}
