/* How often `coldstart compare`'s rule (p < alpha AND the median worse by
 * more than the threshold) flags a regression on synthetic noise: A/A
 * trials (both sides from one distribution; every flag is a false alarm)
 * and trials where NEW is 10 % slower (every miss is a missed regression),
 * and how often the gate says it cannot decide (inconclusive: exit 3).
 * A benchmark that prints numbers, not a pass/fail test:
 *
 *   build/tests/unit/compare_power [-n SAMPLES] [TRIALS] [RESULTS.json]
 *
 * (defaults: 20 samples per side, 100 trials).
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
};

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
		sample(nz, 1, seed + 2, a);
		sample(nz, SHIFT, seed + 3, b);
		if (compare__samples(a, n, b, n, false, o.threshold, &o, &r))
			return -1;
		t->detected += r.verdict == COMPARE_REGRESSED;
		t->shift_inconclusive += r.verdict == COMPARE_INCONCLUSIVE;
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
		       "%7u/%u\n", nz->name, names[test], t.aa_flagged, count,
		       t.aa_significant, count, t.detected, count,
		       t.aa_inconclusive, count, t.shift_inconclusive, count);
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

	if (!root || compare__parse(root, &doc) < 0) {
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
	compare__free(&doc);
	return ret;
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
	int c;

	while ((c = getopt(argc, argv, "n:")) != -1)
		if (c != 'n' || (n = atoi(optarg)) < 1 || n > MAX_N)
			goto usage;
	if (optind < argc && (count = (unsigned int)atoi(argv[optind++])) == 0)
		goto usage;
	printf("n = %d per side, alpha 0.01, threshold 5 %%; %u trials per "
	       "row; shift: NEW = 1.10 x\n\n", n, count);
	printf("%-34s %-12s %12s %15s %15s %13s %13s\n", "noise", "test",
	       "A/A flagged", "A/A p < alpha", "10 % detected", "A/A inconcl.",
	       "10 % inconcl.");
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
		if (report(&models[i], count, 1000 * (i + 1)) < 0)
			return 1;
	if (optind < argc && empirical(argv[optind], count) < 0)
		return 1;
	return 0;
usage:
	fputs("usage: compare_power [-n SAMPLES] [TRIALS] [RESULTS.json]\n",
	      stderr);
	return 2;
}
