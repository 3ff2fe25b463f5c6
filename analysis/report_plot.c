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
	size_t n;     /* its series */
	size_t first; /* its series' indexes: plan.members[first..first+n) */
	double top;   /* the largest median (ns): picks the axis unit */
};

#define CDF_MAX_GROUPS 32

/* A document's CDF plots, planned once: each group's series in document
 * order, and restore's line style keys per series. Finding each of them
 * per series and per plot, by scans of every series, made the report
 * cubic in series. */
struct cdf_plan {
	struct cdf_group g[CDF_MAX_GROUPS];
	size_t ng;
	size_t *group;   /* series k's group, or CDF_MAX_GROUPS: none */
	size_t *members;
	size_t *strategy, *ws; /* restore: value_index of each key */
};

/* Whether series k is drawn in a CDF: latencies only; restore's only in
 * its DONE phase (the others are in the tables). */
static bool cdf_series(const struct input *in, size_t k)
{
	if (strcmp(in->doc.series[k].unit, "ns"))
		return false;
	return strcmp(in->doc.bench, "restore") ||
	       !strncmp(in->groups[k], "done", 4);
}

static size_t group_index(struct cdf_plan *pl, const char *name)
{
	size_t j;

	for (j = 0; j < pl->ng && strcmp(pl->g[j].name, name); j++)
		;
	if (j == pl->ng && pl->ng < CDF_MAX_GROUPS) {
		pl->g[pl->ng++] = (struct cdf_group){ .top = 0 };
		snprintf(pl->g[j].name, sizeof(pl->g[j].name), "%s", name);
	}
	return j;
}

static void cdf_groups(const struct input *in, struct cdf_plan *pl)
{
	size_t *next = pl->members;

	for (size_t k = 0; k < in->doc.nr_series; k++) {
		size_t j = CDF_MAX_GROUPS;
		double m;

		if (cdf_series(in, k))
			j = group_index(pl, in->groups[k]);
		pl->group[k] = j;
		if (j == CDF_MAX_GROUPS)
			continue;
		pl->g[j].n++;
		m = report__median(in, k);
		pl->g[j].top = m > pl->g[j].top ? m : pl->g[j].top;
	}
	for (size_t j = 0; j < pl->ng; j++) {
		pl->g[j].first = (size_t)(next - pl->members);
		next += pl->g[j].n;
		pl->g[j].n = 0;
	}
	for (size_t k = 0; k < in->doc.nr_series; k++) {
		struct cdf_group *g = &pl->g[pl->group[k]];

		if (pl->group[k] != CDF_MAX_GROUPS)
			pl->members[g->first + g->n++] = k;
	}
}

/* Each series' params.key value's position (from 0) among the distinct
 * values of that key in the document's series, in order of first
 * appearance; 0 for a series without one. Values are told apart as
 * json_equal does, by their canonical text (0.0 and -0.0 are one). */
static int value_index(const struct input *in, const char *key,
		       size_t *out)
{
	json_t *seen = json_object();
	const json_t *series = get(in->root, "series");
	size_t count = 0;
	int ret = seen ? 0 : -ENOMEM;

	for (size_t k = 0; ret == 0 && k < in->doc.nr_series; k++) {
		const json_t *v = get(get(json_array_get(series, k), "params"),
				      key);
		char *text;
		const json_t *at;

		out[k] = 0;
		if (!v)
			continue;
		text = json_is_real(v) && json_real_value(v) == 0
			       ? strdup("0.0")
			       : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT |
						       JSON_SORT_KEYS);
		if (!text) {
			ret = -ENOMEM;
			break;
		}
		at = json_object_get(seen, text);
		out[k] = at ? (size_t)json_integer_value(at) : count++;
		if (!at && json_object_set_new_nocheck(seen, text,
				json_integer((json_int_t)out[k])) < 0)
			ret = -ENOMEM;
		free(text);
	}
	json_decref(seen);
	return ret;
}

static void free_plan(struct cdf_plan *pl)
{
	free(pl->group);
	free(pl->members);
	free(pl->strategy);
	free(pl->ws);
}

