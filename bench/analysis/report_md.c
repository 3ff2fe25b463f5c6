/* One result document's section of report.md: where it came from, the
 * guest, the driver's own tables, every series, plots and warnings. */
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

/* One unit for a table column: chosen once from a reference value (the
 * median of the rows' medians), so a column never mixes us and ms. */
struct col {
	const char *unit;
	double div;
	int prec;
};

static void col_for(const char *unit, double ref, struct col *c)
{
	c->unit = result__unit_for(unit, ref, &c->div, &c->prec);
}

static const char *col_text(char *buf, size_t len, const struct col *c,
			    double v)
{
	snprintf(buf, len, "%.*f", c->prec, v / c->div);
	return buf;
}

/* The median of the medians of in's series in `unit` (all series when
 * unit is NULL) that `pick` accepts (all when NULL). */
static double median_of_medians(const struct input *in, const char *unit,
				bool (*pick)(const struct input *, size_t))
{
	double *m = calloc(in->doc.nr_series + 1, sizeof(double)), ref = 0;
	size_t n = 0;

	for (size_t k = 0; m && k < in->doc.nr_series; k++)
		if ((!unit || !strcmp(in->doc.series[k].unit, unit)) &&
		    (!pick || pick(in, k)))
			m[n++] = median_ns(&in->doc.series[k]);
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
		col_text(t[i], sizeof(t[i]), c, v[i]);
	fprintf(md, "| %s | %zu | %s | %s | %s | %s | %s | %s .. %s%s |\n",
		rs->name, st->s.n, t[0], t[1], t[2], t[3], t[4], t[5], t[6],
		st->s.n < CI_FEW ? " *" : "");
}

/* The table of in's series in `unit`; the smallest and largest n of
 * the rows with fewer than CI_FEW samples widen *few_lo..*few_hi. */
static void md_series_unit(FILE *md, const struct input *in,
			   const char *unit, size_t *few_lo, size_t *few_hi)
{
	struct col c;

	col_for(unit, median_of_medians(in, unit, NULL), &c);
	fprintf(md, "\n| series | n | median %s | p90 %s | p99 %s | min %s | "
		"max %s | 95%% CI of median, %s |\n|---|--:|--:|--:|--:|--:|"
		"--:|---|\n", c.unit, c.unit, c.unit, c.unit, c.unit, c.unit);
	for (size_t k = 0; k < in->doc.nr_series; k++) {
		const struct result_series *rs = &in->doc.series[k];
		struct sstat st;

		if (strcmp(rs->unit, unit) || series_stats(rs, &st) < 0)
			continue;
		md_series_row(md, rs, &st, &c);
		if (st.s.n < CI_FEW) {
			*few_lo = st.s.n < *few_lo ? st.s.n : *few_lo;
			*few_hi = st.s.n > *few_hi ? st.s.n : *few_hi;
		}
	}
}

/* Every series, one table per unit (times, memory, rates), each column
 * in one unit (named in the median's header) chosen from the table's
 * median of medians. */
