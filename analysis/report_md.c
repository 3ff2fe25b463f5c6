/* One result document's section of report.md: where it came from, the
 * guest, the driver's own tables (report_NAME.c), every series, plots and
 * warnings. */
#include "report_driver.h"
#include "report_int.h"

#include "err.h"
#include "result.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fewer samples than this: a bootstrap interval of the median spans
 * about min..max, which the tables say. */
#define CI_FEW 10

/* Fewer samples than this are too few to call one of them an outlier:
 * with 5, one sample off by a little is "3 MADs" away. */
#define REPORT_OUTLIER_MIN_N 20

void report__col_for(const char *unit, double ref, struct col *c)
{
	c->unit = result__unit_for(unit, ref, &c->div, &c->prec);
}

const char *report__col_text(char *buf, size_t len, const struct col *c,
			     double v)
{
	snprintf(buf, len, "%.*f", c->prec, v / c->div);
	return buf;
}

double report__median_of_medians(const struct input *in, const char *unit,
				 bool (*pick)(const struct input *, size_t))
{
	double *m = calloc(in->doc.nr_series + 1, sizeof(double)), ref = 0;
	size_t n = 0;

	for (size_t k = 0; m && k < in->doc.nr_series; k++)
		if ((!unit || !strcmp(in->doc.series[k].unit, unit)) &&
		    (!pick || pick(in, k)))
			m[n++] = report__median(in, k);
	if (n)
		stats__median(m, n, &ref);
	free(m);
	return ref;
}

static void md_series_row(FILE *md, const struct result_series *rs,
			  const struct sstat *st, const struct col *c)
{
	const double v[] = { st->s.p50, st->s.p90, st->s.p99, st->s.min,
			     st->s.max, st->lo, st->hi };
	char t[7][48];

	for (size_t i = 0; i < 7; i++)
		report__col_text(t[i], sizeof(t[i]), c, v[i]);
	fprintf(md, "| %s | %zu | %s | %s | %s | %s | %s | %s .. %s%s |\n",
		rs->name, st->s.n, t[0], t[1], t[2], t[3], t[4], t[5], t[6],
		st->s.n < CI_FEW ? " *" : "");
}

/* The median of the medians of in's series idx[0..n). */
static double median_of_list(const struct input *in, const size_t *idx,
			     size_t n)
{
	double *m = calloc(n + 1, sizeof(double)), ref = 0;

	for (size_t i = 0; m && i < n; i++)
		m[i] = report__median(in, idx[i]);
	if (m && n)
		stats__median(m, n, &ref);
	free(m);
	return ref;
}

/* The table of in's series idx[0..n), all in `unit`; the smallest and
 * largest n of the rows with fewer than CI_FEW samples widen
 * *few_lo..*few_hi. */
static void md_series_unit(FILE *md, const struct input *in,
			   const char *unit, const size_t *idx, size_t n,
			   size_t *few_lo, size_t *few_hi)
{
	struct col c;

	report__col_for(unit, median_of_list(in, idx, n), &c);
	fprintf(md, "\n| series | n | median %s | p90 %s | p99 %s | min %s | "
		"max %s | 95%% CI of median, %s |\n|---|--:|--:|--:|--:|--:|"
		"--:|---|\n", c.unit, c.unit, c.unit, c.unit, c.unit, c.unit);
	for (size_t i = 0; i < n; i++) {
		const struct result_series *rs = &in->doc.series[idx[i]];
		struct sstat st;

		if (report__stats(in, idx[i], &st) < 0)
			continue;
		md_series_row(md, rs, &st, &c);
		if (st.s.n < CI_FEW) {
			*few_lo = st.s.n < *few_lo ? st.s.n : *few_lo;
			*few_hi = st.s.n > *few_hi ? st.s.n : *few_hi;
		}
	}
}

/* in's series indexes grouped by unit, units in order of first
 * appearance, series in document order within each: by_unit[start[u]
 * .. start[u + 1]). The number of units, 0 without memory. Linear in
 * series, where a scan of every series per unit was quadratic. */
static size_t units_of(const struct input *in, size_t *by_unit,
		       size_t *start, size_t *unit_of)
{
	json_t *ids = json_object();
	size_t nu = 0;

	for (size_t k = 0; ids && k < in->doc.nr_series; k++) {
		const char *unit = in->doc.series[k].unit;
		const json_t *id = json_object_get(ids, unit);

		if (!id && json_object_set_new_nocheck(ids, unit,
				json_integer((json_int_t)nu)) < 0)
			nu = 0, k = in->doc.nr_series; /* stop: no memory */
		else
			unit_of[k] = id ? (size_t)json_integer_value(id) : nu++;
	}
	json_decref(ids);
	if (!nu)
		return 0;
	memset(start, 0, (nu + 1) * sizeof(*start));
	for (size_t k = 0; k < in->doc.nr_series; k++)
		start[unit_of[k] + 1]++;
	for (size_t u = 0; u < nu; u++)
		start[u + 1] += start[u];
	for (size_t k = 0; k < in->doc.nr_series; k++)
		by_unit[start[unit_of[k]]++] = k;
	for (size_t u = nu; u > 0; u--) /* back to each unit's start */
		start[u] = start[u - 1];
	start[0] = 0;
	return nu;
}

