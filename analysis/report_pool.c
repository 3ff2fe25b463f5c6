/* The pool driver in the report: hits and latency in the Summary, what
 * the pool delivered and spent, pool.csv (occupancy over time) and its
 * plot. */
#include "report_driver.h"
#include "report_int.h"

#include "result.h"

#include <stdio.h>
#include <string.h>

/* A series' median, or -1 when it has no samples. */
static double median_of_series(const struct input *in, const char *name)
{
	const struct result_series *rs = result__find(&in->doc, name);
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
	char a[48] = "-", b[48] = "-", name[REPORT_NAME_LEN];

	if (hit >= 0)
		result__value_text(a, sizeof(a), "ns", hit, hit);
	if (all >= 0)
		result__value_text(b, sizeof(b), "ns", all, all);
	fprintf(md, "- %s: %.1f %% hits at %.1f requests/s (%s); a hit "
		"reaches its first instruction in %s (median), a request "
		"DONE in %s; %.1f idle VM-seconds\n",
		report__summary_name(name, sizeof(name), in),
		100 * json_number_value(get(pool, "hit_ratio")),
		json_number_value(get(pool, "offered_rate")),
		str_or(get(in->root, "config"), "arrivals", "?"), a, b,
		json_number_value(get(get(pool, "stats"), "idle_vm_s")));
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

static void plot_pool(struct report *r)
{
	report__plot_table(r, "pool", pool_csv, 0, "labels", NULL,
			   "pool occupancy and arrivals over time");
}

const struct report_driver report_driver_pool = {
	.name = "pool",
	.summary = sum_pool,
	.md = md_pool,
	.csv_name = "pool.csv",
	.csv = pool_csv,
	.plot = plot_pool,
	.plot_what = "the pool's occupancy over time",
};
