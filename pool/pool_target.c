/* The warm pool's arrival-rate estimates and the target its policy sets
 * from them (policy.h). */
#include "pool.h"
#include "pool_int.h"

#include "policy.h"

#include <pthread.h>
#include <stddef.h>

static double seconds(uint64_t ns)
{
	return (double)ns / NS;
}

double pool__rate_at(const struct pool *p, uint64_t now)
{
	return p->view.arrived ? policy__decay_rate(&p->view.slow,
						    seconds(now))
			       : 0;
}

void pool__note_arrival(struct pool *p, uint64_t t)
{
	policy__arrival(&p->view, seconds(t));
}

/* What the policy sees of the making times: the moving average, and the
 * mean and variability of the refills' kept times (else the average with
 * an exponential's spread), computed only for a policy that reads them. */
static void making(struct pool *p)
{
	struct policy_view *v = &p->view;
	size_t n = p->make_times_n < MAKE_TIMES_KEPT ? (size_t)p->make_times_n
						      : MAKE_TIMES_KEPT;

	v->make_avg = p->st.make_s;
	v->make_mean = p->st.make_s;
	v->make_cs2 = 1;
	if (n && (policy__reads(p->cfg.policy) & POLICY_READS_MAKE_MOMENTS))
		policy__moments(p->make_times, n, &v->make_mean, &v->make_cs2);
}

/* A rate-driven target from the rate and the making times; a fixed
 * target stays where it was set. */
void pool__retarget(struct pool *p, uint64_t now)
{
	struct policy_view *v = &p->view;
	double need;
	unsigned int t;

	if (!v->arrived || !(policy__reads(p->cfg.policy) & POLICY_SETS_TARGET))
		return;
	making(p);
	v->workers = p->cfg.workers;
	v->min = p->cfg.min;
	v->max = p->cfg.max;
	v->wait_on_empty = p->cfg.on_empty == POOL_WAIT;
	need = policy__target(p->cfg.policy, &p->cfg.params, v, seconds(now));
	if (need < 0)
		return;
	t = (unsigned int)need;
	if (t != p->target) {
		p->target = t;
		pthread_cond_broadcast(&p->wake);
	}
}
