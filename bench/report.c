/* The report generator: reads result documents, writes report.md, the
 * CSV files the gnuplot scripts of plots/ read, and the plots. */
#include "report.h"

#include "args.h"
#include "cli.h"
#include "compare.h"
#include "density.h"
#include "err.h"
#include "output.h"
#include "plot.h"
#include "result.h"
#include "stats.h"
#include "sysinfo.h"

#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* More lines than this make a CDF plot unreadable. */
#define CDF_MAX_LINES 16
#define CI_RESAMPLES 1000

struct input {
	const char *path;
	char label[64];
	json_t *root;
	struct result_doc doc;
};

struct report {
	const struct report_opts *o;
	struct input *in;
	size_t n;
	FILE *md;
	bool gnuplot;
	unsigned int plots, failed;
};

/* ---- small helpers ---- */

static const json_t *get(const json_t *o, const char *key)
{
	return json_object_get(o, key);
}

static const char *str_or(const json_t *o, const char *key, const char *def)
{
	const char *s = json_string_value(get(o, key));

	return s ? s : def;
}

/* ns series are shown in ms; others in their unit. */
static double scale_of(const char *unit)
{
	return !strcmp(unit, "ns") ? 1e6 : 1;
}

static const char *shown_unit(const char *unit)
{
	return !strcmp(unit, "ns") ? "ms" : unit;
}

/* CSV fields and gnuplot words must not hold separators or quotes. */
static void safe_name(char *out, size_t len, const char *name)
{
	size_t i = 0;

	for (; name[i] && i + 1 < len; i++)
		out[i] = strchr(",\"' \t\n\\", name[i]) ? '_' : name[i];
	out[i] = '\0';
}

/* A file name part: safe_name plus '/' -> '-'. */
static void file_part(char *out, size_t len, const char *name)
{
	safe_name(out, len, name);
	for (char *p = out; *p; p++)
		if (*p == '/' || *p == '=')
			*p = '-';
}

struct sstat {
	struct summary s;
	double lo, hi;
};

static int series_stats(const struct result_series *rs, struct sstat *st)
{
	int ret = stats__summarize(rs->samples, rs->n, &st->s);

	if (ret == 0 && stats__bootstrap_median_ci(rs->samples, rs->n,
						   CI_RESAMPLES, 0.95, 1,
						   &st->lo, &st->hi) < 0)
		st->lo = st->hi = st->s.p50;
	return ret;
}

/* ---- loading ---- */

static int load_input(const char *path, struct input *in)
{
	char why[400];
	json_error_t e;
	const json_t *schema;
	int ret;

	in->path = path;
	in->root = output__json_load(path, &e);
	if (!in->root)
		return err__set(EINVAL, "%s: not a readable JSON document: %s",
				path, e.text);
	schema = get(in->root, "schema");
	if (!json_is_object(in->root) || !json_is_string(get(in->root, "bench")))
		return err__set(EINVAL, "%s: not a coldstart result document "
				"(no \"bench\")", path);
	if (!json_is_integer(schema))
		return err__set(EINVAL, "%s: no result schema version; this "
				"coldstart reads schema %d", path,
				COMPARE_SCHEMA);
	if (json_integer_value(schema) != COMPARE_SCHEMA)
		return err__set(EINVAL, "%s: result schema version %"
				JSON_INTEGER_FORMAT " is not supported (this "
				"coldstart reads %d)", path,
				json_integer_value(schema), COMPARE_SCHEMA);
	ret = compare__parse(in->root, &in->doc);
	if (ret < 0) {
		snprintf(why, sizeof(why), "%s", err__last());
		return err__set(-ret, "%s: %s", path, why);
	}
	return 0;
}

/* Labels: the bench name, numbered when a bench appears again. */
static void label_inputs(struct report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		unsigned int same = 1;
		char safe[48];

		for (size_t k = 0; k < i; k++)
			same += !strcmp(r->in[k].doc.bench, r->in[i].doc.bench);
		file_part(safe, sizeof(safe), r->in[i].doc.bench);
		if (same > 1)
			snprintf(r->in[i].label, sizeof(r->in[i].label), "%s-%u",
				 safe, same);
		else
			snprintf(r->in[i].label, sizeof(r->in[i].label), "%s",
				 safe);
	}
}

static int find_input(const struct report *r, const char *bench)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->in[i].doc.bench, bench))
			return (int)i;
	return -1;
}

/* ---- CSV files ---- */

typedef void csv_fn(FILE *f, const struct report *r);

static int write_csv(const struct report *r, const char *name, csv_fn *fn)
{
	struct output_text t;
	int ret = output__text_open(&t);

	if (ret < 0)
		return ret;
	fn(t.f, r);
	return output__text_write(&t, r->o->out_dir, name);
}

static void series_csv(FILE *f, const struct report *r)
{
	fputs("label,bench,series,unit,n,min,p50,p90,p99,p99_9,max,mean,stddev,"
	      "cv,ci95_lo,ci95_hi\n", f);
	for (size_t i = 0; i < r->n; i++) {
		const struct result_doc *d = &r->in[i].doc;

		for (size_t k = 0; k < d->nr_series; k++) {
			const struct result_series *rs = &d->series[k];
			double sc = scale_of(rs->unit);
			struct sstat st;
			char name[160];

			if (series_stats(rs, &st) < 0)
				continue;
			safe_name(name, sizeof(name), rs->name);
			fprintf(f, "%s,%s,%s,%s,%zu,%.6g,%.6g,%.6g,%.6g,%.6g,"
				"%.6g,%.6g,%.6g,%.4f,%.6g,%.6g\n", r->in[i].label,
				d->bench, name, shown_unit(rs->unit), st.s.n,
				st.s.min / sc, st.s.p50 / sc, st.s.p90 / sc,
				st.s.p99 / sc, st.s.p999 / sc, st.s.max / sc,
				st.s.mean / sc, st.s.stddev / sc, st.s.cv,
				st.lo / sc, st.hi / sc);
		}
	}
}

