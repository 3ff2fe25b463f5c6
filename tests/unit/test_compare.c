/* Unit tests for analysis/compare.c and the reader it compares with
 * (resultfmt/result_read.c): verdicts on synthetic samples, result
 * parsing, comparability checks and the export formats. */
#include "compare.h"
#include "err.h"
#include "samples.h"

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

#define N 20

static struct compare_row compare(const double *a, size_t na,
				  const double *b, size_t nb, bool higher,
				  double threshold, enum compare_test test)
{
	struct compare_opts o;
	struct compare_row row = { 0 };

	compare__default_opts(&o);
	o.test = test;
	assert_int_equal(compare__samples(a, na, b, nb, higher, threshold, &o,
					  &row), 0);
	return row;
}

static void identical_inputs_are_the_same(void **state)
{
	double a[N];
	struct compare_row r;

	(void)state;
	samples__lognormal(a, N, 1.5e6, 0.02, 1);
	r = compare(a, N, a, N, false, 0.05, COMPARE_UTEST);
	assert_int_equal(r.verdict, COMPARE_SAME);
	assert_true(r.p == 1);
	assert_true(r.delta == 0);
	assert_int_equal(r.n_base, N);
	assert_int_equal(r.n_new, N);
	r = compare(a, N, a, N, false, 0.05, COMPARE_PERMUTATION);
	assert_int_equal(r.verdict, COMPARE_SAME);
	assert_true(r.p == 1);
}

/* Median 1.5 ms, 5 % noise, NEW 20 % slower, n = 20 per side. */
static void shift_of_20_percent_regresses(void **state)
{
	double a[N], b[N];
	struct compare_row r;

	(void)state;
	samples__lognormal(a, N, 1.5e6, 0.05, 1);
	samples__lognormal(b, N, 1.8e6, 0.05, 2);
	r = compare(a, N, b, N, false, 0.05, COMPARE_UTEST);
	assert_int_equal(r.verdict, COMPARE_REGRESSED);
	assert_true(r.p < 0.001);
	assert_true(r.delta > 0.10 && r.delta < 0.30);
	r = compare(a, N, b, N, false, 0.05, COMPARE_PERMUTATION);
	assert_int_equal(r.verdict, COMPARE_REGRESSED);
	/* Beyond the practical threshold only if it is set above 20 %. */
	r = compare(a, N, b, N, false, 0.40, COMPARE_UTEST);
	assert_int_equal(r.verdict, COMPARE_WITHIN);
}

/* Two draws of the same noise, and a real but small change (2 % at 1 %
 * noise, n = 50): neither is a regression; the second is significant. */
static void noise_within_threshold_is_not_a_regression(void **state)
{
	double a[50], b[50];
	struct compare_row r;

	(void)state;
	samples__lognormal(a, N, 1.5e6, 0.05, 3);
	samples__lognormal(b, N, 1.5e6, 0.05, 4);
	r = compare(a, N, b, N, false, 0.05, COMPARE_UTEST);
	assert_int_not_equal(r.verdict, COMPARE_REGRESSED);
	assert_true(fabs(r.delta) < 0.05);
	samples__lognormal(a, 50, 1.5e6, 0.01, 5);
	samples__lognormal(b, 50, 1.53e6, 0.01, 6);
	r = compare(a, 50, b, 50, false, 0.05, COMPARE_UTEST);
	assert_true(r.p < 0.01);
	assert_int_equal(r.verdict, COMPARE_WITHIN);
}

static void improvement_is_not_a_regression(void **state)
{
	double a[N], b[N];
	struct compare_row r;

	(void)state;
	samples__lognormal(a, N, 1.5e6, 0.05, 7);
	samples__lognormal(b, N, 1.2e6, 0.05, 8);
	r = compare(a, N, b, N, false, 0.05, COMPARE_UTEST);
	assert_int_equal(r.verdict, COMPARE_IMPROVED);
	assert_true(r.delta < -0.1);
	/* The same drop in a higher-is-better metric is a regression. */
	r = compare(a, N, b, N, true, 0.05, COMPARE_UTEST);
	assert_int_equal(r.verdict, COMPARE_REGRESSED);
}

/* Too few samples can never be significant at 0.01: 3+3 gives at best
 * p = 2/20, so even NEW 10x slower is inconclusive, never "same". */
