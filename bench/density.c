/* The density benchmark: starts VMMs one at a time, each holding its probe
 * guest alive once it stopped (fresh: run to DONE; clone: restored from
 * one snapshot with --mem-restore mmap and run to DONE), until a count or
 * a memory budget is reached. After each start it reads every VMM's
 * smaps_rollup and the kernel's /proc/meminfo: the density curve, per-VM
 * RSS/PSS/USS, the overhead beyond guest memory and VMs per GiB. */
#include "density.h"

#include "args.h"
#include "child.h"
#include "cli.h"
#include "cmd_run.h"
#include "err.h"
#include "mem_restore.h"
#include "memstat.h"
#include "output.h"
#include "result.h"
#include "runner.h"
#include "snapshot.h"

#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_VMS 4096
#define HOLD_TIMEOUT_MS 30000
/* A released VMM only tears its VM down; longer means it hangs. */
#define RELEASE_TIMEOUT_MS 10000
#define KiB_PER_GiB (1024.0 * 1024.0)

static const char *const kernel_keys[] = { "KernelStack", "PageTables",
					   "SecPageTables", "Slab", NULL };

struct density_opts {
	uint64_t count, warmup, budget, init, ws;
	bool fresh, clone, json;
	const char *out_dir;
};

/* One VMM process held alive, and where its guest memory is mapped. */
struct vmm {
	struct child_held h;
	uintptr_t guest; /* host address of the guest memory mapping */
};

struct density {
	struct density_opts o;
	struct vmm vms[MAX_VMS];
	size_t nr;
	char tmp_dir[64], snap_dir[96]; /* snap_dir is tmp_dir/snap */
	char exe[4096];
};

int density__fit(const double *x, const double *y, size_t n, double *slope,
		 double *intercept)
{
	double mx = 0, my = 0, sxx = 0, sxy = 0;

	if (n < 2)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		mx += x[i];
		my += y[i];
	}
	mx /= (double)n;
	my /= (double)n;
	for (size_t i = 0; i < n; i++) {
		sxx += (x[i] - mx) * (x[i] - mx);
		sxy += (x[i] - mx) * (y[i] - my);
	}
	if (sxx == 0)
		return -EINVAL;
	*slope = sxy / sxx;
	*intercept = my - *slope * mx;
	return 0;
}

double density__vms_per_gib(double kib_per_vm)
{
	return kib_per_vm > 0 ? KiB_PER_GiB / kib_per_vm : 0;
}

static void usage(FILE *out)
{
	fputs("Usage: coldstart bench density [OPTIONS]\n"
	      "Starts VMM processes one at a time, each keeping its probe "
	      "guest alive after\nthe workload (fresh: `run` to DONE; clone: "
	      "restored from one snapshot with\n--mem-restore mmap, sharing "
	      "clean pages through the page cache), until the\ncount or the "
	      "budget is reached. After each start: RSS, PSS and USS of every\n"
	      "VMM (smaps_rollup) and kernel memory (/proc/meminfo deltas). "
	      "Reports the\ndensity curve, per-VM overhead beyond guest memory "
	      "and VMs per GiB.\n\n"
	      "  -n, --count N      VMs to start (default 16)\n"
	      "  --budget SIZE      stop earlier once the VMs' PSS plus kernel "
	      "memory reach SIZE\n"
	      "  -w, --warmup N     VMs started and released first (default 2)\n"
	      "  --init SIZE        guest memory touched before READY (default "
	      "4M)\n"
	      "  --ws SIZE          working set read after READY (default 4M)\n"
	      "  --mode MODE        fresh, clone or both (default both)\n"
	      "  --json             the result document on stdout\n"
	      "  --out DIR          also write DIR/density.json and "
	      "DIR/density.md\n"
	      "  -h, --help         this help\n", out);
}

