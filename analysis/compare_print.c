/* `coldstart compare`'s output: the benchstat-like table with geomean
 * rows, one-sided series, warnings, the summary line the exit code
 * follows, and the same verdicts as JSON. */
#include "compare_cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct scale {
	double div;
	const char *unit;
};

static struct scale scale_for(const char *unit, double v)
{
	if (strcmp(unit, "ns"))
		return (struct scale){ 1, unit };
	if (v >= 1e9)
		return (struct scale){ 1e9, "s" };
	if (v >= 1e6)
		return (struct scale){ 1e6, "ms" };
	if (v >= 1e3)
		return (struct scale){ 1e3, "us" };
	return (struct scale){ 1, "ns" };
}

/* The name a row is shown under: BENCH/SERIES when directories were
 * compared. */
void compare_print__row_name(char *buf, size_t len,
			     const struct compare_run *run,
			     const struct compare_pair *p, const char *series)
{
	if (run->dirs)
		snprintf(buf, len, "%s/%s", p->base->doc.bench, series);
	else
		snprintf(buf, len, "%s", series);
}

static void format_value(char *buf, size_t len, double v, double spread,
			 struct scale sc)
{
	snprintf(buf, len, "%.4g %s ± %.0f%%", v / sc.div, sc.unit,
		 100 * spread);
}

static void format_delta(char *buf, size_t len, const struct compare_row *r)
{
	if (r->verdict == COMPARE_SAME)
		snprintf(buf, len, "~");
	else if (r->verdict == COMPARE_INCONCLUSIVE && !(r->p < 1))
		snprintf(buf, len, "?");
	else if (r->verdict == COMPARE_INCONCLUSIVE)
		snprintf(buf, len, "? %+.1f%%", 100 * r->delta);
	else
		snprintf(buf, len, "%+.2f%%", 100 * r->delta);
}

/* The confidence bound of the change in the worse direction: NEW's
 * median is below "<+6.1%" of BASE's, or above ">-6.1%" for
 * higher-is-better series, at confidence 1 - alpha. */
static void format_bound(char *buf, size_t len, const struct compare_row *r)
{
	bool higher = r->higher_is_better;

	if (!isfinite(r->worst))
		snprintf(buf, len, "none");
	else
		snprintf(buf, len, "%s%+.1f%%", higher ? ">" : "<",
			 100 * (higher ? r->ci_lo : r->ci_hi));
}

/* Three decimals where they say something; tiny p in exponent form
 * rather than a misleading 0.000. */
static void format_p(char *buf, size_t len, double p)
{
	if (p >= 0.001)
		snprintf(buf, len, "%.3f", p);
	else
		snprintf(buf, len, "%.1e", p);
}

static void format_verdict(char *buf, size_t len, const struct compare_row *r)
{
	static const char *const what[] = {
		[COMPARE_WITHIN] = "within ",
		[COMPARE_IMPROVED] = "improved beyond ",
		[COMPARE_REGRESSED] = "REGRESSION beyond ",
	};

	if (r->verdict == COMPARE_SAME)
		buf[0] = '\0';
	else if (r->verdict == COMPARE_INCONCLUSIVE)
		snprintf(buf, len, "INCONCLUSIVE");
	else
		snprintf(buf, len, "%s%g%%", what[r->verdict],
			 100 * r->threshold);
}

static int name_width(const struct compare_run *run)
{
	size_t w = strlen("geomean [vms_per_s]");
	char name[256];

	for (size_t i = 0; i < run->nr_pairs; i++) {
		const struct compare_pair *p = &run->pairs[i];

		for (size_t k = 0; p->compared && k < p->res.nr_rows; k++) {
			compare_print__row_name(name, sizeof(name), run, p,
				 p->res.rows[k].name);
			if (strlen(name) > w)
				w = strlen(name);
		}
	}
	return (int)w;
}

void compare_print__cells(const struct compare_row *r,
			  struct compare_cells *c)
{
	struct scale sc = scale_for(r->unit, r->base_median);

