/* Comparing two result documents of one benchmark (BASE and NEW), as
 * result__parse reads them: checking they are comparable, a verdict per
 * series (a significance test plus a practical threshold on the median),
 * and the export formats CI tools consume. Pure functions over parsed
 * JSON; errors are -errno with a message in err__last(). */
#ifndef COLDSTART_COMPARE_H
#define COLDSTART_COMPARE_H

#include "result.h"
#include "stats.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* 0 when both documents come from the same bench; -EINVAL otherwise (no
 * --force can make different benches comparable). */
int compare__same_bench(const struct result_doc *base,
			const struct result_doc *new_);

/* 0 when both come from the same host and configuration: both native or
 * both from the same emulated host (result__sysinfo_emulated; checked
 * first), sysinfo's hostname, CPU model and KVM flavour, and the
 * "config" object apart from its "count" (the number of samples, which
 * the tests allow to differ). -EINVAL with a message naming the first difference otherwise. */
int compare__same_setup(const struct result_doc *base,
			const struct result_doc *new_);

/* Changes of the host between two documents that same_setup lets pass
 * but that move timings: kernel release and command line, CPU
 * microcode, KVM module parameters (sysinfo; a field one side does not
 * record is no change). Their description, "kernel 6.1 -> 6.12; CPU
 * microcode 0x1 -> 0x2; kvm.halt_poll_ns 200000 -> 0", goes into buf
 * (truncated to len); returns how many there are. */
size_t compare__host_changes(const struct result_doc *base,
			     const struct result_doc *new_, char *buf,
			     size_t len);

/* The permutation test's bound: samples of both sides together. Each of
 * its 10,000 random splits costs a pass over them all (2 million took a
 * minute, 100,000 twenty seconds; 20,000 take about four); above this it
 * is refused, and the U test (n log n) compares any number. */
#define COMPARE_PERMUTATION_MAX_N 20000

enum compare_test {
	COMPARE_UTEST,       /* Mann-Whitney U (default, as benchstat) */
	COMPARE_PERMUTATION, /* permutation test on the median difference */
};

/* A per-series threshold: series whose name matches the fnmatch(3)
 * pattern use `threshold` (a fraction); the last match wins. */
struct metric_threshold {
	const char *pattern;
	double threshold;
};

struct compare_opts {
	double alpha;     /* significance level (0.01) */
	double threshold; /* practical threshold on the median, fraction */
	const struct metric_threshold *overrides;
	size_t nr_overrides;
	enum compare_test test;
	size_t min_samples; /* fewer on a side: inconclusive (0: no minimum) */
	/* more on a side: refused (0: no bound), see COMPARE_MAX_SAMPLES */
	size_t max_samples;
};

/* The default bound on a series' samples per side: at 4 million a side
 * compare takes about 8 s on a 2-core host (n log n beyond), and above it
 * a run is refused with the bound named rather than left to run on. */
#define COMPARE_MAX_SAMPLES 4000000

/* The power the minimum detectable effect is computed for. */
#define COMPARE_POWER 0.8

/* alpha 0.01, threshold 5 %, the U test, no overrides, no minimum,
 * COMPARE_MAX_SAMPLES. */
void compare__default_opts(struct compare_opts *o);

/* The threshold that applies to the series `name`. */
double compare__threshold_for(const struct compare_opts *o,
			      const char *name);

/* Every verdict but REGRESSED and INCONCLUSIVE is a pass, and needs
 * evidence: the change's confidence bound (compare_row.worst) below the
 * threshold. */
enum compare_verdict {
	COMPARE_SAME,      /* not significant: benchstat's "~" */
	COMPARE_WITHIN,    /* significant, |delta| within the threshold */
	COMPARE_IMPROVED,  /* significant, better beyond the threshold */
	COMPARE_REGRESSED, /* significant, worse beyond the threshold */
	COMPARE_INCONCLUSIVE, /* not a regression, but the samples cannot
			       * tell: see compare__samples */
};

/* The comparison of one series. Spreads are the half-width of a 95 %
 * bootstrap interval of the median (1000 resamples, fixed seed), as a
 * fraction of the median, like benchstat's "± x%". */
