/* How often `coldstart compare`'s rule (p < alpha AND the median worse by
 * more than the threshold) flags a regression on synthetic noise: A/A
 * trials (both sides from one distribution; every flag is a false alarm)
 * and trials where NEW is 10 % slower, twice the 5 % threshold (every
 * miss is a missed regression, every pass a wrong exit 0), how often the
 * gate passes (exit 0: the change's confidence bound below the
 * threshold) and how often it says it cannot decide (inconclusive: exit
 * 3). A benchmark that prints numbers, not a pass/fail test:
 *
 *   build/tests/unit/compare_power [-n SAMPLES] [TRIALS] [RESULTS.json]
 *   build/tests/unit/compare_power -g [TRIALS]
 *   build/tests/unit/compare_power -D DRIFT_PCT [TRIALS]
 *
 * (defaults: 20 samples per side, 100 trials; -g: the U test over a grid
 * of sample counts and noise levels; -D: with the host drifting between
 * runs, BASE and NEW as separate runs against interleaved blocks, as
 * `bench ab` runs them).
 * With RESULTS.json (e.g. results/reference-pvm-2core/lifecycle.json),
 * each of its series also serves as empirical noise: samples are drawn
 * from it with replacement. */
#include "compare.h"
#include "err.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_N 1000
#define SHIFT 1.10

static int n = 20; /* samples per side */

struct noise {
	const char *name;
	double sigma;          /* lognormal log-sd */
	double spike_share;    /* share of samples slowed by 1.5x..3x */
	const double *pool;    /* empirical samples instead, or NULL */
	size_t pool_n;
};

static double draw(const struct noise *nz, struct stats_rng *rng)
{
	double x;

	if (nz->pool)
		return nz->pool[stats__rng_below(rng, nz->pool_n)];
	x = 1.5e6 * exp(nz->sigma * stats__rng_normal(rng));
	if (stats__rng_uniform(rng) < nz->spike_share)
		x *= 1.5 + 1.5 * stats__rng_uniform(rng);
	return x;
}

static void sample(const struct noise *nz, double scale, uint64_t seed,
		   double *x)
{
	struct stats_rng rng;

	stats__rng_seed(&rng, seed);
	for (int i = 0; i < n; i++)
		x[i] = scale * draw(nz, &rng);
}

struct tally {
	unsigned int aa_flagged, aa_significant, detected;
	unsigned int aa_inconclusive, shift_inconclusive;
	unsigned int aa_passed, shift_passed;
};

static bool passed(const struct compare_row *r)
{
	return r->verdict != COMPARE_REGRESSED &&
	       r->verdict != COMPARE_INCONCLUSIVE;
}

static int trials(const struct noise *nz, enum compare_test test,
		  unsigned int count, uint64_t seed0, struct tally *t)
{
	struct compare_opts o;
	struct compare_row r;
	static double a[MAX_N], b[MAX_N];

	compare__default_opts(&o);
	o.test = test;
	*t = (struct tally){ 0 };
	for (unsigned int i = 0; i < count; i++) {
		uint64_t seed = seed0 + 4ull * i;

		sample(nz, 1, seed, a);
		sample(nz, 1, seed + 1, b);
		if (compare__samples(a, n, b, n, false, o.threshold, &o, &r))
			return -1;
		t->aa_flagged += r.verdict == COMPARE_REGRESSED;
		t->aa_significant += r.p < o.alpha;
		t->aa_inconclusive += r.verdict == COMPARE_INCONCLUSIVE;
		t->aa_passed += passed(&r);
		sample(nz, 1, seed + 2, a);
		sample(nz, SHIFT, seed + 3, b);
		if (compare__samples(a, n, b, n, false, o.threshold, &o, &r))
			return -1;
		t->detected += r.verdict == COMPARE_REGRESSED;
		t->shift_inconclusive += r.verdict == COMPARE_INCONCLUSIVE;
		t->shift_passed += passed(&r);
	}
	return 0;
}

