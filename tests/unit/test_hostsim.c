/* Unit tests for `tune host`'s simulator (sim/hostsim*.c): each policy on
 * small traces whose cold starts, evictions, windows and idle memory are
 * worked out by hand in the comments, under one shared budget. */
#include "arrivals_functions.h"
#include "err.h"
#include "hostsim.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define MAXF 4

/* A trace of n functions over nmin minutes from rows of counts. */
struct tr {
	struct fn_trace t;
	char *names[MAXF];
	uint32_t counts[MAXF * 4096];
	struct hostsim_guest g[MAXF];
};

static void make(struct tr *x, size_t nfn, size_t nmin,
		 const uint32_t rows[][64], double mem)
{
	static char n[MAXF][4] = { "f0", "f1", "f2", "f3" };

	memset(x, 0, sizeof(*x));
	for (size_t i = 0; i < nfn; i++) {
		x->names[i] = n[i];
		memcpy(&x->counts[i * nmin], rows[i], nmin * sizeof(uint32_t));
		x->g[i] = (struct hostsim_guest){ .mem_mib = mem, .cold_s = 1,
						  .hit_s = 0,
						  .idle_weight = 1 };
		for (size_t m = 0; m < nmin; m++)
			x->t.total += rows[i][m];
	}
	x->t.nfn = nfn;
	x->t.nmin = nmin;
	x->t.name = x->names;
	x->t.count = x->counts;
}

/* One function busy every `period` minutes, n times from minute 0. */
static void make_periodic(struct tr *x, size_t period, size_t n)
{
	static const uint32_t none[1][64];

	make(x, 1, 1, none, 100);
	x->t.nmin = period * (n - 1) + 1;
	assert_true(x->t.nmin <= 4096);
	memset(x->counts, 0, sizeof(x->counts));
	for (size_t k = 0; k < n; k++)
		x->counts[k * period] = 1;
	x->t.total = n;
}

static void run(struct tr *x, enum hostsim_policy p, double budget,
		double price, unsigned int keepalive, struct hostsim_result *r,
		struct hostsim_fn *per)
{
	struct hostsim_config cfg;

	hostsim__defaults(&cfg);
	cfg.policy = p;
	cfg.budget_mib = budget;
	cfg.price = price;
	cfg.keepalive = keepalive;
	assert_int_equal(hostsim__run(&x->t, x->g, &cfg, r, per), 0);
}

/* Keep-alive of 2 minutes, one function busy at minutes 0, 3 (3
 * invocations) and 15: each is a cold start (the VM is gone after
 * minutes 2 and 5), the 2 others of minute 3 are warm; idle are minutes
 * 1, 2, 4 and 5: 400 MiB-minutes = 23.4375 GiB-s. */
static void keepalive_expires(void **state)
{
	static const uint32_t rows[1][64] = {
		{ 1, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 },
	};
	struct tr x;
	struct hostsim_result r;
	struct hostsim_fn per[1];

	(void)state;
	make(&x, 1, 16, rows, 100);
	x.g[0].cold_s = 0.25;
	x.g[0].hit_s = 0.002;
	run(&x, HOSTSIM_KEEPALIVE, 1000, 0, 2, &r, per);
	assert_int_equal(r.invocations, 5);
	assert_int_equal(r.cold, 3);
	assert_int_equal(r.evictions, 0);
	assert_true(fabs(r.idle_gib_s - 23.4375) < 1e-9);
	assert_true(fabs(r.peak_mib - 100) < 1e-9);
	assert_true(fabs(r.start_s - (3 * 0.25 + 2 * 0.002)) < 1e-9);
	assert_true(fabs(per[0].idle_mib_min - 400) < 1e-9);
}

/* Three 100 MiB functions in 200 MiB: f0 busy at 0, 1, 2, f1 at 3, f2
 * at 4, f0 again at 5.
 * Greedy-Dual (cost 1 s): f0's priority is 3 x 1/100 = 0.03 after minute
 * 2, f1's 0.01: f2's cold start at 4 evicts f1 (the clock becomes 0.01),
 * and f0 is warm at 5: 3 cold starts, 1 eviction.
 * Keep-alive 10: f2 evicts the VM expiring first, f0 (2 + 10 < 3 + 10),
 * whose cold start at 5 evicts f1: 4 cold starts, 2 evictions. */
