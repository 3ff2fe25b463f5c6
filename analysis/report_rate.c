/* The rate driver in the report: peak throughput per mode in the Summary,
 * VMs/s beside per-VM latency per level, rate.csv and its plot. */
#include "report_driver.h"
#include "report_int.h"
#include "result.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const json_t *report__peak_rate(const json_t *series, const char *mode,
				const char *kind)
{
	const json_t *s, *best = NULL;
	size_t i;

	json_array_foreach(series, i, s)
		if (!strcmp(str_or(get(s, "params"), "mode", ""), mode) &&
		    !strcmp(str_or(get(s, "params"), "kind", ""), kind) &&
		    json_is_number(get(s, "vms_per_s")) &&
		    (!best || json_number_value(get(s, "vms_per_s")) >
				      json_number_value(get(best, "vms_per_s"))))
			best = s;
	return best;
}

/* Whether s is a rate of `kind` above *best (NULL: none yet). */
static bool beats(const json_t *s, const char *kind, const json_t *best)
{
	const json_t *v = get(s, "vms_per_s");

	return !strcmp(str_or(get(s, "params"), "kind", ""), kind) &&
	       json_is_number(v) &&
	       (!best || json_number_value(v) >
				 json_number_value(get(best, "vms_per_s")));
}

/* report__peak_rate of every mode at once, best[m] for the m-th mode to
 * appear (of any kind; NULL: none of this kind): one pass, where a peak
 * per mode, each a pass over every series, was quadratic. The number of
 * modes, or 0 without memory. */
static size_t peaks(const json_t *series, const char *kind,
		    const json_t **best)
{
	json_t *ids = json_object();
	const json_t *s, *id;
	size_t i, n = 0;

	json_array_foreach(series, i, s) {
		const char *mode = str_or(get(s, "params"), "mode", "");
		size_t m;

		if (!ids)
			break;
		id = json_object_get(ids, mode);
		m = id ? (size_t)json_integer_value(id) : n;
		if (!id && json_object_set_new_nocheck(ids, mode,
				json_integer((json_int_t)n++)) < 0) {
			n = 0;
			break;
		}
		if (!id)
			best[m] = NULL;
		if (beats(s, kind, best[m]))
			best[m] = s;
	}
	json_decref(ids);
	return n;
}

/* The peak throughput of each mode of one kind (sustained, burst), in
 * the order modes first appear: a line of its own, as a burst is not a
 * rate the host keeps up. */
static void sum_rate_kind(FILE *md, const struct input *in, const char *kind)
{
	const json_t *series = get(in->root, "series");
	const json_t **best = calloc(json_array_size(series) + 1,
				     sizeof(*best));
	const char *sep = "";
	char name[REPORT_NAME_LEN];
	size_t nm = best ? peaks(series, kind, best) : 0;

	report__summary_name(name, sizeof(name), in);
	for (size_t m = 0; m < nm; m++) {
		const json_t *p = best[m];
		const char *mode = str_or(get(p, "params"), "mode", "");
		double workers = json_number_value(get(get(p, "params"),
							"workers"));
		char num[32];

		if (!p)
			continue; /* no rate of this kind */
		if (!*sep)
			fprintf(md, "- %s, %s:%s", name, kind,
				!strcmp(kind, "burst") ? "" : " peak");
		fprintf(md, "%s %s VMs/s %s (%.0f %s)", sep,
			result__rate_text(num, sizeof(num),
				json_number_value(get(p, "vms_per_s"))), mode,
			workers, !strcmp(kind, "burst") ? "started at once"
				 : workers == 1 ? "worker" : "workers");
		sep = ",";
	}
	if (*sep)
		fputc('\n', md);
	free(best);
}

static void sum_rate(FILE *md, const struct input *in)
{
	sum_rate_kind(md, in, "sustained");
	sum_rate_kind(md, in, "burst");
}

static bool is_rate_level(const struct input *in, size_t k)
{
	const json_t *s = json_array_get(get(in->root, "series"), k);

	return json_is_number(get(s, "vms_per_s"));
}

/* Throughput per level: the series' vms_per_s (VMs finished per second
 * by all workers together), beside each VM's own latency; the latency
 * columns in one unit. */
static void md_rate(struct report *r, const struct input *in)
{
	const json_t *s;
	struct col c;
	size_t i;

	report__col_for("ns", report__median_of_medians(in, "ns", is_rate_level),
			&c);
	fprintf(r->md, "\nThroughput: VMs created per second at each level, "
		"all workers together (the series' `vms_per_s`); the latency "
		"columns are per VM. Sustained levels keep W workers busy; a "
		"burst starts K VMs at once and is not a rate the host keeps "
		"up.\n\n| mode | kind | workers | VMs/s | per-VM median %s | "
		"p90 %s | p99 %s |\n|---|---|--:|--:|--:|--:|--:|\n", c.unit,
		c.unit, c.unit);
	json_array_foreach(get(in->root, "series"), i, s) {
		const json_t *p = get(s, "params");
		const struct result_series *rs = result__find(
			&in->doc, str_or(s, "name", ""));
		char t[3][48], num[32];
		struct summary sm;

		if (!rs || !json_is_number(get(s, "vms_per_s")) ||
		    stats__summarize(rs->samples, rs->n, &sm) < 0)
			continue;
		fprintf(r->md, "| %s | %s | %.0f | %s | %s | %s | %s |\n",
			str_or(p, "mode", "?"), str_or(p, "kind", "-"),
			json_number_value(get(p, "workers")),
			result__rate_text(num, sizeof(num),
				json_number_value(get(s, "vms_per_s"))),
			report__col_text(t[0], sizeof(t[0]), &c, sm.p50),
			report__col_text(t[1], sizeof(t[1]), &c, sm.p90),
			report__col_text(t[2], sizeof(t[2]), &c, sm.p99));
	}
}

/* A rate series: params.mode and params.kind (sustained, burst) name the
 * line, params.workers (or concurrency) is x; its "vms_per_s" (else 1 /
 * mean latency) the rate, its samples the latency percentiles. */
static void rate_csv(FILE *f, const struct report *r)
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
		const struct result_series *rs = result__find(
			&r->in[i].doc, str_or(s, "name", ""));
		char mode[64], buf[80];
		struct sstat st;

		if (!rs || !json_is_number(x) || strcmp(rs->unit, "ns") ||
		    report__stats(&r->in[i], (size_t)(rs - r->in[i].doc.series),
				  &st) < 0)
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

static void plot_rate(struct report *r)
{
	report__plot_table(r, "rate", rate_csv, 0, "modes", NULL,
			   "creation rate against concurrency");
}

const struct report_driver report_driver_rate = {
	.name = "rate",
	.summary = sum_rate,
	.md = md_rate,
	.csv_name = "rate.csv",
	.csv = rate_csv,
	.plot = plot_rate,
	.plot_what = "creation rate against concurrency",
};