static void tiny_samples_are_inconclusive(void **state)
{
	static const double a[] = { 1, 2, 3 }, b[] = { 10, 20, 30 };
	struct compare_row r;

	(void)state;
	r = compare(a, 3, b, 3, false, 0.05, COMPARE_UTEST);
	assert_true(fabs(r.min_p - 0.1) < 1e-12);
	assert_true(fabs(r.p - 0.1) < 1e-12);
	assert_int_equal(r.verdict, COMPARE_INCONCLUSIVE);
	assert_true(isinf(r.worst));
	/* NEW estimated 10x slower: no count shows it within 5 % */
	assert_int_equal(r.needed, 0);
	r = compare(a, 3, a, 3, false, 0.05, COMPARE_UTEST);
	assert_int_equal(r.verdict, COMPARE_INCONCLUSIVE);
	assert_true(r.needed >= compare__min_n(0.01));
}

/* The Moses interval by hand: x = 1 2 3, y = 4 5 6 have the nine
 * differences 1 2 2 3 3 3 4 4 5. z = 1: k = floor(9/2 - sqrt(9 * 7 /
 * 12)) = 2, so [2nd, 8th] = [2, 4]; z = 0: k = 4, [3, 3]; z = 3: no
 * k >= 1, no bound. */
static void shift_interval_by_hand(void **state)
{
	static const double x[] = { 3, 1, 2 }, y[] = { 6, 4, 5 };
	struct shift_ci ci;

	(void)state;
	assert_int_equal(stats__shift_ci(x, 3, y, 3, 1, false, &ci), 0);
	assert_true(ci.estimate == 3 && ci.lo == 2 && ci.hi == 4);
	assert_int_equal(stats__shift_ci(x, 3, y, 3, 0, false, &ci), 0);
	assert_true(ci.lo == 3 && ci.hi == 3);
	assert_int_equal(stats__shift_ci(x, 3, y, 3, 3, false, &ci), 0);
	assert_true(isinf(ci.lo) && ci.lo < 0 && isinf(ci.hi) && ci.hi > 0);
	/* even count of differences (1, 2): the mean of the middle two */
	assert_int_equal(stats__shift_ci(x, 1, y + 1, 2, 0, false, &ci), 0);
	assert_true(ci.estimate == 1.5);
	/* on logarithms: y = 2x is a ratio of exactly 2 */
	{
		static const double a[] = { 1, 2, 4, 8 }, b[] = { 2, 4, 8, 16 };

		assert_int_equal(stats__shift_ci(a, 4, b, 4, 0, true, &ci), 0);
		assert_true(fabs(exp(ci.estimate) - 2) < 1e-9);
	}
	assert_int_equal(stats__shift_ci(x, 0, y, 3, 1, false, &ci), -EINVAL);
}

