/* BASE vs NEW result documents: comparability and verdicts (reading
 * them: resultfmt's result_read.c; the exports for other tools:
 * compare_export.c). */
#include "compare.h"

#include "err.h"

#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SPREAD_RESAMPLES 1000
#define SPREAD_SEED 1
#define PERMUTATION_RESAMPLES 10000
#define PERMUTATION_SEED 1

/* ---- comparability ---- */

int compare__same_bench(const struct result_doc *base,
			const struct result_doc *new_)
{
	if (strcmp(base->bench, new_->bench))
		return err__set(EINVAL, "results of different benches: '%s' "
				"vs '%s'", base->bench, new_->bench);
	return 0;
}

/* sysinfo.a.b as a string, "(unknown)" when absent. */
static const char *sysinfo_str(const json_t *sys, const char *a,
			       const char *b)
{
	const json_t *v = json_object_get(sys, a);
	const char *s;

	if (b)
		v = json_object_get(v, b);
	s = json_string_value(v);
	return s ? s : "(unknown)";
}

/* Timings from an emulated host (a software CPU, ~30x slower) say
 * nothing about a native one, nor about another kind of emulation. */
static int same_where(const json_t *a, const json_t *b)
{
	const char *x = result__sysinfo_emulated(a);
	const char *y = result__sysinfo_emulated(b);

	if (!x && !y)
		return 0;
	if (x && y && !strcmp(x, y))
		return 0;
	return err__set(EINVAL, "one was measured inside an emulated host and "
			"the other not: BASE %s%s, NEW %s%s (emulated timings "
			"are functional only)", x ? "emulated: " : "native",
			x ? x : "", y ? "emulated: " : "native", y ? y : "");
}

static int same_host(const json_t *a, const json_t *b)
{
	static const struct {
		const char *key, *sub, *what;
	} fields[] = {
		{ "hostname", NULL, "hostname" },
		{ "cpu", "model", "CPU model" },
		{ "kvm", "flavour", "KVM flavour" },
	};

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const char *x = sysinfo_str(a, fields[i].key, fields[i].sub);
		const char *y = sysinfo_str(b, fields[i].key, fields[i].sub);

		if (strcmp(x, y))
			return err__set(EINVAL, "different hosts: %s '%s' vs "
					"'%s'", fields[i].what, x, y);
	}
	return 0;
}

/* The first key whose value differs between objects a and b (one side
 * may lack it), or NULL. */
static const char *first_difference(const json_t *a, const json_t *b)
{
	const char *key;
	const json_t *v;

	json_object_foreach((json_t *)a, key, v)
		if (!json_equal(v, json_object_get(b, key)))
			return key;
	json_object_foreach((json_t *)b, key, v)
		if (!json_object_get(a, key))
			return key;
	return NULL;
}

static int config_difference(const char *key, const json_t *a,
			     const json_t *b)
{
	char *x = json_dumps(json_object_get(a, key),
			     JSON_COMPACT | JSON_ENCODE_ANY);
	char *y = json_dumps(json_object_get(b, key),
			     JSON_COMPACT | JSON_ENCODE_ANY);
	int ret = err__set(EINVAL, "different configurations: config.%s %s "
			   "vs %s", key, x ? x : "(none)", y ? y : "(none)");

	free(x);
	free(y);
	return ret;
}

/* Config keys that do not make two runs different setups: the sample
 * count, and paths that differ between hosts and runs (a snapshot the
 * suite made in a new temporary directory, a kernel's place). */
static const char *const not_setup[] = { "count", "kernel", "initrd",
					 "snapshot" };

/* A user's guest as result__new names it, without where its files were:
 * "linux KERNEL_SHA256[+INITRD_SHA256]"; the built-in probe guest by its
 * name alone, as it is part of the coldstart being compared. */
static void guest_id(const json_t *g, char *buf, size_t len)
{
	const json_t *k = json_object_get(g, "kernel");
	const json_t *i = json_object_get(g, "initrd");
	const char *name = json_string_value(json_object_get(g, "name"));
	const char *ks = json_string_value(json_object_get(k, "sha256"));
	const char *is = json_string_value(json_object_get(i, "sha256"));

	snprintf(buf, len, "%s%s%s%s%s", name ? name : "?", k ? " " : "",
		 k ? (ks ? ks : "?") : "", i && !json_is_null(i) ? "+" : "",
		 i && !json_is_null(i) ? (is ? is : "?") : "");
}

/* Results of two different guests are not one setup; documents from
 * before guests were named compare as before. */