	format_value(c->base, sizeof(c->base), r->base_median, r->base_spread,
		     sc);
	format_value(c->new_, sizeof(c->new_), r->new_median, r->new_spread,
		     sc);
	format_delta(c->delta, sizeof(c->delta), r);
	format_bound(c->bound, sizeof(c->bound), r);
	format_p(c->p, sizeof(c->p), r->p);
	snprintf(c->n, sizeof(c->n), "%zu+%zu", r->n_base, r->n_new);
	format_verdict(c->verdict, sizeof(c->verdict), r);
}

/* Cells hold one "±", two bytes wide in UTF-8 but one column on screen. */
static void print_row(int w, const char *name, const struct compare_row *r)
{
	struct compare_cells c;

	compare_print__cells(r, &c);
	printf("%-*s  %-22s  %-22s  %8s  %8s  %7s  ", w, name, c.base, c.new_,
	       c.delta, c.bound, c.p);
	if (*c.verdict)
		printf("%-9s  %s\n", c.n, c.verdict);
	else
		printf("%s\n", c.n);
}

/* ---- geomean rows ---- */

struct geomean {
	const char *unit;
	double log_base, log_new;
	size_t n;
};

static void add_geomean(struct geomean *g, size_t *ng,
			const struct compare_row *r)
{
	size_t i;

	if (!(r->base_median > 0 && r->new_median > 0))
		return; /* no logarithm */
	for (i = 0; i < *ng && strcmp(g[i].unit, r->unit); i++)
		;
	if (i == *ng)
		g[(*ng)++] = (struct geomean){ .unit = r->unit };
	g[i].log_base += log(r->base_median);
	g[i].log_new += log(r->new_median);
	g[i].n++;
}

/* Per unit, as benchstat: the geometric means of the medians and their
 * ratio, over every compared series with positive medians. */
static size_t geomeans(const struct compare_run *run, struct geomean *g)
{
	size_t ng = 0;

	for (size_t i = 0; i < run->nr_pairs; i++)
		for (size_t k = 0; run->pairs[i].compared &&
				   k < run->pairs[i].res.nr_rows; k++)
			add_geomean(g, &ng, &run->pairs[i].res.rows[k]);
	return ng;
}

static void print_geomeans(int w, const struct compare_run *run)
{
	struct geomean *g = calloc(run->rows + 1, sizeof(*g));
	size_t ng = g ? geomeans(run, g) : 0;

	for (size_t i = 0; i < ng; i++) {
		double b = exp(g[i].log_base / (double)g[i].n);
		double n = exp(g[i].log_new / (double)g[i].n);
		struct scale sc = scale_for(g[i].unit, b);
		char name[64], bs[32], ns[32], d[24];

		if (g[i].n < 2)
			continue;
		snprintf(name, sizeof(name), "geomean [%s]", g[i].unit);
		snprintf(bs, sizeof(bs), "%.4g %s", b / sc.div, sc.unit);
		snprintf(ns, sizeof(ns), "%.4g %s", n / sc.div, sc.unit);
		snprintf(d, sizeof(d), "%+.2f%%", 100 * (n / b - 1));
		printf("%-*s  %-21s  %-21s  %8s  %8s  %7s  %zu series\n", w,
		       name, bs, ns, d, "", "", g[i].n);
	}
	free(g);
}

/* ---- one-sided series ---- */

static void print_missing_doc(const char *side, const struct result_entry *e)
{
	printf("%s: %s (%s):", side, e->doc.bench, e->path);
	for (size_t i = 0; i < e->doc.nr_series; i++)
		printf(" %s", e->doc.series[i].name);
	putchar('\n');
}

static void print_names(const struct compare_run *run,
			const struct compare_pair *p, const char *side,
			const char **names, size_t n)
{
	char name[256];

	if (!n)
		return;
	printf("%s:", side);
	for (size_t i = 0; i < n; i++) {
		compare_print__row_name(name, sizeof(name), run, p, names[i]);
		printf(" %s", name);
	}
	putchar('\n');
}

static void print_one_sided(const struct compare_run *run)
{
	for (size_t i = 0; i < run->nr_pairs; i++) {
		const struct compare_pair *p = &run->pairs[i];

		if (!p->new_)
			print_missing_doc("MISSING from NEW", p->base);
		else if (!p->base)
			print_missing_doc("only in NEW", p->new_);
		else {
			print_names(run, p, "MISSING from NEW",
				    p->res.only_base, p->res.nr_only_base);
			print_names(run, p, "only in NEW", p->res.only_new,
				    p->res.nr_only_new);
		}
	}
}