static int make_plan(const struct input *in, struct cdf_plan *pl)
{
	size_t n = in->doc.nr_series + 1;
	bool restore = !strcmp(in->doc.bench, "restore");

	*pl = (struct cdf_plan){ .ng = 0 };
	pl->group = calloc(n, sizeof(size_t));
	pl->members = calloc(n, sizeof(size_t));
	pl->strategy = calloc(n, sizeof(size_t));
	pl->ws = calloc(n, sizeof(size_t));
	if (!pl->group || !pl->members || !pl->strategy || !pl->ws ||
	    (restore && (value_index(in, "strategy", pl->strategy) < 0 ||
			 value_index(in, "ws_bytes", pl->ws) < 0))) {
		free_plan(pl);
		return -ENOMEM;
	}
	cdf_groups(in, pl);
	return 0;
}

/* The line style of series k, the i-th of its plot: restore's keep a
 * colour per strategy and a dash pattern per working set in every plot;
 * others take the palette's colours in turn, dashed after the tenth. */
static void line_style(const struct input *in, const struct cdf_plan *pl,
		       size_t k, size_t i, size_t *colour, size_t *dash)
{
	if (!strcmp(in->doc.bench, "restore")) {
		*colour = 1 + pl->strategy[k] % CDF_COLOURS;
		*dash = 1 + pl->ws[k];
		return;
	}
	*colour = 1 + i % CDF_COLOURS;
	*dash = 1 + i / CDF_COLOURS;
}

/* The group's series number [from, to): their names, colours and dash
 * patterns as space-separated words in words[0..2]. */
static int cdf_words(const struct input *in, const struct cdf_plan *pl,
		     const struct cdf_group *g, size_t from, size_t to,
		     char **words)
{
	size_t len[3] = { 0 };
	bool ok = true;
	FILE *w[3];

	for (int f = 0; f < 3; f++) {
		words[f] = NULL;
		w[f] = open_memstream(&words[f], &len[f]);
		ok = ok && w[f];
	}
	for (size_t i = from; ok && i < to && i < g->n; i++) {
		size_t k = pl->members[g->first + i], colour, dash;
		char name[160];

		safe_name(name, sizeof(name), in->doc.series[k].name);
		line_style(in, pl, k, i - from, &colour, &dash);
		fprintf(w[0], "%s%s", i > from ? " " : "", name);
		fprintf(w[1], "%s%zu", i > from ? " " : "", colour);
		fprintf(w[2], "%s%zu", i > from ? " " : "", dash);
	}
	for (int f = 0; f < 3; f++)
		if (w[f])
			fclose(w[f]);
	return words[0] && words[1] && words[2] ? 0 : -ENOMEM;
}

/* Plot `part` of `parts` of group g; cdf.csv holds ms, the axis shows
 * the unit the group's largest median suits. */
static void plot_cdf_part(struct report *r, const struct input *in,
			  const struct cdf_plan *pl, const struct cdf_group *g,
			  size_t part, size_t parts)
{
	size_t per = (g->n + parts - 1) / parts;
	char *words[3];
	int ok = cdf_words(in, pl, g, part * per, (part + 1) * per, words);
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
	struct cdf_plan pl;

	if (make_plan(in, &pl) < 0) {
		fprintf(stderr, "coldstart: report: warning: %s: no CDF "
			"plots: out of memory\n", in->label);
		return;
	}
	for (size_t j = 0; j < pl.ng; j++) {
		size_t parts = (pl.g[j].n + CDF_MAX_LINES - 1) / CDF_MAX_LINES;

		for (size_t p = 0; p < parts; p++)
			plot_cdf_part(r, in, &pl, &pl.g[j], p, parts);
	}
	free_plan(&pl);
}

char *report__csv_column(const struct report *r, csv_fn *fn, int col)
{
	char *text = NULL, *out = NULL, *save = NULL;
	size_t len = 0, olen = 0;
	FILE *f = open_memstream(&text, &len), *o;
	/* the values so far: a search of the list for each was quadratic */
	json_t *seen = json_object();

	if (!f || !seen) {
		if (f)
			fclose(f);
		free(text);
		json_decref(seen);
		return NULL;
	}
	fn(f, r);
	fclose(f);
	o = open_memstream(&out, &olen);
	if (!o) {
		free(text);
		json_decref(seen);
		return NULL;
	}
	fputc(' ', o);
	for (char *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char field[96] = "";
		char *p = line;

		if (line == text)
			continue; /* header */
		for (int c = 0; c < col && p; c++)
			p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
		if (!p)
			continue;
		snprintf(field, sizeof(field), "%.*s", (int)strcspn(p, ","), p);
		if (json_object_get(seen, field))
			continue;
		json_object_set_new_nocheck(seen, field, json_true());
		fprintf(o, "%s ", field);
	}
	fclose(o);
	free(text);
	json_decref(seen);
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
