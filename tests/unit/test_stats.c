/* Unit tests for stats/stats.c against values derived by hand,
 * from textbook examples, or by independent exact enumeration (kept in the
 * comments so they can be re-derived). */
#include "stats.h"
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#define assert_close(a, b, tol) \
	assert_true(fabs((double)(a) - (double)(b)) <= (tol))

/* {2,4,4,4,5,5,7,9}: mean 5, sample variance 32/7, median 4.5; absolute
 * deviations from 4.5 are 0.5 (x5), 2.5 (x2), 4.5, so MAD = 0.5; p90 is
 * rank 0.9 * 7 = 6.3 between 7 and 9: 7.6. */
static void summary_known_values(void **state)
{
	static const double x[] = { 9, 4, 5, 2, 4, 7, 4, 5 };
	struct summary s;

	(void)state;
	assert_int_equal(stats__summarize(x, ARRAY_LEN(x), &s), 0);
	assert_int_equal(s.n, 8);
	assert_close(s.mean, 5, 1e-12);
	assert_close(s.stddev, sqrt(32.0 / 7), 1e-12);
	assert_close(s.cv, sqrt(32.0 / 7) / 5, 1e-12);
	assert_close(s.p50, 4.5, 1e-12);
	assert_close(s.p90, 7.6, 1e-12);
	/* type 7: rank 0.99 * 7 = 6.93 and 0.999 * 7 = 6.993, between 7
	 * and 9: 7 + 0.93 * 2 = 8.86 and 7 + 0.993 * 2 = 8.986 */
	assert_close(s.p99, 8.86, 1e-12);
	assert_close(s.p999, 8.986, 1e-12);
	assert_close(s.mad, 0.5, 1e-12);
	assert_close(s.min, 2, 0);
	assert_close(s.max, 9, 0);
	assert_int_equal(stats__summarize(x, 0, &s), -EINVAL);
}

/* {0, 1, 4, ..., 10000} (i^2, i = 0..100, shuffled): p99 is rank
 * 0.99 * 100 = 99 exactly, 99^2 = 9801; p99.9 is rank 99.9, 9801 + 0.9 *
 * (10000 - 9801) = 9980.1; p90 is rank 90, 8100. */
static void tail_percentiles_known_values(void **state)
{
	double x[101];
	struct summary s;

	(void)state;
	for (int i = 0; i <= 100; i++)
		x[(i * 37) % 101] = (double)i * i;
	assert_int_equal(stats__summarize(x, ARRAY_LEN(x), &s), 0);
	assert_close(s.p90, 8100, 1e-9);
	assert_close(s.p99, 9801, 1e-9);
	assert_close(s.p999, 9980.1, 1e-9);
	assert_close(s.max, 10000, 0);
}

static void cv_of_zero_mean_is_zero(void **state)
{
	(void)state;
	assert_close(stats__cv(0, 3), 0, 0);
	assert_close(stats__cv(10, 2), 0.2, 1e-15);
	assert_close(stats__cv(-10, 2), 0.2, 1e-15);
}

/* Quickselect's median agrees with sorting on random data with many
 * duplicates, odd and even sizes. */
static void median_matches_sorting(void **state)
{
	struct stats_rng rng;
	double a[64], sorted[64], m;

	(void)state;
	stats__rng_seed(&rng, 7);
	for (int trial = 0; trial < 500; trial++) {
		size_t n = 1 + stats__rng_below(&rng, ARRAY_LEN(a));
		uint64_t range = 1 + stats__rng_below(&rng, 20);

		for (size_t i = 0; i < n; i++)
			a[i] = (double)stats__rng_below(&rng, range);
		memcpy(sorted, a, n * sizeof(*a));
		qsort(sorted, n, sizeof(*a), cmp_double);
		assert_int_equal(stats__median(a, n, &m), 0);
		assert_close(m, stats__percentile_sorted(sorted, n, 50), 0);
	}
	assert_int_equal(stats__median(a, 0, &m), -EINVAL);
}