/* ---- warnings and the summary ---- */

static void warn_first(const char *name, const char *side,
		       const struct outliers *o, const char *unit)
{
	struct scale sc = scale_for(unit, o->median);

	if (o->first_slow)
		fprintf(stderr, "warning: %s: the first sample in %s is much "
			"slower than the median %.4g %s: more warmup?\n",
			name, side, o->median / sc.div, sc.unit);
}

static void print_needed(FILE *out, const struct compare_cli *cli,
			 const struct compare_row *r)
{
	if (r->needed)
		fprintf(out, "; needs about %zu samples per side at this "
			"noise", r->needed > cli->o.min_samples
				 ? r->needed : cli->o.min_samples);
	else if (r->threshold > 0)
		fprintf(out, "; the estimated change itself is not within the "
			"threshold: more samples will not show it is");
	else
		fprintf(out, "; no sample count reaches a threshold of 0");
}

/* Why a series is inconclusive, and what would decide it (one line,
 * without its end). */
void compare_print__why(FILE *out, const struct compare_cli *cli,
			const struct compare_row *r)
{
	double level = 100 * (1 - cli->o.alpha);

	if (r->n_base < cli->o.min_samples || r->n_new < cli->o.min_samples)
		fprintf(out, "%zu+%zu samples, fewer than --min-samples %zu",
			r->n_base, r->n_new, cli->o.min_samples);
	else if (!isfinite(r->worst))
		fprintf(out, "%zu+%zu samples are too few for a %.12g%% "
			"confidence bound", r->n_base, r->n_new, level);
	else
		fprintf(out, "the change could be %s%+.1f%% (%.12g%% confidence "
			"bound; estimate %+.1f%%, noise %.1f%%/%.1f%%), beyond "
			"the threshold %g%%", r->higher_is_better
				? "as low as " : "as high as ",
			100 * (r->higher_is_better ? r->ci_lo : r->ci_hi),
			level, 100 * r->shift, 100 * r->base_noise,
			100 * r->new_noise, 100 * r->threshold);
	print_needed(out, cli, r);
}

typedef void row_fn(const struct compare_cli *cli, const char *name,
		    const struct compare_row *r);

/* fn on every compared row, with the name it is shown under. */
static void each_row(const struct compare_cli *cli,
		     const struct compare_run *run, row_fn *fn)
{
	char name[256];

	for (size_t i = 0; i < run->nr_pairs; i++) {
		const struct compare_pair *p = &run->pairs[i];

		for (size_t k = 0; p->compared && k < p->res.nr_rows; k++) {
			compare_print__row_name(name, sizeof(name), run, p,
				 p->res.rows[k].name);
			fn(cli, name, &p->res.rows[k]);
		}
	}
}

static void warn_row(const struct compare_cli *cli, const char *name,
		     const struct compare_row *r)
{
	(void)cli;
	if (r->base_out.count || r->new_out.count)
		fprintf(stderr, "warning: %s: outliers (beyond %g robust sd "
			"of the median): %zu of %zu in BASE, %zu of %zu in "
			"NEW\n", name, STATS_OUTLIER_K, r->base_out.count,
			r->n_base, r->new_out.count, r->n_new);
	warn_first(name, "BASE", &r->base_out, r->unit);
	warn_first(name, "NEW", &r->new_out, r->unit);
}

static void name_regression(const struct compare_cli *cli, const char *name,
			    const struct compare_row *r)
{
	(void)cli;
	if (r->verdict == COMPARE_REGRESSED)
		printf(" %s (%+.1f%%)", name, 100 * r->delta);
}

static void explain_inconclusive(const struct compare_cli *cli,
				 const char *name, const struct compare_row *r)
{
	if (r->verdict != COMPARE_INCONCLUSIVE)
		return;
	printf("  %s: ", name);
	compare_print__why(stdout, cli, r);
	putchar('\n');
}