/* The CDF group of a series: its phase (and cache state), or "all". */
static void group_of(const struct input *in, const char *series, char *out,
		     size_t len)
{
	const json_t *arr = get(in->root, "series"), *s;
	size_t i;

	snprintf(out, len, "all");
	json_array_foreach(arr, i, s) {
		const json_t *p = get(s, "params");
		const char *phase = json_string_value(get(p, "phase"));
		const char *cache = json_string_value(get(p, "cache"));
		char buf[96];

		if (strcmp(str_or(s, "name", ""), series) || !phase)
			continue;
		snprintf(buf, sizeof(buf), "%s%s%s", phase, cache ? "-" : "",
			 cache ? cache : "");
		safe_name(out, len, buf);
		return;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void cdf_rows(FILE *f, const struct input *in,
		     const struct result_series *rs)
{
	double *v = malloc(rs->n * sizeof(double)), sc = scale_of(rs->unit);
	char name[160], group[96];

	if (!v)
		return;
	memcpy(v, rs->samples, rs->n * sizeof(double));
	qsort(v, rs->n, sizeof(double), cmp_double);
	safe_name(name, sizeof(name), rs->name);
	group_of(in, rs->name, group, sizeof(group));
	for (size_t j = 0; j < rs->n; j++)
		fprintf(f, "%s,%s,%s,%s,%.6g,%.6g\n", in->label, group, name,
			shown_unit(rs->unit), v[j] / sc,
			(double)(j + 1) / (double)rs->n);
	free(v);
}

static void cdf_csv(FILE *f, const struct report *r)
{
	fputs("label,group,series,unit,value,fraction\n", f);
	for (size_t i = 0; i < r->n; i++)
		for (size_t k = 0; k < r->in[i].doc.nr_series; k++)
			cdf_rows(f, &r->in[i], &r->in[i].doc.series[k]);
}

/* ---- restore rows: one per strategy x cache x mem x ws ---- */

enum { RP_FIRST_RUN, RP_FIRST_PROGRESS, RP_DONE, RP_REQUEST, NR_RP };
static const char *const rp_names[NR_RP] = { "first_run", "first_progress",
					     "done", "request" };

struct rrow {
	char strategy[32], cache[8];
	json_int_t mem, ws;
	int order; /* first appearance of the strategy */
	size_t n;
	double med[NR_RP], done_p90, faults, mib;
	/* the host's work for the process: page faults (all, major) and
	 * MiB fetched from storage, NAN when the document lacks them */
	double host_faults, major_faults, disk_mib;
};

struct rrows {
	struct rrow *v;
	size_t n, cap;
};

static struct rrow *rrow_get(struct rrows *rows, const char *strategy,
			     const char *cache, json_int_t mem, json_int_t ws)
{
	int order = (int)rows->n;

	for (size_t i = 0; i < rows->n; i++) {
		struct rrow *w = &rows->v[i];

		if (!strcmp(w->strategy, strategy) && order == (int)rows->n)
			order = w->order;
		if (!strcmp(w->strategy, strategy) && !strcmp(w->cache, cache) &&
		    w->mem == mem && w->ws == ws)
			return w;
	}
	if (rows->n == rows->cap) {
		size_t cap = rows->cap ? 2 * rows->cap : 32;
		struct rrow *v = realloc(rows->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		rows->v = v;
		rows->cap = cap;
	}
	rows->v[rows->n] = (struct rrow){ .mem = mem, .ws = ws, .order = order,
					  .host_faults = NAN,
					  .major_faults = NAN,
					  .disk_mib = NAN };
	safe_name(rows->v[rows->n].strategy, sizeof(rows->v[0].strategy),
		  strategy);
	safe_name(rows->v[rows->n].cache, sizeof(rows->v[0].cache), cache);
	return &rows->v[rows->n++];
}

/* Documents from before a field existed (or without I/O accounting)
 * give NAN, shown as "-" or an empty CSV field. */
static double number_or_nan(const json_t *o, const char *key)
{
	const json_t *v = get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* "%.*f" of v, or `none` when v is NAN. */
static const char *num_text(char *buf, size_t len, double v, int prec,
			    const char *none)
{
	if (isnan(v))
		snprintf(buf, len, "%s", none);
	else
		snprintf(buf, len, "%.*f", prec, v);
	return buf;
}

static void rrow_add(struct rrows *rows, const struct input *in,
		     const json_t *s)
{
	const json_t *p = get(s, "params");
	const char *phase = str_or(p, "phase", "");
	const struct result_series *rs = compare__find(&in->doc,
						       str_or(s, "name", ""));
	struct rrow *w;
	struct sstat st;
	int ph;

	for (ph = 0; ph < NR_RP && strcmp(phase, rp_names[ph]); ph++)
		;
	if (ph == NR_RP || !rs || !json_is_string(get(p, "strategy")) ||
	    series_stats(rs, &st) < 0)
		return;
	w = rrow_get(rows, str_or(p, "strategy", ""), str_or(p, "cache", "-"),
		     json_integer_value(get(p, "mem_bytes")),
		     json_integer_value(get(p, "ws_bytes")));
	if (!w)
		return;
	w->n = st.s.n;
	w->med[ph] = st.s.p50 / 1e6;
	if (ph == RP_REQUEST && !strcmp(w->strategy, "never-stopped"))
		w->med[RP_DONE] = st.s.p50 / 1e6; /* its DONE is the request */
	if (ph == RP_DONE) {
		w->done_p90 = st.s.p90 / 1e6;
		w->faults = json_number_value(get(s, "faults_mean"));
		w->mib = json_number_value(get(s, "bytes_read_mean")) / 1048576.0;
		w->host_faults = number_or_nan(s, "host_faults_mean");
		w->major_faults = number_or_nan(s, "major_faults_mean");
		w->disk_mib = number_or_nan(s, "disk_read_bytes_mean") /
			      1048576.0;
	}
}

static int rrow_cmp(const void *a, const void *b)
{
	const struct rrow *x = a, *y = b;
	int c;

	if (x->order != y->order)
		return x->order - y->order;
	c = strcmp(y->cache, x->cache); /* warm before cold */
	if (c)
		return c;
	if (x->ws != y->ws)
		return x->ws < y->ws ? -1 : 1;
	return (x->mem > y->mem) - (x->mem < y->mem);
}

static void restore_rows(const struct input *in, struct rrows *rows)
{
	const json_t *s;
	size_t i;

	json_array_foreach(get(in->root, "series"), i, s)
		rrow_add(rows, in, s);
	if (rows->n)
		qsort(rows->v, rows->n, sizeof(*rows->v), rrow_cmp);
}

static void restore_csv(FILE *f, const struct report *r)
{
	int i = find_input(r, "restore");
	struct rrows rows = { 0 };

	/* new columns go at the end, so readers of the old ones keep
	 * working */
	fputs("strategy,cache,mem_mib,ws_mib,n,first_run_ms,first_progress_ms,"
	      "done_ms,done_p90_ms,request_ms,faults,mib_read,host_faults,"
	      "major_faults,disk_mib_read\n", f);
	if (i < 0)
		return;
	restore_rows(&r->in[i], &rows);
	for (size_t k = 0; k < rows.n; k++) {
		const struct rrow *w = &rows.v[k];
		char hf[32], mf[32], dm[32];

		fprintf(f, "%s,%s,%" JSON_INTEGER_FORMAT ",%" JSON_INTEGER_FORMAT
			",%zu,%.4f,%.4f,%.4f,%.4f,%.4f,%.0f,%.2f,%s,%s,%s\n",
			w->strategy, w->cache, w->mem >> 20, w->ws >> 20, w->n,
			w->med[RP_FIRST_RUN], w->med[RP_FIRST_PROGRESS],
			w->med[RP_DONE], w->done_p90, w->med[RP_REQUEST],
			w->faults, w->mib,
			num_text(hf, sizeof(hf), w->host_faults, 0, ""),
			num_text(mf, sizeof(mf), w->major_faults, 0, ""),
			num_text(dm, sizeof(dm), w->disk_mib, 2, ""));
	}
	free(rows.v);
}

/* ---- rate and density: from the drivers' series params ---- */

/* A rate series: params.mode and params.kind (sustained, burst) name the
 * line, params.workers (or concurrency) is x; its "vms_per_s" (else 1 /
 * mean latency) the rate, its samples the latency percentiles. */
static void rate_csv(FILE *f, const struct report *r)
{
	int i = find_input(r, "rate");
	const json_t *s;
	size_t k;

	fputs("mode,concurrency,vms_per_s,p50_ms,p99_ms\n", f);
	if (i < 0)
		return;
	json_array_foreach(get(r->in[i].root, "series"), k, s) {
		const json_t *p = get(s, "params"), *rate = get(s, "vms_per_s");
		const json_t *x = json_is_number(get(p, "workers"))
					  ? get(p, "workers")
					  : get(p, "concurrency");
		const struct result_series *rs = compare__find(
			&r->in[i].doc, str_or(s, "name", ""));
		char mode[64], buf[80];
		struct sstat st;

		if (!rs || !json_is_number(x) || strcmp(rs->unit, "ns") ||
		    series_stats(rs, &st) < 0)
			continue;
		snprintf(buf, sizeof(buf), "%s%s%s", str_or(p, "mode", "all"),
			 get(p, "kind") ? "-" : "", str_or(p, "kind", ""));
		safe_name(mode, sizeof(mode), buf);
		fprintf(f, "%s,%.0f,%.3f,%.4f,%.4f\n", mode, json_number_value(x),
			json_is_number(rate) ? json_number_value(rate)
					     : 1e9 / st.s.mean,
			st.s.p50 / 1e6, st.s.p99 / 1e6);
	}
}

/* The density curve: "density": {MODE: {"curve": [{vms, rss_kib,
 * pss_kib, uss_kib, kernel_kib}]}}, one line per mode. */
static void density_csv(FILE *f, const struct report *r)
{
	int i = find_input(r, "density");
	const json_t *m, *p;
	const char *mode;
	size_t k;

	fputs("variant,vms,rss_mib,pss_mib,uss_mib,kernel_mib\n", f);
	if (i < 0)
		return;
	json_object_foreach((json_t *)get(r->in[i].root, "density"), mode, m)
		json_array_foreach(get(m, "curve"), k, p) {
			char variant[64];

			safe_name(variant, sizeof(variant), mode);
			fprintf(f, "%s,%.0f,%.2f,%.2f,%.2f,%.2f\n", variant,
				json_number_value(get(p, "vms")),
				json_number_value(get(p, "rss_kib")) / 1024,
				json_number_value(get(p, "pss_kib")) / 1024,
				json_number_value(get(p, "uss_kib")) / 1024,
				json_number_value(get(p, "kernel_kib")) / 1024);
		}
}

/* The pool's occupancy over time: "pool": {"occupancy": [[t_s, held,
 * making, target, arrived], ...]}, one line per pool document; arrivals
 * per second between samples. */
static void pool_csv(FILE *f, const struct report *r)
{
	fputs("label,t_s,held,making,target,arrivals_per_s\n", f);
	for (size_t i = 0; i < r->n; i++) {
		const json_t *occ = get(get(r->in[i].root, "pool"), "occupancy");
		double t0 = 0, a0 = 0;
		const json_t *row;
		char label[64];
		size_t k;

		if (strcmp(r->in[i].doc.bench, "pool"))
			continue;
		safe_name(label, sizeof(label), r->in[i].label);
		json_array_foreach(occ, k, row) {
			double t = json_number_value(json_array_get(row, 0));
			double a = json_number_value(json_array_get(row, 4));

			fprintf(f, "%s,%.3f,%.0f,%.0f,%.0f,%.1f\n", label, t,
				json_number_value(json_array_get(row, 1)),
				json_number_value(json_array_get(row, 2)),
				json_number_value(json_array_get(row, 3)),
				k && t > t0 ? (a - a0) / (t - t0) : 0.0);
			t0 = t;
			a0 = a;
		}
	}
}

/* ---- plots ---- */

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

static double median_ns(const struct result_series *rs)
{
	struct summary sm;

	return stats__summarize(rs->samples, rs->n, &sm) == 0 ? sm.p50 : 0;
}

/* Whether series k is drawn in a CDF: latencies only; restore's only in
 * its DONE phase (the others are in the tables). */
static bool cdf_series(const struct input *in, size_t k, char *group,
		       size_t len)
{
	const struct result_series *rs = &in->doc.series[k];

	if (strcmp(rs->unit, "ns"))
		return false;
	group_of(in, rs->name, group, len);
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

/* Names of the group's series number [from, to), space-separated. */
static char *cdf_words(const struct input *in, const char *group,
		       size_t from, size_t to)
{
	char *words = NULL;
	size_t len = 0, i = 0;
	FILE *w = open_memstream(&words, &len);

	if (!w)
		return NULL;
	for (size_t k = 0; k < in->doc.nr_series; k++) {
		char g[96], name[160];

		if (!cdf_series(in, k, g, sizeof(g)) || strcmp(g, group))
			continue;
		safe_name(name, sizeof(name), in->doc.series[k].name);
		if (i >= from && i < to)
			fprintf(w, "%s%s", i > from ? " " : "", name);
		i++;
	}
	fclose(w);
	return words;
}

/* Plot `part` of `parts` of group g; cdf.csv holds ms, the axis shows
 * the unit the group's largest median suits. */
static void plot_cdf_part(struct report *r, const struct input *in,
			  const struct cdf_group *g, size_t part, size_t parts)
{
	size_t per = (g->n + parts - 1) / parts;
	char *words = cdf_words(in, g->name, part * per, (part + 1) * per);
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
	if (words && asprintf(&vars, "in='cdf.csv'; bench='%s'; group='%s'; "
			      "series='%s'; unit='%s'; scale=%g; title='%s'",
			      in->label, g->name, words, unit, 1e6 / div,
			      title) >= 0) {
		snprintf(base, sizeof(base), "cdf-%s%s%.90s%s", in->label,
			 all ? "" : "-", all ? "" : g->name, num);
		draw(r, "cdf", base, vars, file, sizeof(file));
		snprintf(title, sizeof(title), "CDF %.90s%s", g->name, num);
		md_image(r, title, file);
	}
	free(vars);
	free(words);
}

/* Latency CDFs of a document, one plot per group; a group with more
 * series than one plot can show is split into plots of equal size. */
static void plot_cdfs(struct report *r, const struct input *in)
{
	struct cdf_group gs[CDF_MAX_GROUPS];
	size_t ng = cdf_groups(in, gs);

	for (size_t j = 0; j < ng; j++) {
		size_t parts = (gs[j].n + CDF_MAX_LINES - 1) / CDF_MAX_LINES;

		for (size_t p = 0; p < parts; p++)
			plot_cdf_part(r, in, &gs[j], p, parts);
	}
}

/* Space-separated distinct values of CSV column `col` (0-based) of the
 * CSV text produced by `fn`, skipping the header. */
static char *distinct_column(const struct report *r, csv_fn *fn, int col)
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

/* Runs `script` when its CSV has data in column `col`, passing the
 * distinct values as `var`. */
static void plot_table(struct report *r, const char *script, csv_fn *fn,
		       int col, const char *var, const char *extra,
		       const char *title)
{
	char *values = distinct_column(r, fn, col), *vars = NULL, file[200];

	if (values && strspn(values, " ") < strlen(values) &&
	    asprintf(&vars, "in='%s.csv'; %s='%s'%s", script, var, values,
		     extra ? extra : "") >= 0) {
		draw(r, script, script, vars, file, sizeof(file));
		md_image(r, title, file);
	}
	free(vars);
	free(values);
}

/* Removes the word `word` from a " a b c " list. */
static void drop_word(char *list, const char *word)
{
	char key[64];
	char *p;

	snprintf(key, sizeof(key), " %s ", word);
	p = list ? strstr(list, key) : NULL;
	if (p)
		memmove(p, p + strlen(key) - 1, strlen(p + strlen(key) - 1) + 1);
}

static void plot_restore(struct report *r)
{
	char *strategies = distinct_column(r, restore_csv, 0);
	char *caches = distinct_column(r, restore_csv, 1);
	char *wss = distinct_column(r, restore_csv, 3), *vars = NULL;
	char file[200];

	drop_word(strategies, "never-stopped"); /* drawn as the baseline */
	drop_word(caches, "-");
	if (strategies && caches && wss &&
	    asprintf(&vars, "in='restore.csv'; strategies='%s'; wss='%s'; "
		     "caches='%s'", strategies, wss, caches) >= 0) {
		draw(r, "restore", "restore", vars, file, sizeof(file));
		md_image(r, "restore strategies against memory size", file);
	}
	free(vars);
	free(strategies);
	free(caches);
	free(wss);
}

/* ---- report.md ---- */

/* First, before any number: whether the results come from an emulated
 * host, whose timings must not be read as native ones. */
static void md_emulated(struct report *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n; i++)
		n += result__emulated_note(r->in[i].root) != NULL;
	if (n == r->n) {
		fprintf(r->md, "> **%s**\n\n",
			result__emulated_note(r->in[0].root));
		return;
	}
	if (!n)
		return;
	fputs("> **Measured inside an emulated SVM host (QEMU TCG), so "
	      "functional timings only:", r->md);
	for (size_t i = 0; i < r->n; i++)
		if (result__emulated_note(r->in[i].root))
			fprintf(r->md, " %s", r->in[i].label);
	fputs("; the others are native. Compare only ratios within one "
	      "run.**\n\n", r->md);
}

/* "pvm", "svm (emulated host qemu-tcg-svm)", "none (REASON)"; sysinfo
 * before schema 2 has the flavour alone. */
static void kvm_text(char *buf, size_t len, const json_t *sys)
{
	const json_t *kvm = get(sys, "kvm");
	const char *flavour = str_or(kvm, "flavour", "?");

	if (sysinfo__emulated(sys))
		snprintf(buf, len, "%s (emulated host %s)", flavour,
			 sysinfo__emulated(sys));
	else if (json_is_false(get(kvm, "usable")))
		snprintf(buf, len, "%s (%s)", flavour,
			 str_or(kvm, "reason", "no usable device"));
	else
		snprintf(buf, len, "%s", flavour);
}

static void md_host(struct report *r)
{
	const json_t *sys = r->in[0].doc.sysinfo, *cpu = get(sys, "cpu");
	const json_t *build = get(r->in[0].root, "coldstart");
	char kvm[400];

	kvm_text(kvm, sizeof(kvm), sys);
	fputs("# coldstart benchmark report\n\n", r->md);
	md_emulated(r);
	fprintf(r->md, "- host: %s, %s, %" JSON_INTEGER_FORMAT " CPUs, %.1f "
		"GiB, kernel %s, KVM %s\n",
		str_or(sys, "hostname", "?"), str_or(cpu, "model", "?"),
		json_integer_value(get(cpu, "online_cpus")),
		(double)json_integer_value(get(get(sys, "memory"),
					       "total_kib")) / 1048576.0,
		str_or(get(sys, "kernel"), "release", "?"), kvm);
	fprintf(r->md, "- coldstart %s, commit %s\n",
		str_or(build ? build : get(sys, "coldstart"), "version", "?"),
		str_or(build ? build : get(sys, "coldstart"), "commit", "?"));
	fputs("- results:", r->md);
	for (size_t i = 0; i < r->n; i++) {
		char *copy = strdup(r->in[i].path);

		fprintf(r->md, " `%s`", copy ? basename(copy) : r->in[i].path);
		free(copy);
	}
	fputs("\n\nTimes are medians unless marked; the 95 % interval of the "
	      "median is a bootstrap percentile interval (1000 resamples). "
	      "Raw samples are in the JSON documents; plotted data in the "
	      "CSV files beside this report.\n", r->md);
}

/* One row of a series table; a row's values share the unit its median
 * suits (48.4 ns, 813.83 us, 1.138 ms). */
static void md_series_row(FILE *md, const struct result_series *rs,
			  const struct sstat *st)
{
	const double v[] = { st->s.p50, st->s.p90, st->s.p99, st->s.min,
			     st->s.max, st->lo, st->hi };
	char t[7][48];

	for (size_t i = 0; i < 7; i++)
		result__value_text(t[i], sizeof(t[i]), rs->unit, v[i],
				   st->s.p50);
	fprintf(md, "| %s | %zu | %s | %s | %s | %s | %s | %s .. %s |\n",
		rs->name, st->s.n, t[0], t[1], t[2], t[3], t[4], t[5], t[6]);
}

static void md_series(struct report *r, const struct input *in)
{
	fputs("\n| series | n | median | p90 | p99 | min | max | 95% CI of "
	      "median |\n|---|--:|--:|--:|--:|--:|--:|---|\n", r->md);
	for (size_t k = 0; k < in->doc.nr_series; k++) {
		struct sstat st;

		if (series_stats(&in->doc.series[k], &st) == 0)
			md_series_row(r->md, &in->doc.series[k], &st);
	}
}

/* Throughput per level: the series' vms_per_s (VMs finished per second
 * by all workers together), beside each VM's own latency. */
static void md_rate(struct report *r, const struct input *in)
{
	const json_t *s;
	size_t i;

	fputs("\nThroughput: VMs created per second at each level, all "
	      "workers together (the series' `vms_per_s`); the latency "
	      "columns are per VM.\n\n| mode | kind | workers | VMs/s | "
	      "per-VM median | per-VM p90 | per-VM p99 |\n"
	      "|---|---|--:|--:|--:|--:|--:|\n", r->md);
	json_array_foreach(get(in->root, "series"), i, s) {
		const json_t *p = get(s, "params");
		const struct result_series *rs = compare__find(
			&in->doc, str_or(s, "name", ""));
		char t[3][48];
		struct summary sm;

		if (!rs || !json_is_number(get(s, "vms_per_s")) ||
		    stats__summarize(rs->samples, rs->n, &sm) < 0)
			continue;
		result__value_text(t[0], sizeof(t[0]), rs->unit, sm.p50, sm.p50);
		result__value_text(t[1], sizeof(t[1]), rs->unit, sm.p90, sm.p50);
		result__value_text(t[2], sizeof(t[2]), rs->unit, sm.p99, sm.p50);
		fprintf(r->md, "| %s | %s | %.0f | %.0f | %s | %s | %s |\n",
			str_or(p, "mode", "?"), str_or(p, "kind", "-"),
			json_number_value(get(p, "workers")),
			json_number_value(get(s, "vms_per_s")), t[0], t[1], t[2]);
	}
}

/* What the pool delivered and spent (pool.json "pool"). */
static void md_pool(struct report *r, const struct input *in)
{
	const json_t *pool = get(in->root, "pool"), *st = get(pool, "stats");
	const json_t *mem = get(pool, "memory");

	fprintf(r->md, "\n| requests | hits | misses | waited | failed | "
		"offered /s | refill VMs/s | idle VM-s | refill CPU s | RSS "
		"KiB/VM | PSS KiB/VM |\n|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
		"--:|--:|\n| %.0f | %.0f | %.0f | %.0f | %.0f | %.1f | %.1f | "
		"%.2f | %.3f | %.0f | %.0f |\n",
		json_number_value(get(st, "requests")),
		json_number_value(get(st, "hits")),
		json_number_value(get(st, "misses")),
		json_number_value(get(st, "waits")),
		json_number_value(get(pool, "failed")),
		json_number_value(get(pool, "offered_rate")),
		json_number_value(get(pool, "refill_vms_per_s")),
		json_number_value(get(st, "idle_vm_s")),
		json_number_value(get(st, "refill_cpu_s")),
		json_number_value(get(mem, "rss_kib_per_vm")),
		json_number_value(get(mem, "pss_kib_per_vm")));
}

/* QEMU/coldstart ratios of the medians (peers.json "ratios"). */
static void md_peers(struct report *r, const struct input *in)
{
	const json_t *x;
	const char *peer;

	json_object_foreach((json_t *)get(in->root, "ratios"), peer, x)
		fprintf(r->md, "\n- %s / coldstart: %.2fx the wall-time "
			"median, %.2fx the peak-RSS median\n", peer,
			json_number_value(get(x, "wall_median")),
			json_number_value(get(x, "peak_rss_median")));
}

static void md_restore_row(FILE *md, const struct rrow *w)
{
	char hf[32], mf[32], dm[32];

	/* the never-stopped VM has only its request phase */
	if (!strcmp(w->strategy, "never-stopped")) {
		fprintf(md, "| never stopped | - | %" JSON_INTEGER_FORMAT " | %"
			JSON_INTEGER_FORMAT " | - | - | - | %.3f | - | - | - | "
			"- | - |\n", w->mem >> 20, w->ws >> 20,
			w->med[RP_REQUEST]);
		return;
	}
	fprintf(md, "| %s | %s | %" JSON_INTEGER_FORMAT " | %"
		JSON_INTEGER_FORMAT " | %.3f | %.3f | %.3f | %.3f | %.0f | "
		"%.1f | %s | %s | %s |\n", w->strategy, w->cache, w->mem >> 20,
		w->ws >> 20, w->med[RP_FIRST_RUN], w->med[RP_DONE],
		w->done_p90, w->med[RP_REQUEST], w->faults, w->mib,
		num_text(hf, sizeof(hf), w->host_faults, 0, "-"),
		num_text(mf, sizeof(mf), w->major_faults, 0, "-"),
		num_text(dm, sizeof(dm), w->disk_mib, 1, "-"));
}

static void md_restore(struct report *r, const struct input *in)
{
	struct rrows rows = { 0 };
	const json_t *x;
	size_t i;

	restore_rows(in, &rows);
	fputs("\nWork per restore (means): uffd faults and MiB read are what "
	      "the strategy did itself (userfaults served, bytes it read); "
	      "host faults (minor + major), major faults and disk MiB are "
	      "what the host did for the whole process (getrusage, "
	      "/proc/self/io read_bytes: storage reads, 0 when the page cache "
	      "served them).\n\n| strategy | cache | mem MiB | ws MiB | "
	      "first KVM_RUN ms | DONE ms | DONE p90 ms | request ms | uffd "
	      "faults | MiB read | host faults | major faults | disk MiB |\n"
	      "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n", r->md);
	for (size_t k = 0; k < rows.n; k++)
		md_restore_row(r->md, &rows.v[k]);
	free(rows.v);
	if (json_array_size(get(in->root, "ratios")))
		fputs("\nprefetch and prefetch-thp against the baselines (restore -> DONE "
		      "medians; targets: at most 1.2x the never-stopped request "
		      "phase, at least 3x faster than mmap):\n\n", r->md);
	json_array_foreach(get(in->root, "ratios"), i, x) {
		const json_t *vs = get(x, "prefetch_vs_never_stopped");
		const json_t *sp = get(x, "prefetch_speedup_over_mmap");

		const char *name = str_or(x, "strategy", "prefetch");

		fprintf(r->md, "- mem %" JSON_INTEGER_FORMAT " MiB, ws %"
			JSON_INTEGER_FORMAT " MiB, %s cache: %s %.3f ms",
			json_integer_value(get(x, "mem_bytes")) >> 20,
			json_integer_value(get(x, "ws_bytes")) >> 20,
			str_or(x, "cache", "?"), name,
			json_number_value(get(x, "prefetch_done_ns")) / 1e6);
		if (json_is_number(vs))
			fprintf(r->md, " = %.2fx never-stopped (%.3f ms)",
				json_number_value(vs),
				json_number_value(get(x, "never_stopped_request_ns")) / 1e6);
		if (json_is_number(sp))
			fprintf(r->md, "; mmap %.3f ms = %.2fx %s",
				json_number_value(get(x, "mmap_done_ns")) / 1e6,
				json_number_value(sp), name);
		fputc('\n', r->md);
	}
}

static void md_suite(struct report *r, const struct input *in)
{
	const json_t *h = get(in->root, "harness"), *d;
	size_t i;

	if (h)
		fprintf(r->md, "\nHarness overhead per sample (an empty sample "
			"timed and stored back to back): %.1f ns median, "
			"%.1f ns p99 (target: at most 1000 ns).\n",
			json_number_value(get(h, "overhead_ns_p50")),
			json_number_value(get(h, "overhead_ns_p99")));
	if (json_array_size(get(in->root, "drivers")))
		fputs("\n| driver | status | wall s | arguments |\n"
		      "|---|---|--:|---|\n", r->md);
	json_array_foreach(get(in->root, "drivers"), i, d)
		fprintf(r->md, "| %s | %s | %.1f | `%s` |\n",
			str_or(d, "name", "?"), str_or(d, "status", "?"),
			json_number_value(get(d, "wall_s")),
			str_or(d, "args", ""));
	if (json_is_number(get(in->root, "wall_s")))
		fprintf(r->md, "\nSuite wall time: %.1f s.\n",
			json_number_value(get(in->root, "wall_s")));
}

/* Per VM at the mode's last point: what the VMM process holds beyond its
 * guest memory (documents before these fields have none). */
static void md_beyond_guest(FILE *md, const json_t *m)
{
	const json_t *curve = get(m, "curve");
	const json_t *last = json_array_get(curve, json_array_size(curve) - 1);
	double n = json_number_value(get(last, "vms"));

	if (n <= 0 || !json_is_number(get(last, "uss_beyond_guest_kib")))
		return;
	fprintf(md, "; beyond guest memory per VM: RSS %.0f, PSS %.0f, USS "
		"%.0f KiB", json_number_value(get(last, "rss_beyond_guest_kib")) / n,
		json_number_value(get(last, "pss_beyond_guest_kib")) / n,
		json_number_value(get(last, "uss_beyond_guest_kib")) / n);
}

static void md_density(struct report *r, const struct input *in)
{
	const json_t *m;
	const char *mode;

	fputc('\n', r->md);
	json_object_foreach((json_t *)get(in->root, "density"), mode, m) {
		fprintf(r->md, "- %s: %.0f VMs (stopped by %s), marginal cost "
			"%.0f KiB per VM (PSS + kernel memory), %.1f VMs per GiB",
			mode, json_number_value(get(m, "vms")),
			str_or(m, "stopped_by", "?"),
			json_number_value(get(m, "marginal_kib_per_vm")),
			json_number_value(get(m, "vms_per_gib")));
		md_beyond_guest(r->md, m);
		fputc('\n', r->md);
	}
	json_object_foreach((json_t *)get(in->root, "density"), mode, m)
		density__md_ksm(r->md, mode, m);
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

static void md_doc(struct report *r, const struct input *in)
{
	const json_t *cfg = in->doc.config, *mem = get(in->root, "memory");
	char *cfg_text = json_dumps(cfg, JSON_COMPACT | JSON_SORT_KEYS);
	const char *guest = str_or(cfg, "guest", NULL);

	fprintf(r->md, "\n## %s\n\nFrom `%s`%s%s%s. Configuration: `%s`\n",
		in->label, in->path, guest ? "; guest: " : "",
		guest ? guest : "", guest ? "" : "", cfg_text ? cfg_text : "{}");
	free(cfg_text);
	md_guest(r->md, get(in->root, "guest"));
	if (json_is_object(mem) && json_is_integer(get(mem, "vmm_overhead_kib")))
		fprintf(r->md, "\nVMM memory beyond guest memory: %"
			JSON_INTEGER_FORMAT " KiB (USS).\n",
			json_integer_value(get(mem, "vmm_overhead_kib")));
	if (!strcmp(in->doc.bench, "restore"))
		md_restore(r, in);
	if (!strcmp(in->doc.bench, "suite"))
		md_suite(r, in);
	if (!strcmp(in->doc.bench, "density"))
		md_density(r, in);
	if (!strcmp(in->doc.bench, "rate"))
		md_rate(r, in);
	if (!strcmp(in->doc.bench, "peers"))
		md_peers(r, in);
	if (!strcmp(in->doc.bench, "pool"))
		md_pool(r, in);
	md_series(r, in);
	plot_cdfs(r, in);
	if (!strcmp(in->doc.bench, "restore"))
		plot_restore(r);
	if (!strcmp(in->doc.bench, "rate"))
		plot_table(r, "rate", rate_csv, 0, "modes", NULL,
			   "creation rate against concurrency");
	if (!strcmp(in->doc.bench, "density"))
		plot_table(r, "density", density_csv, 0, "variants", NULL,
			   "density curve");
	if (!strcmp(in->doc.bench, "pool"))
		plot_table(r, "pool", pool_csv, 0, "labels", NULL,
			   "pool occupancy and arrivals over time");
	if (json_array_size(get(in->root, "warnings"))) {
		fputs("\nWarnings:\n\n", r->md);
		result__md_warning_list(r->md, in->root);
	}
}

/* ---- the summary: one line per driver, from the documents ---- */

static void time_text(char *buf, size_t len, double ns)
{
	result__value_text(buf, len, "ns", ns, ns);
}

/* coldstart's create-run-destroy median per mode and its ratio to the
 * bare-ioctl floor of the same mode. */
static void sum_lifecycle(FILE *md, const struct input *in)
{
	static const char *const modes[][3] = {
		{ "in-process", "inproc.coldstart", "inproc.floor" },
		{ "process-per-VM", "process.coldstart", "process.floor" },
	};
	const char *sep = "";

	fprintf(md, "- %s:", in->label);
	for (size_t i = 0; i < 2; i++) {
		const struct result_series *c = compare__find(&in->doc, modes[i][1]);
		const struct result_series *f = compare__find(&in->doc, modes[i][2]);
		double m = c ? median_ns(c) : 0, fl = f ? median_ns(f) : 0;
		char t[48];

		if (!c)
			continue;
		time_text(t, sizeof(t), m);
		fprintf(md, "%s %s %s median", sep, modes[i][0], t);
		if (fl > 0)
			fprintf(md, " (%.2fx the floor)", m / fl);
		sep = ",";
	}
	fputc('\n', md);
}

static void sum_boot(FILE *md, const struct input *in)
{
	const struct result_series *t = compare__find(&in->doc, "total");
	char text[48];

	if (!t)
		return;
	time_text(text, sizeof(text), median_ns(t));
	fprintf(md, "- %s: total (process start -> teardown done) %s median\n",
		in->label, text);
}

static bool same_cell(const struct rrow *a, const struct rrow *b)
{
	return a->mem == b->mem && a->ws == b->ws && !strcmp(a->cache, b->cache);
}

/* Per size and cache state: the strategy with the lowest restore -> DONE
 * median, and mmap's restore -> first KVM_RUN. */
static void sum_restore_cell(FILE *md, const struct rrows *rows, size_t k)
{
	const struct rrow *w = &rows->v[k], *best = NULL, *mmap = NULL;
	char t[48];

	for (size_t i = 0; i < rows->n; i++) {
		const struct rrow *x = &rows->v[i];

		if (!same_cell(x, w) || x->n == 0)
			continue;
		if (i < k)
			return; /* this cell was printed already */
		if (!best || x->med[RP_DONE] < best->med[RP_DONE])
			best = x;
		if (!strcmp(x->strategy, "mmap"))
			mmap = x;
	}
	time_text(t, sizeof(t), best->med[RP_DONE] * 1e6);
	fprintf(md, "  - mem %" JSON_INTEGER_FORMAT " MiB, ws %"
		JSON_INTEGER_FORMAT " MiB, %s: fastest %s, %s to DONE", w->mem >> 20,
		w->ws >> 20, w->cache, best->strategy, t);
	if (mmap) {
		time_text(t, sizeof(t), mmap->med[RP_FIRST_RUN] * 1e6);
		fprintf(md, "; mmap first KVM_RUN %s", t);
	}
	fputc('\n', md);
}

static void sum_restore(FILE *md, const struct input *in)
{
	struct rrows rows = { 0 };

	restore_rows(in, &rows);
	fprintf(md, "- %s (medians from restore start):\n", in->label);
	for (size_t k = 0; k < rows.n; k++)
		if (strcmp(rows.v[k].strategy, "never-stopped") && rows.v[k].n)
			sum_restore_cell(md, &rows, k);
	free(rows.v);
}

/* The series of `mode` with the highest vms_per_s, or NULL. */
static const json_t *peak_rate(const json_t *series, const char *mode)
{
	const json_t *s, *best = NULL;
	size_t i;

	json_array_foreach(series, i, s)
		if (!strcmp(str_or(get(s, "params"), "mode", ""), mode) &&
		    json_is_number(get(s, "vms_per_s")) &&
		    (!best || json_number_value(get(s, "vms_per_s")) >
				      json_number_value(get(best, "vms_per_s"))))
			best = s;
	return best;
}

/* The peak throughput of each mode, in the order modes first appear. */
static void sum_rate(FILE *md, const struct input *in)
{
	const json_t *series = get(in->root, "series"), *s;
	const char *sep = "";
	size_t i;

	fprintf(md, "- %s: peak", in->label);
	json_array_foreach(series, i, s) {
		const char *mode = str_or(get(s, "params"), "mode", "");
		const json_t *p = peak_rate(series, mode);
		size_t k;

		for (k = 0; k < i && strcmp(str_or(get(json_array_get(series, k),
			"params"), "mode", ""), mode); k++)
			;
		if (k < i || !p)
			continue; /* mode shown already, or no rate */
		fprintf(md, "%s %.0f VMs/s %s (%.0f workers, %s)", sep,
			json_number_value(get(p, "vms_per_s")), mode,
			json_number_value(get(get(p, "params"), "workers")),
			str_or(get(p, "params"), "kind", "-"));
		sep = ",";
	}
	fputc('\n', md);
}

static void sum_density(FILE *md, const struct input *in)
{
	const json_t *m;
	const char *mode, *sep = "";

	fprintf(md, "- %s:", in->label);
	json_object_foreach((json_t *)get(in->root, "density"), mode, m) {
		fprintf(md, "%s %.1f VMs per GiB %s", sep,
			json_number_value(get(m, "vms_per_gib")), mode);
		sep = ",";
	}
	fputc('\n', md);
}

static void sum_peers(FILE *md, const struct input *in)
{
	const struct result_series *ours = compare__find(&in->doc, "coldstart");
	const json_t *x;
	const char *peer;
	char t[48];

	/* every peer left out: coldstart's own time is all there is */
	if (!json_object_size(get(in->root, "ratios")) && ours) {
		time_text(t, sizeof(t), median_ns(ours));
		fprintf(md, "- %s: coldstart %s median, no peer measured (see "
			"Left out)\n", in->label, t);
		return;
	}
	json_object_foreach((json_t *)get(in->root, "ratios"), peer, x)
		fprintf(md, "- %s: %s / coldstart %.2fx the wall-time median, "
			"%.2fx the peak-RSS median\n", in->label, peer,
			json_number_value(get(x, "wall_median")),
			json_number_value(get(x, "peak_rss_median")));
}

/* A series' median, or -1 when it has no samples. */
static double median_of_series(const struct input *in, const char *name)
{
	const struct result_series *rs = compare__find(&in->doc, name);
	struct summary sm;

	if (!rs || stats__summarize(rs->samples, rs->n, &sm) < 0)
		return -1;
	return sm.p50;
}

static void sum_pool(FILE *md, const struct input *in)
{
	const json_t *pool = get(in->root, "pool");
	double hit = median_of_series(in, "arrival_to_first_run.hit");
	double all = median_of_series(in, "arrival_to_done.all");
	char a[48] = "-", b[48] = "-";

	if (hit >= 0)
		result__value_text(a, sizeof(a), "ns", hit, hit);
	if (all >= 0)
		result__value_text(b, sizeof(b), "ns", all, all);
	fprintf(md, "- %s: %.1f %% hits at %.1f requests/s (%s); a hit "
		"reaches its first instruction in %s (median), a request "
		"DONE in %s; %.1f idle VM-seconds\n", in->label,
		100 * json_number_value(get(pool, "hit_ratio")),
		json_number_value(get(pool, "offered_rate")),
		str_or(get(in->root, "config"), "arrivals", "?"), a, b,
		json_number_value(get(get(pool, "stats"), "idle_vm_s")));
}

static void md_summary(struct report *r)
{
	static const struct {
		const char *bench;
		void (*fn)(FILE *md, const struct input *in);
	} drivers[] = {
		{ "lifecycle", sum_lifecycle }, { "boot", sum_boot },
		{ "restore", sum_restore },     { "rate", sum_rate },
		{ "density", sum_density },     { "peers", sum_peers },
		{ "pool", sum_pool },
	};
	bool any = false;

	for (size_t d = 0; d < sizeof(drivers) / sizeof(drivers[0]); d++)
		for (size_t i = 0; i < r->n; i++) {
			if (strcmp(r->in[i].doc.bench, drivers[d].bench))
				continue;
			if (!any)
				fputs("\n## Summary\n\n", r->md);
			any = true;
			drivers[d].fn(r->md, &r->in[i]);
		}
}

static void left_out_heading(struct report *r, bool *any)
{
	if (!*any)
		fputs("\n## Left out\n\nWhat this host could not do, and "
		      "why; the rest ran.\n\n", r->md);
	*any = true;
}

/* Everything the drivers left out, in one place near the top: each
 * document's "skipped" entries and the suite's drivers that could not
 * run at all. */
static void md_left_out(struct report *r)
{
	const json_t *x;
	bool any = false;
	size_t k;

	for (size_t i = 0; i < r->n; i++) {
		const struct input *in = &r->in[i];

		json_array_foreach(get(in->root, "skipped"), k, x) {
			left_out_heading(r, &any);
			fprintf(r->md, "- %s: %s: %s\n", in->label,
				str_or(x, "what", "?"), str_or(x, "why", "?"));
		}
		json_array_foreach(get(in->root, "drivers"), k, x) {
			if (strcmp(str_or(x, "status", ""), "skipped"))
				continue;
			left_out_heading(r, &any);
			fprintf(r->md, "- %s: bench %s: this host cannot run "
				"it (exit 77)\n", in->label,
				str_or(x, "name", "?"));
		}
	}
}

/* ---- the whole report ---- */

static int write_all_csv(const struct report *r)
{
	static const struct {
		const char *name;
		csv_fn *fn;
		const char *bench; /* only when this bench is present */
	} files[] = {
		{ "series.csv", series_csv, NULL },
		{ "cdf.csv", cdf_csv, NULL },
		{ "restore.csv", restore_csv, "restore" },
		{ "rate.csv", rate_csv, "rate" },
		{ "density.csv", density_csv, "density" },
		{ "pool.csv", pool_csv, "pool" },
	};
	int ret = 0;

	for (size_t i = 0; ret == 0 && i < sizeof(files) / sizeof(files[0]); i++)
		if (!files[i].bench || find_input(r, files[i].bench) >= 0)
			ret = write_csv(r, files[i].name, files[i].fn);
	return ret;
}

static int write_md(struct report *r)
{
	struct output_text t;
	int ret = output__text_open(&t);

	if (ret < 0)
		return ret;
	r->md = t.f;
	md_host(r);
	md_summary(r);
	md_left_out(r);
	for (size_t i = 0; i < r->n; i++)
		md_doc(r, &r->in[i]);
	r->md = NULL;
	if (r->o->md)
		return output__text_write(&t, r->o->out_dir, "report.md");
	ret = output__text_close(&t, "report.md");
	free(t.text);
	return ret;
}

int report__generate(const struct report_opts *o, bool *plots_skipped)
{
	struct report r = { .o = o, .n = o->nr_inputs };
	int ret = 0;

	*plots_skipped = false;
	r.in = calloc(o->nr_inputs, sizeof(*r.in));
	if (!r.in)
		return err__set(ENOMEM, "loading results");
	for (size_t i = 0; ret == 0 && i < r.n; i++)
		ret = load_input(o->inputs[i], &r.in[i]);
	if (ret == 0) {
		label_inputs(&r);
		ret = output__mkdirs(o->out_dir);
	}
	if (ret == 0)
		ret = write_all_csv(&r);
	if (ret == 0) {
		r.gnuplot = (o->png || o->svg) && plot__available();
		*plots_skipped = (o->png || o->svg) && !r.gnuplot;
		ret = write_md(&r);
	}
	if (ret == 0 && r.failed)
		ret = err__set(EIO, "%u plot(s) failed", r.failed);
	for (size_t i = 0; i < r.n; i++) {
		compare__free(&r.in[i].doc);
		json_decref(r.in[i].root);
	}
	free(r.in);
	return ret;
}

/* ---- the command ---- */

static void usage(FILE *out)
{
	fputs("Usage: coldstart report RESULTS.json... [--out DIR] "
	      "[--format LIST]\n"
	      "Reads result documents of any `coldstart bench` driver "
	      "(schema 1) and writes\nDIR/report.md (host, version, a summary, "
	      "tables per driver, warnings), CSV\nfiles for plotting "
	      "(series.csv, cdf.csv, restore.csv, rate.csv, density.csv)\n"
	      "and gnuplot plots: latency CDFs, restore strategies against "
	      "memory size,\ncreation rate against concurrency, the density "
	      "curve, each when its data is\npresent.\n\n"
	      "  --out DIR       output directory (default: the first "
	      "input's directory)\n"
	      "  --format LIST   md, png, svg (default md,png,svg); CSV is "
	      "always written;\n                  without gnuplot the plots "
	      "are skipped with a warning\n"
	      "  -q, --quiet     print nothing on success\n", out);
}

static int parse_formats(const char *text, struct report_opts *o)
{
	static const char *const names[] = { "md", "png", "svg", NULL };
	char buf[64], *save = NULL;
	unsigned int k;
	int ret = 0;

	snprintf(buf, sizeof(buf), "%s", text);
	o->md = o->png = o->svg = false;
	for (char *t = strtok_r(buf, ",", &save); ret == 0 && t;
	     t = strtok_r(NULL, ",", &save)) {
		ret = args__choice("--format", t, names, &k);
		if (ret == 0)
			*(k == 0 ? &o->md : k == 1 ? &o->png : &o->svg) = true;
	}
	return ret;
}

static int parse(int argc, char **argv, struct report_opts *o,
		 char *dir_buf)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, ret = 0;

	*o = (struct report_opts){ .md = true, .png = true, .svg = true };
	optind = 0;
	opterr = 0;
	while (ret == 0 && (c = getopt_long(argc, argv, "o:f:qh", opts, NULL)) != -1) {
		if (c == 'h')
			return 1;
		if (c == 'o')
			o->out_dir = optarg;
		else if (c == 'f')
			ret = parse_formats(optarg, o);
		else if (c == 'q')
			o->quiet = true;
		else
			ret = args__bad_option(argv);
	}
	if (ret < 0)
		return ret;
	if (optind >= argc)
		return err__set(EINVAL, "no result documents given");
	o->inputs = argv + optind;
	o->nr_inputs = (size_t)(argc - optind);
	if (!o->out_dir) {
		snprintf(dir_buf, PATH_MAX, "%s", o->inputs[0]);
		o->out_dir = dirname(dir_buf);
	}
	return 0;
}

int cmd_report(int argc, char **argv)
{
	char dir_buf[PATH_MAX];
	struct report_opts o;
	bool skipped;
	int ret = parse(argc, argv, &o, dir_buf);

	if (ret != 0)
		return cli__parsed(ret, "report", usage);
	ret = report__generate(&o, &skipped);
	if (ret < 0)
		return cli__error(ret == -EINVAL ? CLI_USAGE : CLI_FAIL,
				  "report: %s", err__last());
	if (skipped)
		fprintf(stderr, "coldstart: report: warning: gnuplot is not "
			"installed; wrote Markdown and CSV without plots "
			"(apt-get install gnuplot-nox)\n");
	if (!o.quiet)
		printf("report written to %s/\n", o.out_dir);
	return CLI_OK;
}