/* {1,2,3,4,100}: median 3, MAD 1, limit 3 * 1.4826 = 4.4478: only 100. */
static void outliers_counts_far_samples(void **state)
{
	static const double x[] = { 1, 2, 3, 4, 100 };
	struct outliers o;

	(void)state;
	assert_int_equal(stats__outliers(x, ARRAY_LEN(x), STATS_OUTLIER_K, &o),
			 0);
	assert_close(o.median, 3, 0);
	assert_close(o.mad, 1, 0);
	assert_close(o.limit, 3 * 1.4826, 1e-12);
	assert_int_equal(o.count, 1);
	assert_false(o.first_slow);
	/* With hyperfine's limit of 10 robust sigmas, 100 still is one. */
	assert_int_equal(stats__outliers(x, ARRAY_LEN(x), 10, &o), 0);
	assert_int_equal(o.count, 1);
	assert_int_equal(stats__outliers(x, ARRAY_LEN(x), 0, &o), -EINVAL);
	assert_int_equal(stats__outliers(x, 0, 3, &o), -EINVAL);
}

/* {50,10,11,9,10,12,10}: median 10, deviations {40,0,1,1,0,2,0}, MAD 1;
 * the first run (50) is beyond 10 + 4.4478, 12 is not. */
static void outliers_flag_a_slow_first_run(void **state)
{
	static const double x[] = { 50, 10, 11, 9, 10, 12, 10 };
	static const double fast_first[] = { 1, 10, 11, 9, 10, 12, 10 };
	struct outliers o;

	(void)state;
	assert_int_equal(stats__outliers(x, ARRAY_LEN(x), 3, &o), 0);
	assert_true(o.first_slow);
	assert_int_equal(o.count, 1);
	/* A fast first run is an outlier but not a slow first run. */
	assert_int_equal(stats__outliers(fast_first, 7, 3, &o), 0);
	assert_false(o.first_slow);
	assert_int_equal(o.count, 1);
}

/* MAD 0: every sample that differs from the median is an outlier (the
 * modified z-score is infinite), equal ones are not. */
static void outliers_with_zero_mad(void **state)
{
	static const double x[] = { 5, 5, 5, 5, 6 };
	struct outliers o;

	(void)state;
	assert_int_equal(stats__outliers(x, ARRAY_LEN(x), 3, &o), 0);
	assert_close(o.mad, 0, 0);
	assert_int_equal(o.count, 1);
	assert_int_equal(stats__outliers(x, 4, 3, &o), 0);
	assert_int_equal(o.count, 0);
	assert_false(o.first_slow);
}

/* splitmix64 from state 0: the published reference outputs. xoshiro256**
 * seeded with 42: outputs of the reference algorithm re-derived in
 * Python (state from four splitmix64 outputs of 42). */
static void rng_reference_outputs(void **state)
{
	struct stats_rng rng;
	uint64_t s = 0;

	(void)state;
	assert_true(stats__splitmix64(&s) == 0xe220a8397b1dcdafull);
	assert_true(stats__splitmix64(&s) == 0x6e789e6aa1b965f4ull);
	assert_true(stats__splitmix64(&s) == 0x06c45d188009454full);
	stats__rng_seed(&rng, 42);
	assert_true(stats__rng_next(&rng) == 0x15780b2e0c2ec716ull);
	assert_true(stats__rng_next(&rng) == 0x6104d9866d113a7eull);
	assert_true(stats__rng_next(&rng) == 0xae17533239e499a1ull);
}

static void rng_ranges_and_moments(void **state)
{
	enum { N = 200000 };
	struct stats_rng rng;
	unsigned int hist[6] = { 0 };
	double sum = 0, sq = 0;

	(void)state;
	stats__rng_seed(&rng, 1);
	for (int i = 0; i < N; i++) {
		double u = stats__rng_uniform(&rng);
		uint64_t k = stats__rng_below(&rng, 6);

		assert_true(u >= 0 && u < 1);
		assert_true(k < 6);
		hist[k]++;
	}
	for (int k = 0; k < 6; k++) /* expected N/6 = 33333, sd 167 */
		assert_true(hist[k] > 32500 && hist[k] < 34200);
	for (int i = 0; i < N; i++) {
		double z = stats__rng_normal(&rng);

		sum += z;
		sq += z * z;
	}
	assert_close(sum / N, 0, 0.01);   /* sd of the mean 0.0022 */
	assert_close(sq / N, 1, 0.015);   /* sd of the variance 0.0032 */
	assert_true(stats__rng_below(&rng, 1) == 0);
}

static void bootstrap_of_constant_is_a_point(void **state)
{
	static const double x[] = { 7, 7, 7, 7 };
	double lo, hi;

	(void)state;
	assert_int_equal(stats__bootstrap_median_ci(x, 4, 1000, 0.95, 1, &lo,
						    &hi), 0);
	assert_close(lo, 7, 0);
	assert_close(hi, 7, 0);
}