static int cmp_diff(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The interval against every difference sorted, on samples with many
 * ties and sizes whose nx * ny differences outnumber nx + ny (where the
 * bisection hands over to gathering the few left). */
static void shift_interval_by_brute_force(void **state)
{
	double x[60], y[60], d[3600], z = 1.5;
	struct shift_ci ci;
	struct stats_rng rng;

	(void)state;
	stats__rng_seed(&rng, 11);
	for (int t = 0; t < 300; t++) {
		size_t nx = 1 + stats__rng_below(&rng, 60);
		size_t ny = 1 + stats__rng_below(&rng, 60), m = 0;
		double range = t % 3 ? 1000 : 5, k;

		for (size_t i = 0; i < nx; i++)
			x[i] = (double)stats__rng_below(&rng, (uint64_t)range);
		for (size_t j = 0; j < ny; j++)
			y[j] = (double)stats__rng_below(&rng, (uint64_t)range) + 3;
		for (size_t i = 0; i < nx; i++)
			for (size_t j = 0; j < ny; j++)
				d[m++] = y[j] - x[i];
		qsort(d, m, sizeof(*d), cmp_diff);
		assert_int_equal(stats__shift_ci(x, nx, y, ny, z, false, &ci), 0);
		assert_true(ci.estimate == (d[(m + 1) / 2 - 1] + d[(m + 2) / 2 - 1]) / 2);
		k = floor((double)m / 2 -
			  z * sqrt((double)m * (double)(nx + ny + 1) / 12));
		if (k >= 1)
			assert_true(ci.lo == d[(size_t)k - 1] &&
				    ci.hi == d[m - (size_t)k]);
		else
			assert_true(isinf(ci.lo) && isinf(ci.hi));
	}
}

static bool passes(const struct compare_row *r)
{
	return r->verdict != COMPARE_REGRESSED &&
	       r->verdict != COMPARE_INCONCLUSIVE;
}

/* 5 % noise, 10 samples per side: no run resolves a 5 % threshold, so a
 * true 10 % slowdown never passes (the point estimate alone once said
 * "within 5%" for some), and a change right at the threshold passes at
 * most about alpha of the time. 300 seeded trials each. */
static void no_pass_without_evidence(void **state)
{
	double a[10], b[10];
	struct compare_row r;
	unsigned int passed10 = 0, passed5 = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= 300; seed++) {
		samples__lognormal(a, 10, 1.5e6, 0.05, 2 * seed);
		samples__lognormal(b, 10, 1.65e6, 0.05, 2 * seed + 1);
		r = compare(a, 10, b, 10, false, 0.05, COMPARE_UTEST);
		passed10 += passes(&r);
		assert_true(r.worst > r.shift);
		samples__lognormal(b, 10, 1.575e6, 0.05, 2 * seed + 1);
		r = compare(a, 10, b, 10, false, 0.05, COMPARE_UTEST);
		passed5 += passes(&r);
	}
	assert_int_equal(passed10, 0);
	assert_true(passed5 <= 6);
}

/* Many tight samples and no change: the bound is well inside 5 %, a
 * pass; the same for a higher-is-better series, bounded from below. */
static void tight_no_change_passes(void **state)
{
	static double a[200], b[200];
	struct compare_row r;

	(void)state;
	samples__lognormal(a, 200, 1.5e6, 0.01, 21);
	samples__lognormal(b, 200, 1.5e6, 0.01, 22);
	r = compare(a, 200, b, 200, false, 0.05, COMPARE_UTEST);
	assert_true(passes(&r));
	assert_true(r.worst < 0.01 && r.worst == r.ci_hi);
	assert_true(r.ci_lo < r.shift && r.shift < r.ci_hi);
	r = compare(a, 200, b, 200, true, 0.05, COMPARE_UTEST);
	assert_true(passes(&r));
	assert_true(r.worst < 0.01 && r.worst == -r.ci_lo);
	r = compare(a, 200, b, 200, false, 0.05, COMPARE_PERMUTATION);
	assert_true(passes(&r));
	/* a threshold of 0 is never met by a change of 0 */
	r = compare(a, 200, b, 200, false, 0, COMPARE_UTEST);
	assert_int_equal(r.verdict, COMPARE_INCONCLUSIVE);
}

/* The normal quantiles the power formula uses. */
static void normal_quantiles(void **state)
{
	(void)state;
	assert_true(fabs(compare__z_upper(0.025) - 1.959964) < 1e-5);
	assert_true(fabs(compare__z_upper(0.005) - 2.575829) < 1e-5);
	assert_true(fabs(compare__z_upper(0.2) - 0.841621) < 1e-5);
	assert_true(fabs(compare__z_upper(0.5)) < 1e-9);
	assert_true(compare__z_upper(0.9) < 0);
}

/* The minimum detectable effect by hand: alpha 0.01, power 0.8:
 * (2.5758 + 0.8416) * sqrt(2 * 0.05^2 / 20 * pi / 3) = 5.53 %; four
 * times the samples halve it; the count that brings it to 5 % is the
 * formula solved for n; the smallest n reaching p < 0.01 is 5 (2/252). */
