/* The density driver in the report: VMs per GiB per mode in the Summary,
 * each mode's marginal cost and KSM, density.csv and the density curve. */
#include "report.h"
#include "report_driver.h"
#include "report_int.h"

#include "result.h"

#include <stdio.h>
#include <string.h>

void report__density_guest(char *buf, size_t len, const json_t *doc)
{
	const json_t *cfg = get(doc, "config");
	double vcpus = json_number_value(get(cfg, "vcpus"));

	const json_t *img = get(doc, "rootfs");
	const char *path = str_or(img, "path", NULL), *base;

	report__guest_text(buf, len, get(doc, "guest"));
	if (json_is_integer(get(cfg, "mem_bytes")))
		snprintf(buf + strlen(buf), len - strlen(buf),
			 ", %.0f MiB, %.0f vCPU%s",
			 json_number_value(get(cfg, "mem_bytes")) / 1048576,
			 vcpus, vcpus == 1 ? "" : "s");
	if (!path)
		return;
	base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	snprintf(buf + strlen(buf), len - strlen(buf), ", rootfs %s (%.0f MiB)",
		 base, json_number_value(get(img, "size_bytes")) / 1048576);
}

void report__density_rootfs(FILE *out, const json_t *doc)
{
	const json_t *img = get(doc, "rootfs"), *cfg = get(doc, "config");
	double bytes = json_number_value(get(img, "size_bytes")) / 1024;
	double alloc = json_number_value(get(img, "allocated_bytes")) / 1024;
	char size[32], used[32];

	if (!json_is_object(img))
		return;
	result__value_text(size, sizeof(size), "kib", bytes, bytes);
	result__value_text(used, sizeof(used), "kib", alloc, alloc);
	fprintf(out, "Root disk: `%s` (%s, %s allocated), one image every VM "
		"reads, each VM writing to an unnamed overlay of its own%s. "
		"Disk per VM = the blocks a VM's overlay holds allocated (its "
		"sparse file's real size) while it is held; shared = the "
		"image's allocated blocks plus, for clones, the snapshot's disk "
		"layer, counted once.", str_or(img, "path", "?"), size, used,
		json_is_true(get(img, "unchanged")) ? "; the image was found "
		"unchanged after the run" : "");
	if (json_is_string(get(cfg, "exec")))
		fprintf(out, " Each VM ran `%s` through its agent before it was "
			"held.", str_or(cfg, "exec", ""));
	fputs("\n\n", out);
}

void report__density_disk(FILE *out, const json_t *m, const char *lead)
{
	if (!json_is_number(get(m, "disk_per_vm_kib")))
		return;
	fprintf(out, "%sdisk per VM %.0f KiB (shared %.0f KiB)", lead,
		json_number_value(get(m, "disk_per_vm_kib")),
		json_number_value(get(m, "shared_disk_kib")));
}

const char *report__density_held(const json_t *doc)
{
	if (strcmp(str_or(get(doc, "guest"), "name", "?"), "linux"))
		return "Probe-guest VMMs held alive after their workload ran "
		       "to DONE.";
	if (json_is_object(get(doc, "rootfs")))
		return "Linux-guest VMMs with a root disk held paused once their "
		       "agent answered (and --exec ran): fresh ones booted, "
		       "clones restored from a snapshot taken when the agent "
		       "listened.";
	return "Linux-guest VMMs held paused: fresh ones at their "
	       "boot-complete signal; clones, restored from a snapshot taken "
	       "there, after they ran on to their done signal or for the "
	       "settle time (held_at counts which).";
}

void report__density_cmdline(FILE *out, const json_t *doc)
{
	const json_t *cfg = get(doc, "config");

	if (!json_is_string(get(cfg, "clone_cmdline")))
		return;
	fprintf(out, "The clones' snapshot was taken with another command "
		"line than the fresh VMs boot with: `%s` (fresh: `%s`).\n\n",
		str_or(cfg, "clone_cmdline", ""), str_or(cfg, "cmdline", "?"));
}

static void sum_density(FILE *md, const struct input *in)
{
	const json_t *m;
	const char *mode, *sep = "";
	char name[REPORT_NAME_LEN];

	fprintf(md, "- %s:", report__summary_name(name, sizeof(name), in));
	json_object_foreach((json_t *)get(in->root, "density"), mode, m) {
		fprintf(md, "%s %.1f VMs per GiB %s", sep,
			json_number_value(get(m, "vms_per_gib")), mode);
		sep = ",";
	}
	fputc('\n', md);
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
	char guest[128];

	report__density_guest(guest, sizeof(guest), in->root);
	fprintf(r->md, "\nGuest: %s. %s\n\n", guest,
		report__density_held(in->root));
	report__density_cmdline(r->md, in->root);
	report__density_rootfs(r->md, in->root);
	json_object_foreach((json_t *)get(in->root, "density"), mode, m) {
		fprintf(r->md, "- %s: %.0f VMs (stopped by %s), marginal cost "
			"%.0f KiB per VM (PSS + kernel memory), %.1f VMs per GiB",
			mode, json_number_value(get(m, "vms")),
			str_or(m, "stopped_by", "?"),
			json_number_value(get(m, "marginal_kib_per_vm")),
			json_number_value(get(m, "vms_per_gib")));
		md_beyond_guest(r->md, m);
		report__density_disk(r->md, m, "; ");
		fputc('\n', r->md);
	}
	json_object_foreach((json_t *)get(in->root, "density"), mode, m)
		report__md_ksm(r->md, mode, m);
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

/* The density curve: "density": {MODE: {"curve": [{vms, rss_kib,
 * pss_kib, uss_kib, kernel_kib}]}}, one line per mode. */
static void density_csv(FILE *f, const struct report *r)
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

static void plot_density(struct report *r)
{
	report__plot_table(r, "density", density_csv, 0, "variants", NULL,
			   "density curve");
}

const struct report_driver report_driver_density = {
	.name = "density",
	.summary = sum_density,
	.md = md_density,
	.csv_name = "density.csv",
	.csv = density_csv,
	.plot = plot_density,
	.plot_what = "the density curve",
};