static const uint32_t shared_rows[3][64] = {
	{ 1, 1, 1, 0, 0, 1 },
	{ 0, 0, 0, 1, 0, 0 },
	{ 0, 0, 0, 0, 1, 0 },
};

static void greedy_dual_evicts_lowest_priority(void **state)
{
	struct tr x;
	struct hostsim_result r;
	struct hostsim_fn per[3];

	(void)state;
	make(&x, 3, 6, shared_rows, 100);
	run(&x, HOSTSIM_GREEDY_DUAL, 200, 0, 10, &r, per);
	assert_int_equal(r.invocations, 6);
	assert_int_equal(r.cold, 3);
	assert_int_equal(r.evictions, 1);
	assert_int_equal(per[1].evicted, 1);
	assert_int_equal(per[0].cold, 1);
	assert_true(fabs(r.peak_mib - 200) < 1e-9);
}

static void keepalive_evicts_first_expiry(void **state)
{
	struct tr x;
	struct hostsim_result r;
	struct hostsim_fn per[3];

	(void)state;
	make(&x, 3, 6, shared_rows, 100);
	run(&x, HOSTSIM_KEEPALIVE, 200, 0, 10, &r, per);
	assert_int_equal(r.cold, 4);
	assert_int_equal(r.evictions, 2);
	assert_int_equal(per[0].evicted, 1);
	assert_int_equal(per[1].evicted, 1);
	/* with room for all three nothing is evicted: 3 cold starts */
	run(&x, HOSTSIM_KEEPALIVE, 300, 0, 10, &r, per);
	assert_int_equal(r.cold, 3);
	assert_int_equal(r.evictions, 0);
}

/* Busy every 5 minutes from 0 to 60. The first 10 idle times are too
 * few for the histogram: the standard keep-alive (240 min) holds the VM,
 * idle 4 minutes of each of those 10 periods. From minute 50 on the
 * histogram (all idle times 5, CV sqrt(239) > 2) gives pre-warm
 * floor(0.9 x 5) = 4 and keep to ceil(1.1 x 5) = 6: the VM is unloaded
 * after each busy minute and loaded for minute 54 and 59, each idle 1
 * minute and each a hit. 1 cold start, 42 idle minutes. */
static void hybrid_prewarms_from_histogram(void **state)
{
	uint32_t rows[1][64] = { { 0 } };
	struct tr x;
	struct hostsim_result r;
	struct hostsim_fn per[1];

	(void)state;
	for (int m = 0; m <= 60; m += 5)
		rows[0][m] = 1;
	make(&x, 1, 61, (const uint32_t(*)[64])rows, 100);
	run(&x, HOSTSIM_HYBRID, 1000, 0, 10, &r, per);
	assert_int_equal(r.cold, 1);
	assert_int_equal(r.invocations, 13);
	assert_true(fabs(per[0].idle_mib_min - 4200) < 1e-9);
	assert_true(per[0].histogram);
	assert_int_equal(per[0].win_lo, 4);
	assert_int_equal(per[0].win_hi, 6);
}

/* Busy every 300 minutes, 12 times: every idle time is out of the
 * histogram's 240 minutes. The hybrid histogram keeps the standard 240
 * minutes after each (more than half out of bounds): 12 cold starts, 11
 * x 240 idle minutes. Ours keeps nothing once it has an idle time (no
 * window has hits): 12 cold starts, idle only the first 10 minutes. */
static void out_of_bounds(void **state)
{
	struct tr x;
	struct hostsim_result r;
	struct hostsim_fn per[1];

	(void)state;
	make_periodic(&x, 300, 12);
	run(&x, HOSTSIM_HYBRID, 1000, 0, 10, &r, per);
	assert_int_equal(r.cold, 12);
	assert_false(per[0].histogram);
	assert_int_equal(per[0].win_lo, 1);
	assert_int_equal(per[0].win_hi, 240);
	assert_true(fabs(per[0].idle_mib_min - 11 * 240 * 100) < 1e-9);
	run(&x, HOSTSIM_OURS, 1000, 1e-5, 10, &r, per);
	assert_int_equal(r.cold, 12);
	assert_int_equal(per[0].win_lo, 0);
	assert_true(fabs(per[0].idle_mib_min - 10 * 100) < 1e-9);
}

