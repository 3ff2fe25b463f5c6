/* Unit tests for sim/poolsim.c: the simulated pool against queueing
 * closed forms (Erlang C for a pool whose refills are the servers,
 * Erlang B for one whose misses make their own VMs), every policy on
 * hand-made traces whose outcome is worked out in the comments,
 * reproducibility, and refused inputs (the policies' names and the
 * shared arithmetic: test_poolsim_policy.c). */
#include "arrivals.h"
#include "err.h"
#include "poolsim.h"
#include "stats.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#define assert_close(a, b, tol)                                                \
	do {                                                                   \
		double a_ = (a), b_ = (b);                                     \
		if (!(fabs(a_ - b_) <= (tol)))                                 \
			fail_msg("%s = %.9g, expected %.9g within %g", #a, a_, \
				 b_, (double)(tol));                           \
	} while (0)

/* The error message holds `needle`; printed when it does not. */
static void assert_msg(const char *needle)
{
	if (!strstr(err__last(), needle))
		fail_msg("message '%s' lacks '%s'", err__last(), needle);
}

static struct poolsim_config config(int policy)
{
	struct poolsim_config cfg = {
		.policy = policy, .workers = 1, .max = 4, .seed = 1,
	};

	poolsim__default_params(&cfg.params);
	/* the marginal pool starts empty, as `tune pool` simulates it */
	if (policy == POOL_MARGINAL)
		cfg.params.pool.size = 0;
	return cfg;
}

/* ---- closed forms ---- */

/* Poisson arrivals of `rate` for `duration` s, seeded. */
static void poisson(double rate, double duration, struct arrivals *a)
{
	struct arrivals_spec spec = { .kind = ARRIVALS_POISSON, .rate = rate };

	assert_int_equal(arrivals__make(&spec, duration, 1, 7, a), 0);
}

/* n exponential samples of exactly the given mean (rescaled), so that
 * only the queue's own randomness is left in the comparison. */
static double *exponential(size_t n, double mean, uint64_t seed)
{
	double *s = malloc(n * sizeof(*s)), sum = 0;
	struct stats_rng rng;

	assert_non_null(s);
	stats__rng_seed(&rng, seed);
	for (size_t i = 0; i < n; i++) {
		s[i] = -log(1 - stats__rng_uniform(&rng));
		sum += s[i];
	}
	for (size_t i = 0; i < n; i++)
		s[i] *= mean * (double)n / sum;
	return s;
}

/* Erlang C: the probability that an M/M/c arrival waits, a = lambda /
 * mu < c. Terms a^k / k! are built up one by one. */
static double erlang_c(unsigned int c, double a)
{
	double term = 1, sum = 0, top;

	for (unsigned int k = 0; k < c; k++) {
		sum += term;
		term *= a / (k + 1);
	}
	top = term * c / (c - a);
	return top / (sum + top);
}

/* Erlang B by its recursion B(0) = 1, B(n) = a B / (n + a B). */
static double erlang_b(unsigned int n, double a)
{
	double b = 1;

	for (unsigned int k = 1; k <= n; k++)
		b = a * b / (k + a * b);
	return b;
}

/* Why a pool is an M/M/c queue. Take a FIXED target N >= c, c refill
 * workers making VMs in exponential times of mean 1/mu, Poisson arrivals
 * at lambda, wait_on_empty. Let D = N - held + waiting, the VMs the pool
 * is short of. An arrival raises D by one, whether it takes a VM or
 * waits; a refill finishing lowers it by one, whether the VM is held or
 * handed to a waiter. Refills run while held + making < N and a worker
 * is free, so making = min(D, c) (D <= N: held = N - D, making can reach
 * min(D, c); D > N: held = 0 and making = c <= N). So D is the number in
 * an M/M/c system, an arrival waits when D >= N, and by PASTA
 *   P(wait) = P(D >= N) = C(c, a) rho^(N - c),  a = lambda / mu,
 *   rho = a / c,
 * since P(D = k) falls by rho per step above c. Waiters are served FIFO,
 * one per refill, while all c workers are busy, so a waiter's wait is
 * the M/M/c queueing time: E[wait] over all requests is
 * C(c, a) / (c mu - lambda) when N = c. (N = 0 is no queue at all: with
 * a target of 0 no refill ever comes, so pool.c, and the simulator, make
 * the request's VM at once: a miss.) Also E[held] = sum over k < N of
 * (N - k) P(D = k). Asserted within 2 % absolute on P(wait), 5 % relative
 * on the mean wait and 3 % relative on the mean VMs held over 200,000
 * arrivals. */
struct mmc_case {
	double lambda, mu;
	unsigned int c, n;
};