static void print_summary(const struct compare_cli *cli,
			  const struct compare_run *run)
{
	if (run->regressions) {
		printf("REGRESSION in %zu of %zu series:", run->regressions,
		       run->rows);
		each_row(cli, run, name_regression);
		putchar('\n');
	}
	if (run->inconclusive) {
		printf("%s: %zu of %zu series cannot rule out a regression "
		       "beyond their threshold:\n", run->regressions
		       ? "also inconclusive" : "INCONCLUSIVE",
		       run->inconclusive, run->rows);
		each_row(cli, run, explain_inconclusive);
	}
	if (run->missing)
		printf("MISSING: %zu series of BASE %s absent from NEW or "
		       "without samples there (listed above): never a pass%s\n",
		       run->missing, run->missing == 1 ? "is" : "are",
		       cli->strict ? " (--strict: a failure)" : "");
	if (!run->regressions && !run->inconclusive && !run->missing)
		printf("no regression in %zu series: each change's %.12g%% "
		       "confidence bound is within its threshold\n", run->rows,
		       100 * (1 - cli->o.alpha));
}

static void print_header(const struct compare_cli *cli,
			 const struct compare_run *run)
{
	if (!run->dirs)
		printf("%s: ", run->base.docs[0].doc.bench);
	printf("BASE %s, NEW %s (%s, alpha %g, threshold %g%%, bound %.12g%%",
	       cli->base_path, cli->new_path, cli->o.test == COMPARE_UTEST
		       ? "Mann-Whitney U" : "permutation test", cli->o.alpha,
	       100 * cli->o.threshold, 100 * (1 - cli->o.alpha));
	if (cli->o.min_samples)
		printf(", min samples %zu", cli->o.min_samples);
	printf(")\n");
}

void compare_print__table(const struct compare_cli *cli,
			  const struct compare_run *run)
{
	int w = name_width(run);
	char name[256];

	print_header(cli, run);
	printf("%-*s  %-21s  %-21s  %8s  %8s  %7s  %s\n", w, "series",
	       "base median", "new median", "delta", "bound", "p", "n");
	for (size_t i = 0; i < run->nr_pairs; i++) {
		const struct compare_pair *p = &run->pairs[i];

		for (size_t k = 0; p->compared && k < p->res.nr_rows; k++) {
			compare_print__row_name(name, sizeof(name), run, p,
				 p->res.rows[k].name);
			print_row(w, name, &p->res.rows[k]);
		}
	}
	print_geomeans(w, run);
	print_one_sided(run);
	fflush(stdout);
	each_row(cli, run, warn_row); /* on stderr */
	print_summary(cli, run);
}

/* ---- machine-readable verdicts ---- */

static const char *verdict_key(enum compare_verdict v)
{
	static const char *const keys[] = {
		[COMPARE_SAME] = "same", [COMPARE_WITHIN] = "within_threshold",
		[COMPARE_IMPROVED] = "improved",
		[COMPARE_REGRESSED] = "regressed",
		[COMPARE_INCONCLUSIVE] = "inconclusive",
	};

	return keys[v];
}

/* An infinite bound is no number in JSON: null. */
static json_t *number_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *row_json(const char *name, const struct compare_row *r)
{
	json_t *row = json_pack(
		"{s:s, s:s, s:s, s:f, s:f, s:f, s:I, s:I, s:f, s:f, s:f, s:f, "
		"s:f, s:f, s:f, s:f, s:I}", "name", name, "unit", r->unit,
		"verdict", verdict_key(r->verdict), "delta", r->delta, "p",
		r->p, "threshold", r->threshold, "n_base",
		(json_int_t)r->n_base, "n_new", (json_int_t)r->n_new,
		"base_median", r->base_median, "new_median", r->new_median,
		"base_spread", r->base_spread, "new_spread", r->new_spread,
		"min_p", r->min_p, "base_noise", r->base_noise, "new_noise",
		r->new_noise, "mde", r->mde, "needed_per_side",
		(json_int_t)r->needed);

	json_object_set_new(row, "shift", number_or_null(r->shift));
	json_object_set_new(row, "ci_lo", number_or_null(r->ci_lo));
	json_object_set_new(row, "ci_hi", number_or_null(r->ci_hi));
	json_object_set_new(row, "worst", number_or_null(r->worst));
	return row;
}

