/* The density benchmark: starts VMMs one at a time, each holding its guest
 * alive (density_hold.c says where: the probe guest after DONE, a Linux
 * guest paused at boot complete or, as a clone restored from one snapshot
 * with --mem-restore mmap, at its done signal or after a settle time),
 * until a count is reached or another VM is predicted to exceed a memory
 * budget; density_opts.c parses and checks the options. After
 * each start, with the VMs alive, it reads every VMM's smaps_rollup and
 * guest mapping, the KSM counters and /proc/meminfo: the density curve,
 * per-VM RSS/PSS/USS in total and beyond guest memory, KSM's state and
 * VMs per GiB (a series of one sample per VM after the first). */
#include "density.h"
#include "density_int.h"

#include "capacity.h"
#include "child.h"
#include "cli.h"
#include "err.h"
#include "memstat.h"
#include "output.h"
#include "report.h"
#include "result.h"
#include "restore.h"
#include "result_new.h"
#include "snapshot.h"
#include "units.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_VMS DENSITY_MAX_VMS
#define HOLD_TIMEOUT_MS 30000
/* A Linux child boots within --timeout, or restores and settles; then a
 * rootfs guest's agent answers and --exec's command runs (at most 120 s,
 * density_root.c); beyond that and a margin it hangs. */
#define LINUX_HOLD_MARGIN_MS 30000
#define ROOTFS_AGENT_MS 120000
#define MAX_ARGS 32
/* A released VMM only tears its VM down; longer means it hangs. */
#define RELEASE_TIMEOUT_MS 10000

static const char *const kernel_keys[] = { "KernelStack", "PageTables",
					   "SecPageTables", "Slab", NULL };

/* One VMM process held alive, and where its guest memory is mapped. */
struct vmm {
	struct child_held h;
	uintptr_t guest; /* host address of the guest memory mapping */
	char at[16];     /* where it is held (density_hold.c) */
	int disk_fd;     /* its root disk's overlay, in the VMM; -1: none */
};

struct density {
	struct density_opts o;
	struct vmm vms[MAX_VMS];
	size_t nr;
	/* the clones' snapshot: snap_dir is tmp_dir/snap; with --rootfs,
	 * the VMs' vsock sockets: tmp_dir/vN, N counting started VMs */
	char tmp_dir[PATH_MAX], snap_dir[PATH_MAX];
	unsigned int started;
	char exe[4096];
	struct density_image img; /* --rootfs */
	int64_t snap_disk;        /* the clones' snapshot's disk layer */
};

/* ---- the driver ---- */

static int release(struct vmm *v);

/* A --rootfs VM's agent socket and command, after its other options. */
static void agent_args(struct density *d, bool clone, char **argv, int *n,
		       char *vsock, char *exec, size_t size)
{
	snprintf(vsock, size, "--vsock=%s/v%u", d->tmp_dir, d->started++);
	argv[(*n)++] = vsock;
	if (!d->o.exec)
		return;
	if (clone) {
		snprintf(exec, size, "--exec=%s", d->o.exec);
		argv[(*n)++] = exec;
	} else {
		argv[(*n)++] = "--exec";
		argv[(*n)++] = (char *)d->o.exec;
	}
}

/* The Linux guest's boot limit, for `coldstart run`'s --timeout. */
static char *timeout_arg(const struct density *d, char *buf, size_t size)
{
	snprintf(buf, size, "--timeout=%" PRIu64 "ns", d->o.timeout_ns);
	return buf;
}

/* How long a held child may take to announce itself. */
static int hold_timeout_ms(const struct density *d)
{
	uint64_t ms = d->o.timeout_ns / 1000000 + LINUX_HOLD_MARGIN_MS;

	if (!d->o.c.kernel)
		return HOLD_TIMEOUT_MS;
	ms += d->o.rootfs ? ROOTFS_AGENT_MS : d->o.settle_ns / 1000000;
	return ms < INT_MAX ? (int)ms : INT_MAX;
}