static void mmc_one(const struct mmc_case *k)
{
	struct arrivals a;
	struct poolsim_config cfg = config(POOL_FIXED);
	static const double zero[] = { 0 };
	double *make = exponential(100000, 1 / k->mu, 11);
	struct poolsim_costs costs = {
		.hit_s = zero, .n_hit = 1, .miss_s = zero, .n_miss = 1,
		.make_s = make, .n_make = 100000,
	};
	struct poolsim_result r;
	double a0 = k->lambda / k->mu, rho = a0 / k->c;
	double pw = erlang_c(k->c, a0) * pow(rho, k->n - k->c);
	double term = 1, z = 0, held = 0, wait;

	/* P(D = k) for k < c is term_k / z with z the full normaliser */
	for (unsigned int i = 0; i < k->c; i++) {
		z += term;
		term *= a0 / (i + 1);
	}
	z += term / (1 - rho);
	term = 1;
	for (unsigned int i = 0; i < k->n; i++) {
		held += (k->n - i) * term / z;
		term *= a0 / (i + 1 < k->c ? i + 1 : k->c);
	}
	poisson(k->lambda, 200000 / k->lambda, &a);
	cfg.params.fixed.n = k->n;
	cfg.workers = k->c;
	cfg.max = k->n;
	cfg.wait_on_empty = true;
	assert_int_equal(poolsim__run(&a, &costs, &cfg, &r), 0);
	assert_int_equal(r.misses, 0);
	assert_int_equal(r.hits + r.waits, r.requests);
	print_message("M/M/%u lambda %g mu %g N %u: P(wait) %.4f (Erlang "
		      "%.4f), E[wait] %.4f, E[held] %.3f (%.3f)\n", k->c,
		      k->lambda, k->mu, k->n, (double)r.waits / r.requests,
		      pw, r.wait_s / r.requests, r.idle_vm_s / r.duration_s,
		      held);
	assert_close((double)r.waits / r.requests, pw, 0.02);
	if (k->n == k->c) {
		wait = erlang_c(k->c, a0) / (k->c * k->mu - k->lambda);
		assert_close(r.wait_s / r.requests, wait, 0.05 * wait);
		/* a wait's latency is its wait plus a 0 s hit */
		assert_close(r.latency.mean, wait, 0.05 * wait);
	}
	assert_close(r.idle_vm_s / r.duration_s, held, 0.03 * held);
	poolsim__result_free(&r);
	arrivals__free(&a);
	free(make);
}

static void erlang_c_waits(void **state)
{
	static const struct mmc_case cases[] = {
		{ 0.5, 1, 1, 1 },  /* M/M/1: P(wait) = rho = 0.5 */
		{ 1.5, 1, 2, 2 },  /* C = 0.643 */
		{ 3, 1, 4, 4 },    /* C = 0.509 */
		{ 7, 1, 10, 10 },  /* C = 0.222 */
		{ 0.8, 2, 1, 1 },  /* M/M/1 with mu = 2: 0.4 */
		{ 1.5, 1, 2, 4 },  /* a deeper pool: C rho^2 = 0.362 */
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++)
		mmc_one(&cases[i]);
}

/* Misses that make their own VMs: the refills in flight never exceed N
 * (an arrival finding the pool empty orders nothing), so with workers >=
 * N the VMs missing form an M/G/N/N loss system and P(miss) is Erlang
 * B(N, lambda m), whatever the making-time distribution: checked here
 * with constant making times. */
static void erlang_b_misses(void **state)
{
	static const struct {
		double lambda, make;
		unsigned int n;
	} cases[] = { { 2, 1, 3 }, { 10, 0.5, 8 }, { 0.5, 1, 1 } };
	static const double zero[] = { 0 }, one[] = { 1 };

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		struct arrivals a;
		struct poolsim_config cfg = config(POOL_FIXED);
		struct poolsim_costs costs = {
			.hit_s = zero, .n_hit = 1, .miss_s = one, .n_miss = 1,
			.make_s = &cases[i].make, .n_make = 1,
		};
		struct poolsim_result r;
		double b = erlang_b(cases[i].n,
				    cases[i].lambda * cases[i].make);

		poisson(cases[i].lambda, 200000 / cases[i].lambda, &a);
		cfg.params.fixed.n = cases[i].n;
		cfg.workers = cases[i].n;
		cfg.max = cases[i].n;
		assert_int_equal(poolsim__run(&a, &costs, &cfg, &r), 0);
		print_message("M/D/%u/%u a %g: P(miss) %.4f (Erlang B %.4f)\n",
			      cases[i].n, cases[i].n,
			      cases[i].lambda * cases[i].make,
			      (double)r.misses / r.requests, b);
		assert_close((double)r.misses / r.requests, b, 0.02);
		assert_int_equal(r.waits, 0);
		poolsim__result_free(&r);
		arrivals__free(&a);
	}
}