/* 0, 1 for --help, or -EINVAL. */
static int parse(int argc, char **argv, struct density_opts *o)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "budget", required_argument, NULL, 'b' },
		{ "init", required_argument, NULL, 'i' },
		{ "ws", required_argument, NULL, 's' },
		{ "mode", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },
		{ "out", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, ret = 0;

	*o = (struct density_opts){ .count = 16, .warmup = 2,
				    .init = 4ull << 20, .ws = 4ull << 20,
				    .fresh = true, .clone = true };
	optind = 0;
	opterr = 0;
	while (ret == 0 && (c = getopt_long(argc, argv, "n:w:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n': ret = args__u64("--count", optarg, 1, MAX_VMS, &o->count); break;
		case 'w': ret = args__u64("--warmup", optarg, 0, 1000, &o->warmup); break;
		case 'b': ret = args__size("--budget", optarg, &o->budget); break;
		case 'i': ret = args__size("--init", optarg, &o->init); break;
		case 's': ret = args__size("--ws", optarg, &o->ws); break;
		case 'm':
			ret = args__both("--mode", optarg, "fresh", "clone",
					 &o->fresh, &o->clone);
			break;
		case 'j': o->json = true; break;
		case 'o': o->out_dir = optarg; break;
		case 'h': return 1;
		default:
			return args__bad_option(argv);
		}
	}
	if (ret == 0)
		ret = args__no_operands(argc, argv);
	if (ret == 0 && (o->init % 4096 || o->ws % 4096))
		return err__set(EINVAL, "--init and --ws must be multiples of "
				"4 KiB");
	return ret;
}

/* ---- the held child (`bench density --hold-fresh|--hold-clone`) ---- */

/* Announces the held VM with the address of its guest memory, then
 * waits for stdin to close. */
static void hold(struct vm *vm)
{
	printf("held %" PRIxPTR "\n", (uintptr_t)vm->mem.host);
	fflush(stdout);
	child__await_release(STDIN_FILENO);
}

static int hold_fresh(struct kvm_host *kvm, int argc, char **argv)
{
	struct run_cli o;
	struct run_result res = { 0 };
	int ret = cmd_run__parse(argc, argv, &o);

	if (ret < 0)
		return ret;
	o.cfg.before_teardown = hold;
	ret = runner__probe(kvm, &o.cfg, &res);
	if (ret == 0 && !runner__succeeded(&o.cfg, &res))
		ret = err__set(EIO, "the guest failed: %s", res.reason);
	return ret;
}

static int hold_clone(struct kvm_host *kvm, const char *dir)
{
	struct timeline tl = { 0 };
	struct snapshot snap;
	struct probe probe;
	struct vm *vm = NULL;
	int ret = snapshot__open(&snap, dir);

	if (ret < 0)
		return ret;
	ret = snapshot__restore(kvm, &snap, mem_restore__strategy("mmap"), &tl,
				&vm, &probe);
	if (ret == 0)
		ret = vm__start(vm);
	if (ret == 0 && vm__wait(vm, 30ull * 1000000000ull) != VM_COMPLETED)
		ret = err__set(EIO, "the clone failed: %s", vm->reason);
	if (ret == 0)
		hold(vm);
	vm__destroy(vm);
	snapshot__close(&snap);
	return ret;
}

/* argv: "density", "--hold-fresh" RUN OPTIONS or "--hold-clone" DIR. */
static int hold_child(int argc, char **argv)
{
	struct kvm_host kvm;
	int ret = kvm__open(&kvm, NULL);

	if (ret == 0) {
		ret = !strcmp(argv[1], "--hold-clone") && argc == 3
			? hold_clone(&kvm, argv[2])
			: hold_fresh(&kvm, argc - 1, argv + 1);
		kvm__close(&kvm);
	}
	if (ret < 0)
		return cli__error(cli__exit_for(ret), "bench density: %s",
				  err__last());
	return CLI_OK;
}

/* ---- the driver ---- */

static int start_vm(struct density *d, bool clone, struct vmm *v)
{
	char init[32], ws[32], *argv[12];
	char line[128] = "";
	int n = 0, ret;

	snprintf(init, sizeof(init), "--init=%" PRIu64, d->o.init);
	snprintf(ws, sizeof(ws), "--ws=%" PRIu64, d->o.ws);
	argv[n++] = d->exe;
	argv[n++] = "bench";
	argv[n++] = "density";
	if (clone) {
		argv[n++] = "--hold-clone";
		argv[n++] = d->snap_dir;
	} else {
		argv[n++] = "--hold-fresh";
		argv[n++] = init;
		argv[n++] = ws;
	}
	argv[n] = NULL;
	ret = child__hold(argv, HOLD_TIMEOUT_MS, &v->h, line, sizeof(line));
	if (ret == 0 && sscanf(line, "held %" SCNxPTR, &v->guest) != 1)
		ret = err__set(EIO, "unexpected announcement '%s'", line);
	return ret;
}

/* Adds an smaps "Key: N kB" line of interest to rss/pss/private. */
static void add_line(const char *text, uint64_t *rss, uint64_t *pss,
		     uint64_t *priv)
{
	uint64_t v;

	if (sscanf(text, "Rss: %" SCNu64, &v) == 1)
		*rss += v;
	else if (sscanf(text, "Pss: %" SCNu64, &v) == 1)
		*pss += v;
	else if (sscanf(text, "Private_Clean: %" SCNu64, &v) == 1 ||
		 sscanf(text, "Private_Dirty: %" SCNu64, &v) == 1)
		*priv += v;
}

/* A held VMM's totals (smaps_rollup) and its guest mapping (smaps). */
static int vmm_memory(const struct vmm *v, struct memstat *m)
{
	uint64_t gpss = 0;
	char path[64], text[512];
	bool inside = false;
	FILE *f;

	memset(m, 0, sizeof(*m));
	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)v->h.pid);
	f = fopen(path, "re");
	if (!f)
		return err__sys(errno, "opening %s", path);
	while (fgets(text, sizeof(text), f))
		add_line(text, &m->rss_kib, &m->pss_kib, &m->uss_kib);
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)v->h.pid);
	f = fopen(path, "re");
	if (!f)
		return err__sys(errno, "opening %s", path);
	while (fgets(text, sizeof(text), f)) {
		uintptr_t start, end;

		if (sscanf(text, "%" SCNxPTR "-%" SCNxPTR " ", &start, &end) == 2)
			inside = start == v->guest;
		else if (inside)
			add_line(text, &m->guest_rss_kib, &gpss,
				 &m->guest_private_kib);
	}
	fclose(f);
	return 0;
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