/* The error of VM `i` of a mode that did not start, naming it. */
static int vm_failed(int ret, const char *mode, size_t i)
{
	char why[512];

	snprintf(why, sizeof(why), "%s", err__last());
	return err__set(-ret, "%s VM %zu did not start: %s", mode, i + 1, why);
}

static int start_vm(struct density *d, bool clone, struct vmm *v)
{
	char init[32], ws[32], settle[48], mem[48], vcpus[48], timeout[48];
	char rootfs[PATH_MAX + 16], vsock[PATH_MAX + 16], exec[8192];
	char *argv[MAX_ARGS], line[160] = "";
	int n = 0, ret;

	snprintf(init, sizeof(init), "--init=%" PRIu64, d->o.init);
	snprintf(ws, sizeof(ws), "--ws=%" PRIu64, d->o.ws);
	snprintf(settle, sizeof(settle), "--settle=%" PRIu64 "ns",
		 d->o.settle_ns);
	argv[n++] = d->exe;
	argv[n++] = "bench";
	argv[n++] = "density";
	if (clone) {
		argv[n++] = "--hold-clone";
		argv[n++] = d->snap_dir;
		if (d->o.c.kernel && !d->o.rootfs)
			argv[n++] = settle;
	} else if (d->o.c.kernel) {
		argv[n++] = "--hold-fresh";
		density__linux_args(&d->o, argv, &n, mem, vcpus, sizeof(mem),
				    rootfs, sizeof(rootfs));
		argv[n++] = timeout_arg(d, timeout, sizeof(timeout));
	} else {
		argv[n++] = "--hold-fresh";
		argv[n++] = init;
		argv[n++] = ws;
	}
	if (d->o.rootfs)
		agent_args(d, clone, argv, &n, vsock, exec, sizeof(exec));
	argv[n] = NULL;
	ret = child__hold(argv, hold_timeout_ms(d), &v->h, line, sizeof(line));
	if (ret == 0 && sscanf(line, "held %" SCNxPTR " %15s %d", &v->guest,
			       v->at, &v->disk_fd) != 3) {
		ret = err__set(EIO, "unexpected announcement '%s'", line);
		release(v);
	}
	return ret;
}

/* The kernel_keys of /proc/meminfo, in KiB. */
static void meminfo(double *kib)
{
	char text[256], key[64];
	FILE *f = fopen("/proc/meminfo", "re");
	uint64_t v;

	for (int k = 0; kernel_keys[k]; k++)
		kib[k] = NAN;
	while (f && fgets(text, sizeof(text), f))
		if (sscanf(text, "%63[^:]: %" SCNu64, key, &v) == 2)
			for (int k = 0; kernel_keys[k]; k++)
				if (!strcmp(key, kernel_keys[k]))
					kib[k] = (double)v;
	if (f)
		fclose(f);
}

/* The kernel memory added since `base`, per key and in *total. */
static json_t *kernel_json(const double *base, double *total)
{
	json_t *obj = json_object();
	double now[8];

	*total = 0;
	meminfo(now);
	for (int k = 0; kernel_keys[k]; k++)
		if (!isnan(now[k]) && !isnan(base[k])) {
			json_object_set_new(obj, kernel_keys[k],
					    json_real(now[k] - base[k]));
			*total += now[k] - base[k];
		}
	return obj;
}

/* Releases a held VMM, which must then exit 0; 0 or -errno. */
static int release(struct vmm *v)
{
	char buf[32];
	int status = child__release(&v->h, RELEASE_TIMEOUT_MS);

	if (status < 0)
		return status;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return err__set(EIO, "'%s' %s after its release", v->h.name,
				child__status_text(status, buf, sizeof(buf)));
	return 0;
}

/* Releases every held VMM; 0 or the first error. */
static int release_all(struct density *d)
{
	int ret = 0;

	while (d->nr) {
		int r = release(&d->vms[--d->nr]);

		if (ret == 0)
			ret = r;
	}
	return ret;
}

