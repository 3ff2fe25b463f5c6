/* The Summary of report.md: one line (or a few) per driver, from the
 * documents. */
#include "report_int.h"

#include "err.h"
#include "report_tune.h"
#include "result.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the summary: one line per driver, from the documents ---- */

void report__time_text(char *buf, size_t len, double ns)
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
		report__time_text(t, sizeof(t), m);
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
	report__time_text(text, sizeof(text), median_ns(t));
	fprintf(md, "- %s: total (process start -> teardown done) %s median\n",
		in->label, text);
}

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

/* Whether series i is the first of its mode. */
static bool first_of_mode(const json_t *series, size_t i)
{
	const char *mode = str_or(get(json_array_get(series, i), "params"),
				  "mode", "");

	for (size_t k = 0; k < i; k++)
		if (!strcmp(str_or(get(json_array_get(series, k), "params"),
				   "mode", ""), mode))
			return false;
	return true;
}

/* The peak throughput of each mode of one kind (sustained, burst), in
 * the order modes first appear: a line of its own, as a burst is not a
 * rate the host keeps up. */
static void sum_rate_kind(FILE *md, const struct input *in, const char *kind)
{
	const json_t *series = get(in->root, "series"), *s;
	const char *sep = "";
	size_t i;

	json_array_foreach(series, i, s) {
		const char *mode = str_or(get(s, "params"), "mode", "");
		const json_t *p = report__peak_rate(series, mode, kind);

		if (!first_of_mode(series, i) || !p)
			continue; /* mode shown already, or no rate */
		if (!*sep)
			fprintf(md, "- %s, %s:%s", in->label, kind,
				!strcmp(kind, "burst") ? "" : " peak");
		fprintf(md, "%s %.0f VMs/s %s (%.0f %s)", sep,
			json_number_value(get(p, "vms_per_s")), mode,
			json_number_value(get(get(p, "params"), "workers")),
			!strcmp(kind, "burst") ? "started at once" : "workers");
		sep = ",";
	}
	if (*sep)
		fputc('\n', md);
}

static void sum_rate(FILE *md, const struct input *in)
{
	sum_rate_kind(md, in, "sustained");
	sum_rate_kind(md, in, "burst");
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
		report__time_text(t, sizeof(t), median_ns(ours));
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

void report__md_summary(struct report *r)
{
	static const struct {
		const char *bench;
		void (*fn)(FILE *md, const struct input *in);
	} drivers[] = {
		{ "lifecycle", sum_lifecycle }, { "boot", sum_boot },
		{ "restore", report__sum_restore },     { "rate", sum_rate },
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
	for (size_t i = 0; i < r->nr_tune; i++) {
		if (!any)
			fputs("\n## Summary\n\n", r->md);
		any = true;
		report_tune__summary(r->md, r->tune[i].root);
	}
}
