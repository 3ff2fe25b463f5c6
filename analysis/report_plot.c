/* The report's plots: gnuplot runs on the plots/ scripts, the latency
 * CDFs and the drivers' table plots (called from report_NAME.c), each
 * shown in report.md. */
#include "report_int.h"

#include "err.h"
#include "plot.h"
#include "result.h"

#include <inttypes.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* More lines than this make a CDF plot unreadable. */
#define CDF_MAX_LINES 20
/* Distinct colours in plots/cdf.gp's palette. */
#define CDF_COLOURS 10

/* Draws `name`-based files in each chosen format; returns the file name
 * of the first drawn (for report.md) in `shown`, or "" when none. */
static void draw(struct report *r, const char *script, const char *base,
		 const char *vars, char *shown, size_t len)
{
	static const char *const fmts[] = { "png", "svg" };
	bool want[] = { r->o->png, r->o->svg };

	shown[0] = '\0';
	if (!r->gnuplot)
		return;
	for (int f = 0; f < 2; f++) {
		char out[160], *v = NULL;

		if (!want[f])
			continue;
		/* Series names and params come from the inputs: a '/' or a
		 * leading '.' there must not leave --out. */
		plot__file_name(out, sizeof(out), base, fmts[f]);
		if (asprintf(&v, "%s; fmt='%s'", vars, fmts[f]) < 0)
			continue;
		if (plot__run(r->o->out_dir, script, v, out) < 0) {
			fprintf(stderr, "coldstart: report: %s\n", err__last());
			r->failed++;
		} else {
			r->plots++;
			if (!shown[0])
				snprintf(shown, len, "%s", out);
		}
		free(v);
	}
}

static void md_image(struct report *r, const char *title, const char *file)
{
	if (file[0])
		fprintf(r->md, "\n![%s](%s)\n", title, file);
}

/* A CDF group: latency series (unit ns) of one phase (and cache state),
 * so a plot never mixes units. */
struct cdf_group {
	char name[96];
	size_t n;   /* its series */
	double top; /* the largest median (ns): picks the axis unit */
};

#define CDF_MAX_GROUPS 32

/* Whether series k is drawn in a CDF: latencies only; restore's only in
 * its DONE phase (the others are in the tables). */
static bool cdf_series(const struct input *in, size_t k, char *group,
		       size_t len)
{
	const struct result_series *rs = &in->doc.series[k];

	if (strcmp(rs->unit, "ns"))
		return false;
	report__group_of(in, rs->name, group, len);
	return strcmp(in->doc.bench, "restore") || !strncmp(group, "done", 4);
}

static size_t cdf_groups(const struct input *in, struct cdf_group *gs)
{
	size_t ng = 0;

	for (size_t k = 0; k < in->doc.nr_series; k++) {
		char g[96];
		double m;
		size_t j;

		if (!cdf_series(in, k, g, sizeof(g)))
			continue;
		for (j = 0; j < ng && strcmp(gs[j].name, g); j++)
			;
		if (j == ng && ng == CDF_MAX_GROUPS)
			continue;
		if (j == ng)
			gs[ng++] = (struct cdf_group){ .top = 0 };
		snprintf(gs[j].name, sizeof(gs[j].name), "%s", g);
		gs[j].n++;
		m = median_ns(&in->doc.series[k]);
		gs[j].top = m > gs[j].top ? m : gs[j].top;
	}
	return ng;
}

/* Position (from 0) of series k's params.key value among the distinct
 * values of that key in the document's series, in order of first
 * appearance; 0 when series k has none. */
static size_t value_index(const struct input *in, size_t k, const char *key)
{
	const json_t *series = get(in->root, "series");
	const json_t *v = get(get(json_array_get(series, k), "params"), key);
	size_t n = 0;

	if (!v)
		return 0;
	for (size_t j = 0; j < k; j++) {
		const json_t *w = get(get(json_array_get(series, j), "params"),
				      key);
		bool seen = false;

		if (json_equal(w, v))
			break; /* v's first appearance */
		if (!w)
			continue;
		for (size_t i = 0; i < j && !seen; i++)
			seen = json_equal(w, get(get(json_array_get(series, i),
						     "params"), key));
		n += !seen;
	}
	return n;
}

/* The line style of series k, the i-th of its plot: restore's keep a
 * colour per strategy and a dash pattern per working set in every plot;
 * others take the palette's colours in turn, dashed after the tenth. */
static void line_style(const struct input *in, size_t k, size_t i,
		       size_t *colour, size_t *dash)
{
	if (!strcmp(in->doc.bench, "restore")) {
		*colour = 1 + value_index(in, k, "strategy") % CDF_COLOURS;
		*dash = 1 + value_index(in, k, "ws_bytes");
		return;
	}
	*colour = 1 + i % CDF_COLOURS;
	*dash = 1 + i / CDF_COLOURS;
}

/* The group's series number [from, to): their names, colours and dash
 * patterns as space-separated words in words[0..2]. */