/* Ours, busy at 0, 3 and 5 (idle times 3 and 2), 1 GiB: after minute 5
 * the histogram is {2: 1, 3: 1}; its 5th percentile is 2. Windows and
 * values (hits - P x idle minutes):
 *   [1, 2] 1 - 3P, [1, 3] 2 - 3P, [2, 2] 1 - P, [2, 3] 2 - P.
 * P = 0.5: [2, 3] (1.5). P = 10^6: every value is negative, none.
 * Either way minute 5 is cold: after minute 3 (idle times {3}) the
 * window was [3, 3] (value 1, [1, 3] is 1 - 2P), a pre-warm for minute
 * 6, too late. */
static void ours_window_by_price(void **state)
{
	static const uint32_t rows[1][64] = { { 1, 0, 0, 1, 0, 1 } };
	struct tr x;
	struct hostsim_result r;
	struct hostsim_fn per[1];

	(void)state;
	make(&x, 1, 6, rows, 1024);
	run(&x, HOSTSIM_OURS, 4096, 0.5, 10, &r, per);
	assert_int_equal(per[0].win_lo, 2);
	assert_int_equal(per[0].win_hi, 3);
	run(&x, HOSTSIM_OURS, 4096, 1e6, 10, &r, per);
	assert_int_equal(per[0].win_lo, 0);
	assert_int_equal(per[0].win_hi, 0);
	assert_int_equal(r.cold, 2);
}

/* Ours on a 5-minute period, 1 GiB, price 1: the first VM is kept 10
 * minutes (idle 1-4, warm at 5); then the window [5, 5] (value 1, where
 * [1, 5] is 1 - 4P) pre-warms it for each busy minute: no idle minute
 * more, no cold start more. */
static void ours_prewarms(void **state)
{
	uint32_t rows[1][64] = { { 0 } };
	struct tr x;
	struct hostsim_result r;
	struct hostsim_fn per[1];

	(void)state;
	for (int m = 0; m <= 20; m += 5)
		rows[0][m] = 1;
	make(&x, 1, 21, (const uint32_t(*)[64])rows, 1024);
	run(&x, HOSTSIM_OURS, 4096, 1, 10, &r, per);
	assert_int_equal(r.cold, 1);
	assert_int_equal(per[0].win_lo, 5);
	assert_int_equal(per[0].win_hi, 5);
	assert_true(fabs(per[0].idle_mib_min - 4 * 1024) < 1e-9);
}

/* Two 100 MiB functions busy in one minute in a 100 MiB budget: the
 * second runs over it (peak 200 MiB) and is not kept. */
static void busy_vms_overflow(void **state)
{
	static const uint32_t rows[2][64] = { { 1, 0, 1 }, { 1, 0, 1 } };
	struct tr x;
	struct hostsim_result r;

	(void)state;
	make(&x, 2, 3, rows, 100);
	for (int p = 0; p < HOSTSIM_POLICIES; p++) {
		run(&x, (enum hostsim_policy)p, 100, 0, 10, &r, NULL);
		assert_int_equal(r.overflow, 2);
		assert_int_equal(r.cold, 3);
		assert_true(fabs(r.peak_mib - 200) < 1e-9);
	}
}

static void refused(void **state)
{
	static const uint32_t rows[1][64] = { { 1 } };
	struct tr x;
	struct hostsim_config cfg;
	struct hostsim_result r;

	(void)state;
	make(&x, 1, 1, rows, 100);
	hostsim__defaults(&cfg);
	cfg.budget_mib = 0;
	assert_int_equal(hostsim__run(&x.t, x.g, &cfg, &r, NULL), -EINVAL);
	hostsim__defaults(&cfg);
	cfg.keepalive = 0;
	assert_int_equal(hostsim__run(&x.t, x.g, &cfg, &r, NULL), -EINVAL);
	hostsim__defaults(&cfg);
	x.g[0].mem_mib = NAN;
	assert_int_equal(hostsim__run(&x.t, x.g, &cfg, &r, NULL), -EINVAL);
	assert_non_null(strstr(err__last(), "f0"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keepalive_expires),
		cmocka_unit_test(greedy_dual_evicts_lowest_priority),
		cmocka_unit_test(keepalive_evicts_first_expiry),
		cmocka_unit_test(hybrid_prewarms_from_histogram),
		cmocka_unit_test(out_of_bounds),
		cmocka_unit_test(ours_window_by_price),
		cmocka_unit_test(ours_prewarms),
		cmocka_unit_test(busy_vms_overflow),
		cmocka_unit_test(refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