static void minimum_detectable_effect(void **state)
{
	double z = 2.575829 + 0.841621;
	double mde = compare__mde(0.05, 20, 0.05, 20, 0.01);

	(void)state;
	assert_true(fabs(mde - z * sqrt(2 * 0.0025 / 20 * M_PI / 3)) < 1e-5);
	assert_true(mde > 0.055 && mde < 0.056);
	assert_true(fabs(compare__mde(0.05, 80, 0.05, 80, 0.01) - mde / 2) <
		    1e-9);
	assert_true(compare__mde(0, 20, 0, 20, 0.01) == 0);
	assert_int_equal(compare__needed_n(0.05, 0.05, 0.05, 0.01),
			 (size_t)ceil(z * z * 2 * 0.0025 * M_PI / 3 / 0.0025));
	assert_int_equal(compare__needed_n(0.05, 0.05, 0.05, 0.01), 25);
	assert_true(compare__mde(0.05, 25, 0.05, 25, 0.01) <= 0.05);
	assert_true(compare__mde(0.05, 24, 0.05, 24, 0.01) > 0.05);
	assert_int_equal(compare__min_n(0.01), 5);
	assert_int_equal(compare__min_n(0.05), 4);
	/* Quiet series still need the samples p < alpha takes. */
	assert_int_equal(compare__needed_n(0.001, 0.001, 0.05, 0.01), 5);
	assert_int_equal(compare__needed_n(0.05, 0.05, 0, 0.01), 0);
}

/* No significant change at 8 % noise and 20 samples: the minimum
 * detectable effect (about 9 %) is beyond the 5 % threshold, so the
 * verdict is inconclusive with a count that would do; at 200 samples
 * the same noise decides. */
static void noisy_series_are_inconclusive(void **state)
{
	static double a[200], b[200];
	struct compare_row r;

	(void)state;
	samples__lognormal(a, 20, 1.5e6, 0.08, 11);
	samples__lognormal(b, 20, 1.5e6, 0.08, 12);
	r = compare(a, 20, b, 20, false, 0.05, COMPARE_UTEST);
	assert_int_equal(r.verdict, COMPARE_INCONCLUSIVE);
	assert_true(r.mde > 0.05);
	assert_true(r.needed > 20 && r.needed < 200);
	samples__lognormal(a, 200, 1.5e6, 0.08, 13);
	samples__lognormal(b, 200, 1.5e6, 0.08, 14);
	r = compare(a, 200, b, 200, false, 0.05, COMPARE_UTEST);
	assert_int_equal(r.verdict, COMPARE_SAME);
	assert_true(r.mde < 0.05);
}

/* --min-samples: fewer samples are inconclusive, but a regression found
 * with them stands. */
static void min_samples(void **state)
{
	double a[N], b[N];
	struct compare_opts o;
	struct compare_row r = { 0 };

	(void)state;
	compare__default_opts(&o);
	o.min_samples = 30;
	samples__lognormal(a, N, 1.5e6, 0.02, 15);
	samples__lognormal(b, N, 1.5e6, 0.02, 16);
	assert_int_equal(compare__samples(a, N, b, N, false, 0.05, &o, &r), 0);
	assert_int_equal(r.verdict, COMPARE_INCONCLUSIVE);
	o.min_samples = N;
	assert_int_equal(compare__samples(a, N, b, N, false, 0.05, &o, &r), 0);
	assert_int_equal(r.verdict, COMPARE_SAME);
	o.min_samples = 30;
	samples__lognormal(b, N, 1.8e6, 0.02, 17);
	assert_int_equal(compare__samples(a, N, b, N, false, 0.05, &o, &r), 0);
	assert_int_equal(r.verdict, COMPARE_REGRESSED);
}

static void threshold_overrides_last_match_wins(void **state)
{
	static const struct metric_threshold ov[] = {
		{ "inproc.*", 0.10 },
		{ "inproc.floor", 0.01 },
	};
	struct compare_opts o;

	(void)state;
	compare__default_opts(&o);
	assert_true(o.alpha == 0.01 && o.threshold == 0.05);
	o.overrides = ov;
	o.nr_overrides = 2;
	assert_true(compare__threshold_for(&o, "inproc.coldstart") == 0.10);
	assert_true(compare__threshold_for(&o, "inproc.floor") == 0.01);
	assert_true(compare__threshold_for(&o, "process.floor") == 0.05);
}

/* ---- documents ---- */

static json_t *series(const char *name, double median, uint64_t seed)
{
	double x[N];
	json_t *s = json_array();

	samples__lognormal(x, N, median, 0.03, seed);
	for (int i = 0; i < N; i++)
		json_array_append_new(s, json_integer((json_int_t)x[i]));
	return json_pack("{s:s, s:s, s:o}", "name", name, "unit", "ns",
			 "samples_ns", s);
}

/* A lifecycle-like document with two series; `scale` multiplies the
 * first one. */