static void md_series(struct report *r, const struct input *in)
{
	size_t few_lo = SIZE_MAX, few_hi = 0;

	for (size_t k = 0; k < in->doc.nr_series; k++) {
		const char *unit = in->doc.series[k].unit;
		size_t j;

		for (j = 0; j < k && strcmp(in->doc.series[j].unit, unit); j++)
			;
		if (j == k) /* the first series in this unit */
			md_series_unit(r->md, in, unit, &few_lo, &few_hi);
	}
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

	col_for("ns", median_of_medians(in, "ns", is_rate_level), &c);
	fprintf(r->md, "\nThroughput: VMs created per second at each level, "
		"all workers together (the series' `vms_per_s`); the latency "
		"columns are per VM. Sustained levels keep W workers busy; a "
		"burst starts K VMs at once and is not a rate the host keeps "
		"up.\n\n| mode | kind | workers | VMs/s | per-VM median %s | "
		"p90 %s | p99 %s |\n|---|---|--:|--:|--:|--:|--:|\n", c.unit,
		c.unit, c.unit);
	json_array_foreach(get(in->root, "series"), i, s) {
		const json_t *p = get(s, "params");
		const struct result_series *rs = compare__find(
			&in->doc, str_or(s, "name", ""));
		char t[3][48];
		struct summary sm;

		if (!rs || !json_is_number(get(s, "vms_per_s")) ||
		    stats__summarize(rs->samples, rs->n, &sm) < 0)
			continue;
		fprintf(r->md, "| %s | %s | %.0f | %.0f | %s | %s | %s |\n",
			str_or(p, "mode", "?"), str_or(p, "kind", "-"),
			json_number_value(get(p, "workers")),
			json_number_value(get(s, "vms_per_s")),
			col_text(t[0], sizeof(t[0]), &c, sm.p50),
			col_text(t[1], sizeof(t[1]), &c, sm.p90),
			col_text(t[2], sizeof(t[2]), &c, sm.p99));
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
		report__md_ksm(r->md, mode, m);
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

void report__md_doc(struct report *r, const struct input *in)
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
	if (!strcmp(in->doc.bench, "restore"))
		report__md_restore(r, in);
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
	if (strcmp(in->doc.bench, "restore"))
		md_series(r, in);
	else /* one row per strategy, size, cache and phase: too many */
		fprintf(r->md, "\nAll %zu restore series (strategy/mem/ws/cache/"
			"phase) with n, percentiles and the 95 %% interval of "
			"the median are in series.csv; the tables above hold "
			"their medians.\n", in->doc.nr_series);
	report__plot_cdfs(r, in);
	if (!strcmp(in->doc.bench, "restore"))
		report__plot_restore(r);
	if (!strcmp(in->doc.bench, "rate"))
		report__plot_table(r, "rate", report__rate_csv, 0, "modes", NULL,
			   "creation rate against concurrency");
	if (!strcmp(in->doc.bench, "density"))
		report__plot_table(r, "density", report__density_csv, 0, "variants", NULL,
			   "density curve");
	if (!strcmp(in->doc.bench, "pool"))
		report__plot_table(r, "pool", report__pool_csv, 0, "labels", NULL,
			   "pool occupancy and arrivals over time");
	if (json_array_size(get(in->root, "warnings"))) {
		fputs("\nWarnings:\n\n", r->md);
		result__md_warning_list_judged(r->md, in->root,
					       REPORT_OUTLIER_MIN_N);
	}
}

/* A counter of the KSM object, or "?" when it was unreadable. */
static const char *ksm_count(const json_t *k, const char *key, char *buf,
			     size_t size)
{
	const json_t *v = json_object_get(k, key);

	if (!json_is_integer(v))
		return "?";
	snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	return buf;
}

/* KSM with the mode's last VMs alive, and whether it could touch their
 * guest memory at all: without MADV_MERGEABLE it never scans it. */
void report__md_ksm(FILE *out, const char *mode, const json_t *m)
{
	const json_t *k = json_object_get(m, "ksm");
	json_int_t mergeable =
		json_integer_value(json_object_get(k, "mergeable_vms"));
	char run[24], shared[24], sharing[24], merged[24];
	json_int_t n = json_integer_value(json_object_get(m, "vms"));

	if (!json_is_object(k))
		return;
	fprintf(out, "- KSM with %" JSON_INTEGER_FORMAT " %s VM%s alive: run=%s "
		"(%s), pages_shared=%s, pages_sharing=%s; ", n, mode,
		n == 1 ? "" : "s",
		ksm_count(k, "run", run, sizeof(run)),
		json_string_value(json_object_get(k, "run_text")),
		ksm_count(k, "pages_shared", shared, sizeof(shared)),
		ksm_count(k, "pages_sharing", sharing, sizeof(sharing)));
	if (mergeable == 0)
		fputs("guest memory not marked mergeable, so KSM cannot "
		      "share it\n", out);
	else
		fprintf(out, "guest memory marked mergeable in %"
			JSON_INTEGER_FORMAT " of them, %s of their pages "
			"merged\n", mergeable,
			ksm_count(k, "merging_pages", merged, sizeof(merged)));
}
