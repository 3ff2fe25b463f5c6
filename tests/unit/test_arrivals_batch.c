/* Unit tests for sim/arrivals_batch.c: the "batch:" text, and batches
 * drawn with a known mean size, a heavy (Pareto) tail, members at once or
 * spread over a window, in ascending order, the same for the same seed. */
#include "arrivals.h"
#include "err.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static void assert_msg(const char *needle)
{
	if (!strstr(err__last(), needle))
		fail_msg("message '%s' lacks '%s'", err__last(), needle);
}

static void test_parse(void **state)
{
	struct arrivals_spec s;

	(void)state;
	assert_int_equal(arrivals__parse_spec("batch:0.5,8", &s), 0);
	assert_int_equal(s.kind, ARRIVALS_BATCH);
	assert_true(s.batch.rate == 0.5 && s.batch.size_a == 8 &&
		    s.batch.size_kind == BATCH_FIXED && s.batch.within_s == 0);
	assert_int_equal(arrivals__parse_spec("batch:2,geom:5,within=250ms",
					      &s), 0);
	assert_true(s.batch.size_kind == BATCH_GEOM && s.batch.size_a == 5 &&
		    fabs(s.batch.within_s - 0.25) < 1e-12);
	assert_int_equal(arrivals__parse_spec("batch:1,pareto:1.2", &s), 0);
	assert_true(s.batch.size_kind == BATCH_PARETO &&
		    s.batch.size_a == 1.2 && s.batch.size_max == 1000);
	assert_int_equal(arrivals__parse_spec("batch:1,pareto:1.2:50", &s), 0);
	assert_true(s.batch.size_max == 50);

	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "batch:", "batch takes RATE" },
		{ "batch:0,4", "batch takes RATE" },
		{ "batch:1", "batch takes RATE" },
		{ "batch:1,0", "whole number from 1" },
		{ "batch:1,2.5", "whole number from 1" },
		{ "batch:1,geom:0.5", "geom:MEAN" },
		{ "batch:1,pareto:0", "pareto:ALPHA" },
		{ "batch:1,pareto:1:0", "pareto:ALPHA" },
		{ "batch:1,pareto:1:x", "pareto:ALPHA" },
		{ "batch:1,4,within=-1s", "within=" },
		{ "batch:1,4,within=soon", "within=" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		assert_int_equal(arrivals__parse_spec(bad[i].text, &s),
				 -EINVAL);
		assert_msg(bad[i].msg);
		assert_msg("accepted: poisson:RATE");
	}
}

/* Fixed batches at once: every arrival shares its time with size - 1
 * others, and the rate is the batch rate times the size. */
static void test_fixed_at_once(void **state)
{
	struct arrivals_spec s;
	struct arrivals a;

	(void)state;
	assert_int_equal(arrivals__parse_spec("batch:2,5", &s), 0);
	assert_int_equal(arrivals__make(&s, 1000, 1, 7, &a), 0);
	assert_int_equal(a.n % 5, 0);
	for (size_t i = 0; i < a.n; i += 5)
		assert_true(a.t[i] == a.t[i + 4] &&
			    (i == 0 || a.t[i] > a.t[i - 1]));
	assert_true(fabs(arrivals__mean_rate(&a) - 10) < 1);
	assert_non_null(strstr(a.desc, "batch 2/s of 5"));
	arrivals__free(&a);
}

/* Pareto sizes: mean near sum k^-alpha, and a tail: some batches above
 * 20 times the median; spread members stay in [start, start + within),
 * sorted, and the same seed draws the same times. */
static void test_pareto_spread(void **state)
{
	struct arrivals_spec s;
	struct arrivals a, b;
	double mean = 0, gap_max = 0;
	size_t big = 0, run = 1;

	(void)state;
	assert_int_equal(arrivals__parse_spec(
				 "batch:1,pareto:1.5:1000,within=100ms", &s),
			 0);
	assert_int_equal(arrivals__make(&s, 20000, 1, 3, &a), 0);
	assert_int_equal(arrivals__make(&s, 20000, 1, 3, &b), 0);
	assert_int_equal(a.n, b.n);
	assert_memory_equal(a.t, b.t, a.n * sizeof(double));
	for (double k = 1; k <= 1000; k++)
		mean += pow(k, -1.5);
	assert_true(fabs(arrivals__mean_rate(&a) / mean - 1) < 0.15);
	for (size_t i = 1; i < a.n; i++) {
		assert_true(a.t[i] >= a.t[i - 1]);
		if (a.t[i] - a.t[i - 1] < 0.1) {
			run++;
		} else {
			big += run > 20;
			run = 1;
		}
		gap_max = fmax(gap_max, a.t[i] - a.t[i - 1]);
	}
	/* P(size > 20) = 21^-1.5, about 1 %: of 20,000 batches, ~200 */
	assert_true(big > 50);
	assert_true(gap_max > 1);
	arrivals__free(&a);
	arrivals__free(&b);
}

static void test_limits(void **state)
{
	struct arrivals_spec s;
	struct arrivals a;

	(void)state;
	assert_int_equal(arrivals__parse_spec("batch:1e6,1000000", &s), 0);
	assert_int_equal(arrivals__make(&s, 3600, 1, 1, &a), -E2BIG);
	assert_msg("more than");
	assert_int_equal(arrivals__parse_spec("batch:1,2", &s), 0);
	assert_int_equal(arrivals__make(&s, 0, 1, 1, &a), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_fixed_at_once),
		cmocka_unit_test(test_pareto_spread),
		cmocka_unit_test(test_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