/* For {1,2,3} the resampled median is 1 when at least two of three draws
 * are 1: P = 3 (1/3)^2 (2/3) + (1/3)^3 = 7/27 = 0.259; 3 likewise; 2 with
 * P = 13/27. So the 90 % interval (5th, 95th percentiles) is [1, 3] and
 * the 40 % interval (30th, 70th) is [2, 2]. */
static void bootstrap_three_values(void **state)
{
	static const double x[] = { 3, 1, 2 };
	double lo, hi;

	(void)state;
	assert_int_equal(stats__bootstrap_median_ci(x, 3, 10000, 0.90, 3, &lo,
						    &hi), 0);
	assert_close(lo, 1, 0);
	assert_close(hi, 3, 0);
	assert_int_equal(stats__bootstrap_median_ci(x, 3, 10000, 0.40, 3, &lo,
						    &hi), 0);
	assert_close(lo, 2, 0);
	assert_close(hi, 2, 0);
}

/* n = 400 standard normal values: the median's standard error is about
 * 1.2533 / sqrt(400) = 0.063, so a 95 % interval is about 0.25 wide and
 * contains the sample median. Same seed, same interval. */
static void bootstrap_normal_width_and_seed(void **state)
{
	enum { N = 400 };
	struct stats_rng rng;
	double x[N], lo, hi, lo2, hi2, med;

	(void)state;
	stats__rng_seed(&rng, 11);
	for (int i = 0; i < N; i++)
		x[i] = stats__rng_normal(&rng);
	assert_int_equal(stats__median(x, N, &med), 0);
	assert_int_equal(stats__bootstrap_median_ci(x, N, 2000, 0.95, 5, &lo,
						    &hi), 0);
	assert_true(lo <= med && med <= hi);
	assert_true(hi - lo > 0.15 && hi - lo < 0.35);
	assert_int_equal(stats__bootstrap_median_ci(x, N, 2000, 0.95, 5, &lo2,
						    &hi2), 0);
	assert_true(lo == lo2 && hi == hi2);
	assert_int_equal(stats__bootstrap_median_ci(x, N, 0, 0.95, 5, &lo,
						    &hi), -EINVAL);
	assert_int_equal(stats__bootstrap_median_ci(x, N, 10, 1.0, 5, &lo,
						    &hi), -EINVAL);
	assert_int_equal(stats__bootstrap_median_ci(x, 0, 10, 0.9, 5, &lo,
						    &hi), -EINVAL);
}

/* Completely separated samples of 5: U = 0, and only 1 of the C(10,5) =
 * 252 arrangements is as extreme on each side: p = 2/252 = 0.00794. */
static void mwu_separated_exact(void **state)
{
	static const double lo[] = { 1, 2, 3, 4, 5 };
	static const double hi[] = { 6, 7, 8, 9, 10 };
	struct mann_whitney r;

	(void)state;
	assert_int_equal(stats__mann_whitney(lo, 5, hi, 5, &r), 0);
	assert_true(r.exact);
	assert_close(r.u, 0, 0);
	assert_close(r.p, 2.0 / 252, 1e-15);
	assert_int_equal(stats__mann_whitney(hi, 5, lo, 5, &r), 0);
	assert_close(r.u, 25, 0);
	assert_close(r.p, 2.0 / 252, 1e-15);
}

/* R's ?wilcox.test example (Hollander & Wolfe p. 110): W = 35, one-sided
 * p = 0.1272; the exact two-sided p is 2 * 382 / 3003 = 764/3003 (by
 * enumerating the 3003 arrangements). */
static void mwu_r_example(void **state)
{
	static const double x[] = { 0.80, 0.83, 1.89, 1.04, 1.45,
				    1.38, 1.91, 1.64, 0.73, 1.46 };
	static const double y[] = { 1.15, 0.88, 0.90, 0.74, 1.21 };
	struct mann_whitney r;

	(void)state;
	assert_int_equal(stats__mann_whitney(x, 10, y, 5, &r), 0);
	assert_true(r.exact);
	assert_close(r.u, 35, 0);
	assert_close(r.p, 764.0 / 3003, 1e-14);
	assert_close(r.p / 2, 0.1272, 5e-5);
	assert_int_equal(stats__mann_whitney(y, 5, x, 10, &r), 0);
	assert_close(r.u, 15, 0);
	assert_close(r.p, 764.0 / 3003, 1e-14);
}