static void append_names(json_t *a, const struct compare_run *run,
			 const struct compare_pair *p, const char **names,
			 size_t n)
{
	char name[256];

	for (size_t i = 0; i < n; i++) {
		compare_print__row_name(name, sizeof(name), run, p, names[i]);
		json_array_append_new(a, json_string(name));
	}
}

/* A document only one side has: every series of it. */
static void append_doc(json_t *a, const struct compare_run *run,
		       const struct result_entry *e)
{
	char name[256];

	for (size_t i = 0; i < e->doc.nr_series; i++) {
		if (run->dirs)
			snprintf(name, sizeof(name), "%s/%s", e->doc.bench,
				 e->doc.series[i].name);
		else
			snprintf(name, sizeof(name), "%s",
				 e->doc.series[i].name);
		json_array_append_new(a, json_string(name));
	}
}

static void collect(const struct compare_run *run, json_t *rows,
		    json_t *only_base, json_t *only_new)
{
	char name[256];

	for (size_t i = 0; i < run->nr_pairs; i++) {
		const struct compare_pair *p = &run->pairs[i];

		if (!p->new_ || !p->base) {
			append_doc(p->base ? only_base : only_new, run,
				   p->base ? p->base : p->new_);
			continue;
		}
		for (size_t k = 0; k < p->res.nr_rows; k++) {
			compare_print__row_name(name, sizeof(name), run, p,
				 p->res.rows[k].name);
			json_array_append_new(rows, row_json(name,
							     &p->res.rows[k]));
		}
		append_names(only_base, run, p, p->res.only_base,
			     p->res.nr_only_base);
		append_names(only_new, run, p, p->res.only_new,
			     p->res.nr_only_new);
	}
}

static json_t *geomeans_json(const struct compare_run *run)
{
	struct geomean *g = calloc(run->rows + 1, sizeof(*g));
	size_t ng = g ? geomeans(run, g) : 0;
	json_t *a = json_array();

	for (size_t i = 0; i < ng; i++) {
		double b = exp(g[i].log_base / (double)g[i].n);
		double n = exp(g[i].log_new / (double)g[i].n);

		json_array_append_new(a, json_pack(
			"{s:s, s:I, s:f, s:f, s:f}", "unit", g[i].unit,
			"series", (json_int_t)g[i].n, "base", b, "new", n,
			"delta", n / b - 1));
	}
	free(g);
	return a;
}

/* {"bench" (files only), "base", "new", "test", "alpha", "threshold",
 *  "min_samples", "regressions", "inconclusive", "missing",
 *  "series_compared", "series": [...],
 *  "geomean": [...], "only_base", "only_new"}; spreads, noise, mde and
 *  thresholds are fractions. */
void compare_print__json(const struct compare_cli *cli,
			 const struct compare_run *run)
{
	json_t *rows = json_array(), *ob = json_array(), *on = json_array();
	json_t *doc;

	collect(run, rows, ob, on);
	doc = json_pack("{s:s, s:s, s:s, s:f, s:f, s:I, s:I, s:I, s:I, s:o, "
			"s:o, s:o, s:o}", "base", cli->base_path, "new",
			cli->new_path, "test", cli->o.test == COMPARE_UTEST
				? "utest" : "permutation",
			"alpha", cli->o.alpha, "threshold", cli->o.threshold,
			"min_samples", (json_int_t)cli->o.min_samples,
			"regressions", (json_int_t)run->regressions,
			"inconclusive", (json_int_t)run->inconclusive,
			"series_compared", (json_int_t)run->rows, "series",
			rows, "geomean", geomeans_json(run), "only_base", ob,
			"only_new", on);
	json_object_set_new(doc, "missing", json_integer(
		(json_int_t)run->missing));
	if (!run->dirs)
		json_object_set_new(doc, "bench", json_string(
			run->base.docs[0].doc.bench));
	json_dumpf(doc, stdout, JSON_INDENT(2));
	putchar('\n');
	json_decref(doc);
	each_row(cli, run, warn_row); /* on stderr */
}
