/* The arithmetic of the warm pool's rate-driven policies, shared by the
 * pool (pool.c) and its simulator (sim/poolsim.c) so that what the
 * tuner recommends is what the pool does. Pure code: times in seconds. */
#ifndef COLDSTART_POOL_POLICY_H
#define COLDSTART_POOL_POLICY_H

#include <stdbool.h>
#include <stddef.h>

/* An exponentially decayed count of arrivals: each adds 1, the sum halves
 * every halflife_s; count x ln 2 / halflife_s estimates the rate without
 * bias for a steady Poisson stream. Zero-initialised with halflife_s set. */
struct policy_decay {
	double halflife_s;
	double count, at;
};

double policy__decay_count(const struct policy_decay *d, double t);
void policy__decay_add(struct policy_decay *d, double t);
double policy__decay_rate(const struct policy_decay *d, double t);

/* The marginal policy: hold the n-th VM only while the misses it saves,
 * each costing miss_cost_s, outweigh the time it idles. The rate is the
 * slow estimate (halflife_s), or the fast one (burst_halflife_s; 0: none)
 * when it lies more than burst_z standard deviations of the slow one's
 * noise above it (a burst) or below it (a burst's end); with
 * peak_halflife_s (0: none) it is at least the highest rate planned for
 * before, halving every peak_halflife_s (see policy.c). */
struct policy_marginal {
	double miss_cost_s;
	double halflife_s;
	double burst_halflife_s;
	double burst_z;
	double peak_halflife_s;
};

/* The highest rate the marginal policy planned for, at time `at`.
 * Zero-initialised. */
struct policy_peak {
	double rate, at;
};

/* The arrival rate the marginal policy plans for at time t; it raises
 * the peak when above it (peak_halflife_s > 0). */
double policy__marginal_rate(const struct policy_marginal *m,
			     const struct policy_decay *slow,
			     const struct policy_decay *fast,
			     struct policy_peak *peak, double t);

/* The marginal policy's target for arrival rate lambda, making times of
 * mean make_mean (> 0) and squared coefficient of variation make_cs2,
 * `workers` refill threads, at most max VMs; wait_on_empty: requests wait
 * for a refill instead of making their own VM (see policy.c). */
unsigned int policy__marginal_target(double lambda, double make_mean,
				     double make_cs2, unsigned int workers,
				     unsigned int max, bool wait_on_empty,
				     double miss_cost_s);

/* The mean of n > 0 samples, all above 0, and their squared CV. */
void policy__moments(const double *s, size_t n, double *mean, double *cs2);

#endif
