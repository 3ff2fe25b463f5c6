/* Statistics over raw samples (nanoseconds or any unit): descriptive
 * summaries, robust outlier checks, a bootstrap confidence interval of the
 * median, and two-sample tests for comparing runs. Pure functions; the
 * randomised ones take a seed and are reproducible. */
#ifndef COLDSTART_STATS_H
#define COLDSTART_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct summary {
	size_t n;
	double min, max, mean, stddev;
	double p50, p90, p99, p999;
	double cv;  /* coefficient of variation, stddev / mean (0 if mean 0) */
	double mad; /* median absolute deviation from p50, unscaled */
};

/* Sorts a copy of the samples and summarises them. -EINVAL when n == 0,
 * -ENOMEM when the copy cannot be made. */
int stats__summarize(const double *samples, size_t n, struct summary *out);

/* Percentile p (0..100) of ascending `sorted`, linearly interpolated
 * between closest ranks (Hyndman-Fan type 7, as R and NumPy default). */
double stats__percentile_sorted(const double *sorted, size_t n, double p);

/* stddev / mean; 0 when the mean is 0. */
double stats__cv(double mean, double stddev);

/* Median of unsorted samples (a copy is made). -EINVAL when n == 0,
 * -ENOMEM. */
int stats__median(const double *samples, size_t n, double *out);

/* 1.4826 * MAD estimates the standard deviation of normal data. */
#define STATS_MAD_SCALE 1.4826
/* Default outlier distance, in robust standard deviations (1.4826 MAD).
 * hyperfine warns at 10; we warn earlier because our series are long and
 * a handful of slow samples is what a reader should look at. */
#define STATS_OUTLIER_K 3.0

struct outliers {
	double median;
	double mad;      /* unscaled */
	double limit;    /* k * STATS_MAD_SCALE * mad */
	size_t count;    /* samples with |x - median| > limit */
	bool first_slow; /* samples[0] > median + limit: a cold first run */
};

/* Robust outlier check on samples in run order, with limit k robust
 * standard deviations (STATS_OUTLIER_K). The rule is hyperfine's modified
 * z-score: when more than half the samples are equal (MAD 0), every sample
 * that differs from the median counts as an outlier. -EINVAL when n == 0
 * or k <= 0, -ENOMEM. */
int stats__outliers(const double *samples, size_t n, double k,
		    struct outliers *out);

/* A small seeded PRNG (xoshiro256**, state expanded from the seed with
 * splitmix64), so every randomised result is reproducible. */
struct stats_rng {
	uint64_t s[4];
};

/* splitmix64: advances *state and returns the next output. */
uint64_t stats__splitmix64(uint64_t *state);
void stats__rng_seed(struct stats_rng *rng, uint64_t seed);
uint64_t stats__rng_next(struct stats_rng *rng);
/* Uniform in [0, 1) with 53 random bits. */
double stats__rng_uniform(struct stats_rng *rng);
/* Uniform integer in [0, n), without modulo bias; n > 0. */
uint64_t stats__rng_below(struct stats_rng *rng, uint64_t n);
/* Standard normal deviate (Box-Muller). */
double stats__rng_normal(struct stats_rng *rng);

/* Sorts a[0..n) ascending (-0 before 0) in O(n); 0 or -ENOMEM. */
int stats__sort(double *a, size_t n);

/* Samples above which the interval of the median is not bootstrapped:
 * resampling costs resamples x n (1000 x 100,000 is about a second), and
 * at this n the bootstrap percentile interval of the median is the
 * order-statistic one to within a rank or two. */
#define STATS_BOOTSTRAP_MAX_N 100000

/* Percentile bootstrap confidence interval of the median: `resamples`
 * resamples of size n drawn with replacement, the interval between the
 * (1 - level) / 2 and (1 + level) / 2 percentiles of their medians.
 * Above STATS_BOOTSTRAP_MAX_N samples, in O(n) time, the distribution-free
 * interval between the order statistics of ranks n/2 -+ z sqrt(n) / 2
 * (z the normal quantile of (1 + level) / 2), which the bootstrap
 * approaches for large n. -EINVAL when n == 0, resamples == 0 or level
 * is outside (0, 1); -ENOMEM. */
int stats__bootstrap_median_ci(const double *samples, size_t n,
			       unsigned int resamples, double level,
			       uint64_t seed, double *lo, double *hi);

/* The normal quantile: z with P(Z > z) = p, for 0 < p < 1. */
double stats__z_upper(double p);

/* Samples per side below which, without ties, the Mann-Whitney p-value
 * comes from the exact distribution of U (as R's wilcox.test). */
#define STATS_MWU_EXACT_BELOW 50

struct mann_whitney {
	double u;   /* pairs with x > y, ties counted 1/2 (R's W statistic) */
	double z;   /* normal approximation's z (0 when exact) */
	double p;   /* two-sided p-value */
	bool exact; /* from the exact distribution */
};

/* Two-sided Mann-Whitney U (Wilcoxon rank-sum) test of x against y. Exact
 * when both samples have fewer than STATS_MWU_EXACT_BELOW values and there
 * are no ties: p = min(1, 2 * P(U <= u)) for the lower tail, or the upper
 * tail when u > nx * ny / 2. Otherwise the normal approximation with tie
 * and continuity corrections. This is R's wilcox.test(x, y) with its
 * defaults. Identical samples give p = 1. -EINVAL when a side is empty,
 * -ENOMEM. */
int stats__mann_whitney(const double *x, size_t nx, const double *y,
			size_t ny, struct mann_whitney *out);

enum stats_center {
	STATS_MEAN,
	STATS_MEDIAN,
};

struct permutation {
	double diff; /* center(y) - center(x) */
	double p;    /* two-sided */
	bool exact;  /* every split enumerated */
};

/* Two-sided permutation test on the difference of means or medians: the
 * share of relabellings of the pooled samples whose |difference| is at
 * least the observed one (differences within 1e-9 of the largest |value|
 * count as equal). When the pooled samples have at most `resamples`
 * distinct splits, all are enumerated and p = count / splits; otherwise
 * `resamples` random splits give p = (count + 1) / (resamples + 1), which
 * never reaches 0. -EINVAL when a side is empty or resamples == 0,
 * -ENOMEM. */
int stats__permutation_test(const double *x, size_t nx, const double *y,
			    size_t ny, enum stats_center center,
			    unsigned int resamples, uint64_t seed,
			    struct permutation *out);

struct shift_ci {
	double estimate; /* Hodges-Lehmann: median of all y[j] - x[i] */
	double lo, hi;   /* -INFINITY / INFINITY when no bound exists */
};

/* The shift of y against x (y - x, or log y - log x with `logs`, whose
 * exp is the ratio y / x) and a distribution-free confidence interval
 * for it (Moses; the Mann-Whitney U test's inversion): [lo, hi] are the
 * k-th smallest and k-th largest of the nx * ny pairwise differences,
 * k from the normal approximation of U's null distribution at quantile
 * z, without the tie correction and rounded down, so each side bounds
 * the shift with error probability at most about P(Z > z). With so few
 * samples that no k >= 1 exists, the bounds are infinite. Exact
 * selection by bisection on the value, without an nx * ny array. `logs`
 * needs every sample > 0. -EINVAL when a side is empty or z < 0,
 * -ENOMEM. */
int stats__shift_ci(const double *x, size_t nx, const double *y, size_t ny,
		    double z, bool logs, struct shift_ci *out);

#endif