/* ---- each policy on hand-made traces ---- */

/* Arrivals at 0, 1, 2, 10 and 100 s on a 110 s time line; hits take
 * 1 ms, misses 0.5 s, a refill 2 s, every request runs 0.25 s; one
 * worker. Constant costs make every draw known. */
static const double trace_t[] = { 0, 1, 2, 10, 100 };
static const double hit_1ms[] = { 0.001 }, miss_500ms[] = { 0.5 };
static const double make_2s[] = { 2 }, service_250ms[] = { 0.25 };

static const struct poolsim_costs trace_costs = {
	.hit_s = hit_1ms, .n_hit = 1, .miss_s = miss_500ms, .n_miss = 1,
	.make_s = make_2s, .n_make = 1, .service_s = service_250ms,
	.n_service = 1, .vm_mib = 64,
};

static struct poolsim_result run_trace(const struct poolsim_config *cfg)
{
	struct arrivals a = { .t = (double *)trace_t,
			      .n = ARRAY_LEN(trace_t), .span_s = 110 };
	struct poolsim_result r;

	assert_int_equal(poolsim__run(&a, &trace_costs, cfg, &r), 0);
	assert_int_equal(r.requests, 5);
	assert_close(r.duration_s, 110, 0);
	return r;
}

static void assert_counts(const struct poolsim_result *r, uint64_t hits,
			  uint64_t misses, uint64_t waits, uint64_t makes,
			  uint64_t reaped, double idle_vm_s)
{
	assert_int_equal(r->hits, hits);
	assert_int_equal(r->misses, misses);
	assert_int_equal(r->waits, waits);
	assert_int_equal(r->makes, makes);
	assert_int_equal(r->reaped, reaped);
	assert_close(r->idle_vm_s, idle_vm_s, 1e-9);
}

/* FIXED 1 starts full. 0: hit, refill until 2. 1: none held (making):
 * miss. 2: the refill lands first, then the arrival takes it (hit),
 * refill until 4. 10: hit, refill until 12. 100: hit, refill until 102.
 * Held: [4, 10] 6 s + [12, 100] 88 s + [102, 110] 8 s = 102 VM-s. */
static void fixed_trace(void **state)
{
	struct poolsim_config cfg = config(POOL_FIXED);
	struct poolsim_result r;

	(void)state;
	r = run_trace(&cfg);
	assert_counts(&r, 4, 1, 0, 4, 0, 102);
	assert_close(r.latency_s[0], 0.001, 1e-12);
	assert_close(r.latency_s[1], 0.5, 1e-12);
	assert_int_equal(r.peak_held, 1);
	assert_int_equal(r.peak_pool, 1);
	assert_close(r.peak_mib, 64, 0);
	assert_close(r.hit_ratio, 0.8, 1e-12);
	poolsim__result_free(&r);
}

/* FIXED 1 with wait_on_empty. 0: hit, refill until 2. 1: waits. 2: the
 * refill goes to the waiter (waited 1 s), the next refill starts (until
 * 4), and the arrival at 2 waits for it (2 s). 4: to that waiter, refill
 * until 6. 6: held. 10: hit, refill until 12. 100: hit, refill until
 * 102. Held: [6, 10] 4 + [12, 100] 88 + [102, 110] 8 = 100 VM-s. */
static void fixed_wait_trace(void **state)
{
	struct poolsim_config cfg = config(POOL_FIXED);
	struct poolsim_result r;

	(void)state;
	cfg.wait_on_empty = true;
	r = run_trace(&cfg);
	assert_counts(&r, 3, 0, 2, 5, 0, 100);
	assert_close(r.wait_s, 3, 1e-12);
	assert_close(r.latency_s[1], 1.001, 1e-12);
	assert_close(r.latency_s[2], 2.001, 1e-12);
	poolsim__result_free(&r);
}

/* TTL 1 VM for 5 s, starting empty. 0: miss, target 1 until 5, refill
 * until 2. 1: miss (the refill is still being made), expiry 6. 2: the
 * refill lands, the arrival takes it (hit), expiry 7, refill until 4.
 * 7: expiry, the VM held since 4 is destroyed. 10: miss, refill until
 * 12, destroyed at 15. 100: miss, refill until 102, destroyed at 105.
 * Held: 3 + 3 + 3 = 9 VM-s. */
static void ttl_trace(void **state)
{
	struct poolsim_config cfg = config(POOLSIM_TTL);
	struct poolsim_result r;

	(void)state;
	cfg.params.ttl.ttl_s = 5;
	r = run_trace(&cfg);
	assert_counts(&r, 1, 4, 0, 4, 3, 9);
	poolsim__result_free(&r);
}