struct curve {
	double vms[MAX_VMS], pss[MAX_VMS], cost[MAX_VMS];
	size_t n;
};

/* One point of the curve with d->nr VMs alive. */
static int point(struct density *d, const double *base, json_t *arr,
		 struct curve *c, double *per_vm)
{
	double sum[4] = { 0 }, now[8], kernel = 0;
	json_t *kobj = json_object();
	struct memstat m;

	for (size_t i = 0; i < d->nr; i++) {
		int ret = vmm_memory(&d->vms[i], &m);

		if (ret < 0) {
			json_decref(kobj);
			return ret;
		}
		sum[0] += (double)m.rss_kib;
		sum[1] += (double)m.pss_kib;
		sum[2] += (double)m.uss_kib;
		sum[3] += (double)memstat__overhead_kib(&m);
		if (per_vm) {
			per_vm[0 * d->nr + i] = (double)m.rss_kib;
			per_vm[1 * d->nr + i] = (double)m.pss_kib;
			per_vm[2 * d->nr + i] = (double)m.uss_kib;
			per_vm[3 * d->nr + i] =
				(double)memstat__overhead_kib(&m);
		}
	}
	meminfo(now);
	for (int k = 0; kernel_keys[k]; k++)
		if (!isnan(now[k]) && !isnan(base[k])) {
			json_object_set_new(kobj, kernel_keys[k],
					    json_real(now[k] - base[k]));
			kernel += now[k] - base[k];
		}
	c->vms[c->n] = (double)d->nr;
	c->pss[c->n] = sum[1];
	c->cost[c->n++] = sum[1] + kernel;
	json_array_append_new(arr, json_pack(
		"{s:I, s:f, s:f, s:f, s:f, s:f, s:o}", "vms", (json_int_t)d->nr,
		"rss_kib", sum[0], "pss_kib", sum[1], "uss_kib", sum[2],
		"overhead_kib", sum[3], "kernel_kib", kernel,
		"kernel_delta_kib", kobj));
	return 0;
}

