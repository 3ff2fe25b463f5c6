/* A discrete-event simulator of one warm pool (pool/pool.h), fed with
 * measured costs, for choosing a pool policy without KVM. Pure code: no
 * I/O, no global state; every random choice follows the seed.
 *
 * The model. Requests arrive at the given times (struct arrivals). The
 * pool holds idle warm VMs and, at time 0, its policy's first target
 * (as `coldstart pool` waits for its fill before traffic; FIXED and
 * the pool's own policies start full at their size, TTL and HYBRID
 * empty). A request that finds a VM held
 * takes it: a hit, whose latency (arrival -> first instruction) is drawn
 * from hit_s. One that finds none either makes its own VM (a miss,
 * latency drawn from miss_s, e.g. measured fresh restores) or, with
 * wait_on_empty, waits in FIFO order for the next refill and takes it (a
 * wait: latency = time waited + a draw from hit_s); as in pool.c it
 * waits only while a refill can come (a target above 0, or a VM being
 * made), and when that stops it makes its own (a miss whose latency
 * includes the time waited). Either way the VM then runs its request
 * for a draw from service_s (0 without samples) and is destroyed, never
 * returned to the pool.
 *
 * Refills: `workers` servers each make one VM at a time, the making
 * time drawn from make_s. A refill starts whenever held + making is
 * below the target and a server is free; misses make their VMs outside
 * these servers. When the target falls below the VMs held, the excess is
 * destroyed at once (reaped); VMs being made are finished, then reaped
 * if still in excess. Draws are uniform resamples of the given arrays
 * with three seeded streams (makes; latencies; service times), so
 * policies compared with one seed see the same costs in the same order
 * wherever their event orders allow.
 *
 * Events happen in time order, ties broken as: refill done, request done,
 * arrival, policy timer; a VM finished at time t serves an arrival at t.
 * After every event the policy's target is re-evaluated. The time line
 * ends at max(span_s, last arrival); the VM integral stops there, and
 * later events are followed only to serve requests still waiting.
 *
 * Not modelled, against pool.c: VMs failing, the wait's timeout, a hit's
 * refill starting once its guest runs rather than at its arrival (a
 * hit's latency later), reaping by an idle refill thread rather than at
 * once, and the order in which waiters wake (FIFO here).
 *
 * Policies (enum pool_policy and enum poolsim_baseline, parameters in
 * struct poolsim_params, poolsim__default_params gives the defaults in
 * brackets; every target is clamped to [0, max]). FOLLOW and MARGINAL,
 * the pool's own, are policy.h's: the same parameters (params.pool:
 * size, the first target, and min, the lower bound, besides struct
 * policy_params) and the same arithmetic as the pool's, through
 * policy__target; a new one there is simulated as it is:
 *
 * FIXED n [1]: the target is n.
 *
 * TTL n [1], ttl_s [600]: keep-alive with scale to zero, as the fixed
 *   10-minute keep-alive of FaaS platforms. The target is n from an
 *   arrival until ttl_s after the last one, then 0 (the VMs held are
 *   destroyed at expiry); 0 before the first arrival.
 *
 * HYBRID: the hybrid histogram policy of Shahrad et al., "Serverless in
 *   the Wild", USENIX ATC 2020, section 4.2, for one application. Each
 *   idle time goes into a histogram of bin_s [60] wide bins up to range_s
 *   [14400, 4 hours]; longer ones are out of bounds (OOB, counted). After
 *   every arrival the policy picks a window [start, end) relative to it
 *   in which it holds n [1] VMs, 0 outside it:
 *   - fewer than min_samples [10] idle times so far, or a histogram that
 *     is not representative (the coefficient of variation of its bin
 *     counts below cv_min [2]): the standard keep-alive, [0, range_s);
 *   - more than oob_max [0.5] of the idle times OOB: the paper's time
 *     series forecast; window [(1 - forecast_margin) p, (1 +
 *     forecast_margin) p), forecast_margin [0.15];
 *   - else the histogram: head = the head_pct [5] percentile's bin,
 *     rounded down to its start, tail = the tail_pct [99] percentile's
 *     bin rounded up to its end; window [head (1 - margin), tail (1 +
 *     margin)), margin [0.1]. A head of 0 keeps the VM from the arrival
 *     on ("not unloaded"); otherwise the VM is unloaded after the request
 *     and loaded (made) at the window's start: a pre-warm.
 *   Simplifications: idle times are inter-arrival times (the paper
 *   measures from the end of an execution; here a request's VM is never
 *   reused, so the pool's idle period starts at the arrival); the
 *   forecast is ARIMA(0,1,0), i.e. the newest idle time p, not a fitted
 *   ARIMA model; min_samples and oob_max are not numbers from the paper
 *   (it says "too few" and "most"), and the CV is the population one
 *   over all range_s / bin_s bins.
 *
 * FOLLOW size [4], min [0], halflife_s [10], headroom [0.5]: exactly
 *   pool_target.c's following target. Arrivals add 1 to a count decaying by
 *   2^(-dt / halflife_s), the rate is count ln 2 / halflife_s; the
 *   target is ceil(rate * making time * (1 + headroom)) clamped to [min,
 *   max], min while the count is below 0.5; the making time is a moving
 *   average (weight 0.2 for the newest) of the refills' making times and
 *   of the misses' latencies (pool.c notes a miss's own making once its
 *   request is done). Until the first making time is known and before
 *   the first arrival the target stays at size. Re-evaluated at every
 *   event and at every multiple of 100 ms of simulated time (pool.c's
 *   refill threads wake every 100 ms).
 *
 * MARGINAL miss_cost_s [60], halflife_s [10], burst_halflife_s [3],
 *   burst_z [3], peak_halflife_s [0]: ours. Hold the n-th VM only while
 *   what it is expected to save is worth what it is expected to idle,
 *   one miss being worth miss_cost_s idle VM-seconds. With an arrival
 *   rate lambda and a mean making time m (a = lambda m), a pool of
 *   target n behaves as a birth-death chain of the VMs missing from it
 *   (being made or queued for a worker): with misses making their own
 *   VMs the loss system M/M/c/n (Erlang B when workers >= n, then exact
 *   for any making-time distribution), with wait_on_empty the delay
 *   system M/M/c (the mappings the unit tests check against Erlang B
 *   and C); above the workers the queue's geometric tail is thinned
 *   for making times steadier than exponential by Kingman's
 *   heavy-traffic scaling (its exponent times 2 / (1 + cs2), cs2
 *   their squared CV). Raising the
 *   target from n - 1 to n saves lambda (P_miss(n - 1) - P_miss(n))
 *   misses per second and costs E[held](n) - E[held](n - 1) idle VMs;
 *   the target is the largest n for which every step is worth it. This
 *   is the Lagrangian of "fewest idle VM-seconds for a given number of
 *   misses" for a Poisson stream of rate lambda, so a sweep of
 *   miss_cost_s traces the policy's frontier.
 *   Why it should beat the others: its first step needs lambda >= 1 /
 *   miss_cost_s, so the pool scales to zero once the expected gap
 *   between arrivals exceeds miss_cost_s (TTL and HYBRID keep a VM for a
 *   fixed or learnt time whatever the rate); its margin above a grows
 *   like sqrt(a) (the Poisson spread) where FOLLOW's headroom grows like
 *   a, so a headroom large enough for low rates over-provisions high
 *   ones; and FIXED must be sized for the peak. The rate is the decayed
 *   count of FOLLOW (half-life halflife_s), except that a second count
 *   with half-life burst_halflife_s (0: off) takes over when its rate
 *   differs from the slow one by more than burst_z standard deviations
 *   of its own noise under the slow rate (sqrt(lambda ln 2 / (2
 *   burst_halflife_s))): above it once it holds more than two arrivals
 *   (a burst: the target rises within seconds), or below it (the
 *   burst's end: the target falls as fast). With peak_halflife_s [0:
 *   none] the rate planned for is at least the highest one planned for
 *   before, halving every peak_halflife_s since: for clustered arrivals,
 *   whose bursts start faster than VMs are made, the VMs a burst was
 *   worth stay through a short quiet spell and leave one by one as it
 *   lengthens. m and cs2 are those of make_s (a real pool would take
 *   them from `bench pool`). Re-evaluated as FOLLOW.
 *
 * COVER cover_q [0.99], cover_halflife_s [600]: for requests in batches.
 *   The target is the cover_q quantile of the deficits arrivals met
 *   (policy_cover.c: D = max(0, D' - dt workers / m) + 1, what the pool
 *   must have held as their burst began), filed by how long the pool had
 *   been quiet as the burst began, each arrival's weight fading with
 *   cover_halflife_s. Re-evaluated as FOLLOW.
 */
