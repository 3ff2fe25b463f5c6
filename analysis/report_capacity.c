/* The Capacity section of report.md: for a planner, how many VMs of each
 * measured guest and variant fit the host (by memory, from bench
 * density), how fast the host creates them (sustained, from bench rate)
 * and how long filling it takes, with the assumptions stated. */
#include "report_int.h"

#include "capacity.h"
#include "report.h"
#include "result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 32

struct cap_row {
	const struct input *in; /* the density document */
	const char *variant;
	double marginal, fixed, vms, measured;
	double disk; /* KiB per VM with --rootfs, else NAN */
	const json_t *rate; /* the sustained level used, or NULL */
	const char *no_rate; /* why there is none */
};


/* Whether two documents measured the same guest: the same name and,
 * where both have one, the same sha256 (a Linux guest's: its kernel's). */
static bool same_guest(const json_t *a, const json_t *b)
{
	char x[96], y[96];

	report__guest_text(x, sizeof(x), a);
	report__guest_text(y, sizeof(y), b);
	return !strcmp(x, y);
}

/* The rate document of the same guest, or NULL. */
static const struct input *rate_doc(const struct report *r,
				    const json_t *guest)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->in[i].doc.bench, "rate") &&
		    same_guest(get(r->in[i].root, "guest"), guest))
			return &r->in[i];
	return NULL;
}

/* The sustained level a fresh variant fills the host at: process-per-VM
 * (density holds each VM in a VMM process of its own), else in-process. */
static void pick_rate(const struct report *r, struct cap_row *w)
{
	const struct input *ri = rate_doc(r, get(w->in->root, "guest"));
	const json_t *series = ri ? get(ri->root, "series") : NULL;

	if (strcmp(w->variant, "fresh")) {
		w->no_rate = "bench rate starts fresh VMs only";
		return;
	}
	if (!ri) {
		w->no_rate = "no bench rate of this guest";
		return;
	}
	w->rate = report__peak_rate(series, "process", "sustained");
	if (!w->rate)
		w->rate = report__peak_rate(series, "in-process", "sustained");
	if (!w->rate)
		w->no_rate = "no sustained level in bench rate";
}

static size_t cap_rows(const struct report *r, struct cap_row *rows)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n; i++) {
		const json_t *sys = get(r->in[i].root, "sysinfo"), *m;
		double total = json_number_value(get(get(sys, "memory"),
						     "total_kib"));
		const char *mode;

		if (strcmp(r->in[i].doc.bench, "density"))
			continue;
		json_object_foreach((json_t *)get(r->in[i].root, "density"),
				    mode, m) {
			struct cap_row *w = &rows[n];

			if (n == MAX_ROWS)
				return n;
			*w = (struct cap_row){
				.in = &r->in[i], .variant = mode,
				.marginal = json_number_value(
					get(m, "marginal_kib_per_vm")),
				.fixed = json_number_value(get(m, "fixed_kib")),
				.measured = json_number_value(get(m, "vms")),
				.disk = json_is_number(get(m, "disk_per_vm_kib"))
					? json_number_value(get(m, "disk_per_vm_kib"))
					: NAN,
			};
			w->vms = capacity__vms_by_memory(total, w->fixed,
							 w->marginal);
			pick_rate(r, w);
			n++;
		}
	}
	return n;
}

/* One unit for a KiB column: from the median of its values. */
static void kib_col(const struct cap_row *rows, size_t n, bool fixed,
		    double *div, int *prec, const char **unit)
{
	double v[MAX_ROWS], ref = 0;

	for (size_t i = 0; i < n; i++)
		v[i] = fixed ? fmax(rows[i].fixed, 0) : rows[i].marginal;
	if (n)
		stats__median(v, n, &ref);
	*unit = result__unit_for("kib", ref, div, prec);
}

/* The disk column's cell, when the table has one (any --rootfs row). */
static void disk_cell(FILE *md, const struct cap_row *w, bool disk)
{
	if (!disk)
		return;
	if (isnan(w->disk))
		fputs(" - |", md);
	else
		fprintf(md, " %.0f |", w->disk);
}

