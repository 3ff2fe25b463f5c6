/* The report's generic CSV files: every series' summary, every sample
 * for the CDFs (the drivers' own are in report_NAME.c). */
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