static json_t *doc_json(const char *host, json_int_t mem, json_int_t count,
			double scale, uint64_t seed)
{
	return json_pack("{s:i, s:s, s:{s:s, s:I, s:I}, s:{s:s, s:{s:s}, "
			 "s:{s:s}}, s:[o, o]}",
			 "schema", 1, "bench", "lifecycle", "config", "guest",
			 "probe", "mem_bytes", mem, "count", count, "sysinfo",
			 "hostname", host, "cpu", "model", "AMD EPYC", "kvm",
			 "flavour", "vmx", "series",
			 series("inproc.coldstart", 1.5e6 * scale, seed),
			 series("inproc.floor", 1.2e6, seed + 100));
}

static void parse(json_t *root, struct result_doc *doc)
{
	assert_non_null(root);
	assert_int_equal(result__parse(root, doc), 0);
	json_decref(root);
}

static void parse_reads_series(void **state)
{
	struct result_doc doc;
	const struct result_series *s;

	(void)state;
	parse(doc_json("a", 2 << 20, N, 1, 1), &doc);
	assert_string_equal(doc.bench, "lifecycle");
	assert_int_equal(doc.nr_series, 2);
	s = result__find(&doc, "inproc.floor");
	assert_non_null(s);
	assert_int_equal(s->n, N);
	assert_string_equal(s->unit, "ns");
	assert_false(s->higher_is_better);
	assert_null(result__find(&doc, "nope"));
	result__free(&doc);
}