/* Every series, one table per unit (times, memory, rates), each column
 * in one unit (named in the median's header) chosen from the table's
 * median of medians. */
static void md_series(struct report *r, const struct input *in)
{
	size_t few_lo = SIZE_MAX, few_hi = 0, n = in->doc.nr_series + 1, nu;
	size_t *by_unit = calloc(n, sizeof(size_t));
	size_t *start = calloc(n + 1, sizeof(size_t));
	size_t *unit_of = calloc(n, sizeof(size_t));

	nu = by_unit && start && unit_of ? units_of(in, by_unit, start,
						    unit_of) : 0;
	if (!nu && in->doc.nr_series)
		fprintf(stderr, "coldstart: report: warning: %s: no series "
			"table: out of memory\n", in->label);
	for (size_t u = 0; u < nu; u++)
		md_series_unit(r->md, in,
			       in->doc.series[by_unit[start[u]]].unit,
			       by_unit + start[u], start[u + 1] - start[u],
			       &few_lo, &few_hi);
	free(by_unit);
	free(start);
	free(unit_of);
	if (!few_hi)
		return;
	fputs("\n\\* n", r->md);
	if (few_lo == few_hi)
		fprintf(r->md, "=%zu", few_lo);
	else
		fprintf(r->md, "=%zu..%zu", few_lo, few_hi);
	fprintf(r->md, ": with fewer than %d samples the 95 %% interval of "
		"the median spans about min..max; take it with care.\n",
		CI_FEW);
}

/* One guest file as "`path` (N bytes, sha256 `...`)". */
static void md_guest_file(FILE *md, const char *what, const json_t *f)
{
	if (!json_is_object(f))
		return;
	if (json_is_string(get(f, "sha256")))
		fprintf(md, "; %s `%s` (%" JSON_INTEGER_FORMAT " bytes, sha256 "
			"`%s`)", what, str_or(f, "path", "?"),
			json_integer_value(get(f, "bytes")),
			str_or(f, "sha256", "?"));
	else
		fprintf(md, "; %s `%s` (not hashed: %s)", what,
			str_or(f, "path", "?"), str_or(f, "error", "?"));
}

/* The exact guest the results came from (documents before the "guest"
 * object existed print nothing). */
static void md_guest(FILE *md, const json_t *g)
{
	if (!json_is_object(g))
		return;
	fprintf(md, "\nGuest: %s", str_or(g, "name", "?"));
	if (json_is_string(get(g, "sha256")))
		fprintf(md, " (%" JSON_INTEGER_FORMAT " bytes, sha256 `%s`)",
			json_integer_value(get(g, "bytes")),
			str_or(g, "sha256", "?"));
	md_guest_file(md, "kernel", get(g, "kernel"));
	md_guest_file(md, "initrd", get(g, "initrd"));
	fputs(".\n", md);
}

void report__md_doc(struct report *r, const struct input *in,
		    const struct report_driver *d)
{
	const json_t *cfg = in->doc.config, *mem = get(in->root, "memory");
	char *cfg_text = json_dumps(cfg, JSON_COMPACT | JSON_SORT_KEYS);
	const char *guest = str_or(cfg, "guest", NULL);

	fprintf(r->md, "\n## %s\n\nFrom `%s`%s%s%s. Configuration: `%s`\n",
		in->label, in->path, guest ? "; guest: " : "",
		guest ? guest : "", guest ? "" : "", cfg_text ? cfg_text : "{}");
	free(cfg_text);
	/* the guest object names what the driver ran; where the
	 * configuration names another guest (peers' firmware that exits at
	 * once) or none (the suite), it would mislead */
	if (guest && !strcmp(guest, str_or(get(in->root, "guest"), "name", "")))
		md_guest(r->md, get(in->root, "guest"));
	if (json_is_object(mem) && json_is_integer(get(mem, "vmm_overhead_kib")))
		fprintf(r->md, "\nVMM memory beyond guest memory: %"
			JSON_INTEGER_FORMAT " KiB (USS).\n",
			json_integer_value(get(mem, "vmm_overhead_kib")));
	if (d && d->md)
		d->md(r, in);
	if (!d || !d->own_series)
		md_series(r, in);
	report__plot_cdfs(r, in);
	if (d && d->plot)
		d->plot(r);
	if (json_array_size(get(in->root, "warnings"))) {
		fputs("\nWarnings:\n\n", r->md);
		result__md_warning_list_judged(r->md, in->root,
					       REPORT_OUTLIER_MIN_N);
	}
}