/* Small exact cases: {1,2,3} vs {1.5,2.5,3.5}: U = 3 of 9; P(U <= 3) is
 * 7 of the 20 arrangements, p = 0.7. 12 vs 15 values (below): U = 42,
 * p = 2 P(U <= 42) = 80791/4345965 from the recurrence
 * f(m,n,u) = f(m-1,n,u-n) + f(m,n-1,u). */
static void mwu_small_exact(void **state)
{
	static const double a[] = { 1, 2, 3 }, b[] = { 1.5, 2.5, 3.5 };
	static const double x[] = { 1.00, 1.37, 1.74, 2.11, 2.48, 2.85,
				    3.22, 3.59, 3.96, 4.33, 4.70, 5.07 };
	static const double y[] = { 1.901, 2.311, 2.721, 3.131, 3.541,
				    3.951, 4.361, 4.771, 5.181, 5.591,
				    6.001, 6.411, 6.821, 7.231, 7.641 };
	struct mann_whitney r;

	(void)state;
	assert_int_equal(stats__mann_whitney(a, 3, b, 3, &r), 0);
	assert_close(r.u, 3, 0);
	assert_close(r.p, 0.7, 1e-15);
	assert_int_equal(stats__mann_whitney(x, 12, y, 15, &r), 0);
	assert_true(r.exact);
	assert_close(r.u, 42, 0);
	assert_close(r.p, 80791.0 / 4345965, 1e-15);
}

/* The largest exact case, 49 vs 49 (counts beyond 2^53): x = 0..48,
 * y = x + 7.5, U = 861; p = 0.015546031479292479 from the Gaussian
 * binomial [98 choose 49] computed with exact integers. */
static void mwu_largest_exact(void **state)
{
	double x[49], y[49];
	struct mann_whitney r;

	(void)state;
	for (int i = 0; i < 49; i++) {
		x[i] = i;
		y[i] = i + 7.5;
	}
	assert_int_equal(stats__mann_whitney(x, 49, y, 49, &r), 0);
	assert_true(r.exact);
	assert_close(r.u, 861, 0);
	assert_close(r.p, 0.015546031479292479, 1e-12);
}

/* Ties force the normal approximation, as in R. x = {1,2,2,3,4},
 * y = {3,3,4,5,6,6}: mid-ranks give W = 3.5; ties (2,2),(3,3,3),(4,4),
 * (6,6): sum(t^3 - t) = 6 + 24 + 6 + 6 = 42; sigma^2 = 30/12 * (12 -
 * 42/110) = 29.045; z = (3.5 - 15 + 0.5) / 5.3894 = -2.04105,
 * p = 0.041246. */
static void mwu_ties_normal(void **state)
{
	static const double x[] = { 1, 2, 2, 3, 4 };
	static const double y[] = { 3, 3, 4, 5, 6, 6 };
	struct mann_whitney r;

	(void)state;
	assert_int_equal(stats__mann_whitney(x, 5, y, 6, &r), 0);
	assert_false(r.exact);
	assert_close(r.u, 3.5, 0);
	assert_close(r.z, -2.041049777456005, 1e-12);
	assert_close(r.p, 0.04124587961051678, 1e-12);
}

/* 50 vs 50 without ties: the normal approximation. x = 0..49,
 * y = x + 10.5: U = 780, z = (780 - 1250 + 0.5) / sqrt(2500 * 101 / 12)
 * = -3.23665, p = 0.0012094. */
static void mwu_large_normal(void **state)
{
	double x[50], y[50];
	struct mann_whitney r;

	(void)state;
	for (int i = 0; i < 50; i++) {
		x[i] = i;
		y[i] = i + 10.5;
	}
	assert_int_equal(stats__mann_whitney(x, 50, y, 50, &r), 0);
	assert_false(r.exact);
	assert_close(r.u, 780, 0);
	assert_close(r.z, -3.2366484315271147, 1e-12);
	assert_close(r.p, 0.001209423107033346, 1e-12);
}