/* Each malformed document fails with a message naming the problem. */
static void parse_rejects_malformed(void **state)
{
	static const struct {
		const char *json, *message;
	} bad[] = {
		{ "[1, 2]", "not a JSON object" },
		{ "{\"bench\": \"x\"}", "no \"schema\"" },
		{ "{\"schema\": 2, \"bench\": \"x\", \"series\": []}",
		  "schema version 2 is not supported" },
		{ "{\"schema\": 1, \"series\": []}", "no \"bench\"" },
		{ "{\"schema\": 1, \"bench\": \"x\"}", "no \"series\"" },
		{ "{\"schema\": 1, \"bench\": \"x\", \"series\": []}",
		  "no \"series\"" },
		{ "{\"schema\": 1, \"bench\": \"x\", \"series\": [3]}",
		  "series[0] is not an object" },
		{ "{\"schema\": 1, \"bench\": \"x\", \"series\": [{}]}",
		  "series[0] has no name" },
		{ "{\"schema\": 1, \"bench\": \"x\", \"series\": "
		  "[{\"name\": \"a\"}]}", "'a' has no samples_ns[]" },
		{ "{\"schema\": 1, \"bench\": \"x\", \"series\": "
		  "[{\"name\": \"a\", \"samples_ns\": []}]}",
		  "'a' has no samples" },
		{ "{\"schema\": 1, \"bench\": \"x\", \"series\": "
		  "[{\"name\": \"a\", \"samples_ns\": [1, \"2\"]}]}",
		  "sample 1 of series 'a' is not a number" },
		{ "{\"schema\": 1, \"bench\": \"x\", \"series\": "
		  "[{\"name\": \"a\", \"samples_ns\": [1]}, "
		  "{\"name\": \"a\", \"samples\": [2]}]}",
		  "'a' appears twice" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *root = json_loads(bad[i].json, 0, NULL);
		struct result_doc doc;

		assert_non_null(root);
		assert_int_equal(result__parse(root, &doc), -EINVAL);
		if (!strstr(err__last(), bad[i].message))
			fail_msg("'%s': '%s' lacks '%s'", bad[i].json,
				 err__last(), bad[i].message);
		json_decref(root);
	}
}

static void setup_checks(void **state)
{
	struct result_doc a, b;

	(void)state;
	parse(doc_json("a", 2 << 20, N, 1, 1), &a);
	/* Another count of samples is the same configuration. */
	parse(doc_json("a", 2 << 20, 2 * N, 1, 2), &b);
	assert_int_equal(compare__same_bench(&a, &b), 0);
	assert_int_equal(compare__same_setup(&a, &b), 0);
	result__free(&b);
	parse(doc_json("b", 2 << 20, N, 1, 2), &b);
	assert_int_equal(compare__same_setup(&a, &b), -EINVAL);
	assert_non_null(strstr(err__last(), "hostname 'a' vs 'b'"));
	result__free(&b);
	parse(doc_json("a", 4 << 20, N, 1, 2), &b);
	assert_int_equal(compare__same_setup(&a, &b), -EINVAL);
	assert_non_null(strstr(err__last(),
			       "config.mem_bytes 2097152 vs 4194304"));
	json_object_set_new(b.root, "bench", json_string("rate"));
	b.bench = "rate";
	assert_int_equal(compare__same_bench(&a, &b), -EINVAL);
	assert_non_null(strstr(err__last(), "different benches"));
	result__free(&b);
	result__free(&a);
}

/* doc_json's document from a host whose sysinfo carries `label` as
 * kvm.emulated (NULL: a schema 1 sysinfo, which has no such key). */
static json_t *doc_where(const char *label, uint64_t seed)
{
	json_t *root = doc_json("a", 2 << 20, N, 1, seed);

	if (label)
		json_object_set_new(json_object_get(json_object_get(root,
				    "sysinfo"), "kvm"), "emulated",
				    json_string(label));
	return root;
}

/* An emulated host's timings never compare with a native host's, nor
 * with another kind of emulation; a null label is native. */
static void emulated_against_native_is_refused(void **state)
{
	struct result_doc native, null_label, emu, emu2, other;
	json_t *root = doc_where(NULL, 2);

	(void)state;
	parse(doc_where(NULL, 1), &native);
	json_object_set_new(json_object_get(json_object_get(root, "sysinfo"),
					    "kvm"), "emulated", json_null());
	parse(root, &null_label);
	parse(doc_where("qemu-tcg-svm", 3), &emu);
	parse(doc_where("qemu-tcg-svm", 4), &emu2);
	parse(doc_where("other-emu", 5), &other);
	assert_int_equal(compare__same_setup(&native, &null_label), 0);
	assert_int_equal(compare__same_setup(&emu, &emu2), 0);
	assert_int_equal(compare__same_setup(&native, &emu), -EINVAL);
	assert_non_null(strstr(err__last(), "BASE native, NEW emulated: "
			       "qemu-tcg-svm"));
	assert_int_equal(compare__same_setup(&emu, &null_label), -EINVAL);
	assert_non_null(strstr(err__last(), "BASE emulated: qemu-tcg-svm, "
			       "NEW native"));
	assert_int_equal(compare__same_setup(&emu, &other), -EINVAL);
	assert_non_null(strstr(err__last(), "emulated: other-emu"));
	result__free(&native);
	result__free(&null_label);
	result__free(&emu);
	result__free(&emu2);
	result__free(&other);
}

static void docs_match_series_by_name(void **state)
{
	struct result_doc a, b;
	struct compare_result res;
	struct compare_opts o;
	json_t *root;

	(void)state;
	compare__default_opts(&o);
	parse(doc_json("a", 2 << 20, N, 1, 1), &a);
	root = doc_json("a", 2 << 20, N, 1.2, 2);
	/* NEW: inproc.floor renamed, so each side has one of its own. */
	json_object_set_new(json_array_get(json_object_get(root, "series"), 1),
			    "name", json_string("inproc.floor2"));
	parse(root, &b);
	assert_int_equal(compare__docs(&a, &b, &o, &res), 0);
	assert_int_equal(res.nr_rows, 1);
	assert_string_equal(res.rows[0].name, "inproc.coldstart");
	assert_int_equal(res.rows[0].verdict, COMPARE_REGRESSED);
	assert_int_equal(res.regressions, 1);
	assert_int_equal(res.nr_only_base, 1);
	assert_string_equal(res.only_base[0], "inproc.floor");
	assert_int_equal(res.nr_only_new, 1);
	assert_string_equal(res.only_new[0], "inproc.floor2");
	compare__free_result(&res);
	/* No series in common. */
	json_object_set_new(json_array_get(json_object_get(b.root, "series"), 0),
			    "name", json_string("other"));
	b.series[0].name = "other";
	assert_int_equal(compare__docs(&a, &b, &o, &res), -EINVAL);
	assert_non_null(strstr(err__last(), "no common series"));
	/* A unit that changed. */
	b.series[0].name = "inproc.coldstart";
	b.series[0].unit = "ms";
	assert_int_equal(compare__docs(&a, &b, &o, &res), -EINVAL);
	assert_non_null(strstr(err__last(), "in ns in BASE but in ms"));
	result__free(&b);
	result__free(&a);
}

/* Kernel, microcode and KVM module parameters that changed are named;
 * what a side does not record is no change; a short buffer is cut, the
 * count is not. */
static void host_changes(void **state)
{
	struct result_doc a, b;
	char buf[256], small[12];
	json_t *root;

	(void)state;
	root = doc_json("a", 2 << 20, N, 1, 1);
	json_object_set_new(json_object_get(root, "sysinfo"), "kernel",
			    json_pack("{s:s}", "release", "6.1"));
	json_object_set_new(json_object_get(json_object_get(root, "sysinfo"),
					    "kvm"), "modules",
			    json_pack("{s:{s:s, s:s}, s:{}}", "kvm",
				      "halt_poll_ns", "200000", "tdp_mmu", "Y",
				      "kvm_intel"));
	parse(root, &a);
	parse(doc_json("a", 2 << 20, N, 1, 2), &b);
	assert_int_equal(compare__host_changes(&a, &b, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	root = doc_json("a", 2 << 20, N, 1, 2);
	json_object_set_new(json_object_get(root, "sysinfo"), "kernel",
			    json_pack("{s:s}", "release", "6.12"));
	json_object_set_new(json_object_get(json_object_get(root, "sysinfo"),
					    "kvm"), "modules",
			    json_pack("{s:{s:s, s:s}, s:{}}", "kvm",
				      "halt_poll_ns", "0", "tdp_mmu", "Y",
				      "kvm_amd"));
	result__free(&b);
	parse(root, &b);
	assert_int_equal(compare__host_changes(&a, &b, buf, sizeof(buf)), 4);
	assert_string_equal(buf, "kernel 6.1 -> 6.12; kvm.halt_poll_ns 200000 "
			    "-> 0; module kvm_intel loaded only in BASE; "
			    "module kvm_amd loaded only in NEW");
	assert_int_equal(compare__host_changes(&a, &b, small, sizeof(small)),
			 4);
	assert_string_equal(small, "kernel 6.1 ");
	result__free(&a);
	result__free(&b);
}

static void github_export(void **state)
{
	struct result_doc d;
	json_t *arr, *e;
	double median;

	(void)state;
	parse(doc_json("a", 2 << 20, N, 1, 1), &d);
	d.series[1].higher_is_better = true; /* the other file's */
	arr = compare__github_json(&d, true);
	assert_int_equal(json_array_size(arr), 1);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(arr, 0), "name")),
			    "lifecycle/inproc.floor");
	json_decref(arr);
	arr = compare__github_json(&d, false);
	assert_non_null(arr);
	assert_int_equal(json_array_size(arr), 1);
	e = json_array_get(arr, 0);
	assert_string_equal(json_string_value(json_object_get(e, "name")),
			    "lifecycle/inproc.coldstart");
	assert_string_equal(json_string_value(json_object_get(e, "unit")),
			    "ms");
	assert_int_equal(stats__median(d.series[0].samples, N, &median), 0);
	assert_true(fabs(json_real_value(json_object_get(e, "value")) -
			 median / 1e6) < 1e-12);
	assert_non_null(strstr(json_string_value(json_object_get(e, "range")),
			       "%"));
	json_decref(arr);
	result__free(&d);
}

