/* The warm pool's arrival-rate estimates and the target they set. */
#include "pool.h"
#include "pool_int.h"

#include "policy.h"

#include <math.h>
#include <pthread.h>
#include <stddef.h>

static double seconds(uint64_t ns)
{
	return (double)ns / NS;
}

double pool__rate_at(const struct pool *p, uint64_t now)
{
	return p->arrived ? policy__decay_rate(&p->slow, seconds(now)) : 0;
}

/* Arrivals from several threads may come a little out of order: a late
 * one counts at the newest time seen. */
void pool__note_arrival(struct pool *p, uint64_t t)
{
	double s = seconds(t);

	if (p->arrived && s < p->slow.at)
		s = p->slow.at;
	policy__decay_add(&p->slow, s);
	if (p->fast.halflife_s)
		policy__decay_add(&p->fast, s);
	p->arrived = true;
}

/* follow's target (policy.h), or -1 while no making time is known. */
static double follow_need(const struct pool *p, uint64_t now)
{
	if (!p->st.make_s)
		return -1;
	return policy__follow_need(&p->slow, seconds(now), p->st.make_s,
				   p->cfg.headroom);
}

/* marginal's target (pool.h), or -1 while no making time is known. The
 * making times are the refills' kept (their variability matters), else
 * the moving average of requests' own makings with exponential spread. */
static double marginal_need(struct pool *p, uint64_t now)
{
	size_t n = p->make_times_n < MAKE_TIMES_KEPT ? (size_t)p->make_times_n
						      : MAKE_TIMES_KEPT;
	struct policy_marginal m = {
		.miss_cost_s = p->cfg.miss_cost_s,
		.halflife_s = p->cfg.halflife_s,
		.burst_halflife_s = p->cfg.burst_halflife_s,
		.burst_z = p->cfg.burst_z,
		.peak_halflife_s = p->cfg.peak_halflife_s,
	};
	double mean = p->st.make_s, cs2 = 1;

	if (n)
		policy__moments(p->make_times, n, &mean, &cs2);
	if (!mean)
		return -1;
	return policy__marginal_target(
		policy__marginal_rate(&m, &p->slow, &p->fast, &p->peak,
				      seconds(now)),
		mean, cs2, p->cfg.workers, p->cfg.max,
		p->cfg.on_empty == POOL_WAIT, m.miss_cost_s);
}

/* A rate-driven target from the rate and the making times; a fixed
 * target stays where it was set. */
void pool__retarget(struct pool *p, uint64_t now)
{
	double need;
	unsigned int t;

	if (p->cfg.policy == POOL_FIXED || !p->arrived)
		return;
	need = p->cfg.policy == POOL_FOLLOW ? follow_need(p, now)
					    : marginal_need(p, now);
	if (need < 0)
		return;
	t = policy__clamp(need, p->cfg.min, p->cfg.max);
	if (t != p->target) {
		p->target = t;
		pthread_cond_broadcast(&p->wake);
	}
}