static int same_guest(const json_t *a, const json_t *b)
{
	char x[160], y[160];

	if (!json_is_object(a) || !json_is_object(b))
		return 0;
	guest_id(a, x, sizeof(x));
	guest_id(b, y, sizeof(y));
	if (strcmp(x, y))
		return err__set(EINVAL, "different guests: %s vs %s", x, y);
	return 0;
}

static int same_config(const json_t *a, const json_t *b)
{
	json_t *ca, *cb;
	const char *key;
	int ret = 0;

	if (json_is_null(a) != json_is_null(b))
		return err__set(EINVAL, "different configurations: only one "
				"result has a \"config\"");
	ca = json_deep_copy(a);
	cb = json_deep_copy(b);
	if (!ca || !cb) {
		ret = err__set(ENOMEM, "copying the configurations");
		goto out;
	}
	/* where the guest's files were, not which guest: that is the
	 * documents' "guest", by sha256 (same_guest) */
	for (size_t i = 0; i < sizeof(not_setup) / sizeof(*not_setup); i++) {
		json_object_del(ca, not_setup[i]);
		json_object_del(cb, not_setup[i]);
	}
	key = first_difference(ca, cb);
	if (key)
		ret = config_difference(key, ca, cb);
out:
	json_decref(ca);
	json_decref(cb);
	return ret;
}

int compare__same_setup(const struct result_doc *base,
			const struct result_doc *new_)
{
	int ret = same_where(base->sysinfo, new_->sysinfo);

	if (ret == 0)
		ret = same_host(base->sysinfo, new_->sysinfo);
	if (ret == 0)
		ret = same_guest(json_object_get(base->root, "guest"),
				 json_object_get(new_->root, "guest"));
	return ret < 0 ? ret : same_config(base->config, new_->config);
}

/* ---- verdicts ---- */

void compare__default_opts(struct compare_opts *o)
{
	*o = (struct compare_opts){ .alpha = 0.01, .threshold = 0.05,
				    .test = COMPARE_UTEST,
				    .max_samples = COMPARE_MAX_SAMPLES };
}

double compare__threshold_for(const struct compare_opts *o,
			      const char *name)
{
	double t = o->threshold;

	for (size_t i = 0; i < o->nr_overrides; i++)
		if (!fnmatch(o->overrides[i].pattern, name, 0))
			t = o->overrides[i].threshold;
	return t;
}

/* Half-width of the bootstrap 95 % interval of the median, relative. */
int compare__median_spread(const double *x, size_t n, double median,
			   double *spread)
{
	double lo, hi;
	int ret = stats__bootstrap_median_ci(x, n, SPREAD_RESAMPLES, 0.95,
					     SPREAD_SEED, &lo, &hi);

	if (ret < 0)
		return err__set(-ret, "bootstrap of the median");
	*spread = median != 0 ? fmax(hi - median, median - lo) / fabs(median)
			      : 0;
	return 0;
}

/* 2 / C(nb + nn, nb): the two most extreme of all splits. */
double compare__smallest_p(size_t nb, size_t nn)
{
	double log_c = lgamma((double)(nb + nn) + 1) -
		       lgamma((double)nb + 1) - lgamma((double)nn + 1);

	return fmin(1.0, 2 * exp(-log_c));
}

static int test_p(const double *base, size_t nb, const double *new_,
		  size_t nn, const struct compare_opts *o, double *p)
{
	struct mann_whitney mw;
	struct permutation pm;
	int ret;

	if (o->test == COMPARE_PERMUTATION) {
		ret = stats__permutation_test(base, nb, new_, nn, STATS_MEDIAN,
					      PERMUTATION_RESAMPLES,
					      PERMUTATION_SEED, &pm);
		*p = pm.p;
	} else {
		ret = stats__mann_whitney(base, nb, new_, nn, &mw);
		*p = mw.p;
	}
	return ret < 0 ? err__set(-ret, "significance test") : 0;
}

static double relative_delta(double base, double new_)
{
	if (base != 0)
		return new_ / base - 1;
	return new_ == 0 ? 0 : copysign(INFINITY, new_);
}

static enum compare_verdict verdict(const struct compare_row *r,
				    bool higher_is_better, double alpha)
{
	double worse = higher_is_better ? -r->delta : r->delta;

	if (!(r->p < alpha))
		return COMPARE_SAME;
	if (fabs(r->delta) <= r->threshold)
		return COMPARE_WITHIN;
	return worse > 0 ? COMPARE_REGRESSED : COMPARE_IMPROVED;
}

/* A regression found stands; anything else passes only when the
 * change's confidence bound rules out a worsening of the threshold's
 * size (a point estimate within it, or no significance, is no
 * evidence). */