static void gobench_export(void **state)
{
	struct result_doc d;
	char *text = NULL, line[128];
	size_t len = 0, lines = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	parse(doc_json("a", 2 << 20, N, 1, 1), &d);
	compare__write_gobench(&d, f);
	fclose(f);
	assert_non_null(strstr(text, "pkg: coldstart/lifecycle\n"));
	assert_non_null(strstr(text, "cpu: AMD_EPYC\n"));
	snprintf(line, sizeof(line),
		 "\nBenchmarkLifecycle/inproc.floor 1 %.15g ns/op\n",
		 d.series[1].samples[0]);
	assert_non_null(strstr(text, line));
	for (char *p = text; (p = strstr(p, "\nBenchmark")); p++)
		lines++;
	assert_int_equal(lines, 2 * N);
	free(text);
	result__free(&d);
}

/* The permutation test refuses more than COMPARE_PERMUTATION_MAX_N
 * samples in all (each of its splits is a pass over them all); the U
 * test takes them. */
static void permutation_has_a_bound(void **state)
{
	size_t nb = COMPARE_PERMUTATION_MAX_N / 2 + 1;
	size_t nn = COMPARE_PERMUTATION_MAX_N / 2;
	double *a = malloc(nb * sizeof(*a)), *b = malloc(nn * sizeof(*b));
	struct compare_opts o;
	struct compare_row row;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	samples__lognormal(a, nb, 1.5e6, 0.02, 1);
	samples__lognormal(b, nn, 1.5e6, 0.02, 2);
	compare__default_opts(&o);
	o.test = COMPARE_PERMUTATION;
	assert_int_equal(compare__samples(a, nb, b, nn, false, 0.05, &o, &row),
			 -EINVAL);
	assert_non_null(strstr(err__last(), "more than the permutation test "
				"takes"));
	o.test = COMPARE_UTEST;
	assert_int_equal(compare__samples(a, nb, b, nn, false, 0.05, &o, &row),
			 0);
	free(a);
	free(b);
}