static void cap_row_md(FILE *md, const struct cap_row *w, const double *div,
		       const int *prec, bool disk)
{
	char guest[128], rate[96] = "-", fill[48] = "-";

	report__density_guest(guest, sizeof(guest), w->in->root);
	if (w->rate && w->vms >= 0) {
		double v = json_number_value(get(w->rate, "vms_per_s"));
		double workers = json_number_value(get(get(w->rate, "params"),
							"workers"));
		char num[32];

		snprintf(rate, sizeof(rate), "%s VMs/s (%s, %.0f worker%s)",
			 result__rate_text(num, sizeof(num), v),
			 str_or(get(w->rate, "params"), "mode", "?"), workers,
			 workers == 1 ? "" : "s");
		if (v > 0)
			snprintf(fill, sizeof(fill), "%.1f s", w->vms / v);
	} else if (w->no_rate) {
		snprintf(rate, sizeof(rate), "- (%s)", w->no_rate);
	}
	if (w->vms < 0) {
		fprintf(md, "| %s | %s | - |", guest, w->variant);
		disk_cell(md, w, disk);
		fputs(" - | - | no marginal cost measured | - | - |\n", md);
		return;
	}
	fprintf(md, "| %s | %s | %.*f |", guest, w->variant, prec[0],
		w->marginal / div[0]);
	disk_cell(md, w, disk);
	fprintf(md, " %.*f | %.0f | memory | %s | %s |\n", prec[1],
		fmax(w->fixed, 0) / div[1], w->vms, rate, fill);
}

/* "`3f2a9c01`" for a guest file of the document's guest, or "none". */
static void file_text(char *buf, size_t len, const json_t *file)
{
	const char *sum = str_or(file, "sha256", NULL);

	if (sum)
		snprintf(buf, len, "`%.8s`", sum);
	else
		snprintf(buf, len, "%s", json_is_object(file) ? "unreadable"
							    : "none");
}

/* A Linux guest's line of the assumptions: what exactly was measured,
 * and at which point its VMs were held. */
static void linux_assumption(FILE *md, const struct input *in)
{
	const json_t *g = get(in->root, "guest"), *cfg = in->doc.config;
	char kernel[32], initrd[32];

	file_text(kernel, sizeof(kernel), get(g, "kernel"));
	file_text(initrd, sizeof(initrd), get(g, "initrd"));
	fprintf(md, "- The guest as measured: Linux kernel %s, initrd %s, "
		"cmdline `%s`", kernel, initrd, str_or(cfg, "cmdline", "?"));
	if (json_is_string(get(cfg, "clone_cmdline")))
		fprintf(md, " (clones' snapshot: `%s`)",
			str_or(cfg, "clone_cmdline", ""));
	fprintf(md, ", %.0f MiB of guest memory, %.0f vCPU(s). %s "
		"Memory per VM is what these guests touched by then; a "
		"workload that touches more costs more per VM.\n",
		json_number_value(get(cfg, "mem_bytes")) / 1048576,
		json_number_value(get(cfg, "vcpus")),
		report__density_held(in->root));
}

/* A --rootfs document's disk: what the disk column counts. */
static void rootfs_assumption(FILE *md, const struct input *in)
{
	const json_t *img = get(in->root, "rootfs");

	fprintf(md, "- Disk: every VM's root disk is `%s` (%.0f MiB), read by "
		"all and counted once; disk per VM is what a VM's own overlay "
		"(an unnamed sparse file in $TMPDIR) held allocated when "
		"measured. VMs per host counts memory only: the disk per VM "
		"times the VMs is what the overlays' file system must hold "
		"besides.\n", str_or(img, "path", "?"),
		json_number_value(get(img, "size_bytes")) / 1048576);
}