/* Per-VM measures: in the curve as NAME_kib (summed over the VMs), as
 * series MODE.NAME_per_vm (one sample per VM at the last point). The
 * last, the root disk's overlay, only with --rootfs (nr_measures). */
enum { M_RSS, M_PSS, M_USS, M_OVERHEAD, M_RSS_BEYOND, M_PSS_BEYOND,
       M_USS_BEYOND, M_DISK, NR_MEASURES };
static const char *const measure_names[NR_MEASURES] = {
	"rss", "pss", "uss", "overhead", "rss_beyond_guest",
	"pss_beyond_guest", "uss_beyond_guest", "disk",
};

static int nr_measures(const struct density *d)
{
	return d->o.rootfs ? NR_MEASURES : M_DISK;
}

static void measures(const struct memstat *m, double *v)
{
	struct memstat_beyond b;

	memstat__beyond_guest(m, &b);
	v[M_RSS] = (double)m->rss_kib;
	v[M_PSS] = (double)m->pss_kib;
	v[M_USS] = (double)m->uss_kib;
	v[M_OVERHEAD] = (double)memstat__overhead_kib(m);
	v[M_RSS_BEYOND] = (double)b.rss_kib;
	v[M_PSS_BEYOND] = (double)b.pss_kib;
	v[M_USS_BEYOND] = (double)b.uss_kib;
}

/* KSM while the VMs are alive: the host's counters, how many guest
 * mappings KSM may merge at all, and how many of their pages it did. */
struct ksm_point {
	struct memstat_ksm host;
	size_t mergeable_vms;
	long long merging_pages; /* -1: unknown */
};

static json_t *count_json(long long v)
{
	return v < 0 ? json_null() : json_integer(v);
}

static json_t *ksm_json(const struct ksm_point *k)
{
	return json_pack("{s:o, s:s, s:o, s:o, s:o, s:o, s:I, s:o}", "run",
			 count_json(k->host.run), "run_text",
			 memstat__ksm_run_text(k->host.run), "pages_shared",
			 count_json(k->host.pages_shared), "pages_sharing",
			 count_json(k->host.pages_sharing), "pages_unshared",
			 count_json(k->host.pages_unshared), "full_scans",
			 count_json(k->host.full_scans), "mergeable_vms",
			 (json_int_t)k->mergeable_vms, "merging_pages",
			 count_json(k->merging_pages));
}

/* Reads every held VMM: sums in sum[], per VM in per_vm[k * nr + i]. */
static int read_vms(struct density *d, double *sum, double *per_vm,
		    struct ksm_point *ksm)
{
	memstat__ksm(&ksm->host);
	for (size_t i = 0; i < d->nr; i++) {
		const struct vmm *v = &d->vms[i];
		double one[NR_MEASURES];
		long long merging;
		struct memstat m;
		int ret = memstat__pid(&m, v->h.pid, v->guest);
		int64_t disk = v->disk_fd < 0 ? 0
			: density__overlay_bytes(v->h.pid, v->disk_fd);

		if (ret < 0)
			return ret;
		if (disk < 0)
			return (int)disk;
		measures(&m, one);
		one[M_DISK] = (double)disk / KiB;
		for (int k = 0; k < nr_measures(d); k++) {
			sum[k] += one[k];
			per_vm[(size_t)k * d->nr + i] = one[k];
		}
		ksm->mergeable_vms += m.guest_mergeable;
		merging = memstat__ksm_merging_pages(v->h.pid);
		ksm->merging_pages = ksm->merging_pages < 0 || merging < 0
					     ? -1 : ksm->merging_pages + merging;
	}
	return 0;
}

struct curve {
	double vms[MAX_VMS], cost[MAX_VMS];
	size_t n;
};