static json_t *ksm_json(void)
{
	static const char *const keys[] = { "run", "pages_shared",
					    "pages_sharing", "pages_unshared",
					    "full_scans", NULL };
	json_t *obj = json_object();

	for (int i = 0; keys[i]; i++) {
		char path[128];
		long long v;
		FILE *f;

		snprintf(path, sizeof(path), "/sys/kernel/mm/ksm/%s", keys[i]);
		f = fopen(path, "re");
		if (f && fscanf(f, "%lld", &v) == 1)
			json_object_set_new(obj, keys[i], json_integer(v));
		else
			json_object_set_new(obj, keys[i], json_null());
		if (f)
			fclose(f);
	}
	return obj;
}

static int add_mode_series(json_t *doc, const char *mode,
			   const double *per_vm, size_t n)
{
	static const char *const what[] = { "rss", "pss", "uss", "overhead" };
	char name[64];

	for (int k = 0; k < 4; k++) {
		snprintf(name, sizeof(name), "%s.%s_per_vm", mode, what[k]);
		if (!result__add_series(doc, name, "kib", RESULT_LOWER,
					json_pack("{s:s, s:s}", "mode", mode,
						  "metric", what[k]),
					per_vm + (size_t)k * n, n))
			return -ENOMEM;
	}
	return 0;
}

/* Starts VMs of one mode until the count or the budget; adds its curve,
 * per-VM series and VMs per GiB to doc. */
static int run_mode(struct density *d, json_t *doc, bool clone)
{
	const char *mode = clone ? "clone" : "fresh";
	double base[8], slope = 0, icpt = 0, *per_vm = NULL;
	struct curve *c = calloc(1, sizeof(*c));
	json_t *arr = json_array(), *res;
	int released, ret = c ? 0 : err__set(ENOMEM, "allocating the curve");

	for (uint64_t i = 0; ret == 0 && i < d->o.warmup; i++) {
		ret = start_vm(d, clone, &d->vms[0]);
		if (ret == 0)
			ret = release(&d->vms[0]);
	}
	meminfo(base);
	while (ret == 0 && d->nr < d->o.count) {
		ret = start_vm(d, clone, &d->vms[d->nr]);
		if (ret < 0)
			break;
		d->nr++;
		output__progress(mode, (unsigned long)d->nr,
				 (unsigned long)d->o.count);
		bool last = d->nr == d->o.count;
		if (!last && d->o.budget && c->n &&
		    c->cost[c->n - 1] * 1024 >= (double)d->o.budget)
			last = true;
		if (last)
			per_vm = calloc(4 * d->nr, sizeof(double));
		ret = point(d, base, arr, c, per_vm);
		if (last)
			break;
	}
	output__progress_done();
	if (ret == 0 && per_vm)
		ret = add_mode_series(doc, mode, per_vm, d->nr);
	if (ret == 0 && c->n >= 2)
		density__fit(c->vms, c->cost, c->n, &slope, &icpt);
	else if (ret == 0 && c->n == 1)
		slope = c->cost[0];
	res = json_pack("{s:I, s:f, s:f, s:f, s:o}", "vms", (json_int_t)d->nr,
			"marginal_kib_per_vm", slope, "fixed_kib", icpt,
			"vms_per_gib", density__vms_per_gib(slope), "curve", arr);
	json_object_set_new(json_object_get(doc, "density"), mode, res);
	released = release_all(d);
	if (ret == 0)
		ret = released;
	free(per_vm);
	free(c);
	return ret;
}

static int make_snapshot(struct density *d)
{
	char init[32], ws[32], *argv[10];
	char buf[32];
	int status, ret;

	snprintf(d->tmp_dir, sizeof(d->tmp_dir),
		 "/tmp/coldstart-density-XXXXXX");
	if (!mkdtemp(d->tmp_dir))
		return err__sys(errno, "creating a snapshot directory");
	snprintf(d->snap_dir, sizeof(d->snap_dir), "%s/snap", d->tmp_dir);
	snprintf(init, sizeof(init), "--init=%" PRIu64, d->o.init);
	snprintf(ws, sizeof(ws), "--ws=%" PRIu64, d->o.ws);
	argv[0] = d->exe;
	argv[1] = "snapshot";
	argv[2] = "create";
	argv[3] = d->snap_dir;
	argv[4] = "--force";
	argv[5] = init;
	argv[6] = ws;
	argv[7] = NULL;
	ret = child__run(argv, false, &status, NULL);
	if (ret == 0 && (!WIFEXITED(status) || WEXITSTATUS(status)))
		ret = err__set(EIO, "'coldstart snapshot create' %s",
			       child__status_text(status, buf, sizeof(buf)));
	return ret;
}