static enum compare_verdict decidable(const struct compare_row *r,
				      const struct compare_opts *o)
{
	if (r->verdict == COMPARE_REGRESSED)
		return r->verdict;
	if (r->n_base < o->min_samples || r->n_new < o->min_samples)
		return COMPARE_INCONCLUSIVE;
	if (!(r->worst < r->threshold))
		return COMPARE_INCONCLUSIVE;
	return r->verdict;
}

/* ---- power ---- */

double compare__z_upper(double p)
{
	return stats__z_upper(p);
}

static double z_sum(double alpha)
{
	return compare__z_upper(alpha / 2) + compare__z_upper(1 - COMPARE_POWER);
}

double compare__mde(double sb, size_t nb, double sn, size_t nn, double alpha)
{
	return z_sum(alpha) * sqrt((sb * sb / (double)nb +
				    sn * sn / (double)nn) * M_PI / 3);
}

size_t compare__min_n(double alpha)
{
	size_t n = 1;

	while (compare__smallest_p(n, n) >= alpha && n < 1000)
		n++;
	return n;
}

size_t compare__needed_n(double sb, double sn, double threshold,
			 double alpha)
{
	double z = z_sum(alpha), n;
	size_t floor_n = compare__min_n(alpha);

	if (!(threshold > 0))
		return 0;
	n = ceil(z * z * (sb * sb + sn * sn) * M_PI / 3 /
		 (threshold * threshold));
	if (!(n < 1e9))
		return 0;
	return (size_t)n > floor_n ? (size_t)n : floor_n;
}

static int describe_side(const double *x, size_t n, double *median,
			 double *spread, double *noise, struct outliers *out)
{
	int ret = stats__outliers(x, n, STATS_OUTLIER_K, out);

	if (ret < 0)
		return err__set(-ret, "outlier check");
	*median = out->median;
	*noise = *median != 0 ? STATS_MAD_SCALE * out->mad / fabs(*median)
			      : 0;
	return compare__median_spread(x, n, *median, spread);
}

static bool all_positive(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!(x[i] > 0))
			return false;
	return true;
}

/* A shift of the values as a change relative to BASE's median. */
static double relative_shift(double d, double median)
{
	if (median != 0)
		return d / fabs(median);
	return d == 0 ? 0 : copysign(INFINITY, d);
}

/* row->shift, ci_lo, ci_hi and worst: the Hodges-Lehmann change and its
 * one-sided bounds at confidence 1 - alpha. */
static int change_bounds(const double *base, size_t nb, const double *new_,
			 size_t nn, bool higher_is_better,
			 const struct compare_opts *o, struct compare_row *row)
{
	bool logs = all_positive(base, nb) && all_positive(new_, nn);
	struct shift_ci ci;
	int ret = stats__shift_ci(base, nb, new_, nn,
				  compare__z_upper(o->alpha), logs, &ci);

	if (ret < 0)
		return err__set(-ret, "confidence interval of the change");
	if (logs) {
		row->shift = expm1(ci.estimate);
		row->ci_lo = expm1(ci.lo);
		row->ci_hi = expm1(ci.hi);
	} else {
		row->shift = relative_shift(ci.estimate, row->base_median);
		row->ci_lo = relative_shift(ci.lo, row->base_median);
		row->ci_hi = relative_shift(ci.hi, row->base_median);
	}
	row->worst = higher_is_better ? -row->ci_lo : row->ci_hi;
	return 0;
}

/* The margin the bound must stay within is the threshold less the
 * estimated worsening; none left: no count is enough. */
static size_t needed_for_margin(const struct compare_row *r,
				bool higher_is_better, double alpha)
{
	double worse = higher_is_better ? -r->shift : r->shift;

	return compare__needed_n(r->base_noise, r->new_noise,
				 r->threshold - fmax(worse, 0), alpha);
}