static int cdf_words(const struct input *in, const char *group,
		     size_t from, size_t to, char **words)
{
	size_t len[3] = { 0 }, i = 0;
	FILE *w[3];

	for (int f = 0; f < 3; f++) {
		words[f] = NULL;
		w[f] = open_memstream(&words[f], &len[f]);
	}
	if (!w[0] || !w[1] || !w[2])
		i = SIZE_MAX;
	for (size_t k = 0; i != SIZE_MAX && k < in->doc.nr_series; k++) {
		char g[96], name[160];
		size_t colour, dash;

		if (!cdf_series(in, k, g, sizeof(g)) || strcmp(g, group))
			continue;
		safe_name(name, sizeof(name), in->doc.series[k].name);
		line_style(in, k, i - from, &colour, &dash);
		if (i >= from && i < to) {
			fprintf(w[0], "%s%s", i > from ? " " : "", name);
			fprintf(w[1], "%s%zu", i > from ? " " : "", colour);
			fprintf(w[2], "%s%zu", i > from ? " " : "", dash);
		}
		i++;
	}
	for (int f = 0; f < 3; f++)
		if (w[f])
			fclose(w[f]);
	return words[0] && words[1] && words[2] ? 0 : -ENOMEM;
}

/* Plot `part` of `parts` of group g; cdf.csv holds ms, the axis shows
 * the unit the group's largest median suits. */
static void plot_cdf_part(struct report *r, const struct input *in,
			  const struct cdf_group *g, size_t part, size_t parts)
{
	size_t per = (g->n + parts - 1) / parts;
	char *words[3];
	int ok = cdf_words(in, g->name, part * per, (part + 1) * per, words);
	char *vars = NULL, base[200], file[200], num[24] = "", of[48] = "";
	char title[256];
	bool all = !strcmp(g->name, "all");
	double div;
	const char *unit = result__ns_unit(g->top, &div);

	if (parts > 1) {
		snprintf(num, sizeof(num), "-%zu", part + 1);
		snprintf(of, sizeof(of), " (%zu of %zu)", part + 1, parts);
	}
	snprintf(title, sizeof(title), "%.63s: %.95s%.47s", in->label,
		 g->name, of);
	if (ok == 0 && asprintf(&vars, "in='cdf.csv'; bench='%s'; "
				"group='%s'; series='%s'; colours='%s'; "
				"dashes='%s'; unit='%s'; scale=%g; "
				"title='%s'", in->label, g->name, words[0],
				words[1], words[2], unit, 1e6 / div,
				title) >= 0) {
		snprintf(base, sizeof(base), "cdf-%s%s%.90s%s", in->label,
			 all ? "" : "-", all ? "" : g->name, num);
		draw(r, "cdf", base, vars, file, sizeof(file));
		snprintf(title, sizeof(title), "CDF %.90s%s", g->name, num);
		md_image(r, title, file);
	}
	free(vars);
	for (int f = 0; f < 3; f++)
		free(words[f]);
}

/* Latency CDFs of a document, one plot per group; a group with more
 * series than one plot can show is split into plots of equal size. */
void report__plot_cdfs(struct report *r, const struct input *in)
{
	struct cdf_group gs[CDF_MAX_GROUPS];
	size_t ng = cdf_groups(in, gs);

	for (size_t j = 0; j < ng; j++) {
		size_t parts = (gs[j].n + CDF_MAX_LINES - 1) / CDF_MAX_LINES;

		for (size_t p = 0; p < parts; p++)
			plot_cdf_part(r, in, &gs[j], p, parts);
	}
}

char *report__csv_column(const struct report *r, csv_fn *fn, int col)
{
	char *text = NULL, *out = NULL, *save = NULL;
	size_t len = 0, olen = 0;
	FILE *f = open_memstream(&text, &len), *o;

	if (!f)
		return NULL;
	fn(f, r);
	fclose(f);
	o = open_memstream(&out, &olen);
	if (!o) {
		free(text);
		return NULL;
	}
	fputc(' ', o);
	for (char *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char field[96] = "", key[100];
		char *p = line;

		if (line == text)
			continue; /* header */
		for (int c = 0; c < col && p; c++)
			p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
		if (!p)
			continue;
		snprintf(field, sizeof(field), "%.*s", (int)strcspn(p, ","), p);
		snprintf(key, sizeof(key), " %s ", field);
		fflush(o);
		if (!strstr(out, key))
			fprintf(o, "%s ", field);
	}
	fclose(o);
	free(text);
	return out;
}

void report__plot_show(struct report *r, const char *script,
		       const char *base, const char *vars, const char *title)
{
	char file[200];

	draw(r, script, base, vars, file, sizeof(file));
	md_image(r, title, file);
}

/* Runs `script` when its CSV has data in column `col`, passing the
 * distinct values as `var`. */
void report__plot_table(struct report *r, const char *script, csv_fn *fn,
		       int col, const char *var, const char *extra,
		       const char *title)
{
	char *values = report__csv_column(r, fn, col), *vars = NULL;

	if (values && strspn(values, " ") < strlen(values) &&
	    asprintf(&vars, "in='%s.csv'; %s='%s'%s", script, var, values,
		     extra ? extra : "") >= 0)
		report__plot_show(r, script, script, vars, title);
	free(vars);
	free(values);
}