static int report(const struct noise *nz, unsigned int count, uint64_t seed)
{
	static const char *const names[] = { "U test", "permutation" };

	for (int test = COMPARE_UTEST; test <= COMPARE_PERMUTATION; test++) {
		struct tally t;

		if (trials(nz, test, count, seed, &t) < 0) {
			fprintf(stderr, "compare_power: %s\n", err__last());
			return -1;
		}
		printf("%-34s %-12s %6u/%-5u %9u/%-5u %9u/%-5u %7u/%-5u "
		       "%7u/%-5u %7u/%-5u %7u/%u\n", nz->name, names[test],
		       t.aa_flagged, count, t.aa_significant, count, t.detected,
		       count, t.aa_inconclusive, count, t.shift_inconclusive,
		       count, t.aa_passed, count, t.shift_passed, count);
	}
	return 0;
}

static int empirical(const char *path, unsigned int count)
{
	json_error_t e;
	json_t *root = json_load_file(path, 0, &e);
	struct result_doc doc;
	char name[128];
	int ret = -1;

	if (!root || result__parse(root, &doc) < 0) {
		fprintf(stderr, "compare_power: %s: %s\n", path,
			root ? err__last() : e.text);
		json_decref(root);
		return -1;
	}
	json_decref(root);
	for (size_t i = 0; i < doc.nr_series; i++) {
		struct noise nz = { name, 0, 0, doc.series[i].samples,
				    doc.series[i].n };
		struct summary s;

		stats__summarize(nz.pool, nz.pool_n, &s);
		snprintf(name, sizeof(name), "%s (CV %.0f %%)",
			 doc.series[i].name, 100 * s.cv);
		if (report(&nz, count, 9000 + 1000 * i) < 0)
			goto out;
	}
	ret = 0;
out:
	result__free(&doc);
	return ret;
}

/* The U test at several sample counts per noise model, one Markdown
 * row each: the targets are A/A flagged <= 1 % and 10 % passed <= 1 %
 * everywhere. */