/* One point of the curve with d->nr VMs alive. */
static int point(struct density *d, const double *base, json_t *arr,
		 struct curve *c, double *per_vm)
{
	double sum[NR_MEASURES] = { 0 }, kernel;
	struct ksm_point ksm = { 0 };
	char name[64];
	json_t *p, *kobj;
	int ret = read_vms(d, sum, per_vm, &ksm);

	if (ret < 0)
		return ret;
	kobj = kernel_json(base, &kernel);
	c->vms[c->n] = (double)d->nr;
	c->cost[c->n] = sum[M_PSS] + kernel;
	p = json_pack("{s:I}", "vms", (json_int_t)d->nr);
	for (int k = 0; k < nr_measures(d); k++) {
		snprintf(name, sizeof(name), "%s_kib", measure_names[k]);
		json_object_set_new(p, name, json_real(sum[k]));
	}
	json_object_set_new(p, "kernel_kib", json_real(kernel));
	json_object_set_new(p, "kernel_delta_kib", kobj);
	json_object_set_new(p, "cost_kib", json_real(c->cost[c->n++]));
	json_object_set_new(p, "ksm", ksm_json(&ksm));
	json_array_append_new(arr, p);
	return 0;
}

static int add_mode_series(const struct density *d, json_t *doc,
			   const char *mode, const double *per_vm, size_t n)
{
	char name[64];

	for (int k = 0; k < nr_measures(d); k++) {
		snprintf(name, sizeof(name), "%s.%s_per_vm", mode,
			 measure_names[k]);
		if (!result__add_series(doc, name, "kib", RESULT_LOWER,
					json_pack("{s:s, s:s}", "mode", mode,
						  "metric", measure_names[k]),
					per_vm + (size_t)k * n, n))
			return -ENOMEM;
	}
	return 0;
}

/* Every VM is measured as the older ones are: after a later start. In
 * the emulated host the VMM's binary and libraries are on virtiofs,
 * whose page cache of a file is dropped, and unmapped from every
 * process, when the file is opened: a VMM's start took its text out of
 * the older, idle VMMs, so the newest alone held its text (about 6 MiB),
 * and privately, counted in its USS. Opening its executable files as the
 * next start would puts it in their state; elsewhere it changes
 * nothing. */
static int settle_newest(const struct density *d)
{
	int ret = memstat__open_text(d->vms[d->nr - 1].h.pid);

	return ret < 0 ? ret : 0;
}

/* Whether the budget forbids another VM: the cost predicted with one
 * more exceeds it. The first VM is always started. */
static bool budget_full(const struct density *d, const struct curve *c)
{
	return d->o.budget && c->n &&
	       density__predict_next(c->vms, c->cost, c->n) * 1024 >
		       (double)d->o.budget;
}

/* Warns when the measured cost ended above the budget. */
static void warn_over_budget(const struct density *d, json_t *doc,
			     const char *mode, const struct curve *c)
{
	double cost = c->cost[c->n - 1], budget = (double)d->o.budget / 1024;

	if (c->n == 1)
		result__warn(doc, "density %s: the first VM alone costs %.0f "
			     "KiB (PSS + kernel memory), above --budget %.0f "
			     "KiB; stopped at 1 VM", mode, cost, budget);
	else
		result__warn(doc, "density %s: %zu VMs cost %.0f KiB, above "
			     "--budget %.0f KiB: the last VM cost more than "
			     "predicted (%.0f KiB)", mode, c->n, cost, budget,
			     density__predict_next(c->vms, c->cost, c->n - 1));
}

/* Starts VMs of one mode while the count and the budget allow; the curve
 * point after each. Says in *stop what ended it. */