/* Identical samples give p = 1 whichever path computes it. */
static void mwu_identical_is_one(void **state)
{
	double x[60];
	struct mann_whitney r;

	(void)state;
	for (int i = 0; i < 60; i++)
		x[i] = 1000 + i * 3;
	assert_int_equal(stats__mann_whitney(x, 5, x, 5, &r), 0);
	assert_close(r.p, 1, 0);
	assert_int_equal(stats__mann_whitney(x, 60, x, 60, &r), 0);
	assert_close(r.p, 1, 0);
	for (int i = 0; i < 60; i++)
		x[i] = 42;
	assert_int_equal(stats__mann_whitney(x, 30, x + 30, 30, &r), 0);
	assert_close(r.p, 1, 0);
	assert_int_equal(stats__mann_whitney(x, 0, x, 3, &r), -EINVAL);
}

/* Separated samples of 5: on the mean only the two extreme splits reach
 * |diff| = 5: p = 2/252. On the median, any split with {8,9,10} on one
 * side and {1,2,3} on the other does (C(4,2) = 6 each way): p = 12/252. */
static void perm_separated_exact(void **state)
{
	static const double lo[] = { 1, 2, 3, 4, 5 };
	static const double hi[] = { 6, 7, 8, 9, 10 };
	struct permutation r;

	(void)state;
	assert_int_equal(stats__permutation_test(lo, 5, hi, 5, STATS_MEAN,
						 10000, 1, &r), 0);
	assert_true(r.exact);
	assert_close(r.diff, 5, 1e-12);
	assert_close(r.p, 2.0 / 252, 1e-15);
	assert_int_equal(stats__permutation_test(lo, 5, hi, 5, STATS_MEDIAN,
						 10000, 1, &r), 0);
	assert_true(r.exact);
	assert_close(r.p, 12.0 / 252, 1e-15);
}

/* x = {1,3,5,7,9,11}, y = {2,4,6,8,10,13}: by enumerating the 924
 * splits, p = 152/231 on the mean (diff 7/6) and 17/21 on the median
 * (diff 1). Random splits estimate the same values. */
static void perm_exact_and_random_agree(void **state)
{
	static const double x[] = { 1, 3, 5, 7, 9, 11 };
	static const double y[] = { 2, 4, 6, 8, 10, 13 };
	struct permutation r, r2;

	(void)state;
	assert_int_equal(stats__permutation_test(x, 6, y, 6, STATS_MEAN,
						 924, 1, &r), 0);
	assert_true(r.exact);
	assert_close(r.diff, 7.0 / 6, 1e-12);
	assert_close(r.p, 152.0 / 231, 1e-14);
	assert_int_equal(stats__permutation_test(x, 6, y, 6, STATS_MEDIAN,
						 924, 1, &r), 0);
	assert_close(r.p, 17.0 / 21, 1e-14);
	/* 923 < 924 splits: random; sd of the estimate about 0.016. */
	assert_int_equal(stats__permutation_test(x, 6, y, 6, STATS_MEAN,
						 923, 9, &r), 0);
	assert_false(r.exact);
	assert_close(r.p, 152.0 / 231, 0.06);
	assert_int_equal(stats__permutation_test(x, 6, y, 6, STATS_MEAN,
						 923, 9, &r2), 0);
	assert_true(r.p == r2.p);
}

/* Random path: separated samples of 10 (184756 splits, 2 as extreme):
 * with 20000 resamples p = (hits + 1) / 20001, small but never 0. Equal
 * samples give p = 1 on both paths. */
static void perm_random_bounds(void **state)
{
	double lo[20], hi[20];
	struct permutation r;

	(void)state;
	for (int i = 0; i < 20; i++) {
		lo[i] = 100 + i;
		hi[i] = 200 + i;
	}
	assert_int_equal(stats__permutation_test(lo, 10, hi, 10, STATS_MEAN,
						 20000, 3, &r), 0);
	assert_false(r.exact);
	assert_true(r.p > 0 && r.p < 0.001);
	assert_int_equal(stats__permutation_test(lo, 20, lo, 20, STATS_MEDIAN,
						 1000, 3, &r), 0);
	assert_false(r.exact);
	assert_close(r.p, 1, 0);
	assert_int_equal(stats__permutation_test(lo, 3, lo, 3, STATS_MEAN,
						 1000, 3, &r), 0);
	assert_true(r.exact);
	assert_close(r.p, 1, 0);
	assert_int_equal(stats__permutation_test(lo, 3, lo, 0, STATS_MEAN,
						 1000, 3, &r), -EINVAL);
	assert_int_equal(stats__permutation_test(lo, 3, lo, 3, STATS_MEAN,
						 0, 3, &r), -EINVAL);
}