static void remove_snapshot(struct density *d)
{
	char path[160];

	if (!d->tmp_dir[0])
		return;
	snprintf(path, sizeof(path), "%s/state", d->snap_dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/memory", d->snap_dir);
	unlink(path);
	rmdir(d->snap_dir);
	rmdir(d->tmp_dir);
}

static json_t *config_json(const struct density_opts *o)
{
	return json_pack("{s:s, s:I, s:I, s:s, s:s, s:I, s:I, s:I}", "guest",
			 "probe", "init_bytes", (json_int_t)o->init,
			 "ws_bytes", (json_int_t)o->ws, "clone_mem_restore",
			 "mmap", "mode", o->fresh && o->clone ? "both" :
			 o->fresh ? "fresh" : "clone", "budget_bytes",
			 (json_int_t)o->budget, "count", (json_int_t)o->count,
			 "warmup", (json_int_t)o->warmup);
}

static void report(FILE *out, const json_t *doc)
{
	const json_t *modes = json_object_get(doc, "density"), *m;
	const char *key;

	fputs("# coldstart density benchmark\n\nProbe-guest VMMs held alive "
	      "after their workload; marginal cost = slope of (sum of PSS + "
	      "kernel memory delta) over the number of VMs. Kernel memory "
	      "(KernelStack, PageTables, SecPageTables, Slab) is a system-wide "
	      "/proc/meminfo delta, not in any RSS.\n\n| mode | VMs | marginal "
	      "KiB/VM | VMs per GiB | PSS KiB/VM | overhead KiB/VM (USS - "
	      "guest) | kernel KiB/VM |\n|---|--:|--:|--:|--:|--:|--:|\n", out);
	json_object_foreach((json_t *)modes, key, m) {
		const json_t *curve = json_object_get(m, "curve");
		const json_t *last = json_array_get(curve, json_array_size(curve) - 1);
		double n = json_number_value(json_object_get(last, "vms"));

		if (n <= 0)
			continue;
		fprintf(out, "| %s | %.0f | %.0f | %.1f | %.0f | %.0f | %.0f |\n",
			key, n,
			json_number_value(json_object_get(m, "marginal_kib_per_vm")),
			json_number_value(json_object_get(m, "vms_per_gib")),
			json_number_value(json_object_get(last, "pss_kib")) / n,
			json_number_value(json_object_get(last, "overhead_kib")) / n,
			json_number_value(json_object_get(last, "kernel_kib")) / n);
	}
	fputs("\n", out);
	result__md_series(out, doc);
	result__md_warnings(out, doc);
}

static int run(struct density *d, json_t *doc)
{
	const char *exe = cli__self_exe();
	int ret = 0;

	if (!exe)
		return err__set(ENOENT, "cannot find the coldstart binary");
	snprintf(d->exe, sizeof(d->exe), "%s", exe);
	if (d->o.fresh)
		ret = run_mode(d, doc, false);
	if (ret == 0 && d->o.clone) {
		ret = make_snapshot(d);
		if (ret == 0)
			ret = run_mode(d, doc, true);
	}
	remove_snapshot(d);
	json_object_set_new(doc, "ksm", ksm_json());
	return ret;
}

int cmd_bench_density(int argc, char **argv)
{
	struct density *d;
	json_t *doc;
	int ret;

	if (argc >= 2 && !strncmp(argv[1], "--hold-", 7))
		return hold_child(argc, argv);
	d = calloc(1, sizeof(*d));
	if (!d)
		return cli__error(CLI_FAIL, "bench density: out of memory");
	ret = parse(argc, argv, &d->o);
	if (ret != 0) {
		free(d);
		return cli__parsed(ret, "bench density", usage);
	}
	doc = result__new("density", config_json(&d->o));
	if (doc)
		json_object_set_new(doc, "density", json_object());
	ret = doc ? run(d, doc) : -ENOMEM;
	if (ret == 0)
		ret = result__emit(doc, d->o.json, d->o.out_dir, report);
	json_decref(doc);
	free(d);
	if (ret < 0)
		return cli__error(cli__exit_for(ret), "bench density: %s",
				  err__last());
	return CLI_OK;
}