/* A waiter gives up when no refill can come any more. TTL 1 VM for 1 s
 * with wait_on_empty, arrivals at 0 and 0.5 s, refills of 2 s. 0: none
 * held, target 1 until 1 s, a refill starts: the request waits. 0.5:
 * waits too (the refill is coming). 1.5: the keep-alive ends, target 0,
 * but the refill is still being made. 2: it lands and goes to the first
 * waiter (waited 2 s, latency 2.001); nothing is being made and the
 * target is 0, so the second makes its own VM: a miss, latency 1.5 +
 * 0.5 s. Waited 2 + 1.5 = 3.5 s in all; nothing was ever held. */
static void ttl_wait_gives_up(void **state)
{
	static const double t[] = { 0, 0.5 };
	struct arrivals a = { .t = (double *)t, .n = 2, .span_s = 10 };
	struct poolsim_config cfg = config(POOLSIM_TTL);
	struct poolsim_result r;

	(void)state;
	cfg.params.ttl.ttl_s = 1;
	cfg.wait_on_empty = true;
	assert_int_equal(poolsim__run(&a, &trace_costs, &cfg, &r), 0);
	assert_counts(&r, 0, 1, 1, 1, 0, 0);
	assert_close(r.wait_s, 3.5, 1e-12);
	assert_close(r.latency_s[0], 2.001, 1e-12);
	assert_close(r.latency_s[1], 2.0, 1e-12);
	poolsim__result_free(&r);
}

/* HYBRID with its defaults: 4 idle times, fewer than 10, so the
 * standard keep-alive of the histogram's range (4 hours) after every
 * arrival: one VM from the first arrival on. 0: miss, refill until 2.
 * 1: miss. 2: hit, refill until 4. 10: hit, refill until 12. 100: hit,
 * refill until 102. Held: 6 + 88 + 8 = 102 VM-s. */
static void hybrid_trace(void **state)
{
	struct poolsim_config cfg = config(POOLSIM_HYBRID);
	struct poolsim_result r;

	(void)state;
	r = run_trace(&cfg);
	assert_counts(&r, 3, 2, 0, 4, 0, 102);
	assert_int_equal(r.hybrid.standard, 5);
	assert_int_equal(r.hybrid.histogram + r.hybrid.forecast + r.hybrid.oob,
			 0);
	poolsim__result_free(&r);
}

/* FOLLOW size 1, min 0, half-life 10 s, headroom 0; count c decays by
 * 2^(-dt / 10), rate c ln 2 / 10. 0: c = 1, hit; no making time known
 * yet, so the target stays 1: refill until 2. 1: c = 1.933, miss (0.5 s,
 * done at 1.75: making time 0.5). 2: the refill lands (making time
 * 0.8 0.5 + 0.2 2 = 0.8), hit, c = 2.804, target ceil(0.194 0.8) = 1,
 * refill until 4 (average 1.04). The count would fall below 0.5 at
 * 2 + 10 log2(2.804 / 0.5) = 26.87 s, but 10: c = 1.610 + 1 = 2.610,
 * hit (the VM held since 4), target ceil(0.181 1.04) = 1, refill until
 * 12. Now c falls below 0.5 at 10 + 10 log2(2.610 / 0.5) = 33.84 s: the
 * tick at 33.9 s makes the target 0 and reaps the VM held since 12.
 * 100: c = 1.005, target 1, none held: miss, refill until 102; c falls
 * below 0.5 only at 110.07, after the time line. Held: [4, 10] 6 +
 * [12, 33.9] 21.9 + [102, 110] 8 = 35.9 VM-s. */
static void follow_trace(void **state)
{
	struct poolsim_config cfg = config(POOL_FOLLOW);
	struct poolsim_result r;

	(void)state;
	cfg.params.pool = (struct poolsim_pool){
		.size = 1, .min = 0,
		.params = { .halflife_s = 10, .headroom = 0 },
	};
	r = run_trace(&cfg);
	assert_counts(&r, 3, 2, 0, 4, 1, 35.9);
	poolsim__result_free(&r);
}