static int grow(struct density *d, json_t *doc, const char *mode,
		struct curve *c, json_t *arr, double *per_vm,
		const char **stop)
{
	bool clone = !strcmp(mode, "clone");
	double base[8];
	int ret = 0;

	for (uint64_t i = 0; ret == 0 && i < d->o.c.warmup; i++) {
		ret = start_vm(d, clone, &d->vms[0]);
		if (ret < 0)
			ret = vm_failed(ret, clone ? "warm-up clone"
					: "warm-up fresh", (size_t)i);
		else
			ret = release(&d->vms[0]);
	}
	meminfo(base);
	while (ret == 0 && d->nr < d->o.c.count && !budget_full(d, c)) {
		ret = start_vm(d, clone, &d->vms[d->nr]);
		if (ret < 0) {
			ret = vm_failed(ret, mode, d->nr);
			break;
		}
		d->nr++;
		output__progress(mode, (unsigned long)d->nr,
				 (unsigned long)d->o.c.count);
		ret = settle_newest(d);
		if (ret == 0)
			ret = point(d, base, arr, c, per_vm);
		if (ret == 0 && d->o.budget &&
		    c->cost[c->n - 1] * 1024 > (double)d->o.budget) {
			warn_over_budget(d, doc, mode, c);
			break;
		}
	}
	output__progress_done();
	*stop = d->nr < d->o.c.count ? "budget" : "count";
	return ret;
}

/* How many of the VMs alive were held at which point (density_hold.c):
 * {"done": 3}, or for Linux clones e.g. {"done": 2, "settle": 1}. */
static json_t *held_at_json(const struct density *d)
{
	json_t *obj = json_object();

	for (size_t i = 0; i < d->nr; i++) {
		const json_t *n = json_object_get(obj, d->vms[i].at);

		json_object_set_new(obj, d->vms[i].at,
				    json_integer(json_integer_value(n) + 1));
	}
	return obj;
}

/* With --rootfs: the disk each VM wrote (its overlay) at the last point,
 * and what they share, counted once: the image and, for clones, the
 * snapshot's disk layer. */
static void disk_json(const struct density *d, json_t *res,
		      const json_t *last, bool clone)
{
	double n = json_number_value(json_object_get(last, "vms"));
	double disk = json_number_value(json_object_get(last, "disk_kib"));
	double shared = (double)d->img.allocated / KiB;

	if (clone)
		shared += (double)d->snap_disk / KiB;
	json_object_set_new(res, "disk_per_vm_kib",
			    json_real(n > 0 ? disk / n : 0));
	json_object_set_new(res, "shared_disk_kib", json_real(shared));
}

/* Starts VMs of one mode until the count or the budget; adds its curve,
 * per-VM series, KSM state and VMs per GiB to doc. */
static int run_mode(struct density *d, json_t *doc, bool clone)
{
	const char *mode = clone ? "clone" : "fresh", *stop = "count";
	double slope = 0, icpt = 0;
	struct curve *c = calloc(1, sizeof(*c));
	double *per_vm = calloc(NR_MEASURES * d->o.c.count, sizeof(double));
	json_t *arr = json_array(), *res, *last;
	int released, ret = c && per_vm ? 0
				       : err__set(ENOMEM, "allocating the curve");

	if (ret == 0)
		ret = grow(d, doc, mode, c, arr, per_vm, &stop);
	if (ret == 0 && c->n)
		ret = add_mode_series(d, doc, mode, per_vm, d->nr);
	if (ret == 0 && c->n >= 2)
		density__fit(c->vms, c->cost, c->n, &slope, &icpt);
	else if (ret == 0 && c->n == 1)
		slope = c->cost[0];
	last = json_array_get(arr, json_array_size(arr) - 1);
	res = json_pack("{s:I, s:s, s:o, s:f, s:f, s:f, s:O?, s:o}", "vms",
			(json_int_t)d->nr, "stopped_by", stop, "held_at",
			held_at_json(d),
			"marginal_kib_per_vm", slope, "fixed_kib", icpt,
			"vms_per_gib", density__vms_per_gib(slope), "ksm",
			json_object_get(last, "ksm"), "curve", arr);
	if (d->o.rootfs && last)
		disk_json(d, res, last, clone);
	json_object_set_new(json_object_get(doc, "density"), mode, res);
	if (ret == 0 && c->n)
		ret = capacity__add_density_series(doc, mode);
	released = release_all(d);
	if (ret == 0)
		ret = released;
	free(per_vm);
	free(c);
	return ret;
}