static int grid(const struct noise *models, size_t nr_models,
		unsigned int count)
{
	static const int counts[] = { 5, 10, 20, 30, 50, 100, 200 };

	printf("| noise (lognormal) | n per side | A/A flagged | A/A passed | "
	       "10 %% detected | 10 %% passed | A/A inconclusive | 10 %% "
	       "inconclusive |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < nr_models; i++)
		for (size_t k = 0; k < sizeof(counts) / sizeof(*counts); k++) {
			struct tally t;

			n = counts[k];
			if (trials(&models[i], COMPARE_UTEST, count,
				   1000 * (i + 1) + 100000 * k, &t) < 0) {
				fprintf(stderr, "compare_power: %s\n",
					err__last());
				return -1;
			}
			printf("| %s | %d | %u/%u | %u/%u | %u/%u | %u/%u | "
			       "%u/%u | %u/%u |\n", models[i].name, n,
			       t.aa_flagged, count, t.aa_passed, count,
			       t.detected, count, t.shift_passed, count,
			       t.aa_inconclusive, count, t.shift_inconclusive,
			       count);
			fflush(stdout);
		}
	return 0;
}

/* ---- drift: separate runs against interleaved blocks (bench ab) ---- */

#define BLOCK 10

/* n samples of lognormal noise sd 5 % times `scale`, with the host's
 * drift: one offset per run (separate), or one per block of BLOCK
 * samples shared by both sides' blocks (interleaved: `shared` holds
 * them; NULL draws the offsets here). */
static void drifting(double *x, double scale, double drift,
		     const double *shared, struct stats_rng *rng)
{
	double run = exp(drift * stats__rng_normal(rng));

	for (int i = 0; i < n; i++)
		x[i] = scale * 1.5e6 * exp(0.05 * stats__rng_normal(rng)) *
		       (shared ? shared[i / BLOCK] : run);
}

struct drift_tally {
	unsigned int aa_flagged, detected, passed;
};

static int drift_trials(double drift, bool interleaved, unsigned int count,
			struct drift_tally *t)
{
	static double a[MAX_N], b[MAX_N], off[MAX_N / BLOCK + 1];
	struct compare_opts o;
	struct compare_row r;
	struct stats_rng rng;

	compare__default_opts(&o);
	*t = (struct drift_tally){ 0 };
	stats__rng_seed(&rng, 77 + (uint64_t)n + (interleaved ? 1u << 20 : 0));
	for (unsigned int i = 0; i < count; i++) {
		for (double shift = 1.0; shift <= 1.11; shift += 0.1) {
			for (int k = 0; k <= n / BLOCK; k++)
				off[k] = exp(drift * stats__rng_normal(&rng));
			drifting(a, 1, drift, interleaved ? off : NULL, &rng);
			drifting(b, shift, drift, interleaved ? off : NULL,
				 &rng);
			if (compare__samples(a, n, b, n, false, o.threshold, &o,
					     &r))
				return -1;
			if (shift == 1.0)
				t->aa_flagged += r.verdict == COMPARE_REGRESSED;
			else {
				t->detected += r.verdict == COMPARE_REGRESSED;
				t->passed += passed(&r);
			}
		}
	}
	return 0;
}

/* The same gate on the same noise (sd 5 %) with the host drifting by
 * `drift` (log-sd) between runs: BASE and NEW as two separate runs, or
 * interleaved in blocks of BLOCK samples as bench ab runs them. */
static int drift_table(double drift, unsigned int count)
{
	static const int counts[] = { 10, 20, 30, 50, 100, 200 };

	printf("noise sd 5 %%, drift sd %g %% between runs (interleaved: "
	       "per block of %d); %u trials; shift: NEW = 1.10 x\n\n"
	       "| n per side | separate: A/A flagged | separate: 10 %% "
	       "detected | separate: 10 %% passed | interleaved: A/A "
	       "flagged | interleaved: 10 %% detected | interleaved: 10 %% "
	       "passed |\n|---:|---:|---:|---:|---:|---:|---:|\n",
	       100 * drift, BLOCK, count);
	for (size_t k = 0; k < sizeof(counts) / sizeof(*counts); k++) {
		struct drift_tally s, i;

		n = counts[k];
		if (drift_trials(drift, false, count, &s) < 0 ||
		    drift_trials(drift, true, count, &i) < 0) {
			fprintf(stderr, "compare_power: %s\n", err__last());
			return -1;
		}
		printf("| %d | %u/%u | %u/%u | %u/%u | %u/%u | %u/%u | %u/%u "
		       "|\n", n, s.aa_flagged, count, s.detected, count,
		       s.passed, count, i.aa_flagged, count, i.detected, count,
		       i.passed, count);
		fflush(stdout);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct noise models[] = {
		{ "lognormal, sd 2 %", 0.02, 0, NULL, 0 },
		{ "lognormal, sd 5 %", 0.05, 0, NULL, 0 },
		{ "lognormal, sd 5 %, 5 % spikes", 0.05, 0.05, NULL, 0 },
		{ "lognormal, sd 10 %", 0.10, 0, NULL, 0 },
		{ "lognormal, sd 15 %", 0.15, 0, NULL, 0 },
	};
	unsigned int count = 100;
	bool by_n = false;
	double drift = -1;
	int c;

	while ((c = getopt(argc, argv, "gn:D:")) != -1) {
		if (c == 'g')
			by_n = true;
		else if (c == 'D')
			drift = atof(optarg) / 100;
		else if (c != 'n' || (n = atoi(optarg)) < 1 || n > MAX_N)
			goto usage;
	}
	if (optind < argc && (count = (unsigned int)atoi(argv[optind++])) == 0)
		goto usage;
	if (by_n)
		return grid(models, sizeof(models) / sizeof(models[0]), count)
			       ? 1 : 0;
	if (drift >= 0)
		return drift_table(drift, count) ? 1 : 0;
	printf("n = %d per side, alpha 0.01, threshold 5 %%; %u trials per "
	       "row; shift: NEW = 1.10 x\n\n", n, count);
	printf("%-34s %-12s %12s %15s %15s %13s %13s %13s %13s\n", "noise",
	       "test", "A/A flagged", "A/A p < alpha", "10 % detected",
	       "A/A inconcl.", "10 % inconcl.", "A/A passed", "10 % passed");
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
		if (report(&models[i], count, 1000 * (i + 1)) < 0)
			return 1;
	if (optind < argc && empirical(argv[optind], count) < 0)
		return 1;
	return 0;
usage:
	fputs("usage: compare_power [-n SAMPLES] [TRIALS] [RESULTS.json]\n"
	      "       compare_power -g [TRIALS]\n"
	      "       compare_power -D DRIFT_PCT [TRIALS]\n", stderr);
	return 2;
}