/* MARGINAL with miss_cost_s 15, half-life 10 s, no burst detection,
 * making time 2 s, one worker. The first VM is worth holding while the
 * rate c ln 2 / 10 >= 1 / 15, i.e. c >= 0.9618; a second never is here:
 * at the highest rate, 0.194 after the arrival at 2, a = 0.389, and with
 * constant makings (cs2 = 0) the weights are 1, a, a a^2, so b_1 =
 * 0.280, b_2 = 0.041, e_1 = 0.280, e_2 = 0.350: the second VM saves
 * 0.194 (0.280 - 0.041) 15 = 0.70 misses' worth for 1 - 0.350 + 0.280 =
 * 0.93 more idle VMs. Starts empty. 0: c = 1, miss, target 1, refill until 2; c
 * falls below 0.9618 at 0.56 s: target 0 at the tick of 0.6, the VM
 * still being made. 1: c = 1.933, target 1, miss. 2: the refill lands,
 * the arrival takes it (hit), c = 2.804, refill until 4. 10: c = 2.610
 * with the VM held since 4: hit, refill until 12. c falls below 0.9618
 * at 24.40 s: reaped at the tick of 24.5. 100: c = 1.005, miss, refill
 * until 102, but c falls below at 100.64: target 0 at 100.7, and the
 * VM is reaped as it lands at 102. Held: [4, 10] 6 + [12, 24.5] 12.5 =
 * 18.5 VM-s. */
static void marginal_trace(void **state)
{
	struct poolsim_config cfg = config(POOL_MARGINAL);
	struct poolsim_result r;

	(void)state;
	cfg.params.pool.params = (struct policy_params){
		.miss_cost_s = 15, .halflife_s = 10,
	};
	r = run_trace(&cfg);
	assert_counts(&r, 2, 3, 0, 4, 2, 18.5);
	assert_int_equal(r.peak_held, 1);
	poolsim__result_free(&r);
}

/* n arrivals every `gap` s, the time line `span` s long. */
static struct arrivals regular(size_t n, double gap, double span)
{
	struct arrivals a = { .t = calloc(n, sizeof(double)), .n = n,
			      .span_s = span };

	assert_non_null(a.t);
	for (size_t i = 0; i < n; i++)
		a.t[i] = (double)i * gap;
	return a;
}

/* HYBRID pre-warming: 15 arrivals every 600 s, refills of 1 s. After
 * arrivals 0 to 9 (fewer than 10 idle times) the standard keep-alive:
 * the VM refilled at +1 s waits 599 s for the next arrival (a hit).
 * From arrival 10 on, 10+ idle times all in the bin [600, 660): the
 * CV of the 240 bins' counts is sqrt(239) = 15.5 > 2, head = 600 s,
 * tail = 660 s, window [540, 726): the VM is unloaded, made at +540,
 * held from +541 and taken at +600 (59 s). After the last arrival
 * (8400) it is held from 8941 to 9126 (185 s), then destroyed. Misses:
 * arrival 0 only. Held: 10 x 599 + 4 x 59 + 185 = 6411 VM-s. */
static void hybrid_prewarm(void **state)
{
	struct poolsim_config cfg = config(POOLSIM_HYBRID);
	struct arrivals a = regular(15, 600, 10000);
	static const double one[] = { 1 };
	struct poolsim_costs costs = trace_costs;
	struct poolsim_result r;

	(void)state;
	costs.make_s = one;
	assert_int_equal(poolsim__run(&a, &costs, &cfg, &r), 0);
	assert_counts(&r, 14, 1, 0, 15, 1, 6411);
	assert_int_equal(r.hybrid.standard, 10);
	assert_int_equal(r.hybrid.histogram, 5);
	assert_int_equal(r.hybrid.oob, 0);
	poolsim__result_free(&r);
	free(a.t);
}

/* HYBRID out of bounds: range 600 s, 13 arrivals every 1000 s. Standard
 * keep-alive after arrivals 0 to 9: a VM held from +1 to +600, then
 * destroyed, so every one of them misses (arrivals 1 to 10: 10 misses,
 * plus 0). From arrival 10 on all 10+ idle times are out of bounds: the
 * forecast is the last idle time, 1000 s, window [850, 1150): made at
 * +850, held from +851, taken at +1000 (arrivals 11, 12: hits). After
 * the last (12000): held from 12851 to 13150. Held: 10 x 599 + 2 x 149
 * + 299 = 6587 VM-s; 11 VMs destroyed at their windows' ends. */
static void hybrid_out_of_bounds(void **state)
{
	struct poolsim_config cfg = config(POOLSIM_HYBRID);
	struct arrivals a = regular(13, 1000, 14000);
	static const double one[] = { 1 };
	struct poolsim_costs costs = trace_costs;
	struct poolsim_result r;

	(void)state;
	cfg.params.hybrid.range_s = 600;
	costs.make_s = one;
	assert_int_equal(poolsim__run(&a, &costs, &cfg, &r), 0);
	assert_counts(&r, 2, 11, 0, 13, 11, 6587);
	assert_int_equal(r.hybrid.standard, 10);
	assert_int_equal(r.hybrid.forecast, 3);
	assert_int_equal(r.hybrid.oob, 12);
	poolsim__result_free(&r);
	free(a.t);
}

