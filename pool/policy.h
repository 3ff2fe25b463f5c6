/* The warm pool's policies, shared by the pool (pool_target.c), its
 * simulator (sim/poolsim*.c) and the tuner, so that what the tuner
 * recommends is what the pool does: one row each in policy.c (name,
 * target, checks, what it reads), one set of parameters, and the
 * arithmetic. Pure code (no KVM): times in seconds. */
#ifndef COLDSTART_POOL_POLICY_H
#define COLDSTART_POOL_POLICY_H

#include <stdbool.h>
#include <stddef.h>

/* How many VMs the pool holds (pool.h tells each in full):
 *   fixed    - a set target;
 *   follow   - the arrival rate times the making time, plus headroom;
 *   marginal - as many as save more misses than they idle;
 *   cover    - a high quantile of the VMs bursts used up before refills
 *              caught up, as learnt from the recent past: for batches.
 * The simulator's own baselines number after POOL_POLICIES (poolsim.h). */
enum pool_policy { POOL_FIXED, POOL_FOLLOW, POOL_MARGINAL, POOL_COVER };
#define POOL_POLICIES 4

/* "fixed", "follow", "marginal" ("?" if unknown). */
const char *policy__name(enum pool_policy p);

/* The policy named `name`: 0, or -EINVAL (no message: the caller names
 * the option). */
int policy__parse(const char *name, enum pool_policy *out);

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

/* The follow policy's need at time t: ceil(rate x make_s x (1 +
 * headroom)), ceil so that a low rate still holds one; 0 once the
 * decayed count is below one half (no arrival for about a half-life or
 * more: nothing is expected). */
double policy__follow_need(const struct policy_decay *slow, double t,
			   double make_s, double headroom);

/* A policy's need as a target within [min, max]. */
unsigned int policy__clamp(double need, unsigned int min, unsigned int max);

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

/* ---- every shared policy through one interface ---- */

/* The shared policies' parameters, one set (each policy reads its own;
 * `coldstart pool`'s options and JSON name them, policy__defaults gives
 * their defaults). */
struct policy_params {
	double halflife_s;       /* follow, marginal: the rate's half-life */
	double headroom;         /* follow: extra fraction held */
	/* marginal: the cost of one miss in idle VM-seconds, the burst
	 * detector's half-life (0: none) and threshold, and the peak rate's
	 * half-life (0: none) */
	double miss_cost_s, burst_halflife_s, burst_z, peak_halflife_s;
	/* cover: the quantile of the deficits met to hold, and the
	 * half-life of what it learnt */
	double cover_q, cover_halflife_s;
};

/* The cover policy's memory (policy_cover.c): the pool's deficit after
 * the newest arrival, the state the present burst began in, and per
 * state (how long the pool had been quiet as a burst began) and for all
 * states a decayed histogram of the deficits requests met; weights grow
 * by 2^(t / halflife) instead of all decaying. */
#define POLICY_COVER_BINS 512
#define POLICY_COVER_STATES 8
struct policy_cover {
	double halflife_s, q; /* from the parameters; halflife 0: off */
	double last_t, last_d;
	unsigned int burst_state;
	double w[POLICY_COVER_STATES + 1][POLICY_COVER_BINS];
	double total[POLICY_COVER_STATES + 1]; /* the last row: all */
	double t0; /* weights are 2^((t - t0) / halflife_s) */
};

/* What a policy sees of its pool, real or simulated: the arrival-rate
 * estimates (policy__start, policy__arrival), the making times and the
 * pool's shape. */
struct policy_view {
	struct policy_cover cover;
	struct policy_decay slow, fast;
	struct policy_peak peak;
	bool arrived;
	double make_avg;            /* moving average (s); 0: none yet */
	double make_mean, make_cs2; /* mean (0: none) and squared CV */
	unsigned int workers, min, max;
	bool wait_on_empty;
};

/* 10 s half-life, headroom 0.5, miss cost 60 s, bursts at 3 s and 3
 * standard deviations, no peak; cover: quantile 0.99, learnt with a
 * 10-minute half-life. */
void policy__defaults(struct policy_params *pp);

/* 0, or -EINVAL with why[len] naming the parameter out of its range
 * (the half-life for every policy: the rate is estimated for all). */
int policy__check(enum pool_policy p, const struct policy_params *pp,
		  char *why, size_t len);

/* Sets v's estimates for policy p: the decays' half-lives, nothing
 * counted yet. */
void policy__start(enum pool_policy p, const struct policy_params *pp,
		   struct policy_view *v);

/* Counts an arrival at t; one a little out of order (the pool's threads)
 * counts at the newest time seen. */
void policy__arrival(struct policy_view *v, double t);

/* What p's target reads (policy__reads): the making times' moving
 * average (the simulator then learns it from misses' makings too, as the
 * pool does), their mean and squared CV; and whether it sets a target
 * at all (fixed does not: it is set). */
#define POLICY_READS_MAKE_AVG 1u
#define POLICY_READS_MAKE_MOMENTS 2u
#define POLICY_SETS_TARGET 4u
unsigned int policy__reads(enum pool_policy p);

/* The target p sets at t, within [v->min, v->max], or -1 to keep the
 * current one (fixed; before the first arrival; before a making time is
 * known). May update v (marginal's peak). */
double policy__target(enum pool_policy p, const struct policy_params *pp,
		      struct policy_view *v, double t);

/* policy_cover.c: the cover policy's memory set from pp and emptied; an
 * arrival at t learnt (once a making time is known); its need at t (-1
 * before a making time is known or anything is learnt). */
void policy__cover_start(const struct policy_params *pp,
			 struct policy_cover *c);
void policy__cover_arrival(struct policy_view *v, double t);
double policy__cover_target(const struct policy_params *pp,
			    struct policy_view *v, double t);

#endif