/* The resampling's intervals stay what they were when each resample was
 * copied and selected (values from that code, same seed). */
static void bootstrap_keeps_its_intervals(void **state)
{
	double x[40], lo, hi;

	(void)state;
	for (int i = 0; i < 40; i++)
		x[i] = (double)((i * 7919) % 101) + (i % 3) * 0.25;
	assert_int_equal(stats__bootstrap_median_ci(x, 37, 1000, 0.95, 3, &lo,
						    &hi), 0);
	assert_true(lo == 34.5 && hi == 63.25);
	assert_int_equal(stats__bootstrap_median_ci(x, 40, 1000, 0.90, 3, &lo,
						    &hi), 0);
	assert_true(lo == 38.625 && hi == 62.625);
}

/* Above STATS_BOOTSTRAP_MAX_N: the order statistics of ranks n/2 -+
 * 1.96 sqrt(n) / 2 (1-based 49690 and 50312 of 100,001), in O(n). */
static void bootstrap_above_bound_is_order_statistics(void **state)
{
	size_t n = STATS_BOOTSTRAP_MAX_N + 1;
	double *x = malloc(n * sizeof(*x)), lo, hi;

	(void)state;
	assert_non_null(x);
	assert_int_equal(n, 100001);
	for (size_t i = 0; i < n; i++) /* 0..n-1 shuffled: 7919 is prime */
		x[i] = (double)((i * 7919) % n);
	assert_int_equal(stats__bootstrap_median_ci(x, n, 1000, 0.95, 1, &lo,
						    &hi), 0);
	assert_true(lo == 49689 && hi == 50311);
	free(x);
}

/* U against a count of pairs, ties 1/2, over negatives, -0 and 0,
 * huge and tiny magnitudes (the sort orders the values' bits). */
static void mann_whitney_counts_pairs(void **state)
{
	static const double pick[] = { -1e300, -3, -0.0, 0.0, 1e-310, 2, 2,
				       7.5, 1e300 };
	struct stats_rng rng;

	(void)state;
	stats__rng_seed(&rng, 11);
	for (int t = 0; t < 200; t++) {
		size_t nx = 1 + stats__rng_below(&rng, 70);
		size_t ny = 1 + stats__rng_below(&rng, 70);
		double x[70], y[70], pairs = 0;
		struct mann_whitney mw;

		for (size_t i = 0; i < nx; i++)
			x[i] = pick[stats__rng_below(&rng, 9)];
		for (size_t j = 0; j < ny; j++)
			y[j] = pick[stats__rng_below(&rng, 9)];
		for (size_t i = 0; i < nx; i++)
			for (size_t j = 0; j < ny; j++)
				pairs += x[i] > y[j]    ? 1
					 : x[i] == y[j] ? 0.5
							: 0;
		assert_int_equal(stats__mann_whitney(x, nx, y, ny, &mw), 0);
		assert_true(mw.u == pairs);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(summary_known_values),
		cmocka_unit_test(tail_percentiles_known_values),
		cmocka_unit_test(cv_of_zero_mean_is_zero),
		cmocka_unit_test(median_matches_sorting),
		cmocka_unit_test(outliers_counts_far_samples),
		cmocka_unit_test(outliers_flag_a_slow_first_run),
		cmocka_unit_test(outliers_with_zero_mad),
		cmocka_unit_test(rng_reference_outputs),
		cmocka_unit_test(rng_ranges_and_moments),
		cmocka_unit_test(bootstrap_of_constant_is_a_point),
		cmocka_unit_test(bootstrap_three_values),
		cmocka_unit_test(bootstrap_normal_width_and_seed),
		cmocka_unit_test(bootstrap_keeps_its_intervals),
		cmocka_unit_test(bootstrap_above_bound_is_order_statistics),
		cmocka_unit_test(mann_whitney_counts_pairs),
		cmocka_unit_test(mwu_separated_exact),
		cmocka_unit_test(mwu_r_example),
		cmocka_unit_test(mwu_small_exact),
		cmocka_unit_test(mwu_largest_exact),
		cmocka_unit_test(mwu_ties_normal),
		cmocka_unit_test(mwu_large_normal),
		cmocka_unit_test(mwu_identical_is_one),
		cmocka_unit_test(perm_separated_exact),
		cmocka_unit_test(perm_exact_and_random_agree),
		cmocka_unit_test(perm_random_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