int compare__samples(const double *base, size_t nb, const double *new_,
		     size_t nn, bool higher_is_better, double threshold,
		     const struct compare_opts *o, struct compare_row *row)
{
	int ret;

	if (nb == 0 || nn == 0)
		return err__set(EINVAL, "a series without samples");
	if (o->test == COMPARE_PERMUTATION &&
	    nb + nn > COMPARE_PERMUTATION_MAX_N)
		return err__set(EINVAL, "%zu samples (BASE %zu + NEW %zu) are "
				"more than the permutation test takes (%d "
				"together: %d random splits, each a pass over "
				"all); compare them with --test utest",
				nb + nn, nb, nn, COMPARE_PERMUTATION_MAX_N,
				PERMUTATION_RESAMPLES);
	row->n_base = nb;
	row->n_new = nn;
	row->higher_is_better = higher_is_better;
	row->threshold = threshold;
	ret = describe_side(base, nb, &row->base_median, &row->base_spread,
			    &row->base_noise, &row->base_out);
	if (ret == 0)
		ret = describe_side(new_, nn, &row->new_median,
				    &row->new_spread, &row->new_noise,
				    &row->new_out);
	if (ret == 0)
		ret = test_p(base, nb, new_, nn, o, &row->p);
	if (ret < 0)
		return ret;
	row->min_p = compare__smallest_p(nb, nn);
	if (o->test == COMPARE_PERMUTATION)
		row->min_p = fmax(row->min_p,
				  1.0 / (PERMUTATION_RESAMPLES + 1));
	row->delta = relative_delta(row->base_median, row->new_median);
	row->mde = compare__mde(row->base_noise, nb, row->new_noise, nn,
				o->alpha);
	ret = change_bounds(base, nb, new_, nn, higher_is_better, o, row);
	if (ret < 0)
		return ret;
	row->needed = needed_for_margin(row, higher_is_better, o->alpha);
	row->verdict = verdict(row, higher_is_better, o->alpha);
	row->verdict = decidable(row, o);
	return 0;
}

/* ---- whole documents ---- */

static int compare_pair(const struct result_series *b,
			const struct result_series *n,
			const struct compare_opts *o, struct compare_row *row)
{
	char why[400];
	int ret;

	if (strcmp(b->unit, n->unit))
		return err__set(EINVAL, "series '%s' is in %s in BASE but in "
				"%s in NEW", b->name, b->unit, n->unit);
	if (o->max_samples && (b->n > o->max_samples || n->n > o->max_samples))
		return err__set(EINVAL, "series '%s' has %zu samples in %s; "
				"compare takes at most %zu a side (--max-samples "
				"N raises it, and its time grows as n log n)",
				b->name, b->n > o->max_samples ? b->n : n->n,
				b->n > o->max_samples ? "BASE" : "NEW",
				o->max_samples);
	row->name = b->name;
	row->unit = b->unit;
	ret = compare__samples(b->samples, b->n, n->samples, n->n,
			       b->higher_is_better,
			       compare__threshold_for(o, b->name), o, row);
	if (ret < 0) {
		snprintf(why, sizeof(why), "%s", err__last());
		return err__set(-ret, "series '%s': %s", b->name, why);
	}
	return 0;
}

/* Names of `a`'s series that `b` lacks. */
static size_t missing_from(const struct result_doc *a,
			   const struct result_doc *b, const char **names)
{
	size_t k = 0;

	for (size_t i = 0; i < a->nr_series; i++)
		if (!result__find(b, a->series[i].name))
			names[k++] = a->series[i].name;
	return k;
}

static int alloc_result(const struct result_doc *base,
			const struct result_doc *new_,
			struct compare_result *res)
{
	*res = (struct compare_result){ 0 };
	res->rows = calloc(base->nr_series, sizeof(*res->rows));
	res->only_base = calloc(base->nr_series, sizeof(char *));
	res->only_new = calloc(new_->nr_series, sizeof(char *));
	if (!res->rows || !res->only_base || !res->only_new) {
		compare__free_result(res);
		return err__set(ENOMEM, "allocating the comparison");
	}
	return 0;
}

int compare__docs(const struct result_doc *base,
		  const struct result_doc *new_, const struct compare_opts *o,
		  struct compare_result *res)
{
	int ret = alloc_result(base, new_, res);

	for (size_t i = 0; ret == 0 && i < base->nr_series; i++) {
		const struct result_series *b = &base->series[i];
		const struct result_series *n = result__find(new_, b->name);
		struct compare_row *row = &res->rows[res->nr_rows];

		if (!n)
			continue;
		ret = compare_pair(b, n, o, row);
		res->nr_rows++;
		res->regressions += row->verdict == COMPARE_REGRESSED;
		res->inconclusive += row->verdict == COMPARE_INCONCLUSIVE;
	}
	if (ret == 0 && res->nr_rows == 0)
		ret = err__set(EINVAL, "no common series: BASE has '%s'%s, "
			       "NEW has '%s'%s", base->series[0].name,
			       base->nr_series > 1 ? "..." : "",
			       new_->series[0].name,
			       new_->nr_series > 1 ? "..." : "");
	if (ret < 0) {
		compare__free_result(res);
		return ret;
	}
	res->nr_only_base = missing_from(base, new_, res->only_base);
	res->nr_only_new = missing_from(new_, base, res->only_new);
	return 0;
}

void compare__free_result(struct compare_result *res)
{
	free(res->rows);
	free(res->only_base);
	free(res->only_new);
	*res = (struct compare_result){ 0 };
}