/* The assumptions of one density document's rows. */
static void cap_assumptions(FILE *md, const struct input *in)
{
	const json_t *sys = get(in->root, "sysinfo"), *cfg = in->doc.config;
	double total = json_number_value(get(get(sys, "memory"), "total_kib"));
	double cpus = json_number_value(get(get(sys, "cpu"), "online_cpus"));
	const char *mode, *sep = "";
	const json_t *m;

	fprintf(md, "\nAssumptions (%s):\n\n"
		"- Host `%s`: MemTotal %.1f GiB, %.0f CPUs (the document's "
		"sysinfo); a reserve of max(1 GiB, 10 %% of MemTotal) = "
		"%.2f GiB stays with the host's kernel, services and page "
		"cache.\n", in->label, str_or(sys, "hostname", "?"),
		total / 1048576, cpus,
		capacity__reserve_kib(total) / 1048576);
	fprintf(md, "- VMs per host = floor((MemTotal - reserve - shared) / "
		"memory per VM). Memory per VM is the marginal cost bench "
		"density measured: the slope of PSS + kernel memory over the "
		"VMs running, i.e. memory beyond what the VMs share; shared "
		"is the intercept (e.g. the clones' snapshot in the page "
		"cache), counted once. The line is extrapolated from the VMs "
		"measured (");
	json_object_foreach((json_t *)get(in->root, "density"), mode, m) {
		fprintf(md, "%s%.0f %s", sep, json_number_value(get(m, "vms")),
			mode);
		sep = ", ";
	}
	fputs(").\n", md);
	if (json_is_string(get(cfg, "kernel")))
		linux_assumption(md, in);
	if (json_is_object(get(in->root, "rootfs")))
		rootfs_assumption(md, in);
	else
		fprintf(md, "- The guests as measured: %.0f MiB of guest "
			"memory touched before READY and %.0f MiB read after "
			"it; a guest that touches more costs more per VM.\n",
			json_number_value(get(cfg, "init_bytes")) / 1048576,
			json_number_value(get(cfg, "ws_bytes")) / 1048576);
	fprintf(md, "- Memory only: no per-VM CPU figure was measured (the "
		"held VMs idle: halted or paused vCPUs), so the %.0f CPUs do not "
		"bound these counts; guests that compute are bound by CPU "
		"too.\n", cpus);
	fputs("- Sustained creation: the best sustained level of bench rate "
	      "for the same guest (sha256), process-per-VM where measured "
	      "(density holds each VM in a VMM process of its own); bursts "
	      "are left out, as the host does not keep them up. Time to fill "
	      "= VMs per host / that rate, as if the rate held while the "
	      "host fills (bench rate destroys each VM after READY, a Linux "
	      "guest's after boot complete).\n", md);
}

void report__md_capacity(struct report *r)
{
	struct cap_row rows[MAX_ROWS];
	size_t n = cap_rows(r, rows);
	const char *unit[2];
	double div[2];
	int prec[2];
	bool disk = false;

	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		disk = disk || !isnan(rows[i].disk);
	kib_col(rows, n, false, &div[0], &prec[0], &unit[0]);
	kib_col(rows, n, true, &div[1], &prec[1], &unit[1]);
	fprintf(r->md, "\n## Capacity\n\nHow many VMs of each measured guest "
		"fit this host, how fast it creates them and how long filling "
		"it takes.\n\n| guest | variant | memory per VM, %s |%s shared, "
		"%s | VMs per host | bound | sustained creation | time to "
		"fill |\n|---|---|--:|%s--:|--:|---|---|--:|\n", unit[0],
		disk ? " disk per VM, KiB |" : "", unit[1], disk ? "--:|" : "");
	for (size_t i = 0; i < n; i++)
		cap_row_md(r->md, &rows[i], div, prec, disk);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || rows[i].in != rows[i - 1].in)
			cap_assumptions(r->md, rows[i].in);
	fputs("- VMs per GiB and VMs/s are also series in the documents "
	      "(MODE.vms_per_gib, LEVEL.vms_per_s; bigger is better), so "
	      "`coldstart compare` gates them like the latencies.\n", r->md);
}