/* The error of the clones' snapshot that failed: when it failed after
 * --timeout (a Linux guest's snapshot is its boot, then a save), the
 * limit its guest ran out of, and the option. */
static int snapshot_failed(const struct density *d, int status,
			   uint64_t since)
{
	char buf[32];

	child__status_text(status, buf, sizeof(buf));
	if (d->o.c.kernel && now_ns() - since >= d->o.timeout_ns)
		return err__set(ETIMEDOUT, "the clones' snapshot: its guest "
				"did not signal boot complete within --timeout "
				"%.3f s ('coldstart snapshot create' %s); raise "
				"--timeout", (double)d->o.timeout_ns / 1e9,
				buf);
	return err__set(EIO, "'coldstart snapshot create' %s", buf);
}

static int make_snapshot(struct density *d)
{
	char init[32], ws[32], mem[48], vcpus[48], *argv[MAX_ARGS];
	char rootfs[PATH_MAX + 16], timeout[48];
	uint64_t since = now_ns();
	int status, n = 0, ret;

	ret = snapshot__join(d->snap_dir, d->tmp_dir, "snap");
	if (ret < 0)
		return ret;
	snprintf(init, sizeof(init), "--init=%" PRIu64, d->o.init);
	snprintf(ws, sizeof(ws), "--ws=%" PRIu64, d->o.ws);
	argv[n++] = d->exe;
	argv[n++] = "snapshot";
	argv[n++] = "create";
	argv[n++] = d->snap_dir;
	argv[n++] = "--force";
	if (d->o.c.kernel) {
		density__linux_args(&d->o, argv, &n, mem, vcpus, sizeof(mem),
				    rootfs, sizeof(rootfs));
		argv[n++] = timeout_arg(d, timeout, sizeof(timeout));
	} else {
		argv[n++] = init;
		argv[n++] = ws;
	}
	argv[n] = NULL;
	ret = child__run(argv, false, &status, NULL);
	if (ret == 0 && (!WIFEXITED(status) || WEXITSTATUS(status)))
		ret = snapshot_failed(d, status, since);
	if (ret == 0 && d->o.rootfs) {
		d->snap_disk = density__snapshot_disk_bytes(d->snap_dir);
		if (d->snap_disk < 0)
			ret = (int)d->snap_disk;
	}
	return ret;
}

/* The command line the clones' snapshot was taken with, read back from
 * it: inside the emulated host `snapshot create` adds coldstart.done=mmio
 * to the default one, so the clones boot with another than the fresh VMs
 * (config.cmdline); where it differs, config.clone_cmdline records it. */
static int note_clone_cmdline(const struct density *d, json_t *doc)
{
	json_t *cfg = json_object_get(doc, "config");
	const char *fresh = json_string_value(json_object_get(cfg, "cmdline"));
	struct snapshot s;
	int ret;

	if (!d->o.c.kernel)
		return 0;
	ret = snapshot__open(&s, d->snap_dir); /* closed again if it fails */
	if (ret < 0)
		return ret;
	if ((!fresh || strcmp(fresh, s.guest.cmdline)) &&
	    json_object_set_new(cfg, "clone_cmdline",
				json_string(s.guest.cmdline)) < 0)
		ret = err__set(ENOMEM, "recording the clones' command line");
	snapshot__close(&s);
	return ret;
}

static double per_vm(const json_t *point, const char *key, double n)
{
	return json_number_value(json_object_get(point, key)) / n;
}