#ifndef COLDSTART_POOLSIM_H
#define COLDSTART_POOLSIM_H

#include "arrivals.h"
#include "policy.h"
#include "stats.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The simulator's policies: the pool's (enum pool_policy, policy.h),
 * then its own baselines, which `coldstart pool` does not have. */
enum poolsim_baseline { POOLSIM_TTL = POOL_POLICIES, POOLSIM_HYBRID };
#define POOLSIM_POLICIES (POOL_POLICIES + 2)

/* The k-th policy (k < POOLSIM_POLICIES) in the order reports list
 * them: fixed, ttl, hybrid, then the pool's others (follow, marginal,
 * ...). */
int poolsim__policy_at(int k);

/* "fixed, ttl, hybrid, follow, marginal": every name, in that order
 * (a static string). */
const char *poolsim__policy_names(void);

/* Bounds of poolsim_config.workers and .max. */
#define POOLSIM_MAX_WORKERS 4096
#define POOLSIM_MAX_VMS 1000000

/* Measured costs, in seconds (and MiB). Every array is borrowed for the
 * run and resampled uniformly; values must be finite and >= 0, making
 * times > 0. hit_s, miss_s and make_s need at least one sample; without
 * service samples (n_service 0) requests run for 0 s. */
struct poolsim_costs {
	const double *hit_s; /* arrival -> first instruction, VM held */
	size_t n_hit;
	const double *miss_s; /* the same when the request makes its VM */
	size_t n_miss;
	const double *make_s; /* one refill's making of one VM */
	size_t n_make;
	const double *service_s; /* first instruction -> VM destroyed */
	size_t n_service;
	double vm_mib; /* memory of one VM held or being made */
};

