/* The report's CSV files: every series' summary, every sample for the
 * CDFs, the rate and density tables, the pool's occupancy. */
#include "report_int.h"

#include "err.h"
#include "result.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void report__series_csv(FILE *f, const struct report *r)
{
	fputs("label,bench,series,unit,n,min,p50,p90,p99,p99_9,max,mean,stddev,"
	      "cv,ci95_lo,ci95_hi,better\n", f);
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
				"%.6g,%.6g,%.6g,%.4f,%.6g,%.6g,%s\n", r->in[i].label,
				d->bench, name, shown_unit(rs->unit), st.s.n,
				st.s.min / sc, st.s.p50 / sc, st.s.p90 / sc,
				st.s.p99 / sc, st.s.p999 / sc, st.s.max / sc,
				st.s.mean / sc, st.s.stddev / sc, st.s.cv,
				st.lo / sc, st.hi / sc,
				rs->higher_is_better ? "higher" : "lower");
		}
	}
}

/* The CDF group of a series: its phase (and cache state), or "all". */
void report__group_of(const struct input *in, const char *series, char *out,
		      size_t len)
{
	const json_t *arr = get(in->root, "series"), *s;
	size_t i;

	snprintf(out, len, "all");
	json_array_foreach(arr, i, s) {
		const json_t *p = get(s, "params");
		const char *phase = json_string_value(get(p, "phase"));
		const char *cache = json_string_value(get(p, "cache"));
		const json_t *mem = get(p, "mem_bytes");
		char buf[96], size[32] = "";

		if (strcmp(str_or(s, "name", ""), series) || !phase)
			continue;
		/* one plot per memory size, not per so many lines */
		if (json_is_integer(mem))
			snprintf(size, sizeof(size), "-mem%" JSON_INTEGER_FORMAT
				 "M", json_integer_value(mem) >> 20);
		snprintf(buf, sizeof(buf), "%s%s%s%s", phase, cache ? "-" : "",
			 cache ? cache : "", size);
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
	report__group_of(in, rs->name, group, sizeof(group));
	for (size_t j = 0; j < rs->n; j++)
		fprintf(f, "%s,%s,%s,%s,%.6g,%.6g\n", in->label, group, name,
			shown_unit(rs->unit), v[j] / sc,
			(double)(j + 1) / (double)rs->n);
	free(v);
}

void report__cdf_csv(FILE *f, const struct report *r)
{
	fputs("label,group,series,unit,value,fraction\n", f);
	for (size_t i = 0; i < r->n; i++)
		for (size_t k = 0; k < r->in[i].doc.nr_series; k++)
			cdf_rows(f, &r->in[i], &r->in[i].doc.series[k]);
}

/* ---- rate and density: from the drivers' series params ---- */

/* A rate series: params.mode and params.kind (sustained, burst) name the
 * line, params.workers (or concurrency) is x; its "vms_per_s" (else 1 /
 * mean latency) the rate, its samples the latency percentiles. */
void report__rate_csv(FILE *f, const struct report *r)
{
	int i = report__find_input(r, "rate");
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
void report__density_csv(FILE *f, const struct report *r)
{
	int i = report__find_input(r, "density");
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
void report__pool_csv(FILE *f, const struct report *r)
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