static void report(FILE *out, const json_t *doc)
{
	const json_t *modes = json_object_get(doc, "density"), *m;
	const char *key;
	char guest[128];

	report__density_guest(guest, sizeof(guest), doc);
	fprintf(out, "# coldstart density benchmark\n\nGuest: %s. %s\n\n",
		guest, report__density_held(doc));
	report__density_cmdline(out, doc);
	report__density_rootfs(out, doc);
	fputs("Marginal cost = slope of (sum of PSS + "
	      "kernel memory delta) over the number of VMs. Kernel memory "
	      "(KernelStack, PageTables, SecPageTables, Slab) is a system-wide "
	      "/proc/meminfo delta, not in any RSS. Beyond guest = the VMM "
	      "process's RSS, PSS and USS minus its guest mapping's Rss, Pss and "
	      "private pages.\n\n| mode | VMs | stopped by | marginal KiB/VM | "
	      "VMs per GiB | PSS KiB/VM | beyond guest KiB/VM: RSS | PSS | "
	      "USS | kernel KiB/VM |\n|---|--:|---|--:|--:|--:|--:|--:|--:|--:|"
	      "\n", out);
	json_object_foreach((json_t *)modes, key, m) {
		const json_t *curve = json_object_get(m, "curve");
		const json_t *last = json_array_get(curve, json_array_size(curve) - 1);
		double n = json_number_value(json_object_get(last, "vms"));

		if (n <= 0)
			continue;
		fprintf(out, "| %s | %.0f | %s | %.0f | %.1f | %.0f | %.0f | %.0f "
			"| %.0f | %.0f |\n", key, n,
			json_string_value(json_object_get(m, "stopped_by")),
			json_number_value(json_object_get(m, "marginal_kib_per_vm")),
			json_number_value(json_object_get(m, "vms_per_gib")),
			per_vm(last, "pss_kib", n),
			per_vm(last, "rss_beyond_guest_kib", n),
			per_vm(last, "pss_beyond_guest_kib", n),
			per_vm(last, "uss_beyond_guest_kib", n),
			per_vm(last, "kernel_kib", n));
	}
	fputs("\n", out);
	json_object_foreach((json_t *)modes, key, m)
		if (json_object_get(m, "disk_per_vm_kib")) {
			fprintf(out, "- %s", key);
			report__density_disk(out, m, ": ");
			fputs("\n", out);
		}
	json_object_foreach((json_t *)modes, key, m)
		report__md_ksm(out, key, m);
	fputs("\n", out);
	result__md_series(out, doc);
	result__md_warnings(out, doc);
}

/* Removes the scratch directory: the snapshot, and the sockets of VMMs
 * that did not end cleanly (a VMM removes its own). */
static void remove_scratch(struct density *d)
{
	char path[PATH_MAX + 16];

	for (unsigned int i = 0; d->tmp_dir[0] && i < d->started; i++) {
		snprintf(path, sizeof(path), "%s/v%u", d->tmp_dir, i);
		unlink(path);
	}
	restore__remove_scratch(d->tmp_dir, d->snap_dir);
}

/* The image as found, once every VM is gone: unchanged, or an error. */
static int rootfs_done(const struct density *d, json_t *doc)
{
	int ret = density__image_unchanged(&d->img);
	json_t *img = density__image_json(&d->img);

	json_object_set_new(img, "snapshot_disk_bytes",
			    d->o.clone ? json_integer(d->snap_disk)
				       : json_null());
	json_object_set_new(img, "unchanged", json_boolean(ret == 0));
	json_object_set_new(doc, "rootfs", img);
	return ret;
}

static int run(struct density *d, json_t *doc)
{
	const char *exe = cli__self_exe();
	int ret = 0;

	if (!exe)
		return err__set(ENOENT, "cannot find the coldstart binary");
	snprintf(d->exe, sizeof(d->exe), "%s", exe);
	/* under /tmp even with $TMPDIR set, unlike restore's and the suite's
	 * (and the sockets' paths must stay short) */
	if (d->o.clone || d->o.rootfs)
		ret = restore__scratch_dir(d->tmp_dir, "/tmp", "density");
	if (ret == 0 && d->o.fresh)
		ret = run_mode(d, doc, false);
	if (ret == 0 && d->o.clone) {
		ret = make_snapshot(d);
		if (ret == 0)
			ret = note_clone_cmdline(d, doc);
		if (ret == 0)
			ret = run_mode(d, doc, true);
	}
	remove_scratch(d);
	if (ret == 0 && d->o.rootfs)
		ret = rootfs_done(d, doc);
	return ret;
}