/* Each policy's parameters (see the header comment); only the chosen
 * policy's are read. */
struct poolsim_params {
	struct poolsim_fixed {
		unsigned int n;
	} fixed;
	struct poolsim_ttl {
		unsigned int n;
		double ttl_s;
	} ttl;
	struct poolsim_hybrid {
		unsigned int n;
		double bin_s, range_s;
		double head_pct, tail_pct; /* 0 <= head < tail <= 100 */
		double margin;             /* [0, 1) */
		double cv_min;
		unsigned int min_samples;
		double oob_max;         /* a fraction, [0, 1] */
		double forecast_margin; /* [0, 1) */
	} hybrid;
	/* the pool's own policies (follow, marginal, every one of
	 * policy.h): the first target, the target's lower bound and their
	 * parameters, as `coldstart pool` takes them */
	struct poolsim_pool {
		unsigned int size, min;
		struct policy_params params;
	} pool;
};

struct poolsim_config {
	int policy; /* an enum pool_policy or enum poolsim_baseline */
	struct poolsim_params params;
	unsigned int workers; /* refill servers, 1 to POOLSIM_MAX_WORKERS */
	unsigned int max;     /* bound of every target, 1 to POOLSIM_MAX_VMS */
	bool wait_on_empty;   /* pool's POOL_WAIT (without its timeout) */
	uint64_t seed;
};

struct poolsim_result {
	uint64_t requests, hits, misses, waits;
	uint64_t makes;  /* VMs the refill servers finished (the first fill
			  * at time 0 not counted) */
	uint64_t reaped; /* VMs held or finished above a falling target */
	double duration_s; /* the time line: max(span_s, last arrival) */
	double idle_vm_s;  /* integral of the VMs held over the time line */
	double wait_s;     /* time requests spent waiting for a refill,
			    * summed (those that gave up included) */
	unsigned int peak_held;
	unsigned int peak_pool;    /* VMs held + being made */
	unsigned int peak_serving; /* VMs running requests (misses' too) */
	double peak_mib;           /* peak_pool * vm_mib */
	double hit_ratio;          /* hits / requests */
	double *latency_s;         /* one per request, arrival order; owned */
	struct summary latency;    /* of latency_s */
	/* HYBRID: idle times beyond range_s, and the windows chosen after
	 * each arrival by kind (standard keep-alive, histogram, forecast) */
	struct {
		uint64_t oob, standard, histogram, forecast;
	} hybrid;
};

/* Every policy's default parameters (header comment). */
void poolsim__default_params(struct poolsim_params *p);

/* Simulates the pool over the arrivals (n >= 1, finite, ascending, from
 * 0 on). 0, or -EINVAL naming the offending input (err.h) or -ENOMEM; on
 * success *out holds the result (poolsim__result_free), on error it is
 * zeroed. O((arrivals + makings + timers) log) time; prints nothing. */
int poolsim__run(const struct arrivals *a, const struct poolsim_costs *c,
		 const struct poolsim_config *cfg, struct poolsim_result *out);

/* Frees the latency samples and zeroes *r; NULL-safe. */
void poolsim__result_free(struct poolsim_result *r);

/* "fixed", "ttl", "hybrid", "follow", "marginal" ("?" if unknown). */
const char *poolsim__policy_name(int p);

/* The policy named `name`: 0, or -EINVAL with the accepted names. */
int poolsim__policy_parse(const char *name, int *out);

#endif