/* HYBRID's representativeness check: range 600 s (10 bins of 60 s),
 * idle times cycling through 30, 90, 150, 210 and 270 s, two of each
 * in 10 idle times: counts 2 in 5 bins and 0 in 5, mean 1, CV 1 < 2,
 * so the standard keep-alive throughout; with 15 idle times (3 per
 * bin) the CV stays 1. */
static void hybrid_not_representative(void **state)
{
	static const double gaps[] = { 30, 90, 150, 210, 270 };
	struct poolsim_config cfg = config(POOLSIM_HYBRID);
	struct arrivals a = regular(16, 0, 3000);
	struct poolsim_result r;

	(void)state;
	for (size_t i = 1; i < a.n; i++)
		a.t[i] = a.t[i - 1] + gaps[(i - 1) % ARRAY_LEN(gaps)];
	cfg.params.hybrid.range_s = 600;
	assert_int_equal(poolsim__run(&a, &trace_costs, &cfg, &r), 0);
	assert_int_equal(r.hybrid.standard, 16);
	assert_int_equal(r.hybrid.histogram + r.hybrid.forecast, 0);
	poolsim__result_free(&r);
	free(a.t);
}

/* MARGINAL's burst detection: one arrival per 10 s for 100 s (no VM
 * worth holding at miss_cost_s 5: the rate, about 0.1 /s, is below
 * 1 / 5), then 200 arrivals 0.05 s apart (20 /s), then one per 10 s
 * again until 300 s. The slow count (half-life 30 s) needs a few burst
 * arrivals to reach the first VM's 0.2 /s and, once the burst is over,
 * about 30 log2(4 / 0.2) = 130 s to fall back under it. The fast one
 * (3 s) holds more than two arrivals at a rate far above the slow one
 * from the burst's third arrival on, and falls 3 of its standard
 * deviations under the slow rate some 10 s after the burst: with
 * detection the pool fills sooner (more of the burst hits) and empties
 * sooner (fewer idle VM-seconds; the quiet arrivals after the burst
 * then miss, as they are not worth a VM at this cost). A lone quiet
 * arrival is no burst. */
static void marginal_burst(void **state)
{
	struct poolsim_config cfg = config(POOL_MARGINAL);
	struct arrivals a = regular(230, 0, 300);
	static const double fast[] = { 0.05 };
	struct poolsim_costs costs = trace_costs;
	struct poolsim_result with, without;
	unsigned int burst_with = 0, burst_without = 0;

	(void)state;
	for (size_t i = 1; i < a.n; i++)
		a.t[i] = a.t[i - 1] + (i <= 10 || i > 210 ? 10 : 0.05);
	costs.make_s = fast;
	cfg.max = 8;
	cfg.params.pool.params = (struct policy_params){
		.miss_cost_s = 5, .halflife_s = 30, .burst_halflife_s = 3,
		.burst_z = 3,
	};
	assert_int_equal(poolsim__run(&a, &costs, &cfg, &with), 0);
	cfg.params.pool.params.burst_halflife_s = 0;
	assert_int_equal(poolsim__run(&a, &costs, &cfg, &without), 0);
	for (size_t i = 10; i <= 210; i++) {
		burst_with += with.latency_s[i] < 0.5;
		burst_without += without.latency_s[i] < 0.5;
	}
	print_message("burst: %u of 201 hits and %.1f idle VM-s with "
		      "detection, %u and %.1f without\n", burst_with,
		      with.idle_vm_s, burst_without, without.idle_vm_s);
	assert_true(burst_with > burst_without);
	assert_true(with.idle_vm_s < without.idle_vm_s);
	/* the quiet part before holds nothing either way */
	for (size_t i = 0; i < 10; i++)
		assert_true(with.latency_s[i] == 0.5 &&
			    without.latency_s[i] == 0.5);
	poolsim__result_free(&with);
	poolsim__result_free(&without);
	free(a.t);
}