struct compare_row {
	const char *name, *unit;
	size_t n_base, n_new;
	double base_median, new_median;
	double base_spread, new_spread;
	double delta; /* new median / base median - 1 */
	double p;
	double threshold;
	double min_p; /* the smallest p these sample sizes can give */
	double base_noise, new_noise; /* robust sd / median (1.4826 MAD) */
	double mde;    /* compare__mde at this noise and these counts */
	size_t needed; /* compare__needed_n for the margin between the
			* threshold and the estimated change; 0: no count
			* is enough */
	/* The change as NEW / BASE - 1 by Hodges-Lehmann (on the samples'
	 * logarithms, so a ratio; on the values over BASE's median when a
	 * sample is <= 0), and its two one-sided bounds at confidence
	 * 1 - alpha (a two-sided 1 - 2 alpha interval), infinite when the
	 * counts allow none: see stats__shift_ci. */
	double shift, ci_lo, ci_hi;
	/* The bound in the worse direction, as a worsening: ci_hi, or
	 * -ci_lo for higher-is-better series. A pass needs worst <
	 * threshold: a non-inferiority test at level alpha. */
	double worst;
	enum compare_verdict verdict;
	bool higher_is_better;
	struct outliers base_out, new_out;
};

/* The smallest two-sided p any rank test can give nb against nn samples
 * (the two most extreme of all C(nb + nn, nb) splits): with fewer
 * samples than make it fall below alpha, no difference is ever
 * significant. */
double compare__smallest_p(size_t nb, size_t nn);

/* The normal quantile: z with P(Z > z) = p, for 0 < p < 1. */
double compare__z_upper(double p);

/* The minimum detectable effect, a fraction of the median: the shift of
 * the median a two-sided rank test at `alpha` finds with probability
 * COMPARE_POWER, given each side's relative noise (robust sd / median)
 * and sample count. The normal-theory formula (z_{alpha/2} + z_{power})
 * * sqrt(sb^2/nb + sn^2/nn), widened by sqrt(pi/3) because the U test
 * needs pi/3 times the samples a t test needs on normal data (its
 * asymptotic relative efficiency is 3/pi). */
double compare__mde(double sb, size_t nb, double sn, size_t nn, double alpha);

/* The smallest n with compare__smallest_p(n, n) < alpha. */
size_t compare__min_n(double alpha);

/* About how many samples per side make compare__mde at most `threshold`
 * at this noise, and no fewer than compare__min_n(alpha); 0 when
 * threshold <= 0 (no count is enough). */
size_t compare__needed_n(double sb, double sn, double threshold,
			 double alpha);

/* Compares samples of one metric. A series regresses when p < alpha AND
 * its median got worse by more than `threshold`. Any other series passes
 * only on evidence: it is INCONCLUSIVE unless the confidence bound of
 * its change in the worse direction lies below `threshold` (row->worst
 * < threshold: at most an alpha chance to pass a change of the
 * threshold's size), and when a side has fewer than o->min_samples
 * samples. -EINVAL when a side has no samples or, with the permutation
 * test, both have more than COMPARE_PERMUTATION_MAX_N together;
 * -ENOMEM. */
int compare__samples(const double *base, size_t nb, const double *new_,
		     size_t nn, bool higher_is_better, double threshold,
		     const struct compare_opts *o, struct compare_row *row);

struct compare_result {
	struct compare_row *rows; /* series in both, in BASE's order */
	size_t nr_rows;
	size_t regressions;
	size_t inconclusive;
	/* names in one side only; one only in BASE (missing from NEW, or
	 * without samples there) is never a pass */
	const char **only_base, **only_new;
	size_t nr_only_base, nr_only_new;
};

/* Matches series by name and compares each pair. -EINVAL when no series
 * is common, a common series changed its unit or has more than
 * o->max_samples samples on a side; -ENOMEM. */
int compare__docs(const struct result_doc *base,
		  const struct result_doc *new_, const struct compare_opts *o,
		  struct compare_result *res);
void compare__free_result(struct compare_result *res);

/* The median's relative spread: the larger half of its 95 % bootstrap
 * interval over |median| (0 for a median of 0). 0 or -errno with a
 * message. */
int compare__median_spread(const double *x, size_t n, double median,
			   double *spread);

/* compare_export.c: github-action-benchmark's customSmallerIsBetter JSON: one entry per
 * lower-is-better series, {"name": "BENCH/SERIES", "unit", "value":
 * median (ns series in ms), "range": "± x%"}; with `bigger`, the
 * customBiggerIsBetter JSON of the higher-is-better series instead (the
 * tool takes one direction per file). New reference. */
json_t *compare__github_json(const struct result_doc *doc, bool bigger);

/* Go benchmark text format, one line per sample
 * ("BenchmarkBENCH/SERIES 1 123456 ns/op") after "key: value"
 * configuration lines, so benchstat reads our results. */
void compare__write_gobench(const struct result_doc *doc, FILE *out);

#endif