int density__run(void *opts)
{
	struct density *d = calloc(1, sizeof(*d));
	json_t *doc;
	int ret;

	if (!d)
		return err__set(ENOMEM, "out of memory");
	d->o = *(struct density_opts *)opts;
	if (d->o.rootfs && density__image_open(&d->img, d->o.rootfs) < 0) {
		free(d);
		return cli__error(CLI_FAIL, "bench density: %s", err__last());
	}
	ret = density__check_guest(&d->o);
	if (ret != CLI_OK) {
		free(d);
		return ret;
	}
	doc = result__new("density", density__config_json(&d->o));
	if (doc)
		json_object_set_new(doc, "density", json_object());
	ret = doc ? run(d, doc) : -ENOMEM;
	if (ret == 0)
		ret = result__emit(doc, d->o.c.json, d->o.c.out_dir, report);
	json_decref(doc);
	free(d);
	return ret;
}

/* The descriptor: the options, their defaults and checks are
 * density_opts.c's, the holding child density_hold.c's. */
const struct bench_driver density_driver = {
	.name = "density",
	.summary = "VMs per GiB: held VMs, fresh and snapshot clones, "
		   "RSS/PSS/USS",
	.usage = "Usage: coldstart bench density [OPTIONS]\n"
		 "       coldstart bench density --kernel FILE [--initrd FILE] "
		 "[--cmdline TEXT]\n                               [--rootfs "
		 "IMAGE [--exec CMD]] [OPTIONS]\n"
		 "Starts VMM processes one at a time, each keeping its guest "
		 "alive (fresh: a new\nVM; clone: restored from one snapshot "
		 "with --mem-restore mmap, sharing clean\npages through the "
		 "page cache), until the count or the budget is reached.\n"
		 "After each start: RSS, PSS and USS of every VMM "
		 "(smaps_rollup) and kernel\nmemory (/proc/meminfo deltas). "
		 "Reports the density curve, per-VM overhead\nbeyond guest "
		 "memory and VMs per GiB. A sample is a VM started (the "
		 "uncounted\nones are started and released first). The probe "
		 "guest is held after its\nworkload ran to DONE. With your own "
		 "Linux guest (--kernel), fresh VMs are\nheld paused at its "
		 "boot-complete signal; clones, restored from a snapshot\ntaken "
		 "there, run on until the guest's done signal (byte 124) or "
		 "--settle,\nwhichever comes first, and are held paused there; "
		 "on a PVM host it is refused\n(exit 77) unless --allow-pvm. "
		 "With --rootfs every VM's root disk is that one\nimage under "
		 "an overlay of its own, and VMs (clones: restored from a "
		 "snapshot\ntaken when the agent listened) are held paused "
		 "once their agent answered and\n--exec ran; the overlays' "
		 "allocated size is the disk per VM.\n",
	.common = BENCH_COUNT | BENCH_WARMUP | BENCH_JSON | BENCH_OUT |
		  BENCH_GUEST,
	.opts = density__options,
	.size = sizeof(struct density_opts),
	.common_at = offsetof(struct density_opts, c),
	.init = density__init,
	.check = density__check,
	.run = density__run,
	.hidden_prefix = "--hold-",
	.hidden = density__hold_child,
	/* on a root disk each VM also runs the agent's command (a python3
	 * import): fewer VMs */
	.suite = { .quick = "-n 8 -w 1", .smoke = "-n 2 -w 0",
		   .linux_full = "", .linux_quick = "-n 4 -w 0",
		   .linux_smoke = "-n 2 -w 0", .root_full = "-n 8 -w 1",
		   .root_quick = "-n 3 -w 0", .root_smoke = "-n 2 -w 0" },
};