/* Many series: each found by name through the index, a missing name
 * not; a name used twice is the error unless a series before the second
 * use is malformed, as when each series was checked in turn. */
static void parse_indexes_many_series(void **state)
{
	json_t *root = json_pack("{s:i, s:s, s:[]}", "schema", 1, "bench",
				 "x", "series");
	json_t *arr = json_object_get(root, "series");
	struct result_doc doc;
	char name[32];

	(void)state;
	for (int i = 0; i < 3000; i++) {
		snprintf(name, sizeof(name), "s%d", (i * 7919) % 3001);
		json_array_append_new(arr, json_pack("{s:s, s:[i]}", "name",
						     name, "samples_ns", i));
	}
	assert_int_equal(result__parse(root, &doc), 0);
	for (size_t i = 0; i < doc.nr_series; i++)
		assert_ptr_equal(result__find(&doc, doc.series[i].name),
				 &doc.series[i]);
	assert_null(result__find(&doc, "s"));
	assert_null(result__find(&doc, "s99999"));
	result__free(&doc);
	/* s0 again at the end, a malformed one after it: the twin first */
	json_array_append_new(arr, json_pack("{s:s, s:[i]}", "name", "s0",
					     "samples_ns", 1));
	json_array_append_new(arr, json_pack("{s:s}", "name", "bad"));
	assert_int_equal(result__parse(root, &doc), -EINVAL);
	assert_non_null(strstr(err__last(), "'s0' appears twice"));
	/* the malformed one before the twin: it is the error */
	json_array_insert_new(arr, 5, json_pack("{s:s}", "name", "early"));
	assert_int_equal(result__parse(root, &doc), -EINVAL);
	assert_non_null(strstr(err__last(), "'early' has no samples_ns[]"));
	json_decref(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(identical_inputs_are_the_same),
		cmocka_unit_test(shift_of_20_percent_regresses),
		cmocka_unit_test(noise_within_threshold_is_not_a_regression),
		cmocka_unit_test(improvement_is_not_a_regression),
		cmocka_unit_test(tiny_samples_are_inconclusive),
		cmocka_unit_test(shift_interval_by_hand),
		cmocka_unit_test(shift_interval_by_brute_force),
		cmocka_unit_test(no_pass_without_evidence),
		cmocka_unit_test(tight_no_change_passes),
		cmocka_unit_test(normal_quantiles),
		cmocka_unit_test(minimum_detectable_effect),
		cmocka_unit_test(noisy_series_are_inconclusive),
		cmocka_unit_test(min_samples),
		cmocka_unit_test(threshold_overrides_last_match_wins),
		cmocka_unit_test(parse_reads_series),
		cmocka_unit_test(parse_rejects_malformed),
		cmocka_unit_test(setup_checks),
		cmocka_unit_test(emulated_against_native_is_refused),
		cmocka_unit_test(docs_match_series_by_name),
		cmocka_unit_test(host_changes),
		cmocka_unit_test(github_export),
		cmocka_unit_test(gobench_export),
		cmocka_unit_test(permutation_has_a_bound),
		cmocka_unit_test(parse_indexes_many_series),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