/* MARGINAL's peak on clustered arrivals: three bursts of 4 arrivals
 * 1 ms apart, at 0, 5 and 10 s, on a 20 s time line; refills of 50 ms
 * (constant: cs2 = 0), one worker, miss_cost_s 1, half-life 1 s, no
 * burst detection. The first VM is worth holding while the rate is at
 * least 1 / miss_cost_s (marginal_trace), i.e. the count c >= 1 / ln 2 =
 * 1.4427; a second never is at these rates (it would save 0.33 misses'
 * worth for about one idle VM at 2.9 /s). Without the peak, in every
 * burst: the first arrival lifts c to about 1.13 (the last burst's 4
 * decayed over 5 s, plus 1): target 0, miss; the second to 2.13: target
 * 1, refill until +51 ms, miss; the third and fourth come while it is
 * made: misses. c = 4.004 x 2^-(t - 0) after the first burst (4.129 and
 * 4.133 after the others) falls under 1.4427 at 1.47 s (6.52, 11.52):
 * reaped at the ticks of 1.5, 6.6 and 11.6. 0 hits, 12 misses; held
 * [0.051, 1.5] + [5.051, 6.6] + [10.051, 11.6] = 4.547 VM-s. With a
 * peak half-life of 10 s the first burst ends at 2.775 /s, 1.962 /s
 * still at 5 s: the VM stays, the second burst's first arrival hits
 * (refill until 5.05), the rest miss; its end, 2.862 /s, is the new
 * peak, 2.02 /s at 10 s: the third likewise, and at 20 s the peak is
 * still 1.43 /s. 2 hits, 10 misses; held [0.051, 5] + [5.05, 10] +
 * [10.05, 20] = 19.849 VM-s, none reaped. */
static void marginal_peak(void **state)
{
	struct poolsim_config cfg = config(POOL_MARGINAL);
	struct arrivals a = regular(12, 0, 20);
	static const double make[] = { 0.05 };
	struct poolsim_costs costs = trace_costs;
	struct poolsim_result r;

	(void)state;
	for (size_t i = 0; i < a.n; i++)
		a.t[i] = 5.0 * (double)(i / 4) + 0.001 * (double)(i % 4);
	costs.make_s = make;
	cfg.params.pool.params = (struct policy_params){
		.miss_cost_s = 1, .halflife_s = 1,
	};
	assert_int_equal(poolsim__run(&a, &costs, &cfg, &r), 0);
	assert_counts(&r, 0, 12, 0, 3, 3, 4.547);
	poolsim__result_free(&r);

	cfg.params.pool.params.peak_halflife_s = 10;
	assert_int_equal(poolsim__run(&a, &costs, &cfg, &r), 0);
	assert_counts(&r, 2, 10, 0, 3, 0, 19.849);
	for (size_t i = 0; i < a.n; i++)
		assert_close(r.latency_s[i], i == 4 || i == 8 ? 0.001 : 0.5,
			     1e-12);
	assert_int_equal(r.peak_held, 1);
	poolsim__result_free(&r);
	free(a.t);
}

/* ---- reproducibility ---- */

static void seeded(void **state)
{
	struct arrivals a;
	double hit[50], miss[50], make[50], service[50];
	struct poolsim_costs costs = {
		.hit_s = hit, .n_hit = 50, .miss_s = miss, .n_miss = 50,
		.make_s = make, .n_make = 50, .service_s = service,
		.n_service = 50, .vm_mib = 128,
	};
	struct stats_rng rng;

	(void)state;
	stats__rng_seed(&rng, 3);
	for (size_t i = 0; i < 50; i++) {
		hit[i] = 0.001 + 0.001 * stats__rng_uniform(&rng);
		miss[i] = 0.05 + 0.05 * stats__rng_uniform(&rng);
		make[i] = 0.2 + 0.3 * stats__rng_uniform(&rng);
		service[i] = 0.1 * stats__rng_uniform(&rng);
	}
	poisson(20, 600, &a);
	for (unsigned int p = 0; p < POOLSIM_POLICIES; p++) {
		struct poolsim_config cfg = config(p);
		struct poolsim_result r1, r2, r3;

		cfg.workers = 2;
		cfg.max = 16;
		assert_int_equal(poolsim__run(&a, &costs, &cfg, &r1), 0);
		assert_int_equal(poolsim__run(&a, &costs, &cfg, &r2), 0);
		cfg.seed = 2;
		assert_int_equal(poolsim__run(&a, &costs, &cfg, &r3), 0);
		assert_int_equal(r1.requests, a.n);
		assert_int_equal(r1.hits, r2.hits);
		assert_int_equal(r1.misses, r2.misses);
		assert_int_equal(r1.makes, r2.makes);
		assert_true(r1.idle_vm_s == r2.idle_vm_s);
		assert_memory_equal(r1.latency_s, r2.latency_s,
				    a.n * sizeof(double));
		assert_true(memcmp(r1.latency_s, r3.latency_s,
				   a.n * sizeof(double)) != 0);
		assert_true(r1.latency.p50 > 0 &&
			    r1.latency.p99 >= r1.latency.p50);
		poolsim__result_free(&r1);
		poolsim__result_free(&r2);
		poolsim__result_free(&r3);
	}
	arrivals__free(&a);
}

/* ---- refused inputs ---- */

