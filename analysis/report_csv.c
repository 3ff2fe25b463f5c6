/* The report's generic CSV files: every series' summary, every sample
 * for the CDFs (the drivers' own are in report_NAME.c). */
#include "report_int.h"

#include "err.h"
#include "result.h"
#include "units.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

			if (report__stats(&r->in[i], k, &st) < 0)
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

/* The CDF group of a series: its phase (and cache state, memory size),
 * or "all". */
static void group_of(const json_t *s, char *out, size_t len)
{
	const json_t *p = get(s, "params");
	const char *phase = json_string_value(get(p, "phase"));
	const char *cache = json_string_value(get(p, "cache"));
	const json_t *mem = get(p, "mem_bytes");
	char buf[96], size[32] = "";

	snprintf(out, len, "all");
	if (!phase)
		return;
	/* one plot per memory size, not per so many lines */
	if (json_is_integer(mem))
		snprintf(size, sizeof(size), "-mem%" JSON_INTEGER_FORMAT "M",
			 json_integer_value(mem) >> 20);
	snprintf(buf, sizeof(buf), "%s%s%s%s", phase, cache ? "-" : "",
		 cache ? cache : "", size);
	safe_name(out, len, buf);
}

/* Summaries and bootstrap intervals are most of report's time on many
 * series; each interval has a seed of its own, so threads over the
 * series give the same values. At most this many threads. */
#define STATS_THREADS 8

struct stats_job {
	struct input *in;
	size_t from, step; /* series from, from + step, ... */
};

static void *stats_job(void *arg)
{
	const struct stats_job *j = arg;
	struct input *in = j->in;

	for (size_t k = j->from; k < in->doc.nr_series; k += j->step)
		in->stats_ret[k] = series_stats(&in->doc.series[k],
						&in->stats[k]);
	return NULL;
}

/* Every series' stats, on one thread per CPU (few series: this one);
 * a job whose thread could not be made runs here. */
static void summarise(struct input *in)
{
	long cpus = in->doc.nr_series < 64 ? 1 : sysconf(_SC_NPROCESSORS_ONLN);
	size_t nt = cpus < 1 ? 1 : cpus > STATS_THREADS ? STATS_THREADS
							: (size_t)cpus;
	struct stats_job jobs[STATS_THREADS];
	pthread_t th[STATS_THREADS];
	bool made[STATS_THREADS] = { false };

	for (size_t t = 0; t < nt; t++)
		jobs[t] = (struct stats_job){ in, t, nt };
	for (size_t t = 1; t < nt; t++)
		made[t] = pthread_create(&th[t], NULL, stats_job,
					 &jobs[t]) == 0;
	stats_job(&jobs[0]);
	for (size_t t = 1; t < nt; t++)
		if (made[t])
			pthread_join(th[t], NULL);
		else
			stats_job(&jobs[t]);
}

int report__index_series(struct input *in)
{
	const json_t *arr = get(in->root, "series");
	size_t n = in->doc.nr_series + 1;

	in->groups = calloc(n, sizeof(*in->groups));
	in->stats = calloc(n, sizeof(*in->stats));
	in->stats_ret = calloc(n, sizeof(*in->stats_ret));
	if (!in->groups || !in->stats || !in->stats_ret)
		return err__set(ENOMEM, "summarising series");
	/* result__parse took the series in order, each name once */
	for (size_t k = 0; k < in->doc.nr_series; k++)
		group_of(json_array_get(arr, k), in->groups[k],
			 sizeof(in->groups[k]));
	summarise(in);
	return 0;
}

static void cdf_rows(FILE *f, const struct input *in, size_t k)
{
	const struct result_series *rs = &in->doc.series[k];
	double *v = malloc(rs->n * sizeof(double)), sc = scale_of(rs->unit);
	const char *group = in->groups[k];
	char name[160];

	if (!v)
		return;
	memcpy(v, rs->samples, rs->n * sizeof(double));
	qsort(v, rs->n, sizeof(double), cmp_double);
	safe_name(name, sizeof(name), rs->name);
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
			cdf_rows(f, &r->in[i], k);
}