static void bad_inputs(void **state)
{
	struct arrivals a = { .t = (double *)trace_t,
			      .n = ARRAY_LEN(trace_t), .span_s = 110 };
	static const double backwards[] = { 0, 2, 1 }, negative[] = { -1 };
	static const double zero[] = { 0 }, nan_[] = { NAN };
	struct poolsim_costs c;
	struct poolsim_config cfg;
	struct poolsim_result r;

	(void)state;
#define REFUSED(needle)                                                        \
	do {                                                                   \
		assert_int_equal(poolsim__run(&a, &c, &cfg, &r), -EINVAL);     \
		assert_msg(needle);                                            \
		assert_null(r.latency_s);                                      \
		a = (struct arrivals){ .t = (double *)trace_t,                 \
				       .n = ARRAY_LEN(trace_t),                \
				       .span_s = 110 };                        \
		c = trace_costs;                                               \
		cfg = config(POOL_FIXED);                                   \
	} while (0)

	c = trace_costs;
	cfg = config(POOL_FIXED);
	a.n = 0;
	REFUSED("no arrivals");
	a.t = (double *)backwards;
	a.n = 3;
	REFUSED("arrival 2 at 1 s");
	c.n_hit = 0;
	REFUSED("no hit latency samples");
	c.miss_s = negative;
	REFUSED("miss latency sample 0 is -1");
	c.make_s = zero;
	REFUSED("making time sample 0 is 0");
	c.service_s = nan_;
	REFUSED("service time sample 0 is nan");
	c.service_s = NULL;
	REFUSED("service time: 1 samples but no array");
	c.vm_mib = -1;
	REFUSED("memory per VM -1");
	cfg.workers = 0;
	REFUSED("0 refill workers");
	cfg.max = 0;
	REFUSED("maximum 0 VMs");
	cfg.params.fixed.n = 5;
	REFUSED("fixed: 5 VMs");
	cfg.policy = POOLSIM_TTL;
	cfg.params.ttl.ttl_s = 0;
	REFUSED("ttl: keep-alive 0 s");
	cfg.policy = POOLSIM_TTL;
	cfg.params.ttl.n = 0;
	REFUSED("ttl: 0 VMs");
	cfg.policy = POOLSIM_HYBRID;
	cfg.params.hybrid.tail_pct = 3;
	REFUSED("hybrid: percentiles 5 and 3");
	cfg.policy = POOLSIM_HYBRID;
	cfg.params.hybrid.bin_s = 0;
	REFUSED("hybrid: bins of 0 s");
	cfg.policy = POOLSIM_HYBRID;
	cfg.params.hybrid.margin = 1;
	REFUSED("hybrid: margins 1");
	cfg.policy = POOL_FOLLOW;
	cfg.params.pool.size = 9;
	REFUSED("follow: size 9");
	cfg.policy = POOL_FOLLOW;
	cfg.params.pool.params.halflife_s = 0;
	REFUSED("follow: half-life 0 s");
	cfg.policy = POOL_FOLLOW;
	cfg.params.pool.params.headroom = -1;
	REFUSED("follow: headroom -1");
	cfg.policy = POOL_MARGINAL;
	cfg.params.pool.params.miss_cost_s = INFINITY;
	REFUSED("marginal: miss cost inf");
	cfg.policy = POOL_MARGINAL;
	cfg.params.pool.params.burst_halflife_s = 60;
	REFUSED("marginal: burst half-life 60 s (0, or at most the half-life 10 s)");
	cfg.policy = POOL_MARGINAL;
	cfg.params.pool.params.peak_halflife_s = -1;
	REFUSED("marginal: peak half-life -1 s");
	cfg.policy = 42;
	REFUSED("unknown policy 42");
#undef REFUSED
	assert_int_equal(poolsim__run(&a, &c, NULL, &r), -EINVAL);
	assert_int_equal(poolsim__run(&a, &c, &cfg, NULL), -EINVAL);
	poolsim__result_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(erlang_c_waits),
		cmocka_unit_test(erlang_b_misses),
		cmocka_unit_test(fixed_trace),
		cmocka_unit_test(fixed_wait_trace),
		cmocka_unit_test(ttl_trace),
		cmocka_unit_test(ttl_wait_gives_up),
		cmocka_unit_test(hybrid_trace),
		cmocka_unit_test(follow_trace),
		cmocka_unit_test(marginal_trace),
		cmocka_unit_test(hybrid_prewarm),
		cmocka_unit_test(hybrid_out_of_bounds),
		cmocka_unit_test(hybrid_not_representative),
		cmocka_unit_test(marginal_burst),
		cmocka_unit_test(marginal_peak),
		cmocka_unit_test(seeded),
		cmocka_unit_test(bad_inputs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
