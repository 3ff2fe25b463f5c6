/* The lifecycle benchmark: four interleaved series of create -> READY ->
 * destroy times (coldstart and the floor, in-process and one process per
 * VM), their summaries and ratios, and the VMM's memory overhead. */
#include "lifecycle.h"

#include "args.h"
#include "child.h"
#include "cli.h"
#include "err.h"
#include "floor.h"
#include "output.h"
#include "probes.h"
#include "result.h"
#include "result_new.h"
#include "run_probes.h"
#include "runner.h"
#include "stats.h"

#include <inttypes.h>
#include <jansson.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum series_id { INPROC_COLDSTART, INPROC_FLOOR, PROC_COLDSTART, PROC_FLOOR,
		 NR_SERIES };

static const struct {
	const char *name, *mode, *impl;
} series_info[NR_SERIES] = {
	[INPROC_COLDSTART] = { "inproc.coldstart", "in-process", "coldstart" },
	[INPROC_FLOOR] = { "inproc.floor", "in-process", "bare ioctls" },
	[PROC_COLDSTART] = { "process.coldstart", "process-per-VM",
			     "coldstart" },
	[PROC_FLOOR] = { "process.floor", "process-per-VM", "bare ioctls" },
};

struct series {
	double *ns; /* counted samples */
	size_t n;
	struct summary sum;
};

struct lifecycle {
	struct lifecycle_opts o;
	struct series s[NR_SERIES];
	/* process-per-VM coldstart with --seccomp off, run in the same
	 * rounds as PROC_COLDSTART: the filters' cost, paired */
	struct series unfiltered;
	double added_ns; /* median of the pairs' differences */
	json_t *memory; /* from one `coldstart run --json` child, or NULL */
	struct run_probes rp; /* --probes: over the in-process series */
	uint64_t inproc_start; /* origin of the probes' timeline */
};

static struct run_config minimal_guest(void)
{
	return (struct run_config){
		.mem_size = 2ull << 20,
		.nr_vcpus = 1,
		.probe = { .stop_at_ready = true, .seed = 1 },
		.timeout_ns = 10ull * 1000000000ull,
	};
}

static int inproc_coldstart(struct kvm_host *kvm)
{
	struct run_config cfg = minimal_guest();
	struct run_result res = { 0 };
	int ret = runner__probe(kvm, &cfg, &res);

	if (ret == 0 && !runner__succeeded(&cfg, &res))
		ret = err__set(EIO, "probe guest did not reach READY: %s",
			       res.reason);
	return ret;
}

/* Runs argv as a child and waits; 0 when it exited 0. */
static int spawn_wait(char *const argv[])
{
	pid_t pid;
	int status, ret = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);

	if (ret)
		return err__sys(ret, "spawning %s", argv[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return err__sys(errno, "waiting for %s", argv[0]);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return err__set(EIO, "'%s %s' failed (status 0x%x)", argv[0],
				argv[1], status);
	return 0;
}

struct child_args {
	char *coldstart[8];
	char *floor[8];
	char *unfiltered[8]; /* coldstart with --seccomp=off */
	char seccomp[32];
};

static void child_args(struct child_args *c, const char *exe,
		       const char *kvm_path, enum seccomp_mode mode)
{
	static char run[] = "run", stop[] = "--stop-at=ready", quiet[] = "-q",
		    bench[] = "bench", floor[] = "floor", one[] = "-n1",
		    kvm_opt[] = "--kvm", off[] = "--seccomp=off";
	int i = 0, j = 0;

	snprintf(c->seccomp, sizeof(c->seccomp), "--seccomp=%s",
		 seccomp__mode_name(mode));
	c->coldstart[i++] = (char *)exe;
	c->coldstart[i++] = run;
	c->coldstart[i++] = stop;
	c->coldstart[i++] = quiet;
	c->coldstart[i++] = c->seccomp;
	c->floor[j++] = (char *)exe;
	c->floor[j++] = bench;
	c->floor[j++] = floor;
	c->floor[j++] = one;
	if (kvm_path) {
		c->coldstart[i++] = kvm_opt;
		c->coldstart[i++] = (char *)kvm_path;
		c->floor[j++] = kvm_opt;
		c->floor[j++] = (char *)kvm_path;
	}
	c->coldstart[i] = NULL;
	c->floor[j] = NULL;
	memcpy(c->unfiltered, c->coldstart, sizeof(c->unfiltered));
	c->unfiltered[4] = off;
}

struct rig {
	struct kvm_host kvm;
	struct floor floor;
	struct child_args args;
};

static int one_sample(struct rig *rig, enum series_id id)
{
	switch (id) {
	case INPROC_COLDSTART:
		return inproc_coldstart(&rig->kvm);
	case INPROC_FLOOR:
		return floor__cycle(&rig->floor);
	case PROC_COLDSTART:
		return spawn_wait(rig->args.coldstart);
	default:
		return spawn_wait(rig->args.floor);
	}
}

/* Interleaves the two series of a mode, alternating which goes first so
 * neither always inherits the other's cache state. */
static int run_pair(struct lifecycle *lc, struct rig *rig, enum series_id a,
		    const char *what)
{
	uint64_t total = lc->o.c.warmup + lc->o.c.count;

	for (uint64_t i = 0; i < total; i++) {
		for (int k = 0; k < 2; k++) {
			enum series_id id = a + (unsigned int)((k + i) % 2);
			uint64_t t0 = timeline__now();
			int ret = one_sample(rig, id);
			uint64_t dt = timeline__now() - t0;

			if (ret < 0)
				return ret;
			if (i >= lc->o.c.warmup)
				lc->s[id].ns[lc->s[id].n++] = (double)dt;
		}
		if (a == PROC_COLDSTART && lc->unfiltered.ns) {
			uint64_t t0 = timeline__now();
			int ret = spawn_wait(rig->args.unfiltered);

			if (ret < 0)
				return ret;
			if (i >= lc->o.c.warmup)
				lc->unfiltered.ns[lc->unfiltered.n++] =
					(double)(timeline__now() - t0);
		}
		if (i % 16 == 0 || i + 1 == total)
			output__progress(what, (unsigned long)(i + 1),
					 (unsigned long)total);
	}
	output__progress_done();
	return 0;
}

/* One `coldstart run --json` child: its memory figures at DONE. */
static json_t *measure_memory(const char *exe, const char *kvm_path)
{
	char *argv[] = { (char *)exe, "run", "--json", kvm_path ? "--kvm" : NULL,
			 (char *)kvm_path, NULL };
	json_t *doc = NULL, *mem = NULL;
	int status;

	if (child__capture(argv, &doc, &status) == 0 && doc &&
	    WIFEXITED(status) && WEXITSTATUS(status) == 0)
		mem = json_incref(json_object_get(doc, "memory"));
	json_decref(doc);
	return mem;
}

static int alloc_series(struct lifecycle *lc)
{
	for (int i = 0; i < NR_SERIES; i++) {
		lc->s[i].ns = calloc(lc->o.c.count, sizeof(double));
		if (!lc->s[i].ns)
			return err__set(ENOMEM, "allocating samples");
	}
	if (lc->o.process && lc->o.seccomp != SECCOMP_OFF) {
		lc->unfiltered.ns = calloc(lc->o.c.count, sizeof(double));
		if (!lc->unfiltered.ns)
			return err__set(ENOMEM, "allocating samples");
	}
	return 0;
}

/* The filters' cost per VM: the median of (filtered - unfiltered) over
 * the rounds that ran both. */
static int filter_cost(struct lifecycle *lc)
{
	const struct series *f = &lc->s[PROC_COLDSTART];
	size_t n = lc->unfiltered.n < f->n ? lc->unfiltered.n : f->n;
	double *d;
	int ret;

	if (!n)
		return 0;
	d = calloc(n, sizeof(*d));
	if (!d)
		return err__set(ENOMEM, "allocating differences");
	for (size_t i = 0; i < n; i++)
		d[i] = f->ns[i] - lc->unfiltered.ns[i];
	ret = stats__median(d, n, &lc->added_ns);
	free(d);
	if (ret == 0)
		ret = stats__summarize(lc->unfiltered.ns, lc->unfiltered.n,
				       &lc->unfiltered.sum);
	return ret;
}

static void free_series(struct lifecycle *lc)
{
	for (int i = 0; i < NR_SERIES; i++)
		free(lc->s[i].ns);
	free(lc->unfiltered.ns);
	json_decref(lc->memory);
	run_probes__free(&lc->rp);
}

static int open_rig(struct rig *rig, const struct lifecycle_opts *o)
{
	const char *exe = cli__self_exe();
	int ret;

	if (!exe)
		return err__set(ENOENT, "cannot find the coldstart binary "
				"(/proc/self/exe)");
	child_args(&rig->args, exe, o->c.kvm_path, o->seccomp);
	ret = kvm__open(&rig->kvm, o->c.kvm_path);
	if (ret < 0)
		return ret;
	ret = floor__open(&rig->floor, o->c.kvm_path);
	if (ret < 0)
		kvm__close(&rig->kvm);
	return ret;
}

static int measure(struct lifecycle *lc)
{
	struct rig rig;
	int ret = open_rig(&rig, &lc->o);

	if (ret < 0)
		return ret;
	if (lc->o.in_process && lc->o.probes)
		ret = run_probes__attach(lc->o.probes, &lc->rp);
	lc->inproc_start = timeline__now();
	if (ret == 0 && lc->o.in_process)
		ret = run_pair(lc, &rig, INPROC_COLDSTART, "in-process");
	run_probes__finish(&lc->rp);
	if (ret == 0 && lc->o.process)
		ret = run_pair(lc, &rig, PROC_COLDSTART, "process-per-VM");
	floor__close(&rig.floor);
	kvm__close(&rig.kvm);
	if (ret == 0 && lc->o.process)
		lc->memory = measure_memory(rig.args.coldstart[0],
					    lc->o.c.kvm_path);
	for (int i = 0; ret == 0 && i < NR_SERIES; i++)
		if (lc->s[i].n)
			stats__summarize(lc->s[i].ns, lc->s[i].n, &lc->s[i].sum);
	if (ret == 0)
		ret = filter_cost(lc);
	return ret;
}

static double rate(const struct series *s)
{
	return s->sum.mean > 0 ? 1e9 / s->sum.mean : 0;
}

/* The table, as Markdown rows or plain columns. */
static void print_table(FILE *out, const struct lifecycle *lc, bool md)
{
	if (md)
		fputs("| mode | implementation | median ms | p90 ms | p99 ms | "
		      "min ms | max ms | VMs/s |\n|---|---|--:|--:|--:|--:|--:|--:|\n",
		      out);
	else
		fprintf(out, "%-15s %-12s %8s %8s %8s %8s %8s %8s\n", "mode",
			"impl", "median", "p90", "p99", "min", "max", "VMs/s");
	for (int i = 0; i < NR_SERIES; i++) {
		const struct summary *s = &lc->s[i].sum;

		if (!lc->s[i].n)
			continue;
		if (md)
			fprintf(out, "| %s | %s | %.3f | %.3f | %.3f | %.3f | "
				"%.3f | %.0f |\n", series_info[i].mode,
				series_info[i].impl, s->p50 / 1e6, s->p90 / 1e6,
				s->p99 / 1e6, s->min / 1e6, s->max / 1e6,
				rate(&lc->s[i]));
		else
			fprintf(out, "%-15s %-12s %8.3f %8.3f %8.3f %8.3f "
				"%8.3f %8.0f\n", series_info[i].mode,
				series_info[i].impl, s->p50 / 1e6, s->p90 / 1e6,
				s->p99 / 1e6, s->min / 1e6, s->max / 1e6,
				rate(&lc->s[i]));
	}
}

static void print_filter_cost(FILE *out, const struct lifecycle *lc)
{
	uint64_t n[SECCOMP_NR_ROLES], ns, loads = 0;

	seccomp__stats(n, &ns);
	for (int r = 0; r < SECCOMP_NR_ROLES; r++)
		loads += n[r];
	fprintf(out, "seccomp: %s", seccomp__mode_name(lc->o.seccomp));
	if (loads)
		fprintf(out, "; in-process, loading a filter took %.1f us "
			"(mean of %" PRIu64 ")", (double)ns / (double)loads /
			1e3, loads);
	if (lc->unfiltered.n)
		fprintf(out, "; process-per-VM, the filters added %.3f ms "
			"per VM (median of %zu pairs; %+.2f %% of the "
			"unfiltered median %.3f ms)", lc->added_ns / 1e6,
			lc->unfiltered.n, 100.0 * lc->added_ns /
			lc->unfiltered.sum.p50, lc->unfiltered.sum.p50 / 1e6);
	fputc('\n', out);
}

static void print_ratios(FILE *out, const struct lifecycle *lc)
{
	const struct series *s = lc->s;

	if (s[INPROC_COLDSTART].n)
		fprintf(out, "in-process: coldstart sustains %.1f %% of the "
			"floor's rate (%.0f vs %.0f VMs/s); median %.3f vs "
			"%.3f ms\n",
			100.0 * rate(&s[INPROC_COLDSTART]) / rate(&s[INPROC_FLOOR]),
			rate(&s[INPROC_COLDSTART]), rate(&s[INPROC_FLOOR]),
			s[INPROC_COLDSTART].sum.p50 / 1e6,
			s[INPROC_FLOOR].sum.p50 / 1e6);
	if (s[PROC_COLDSTART].n)
		fprintf(out, "process-per-VM: coldstart median %.3f ms, floor "
			"%.3f ms (%.2fx)\n", s[PROC_COLDSTART].sum.p50 / 1e6,
			s[PROC_FLOOR].sum.p50 / 1e6,
			s[PROC_COLDSTART].sum.p50 / s[PROC_FLOOR].sum.p50);
	print_filter_cost(out, lc);
	if (lc->memory && json_is_object(lc->memory))
		fprintf(out, "VMM memory (one process, minimal guest at DONE): "
			"%" JSON_INTEGER_FORMAT " KiB USS beyond guest memory; "
			"RSS %" JSON_INTEGER_FORMAT " KiB, PSS %"
			JSON_INTEGER_FORMAT " KiB, USS %" JSON_INTEGER_FORMAT
			" KiB\n",
			json_integer_value(json_object_get(lc->memory, "vmm_overhead_kib")),
			json_integer_value(json_object_get(lc->memory, "rss_kib")),
			json_integer_value(json_object_get(lc->memory, "pss_kib")),
			json_integer_value(json_object_get(lc->memory, "uss_kib")));
}

static struct probe_report_opts probe_opts(const struct lifecycle *lc)
{
	return (struct probe_report_opts){ .origin_ns = lc->inproc_start };
}

/* The probes' breakdown of the in-process series, when asked for. */
static void print_probes(FILE *out, const struct lifecycle *lc, bool md)
{
	struct probe_report_opts o = probe_opts(lc);

	if (!lc->rp.report)
		return;
	fprintf(out, md ? "\n## Where the time goes (eBPF, in-process series, "
			  "both implementations)\n\n```\n"
			: "\neBPF breakdown of the in-process series:\n");
	probe_report__print(out, lc->rp.report, &o);
	if (md)
		fputs("```\n", out);
}

/* Each series through the shared result helper, plus lifecycle's own
 * mode/impl labels and the sustained rate. */
static int add_series(json_t *doc, const struct lifecycle *lc)
{
	for (int i = 0; i < NR_SERIES; i++) {
		const struct series *s = &lc->s[i];
		json_t *js;

		if (!s->n)
			continue;
		js = result__add_series(doc, series_info[i].name, "ns",
					RESULT_LOWER, json_pack("{s:s, s:s}",
					"mode", series_info[i].mode, "impl",
					series_info[i].impl), s->ns, s->n);
		if (!js)
			return -ENOMEM;
		json_object_set_new(js, "mode", json_string(series_info[i].mode));
		json_object_set_new(js, "impl", json_string(series_info[i].impl));
		json_object_set_new(js, "vms_per_s", json_real(rate(s)));
	}
	return 0;
}

/* The filters' paired cost beside result__new's "seccomp" object. */
static void add_filter_cost(json_t *doc, const struct lifecycle *lc)
{
	json_t *sc = json_object_get(doc, "seccomp"), *raw;

	if (!sc || !lc->unfiltered.n)
		return;
	raw = json_array();
	for (size_t i = 0; i < lc->unfiltered.n; i++)
		json_array_append_new(raw, json_real(lc->unfiltered.ns[i]));
	json_object_set_new(sc, "process_unfiltered_samples_ns", raw);
	json_object_set_new(sc, "process_added_ns_median",
			    json_real(lc->added_ns));
	json_object_set_new(sc, "process_added_pct",
			    json_real(100.0 * lc->added_ns /
				      lc->unfiltered.sum.p50));
}

static json_t *result_json(const struct lifecycle *lc)
{
	struct probe_report_opts po = probe_opts(lc);
	json_t *probes = lc->rp.report ? probe_report__json(lc->rp.report, &po)
				       : NULL;
	json_t *doc = result__new("lifecycle", json_pack(
		"{s:s, s:I, s:i, s:I, s:I}", "guest", "probe", "mem_bytes",
		(json_int_t)(2 << 20), "vcpus", 1, "count",
		(json_int_t)lc->o.c.count, "warmup", (json_int_t)lc->o.c.warmup));

	if (!doc || add_series(doc, lc) < 0) {
		json_decref(doc);
		json_decref(probes);
		return NULL;
	}
	json_object_set(doc, "memory", lc->memory ? lc->memory : json_null());
	add_filter_cost(doc, lc);
	json_object_set_new(doc, "probes", probes ? probes : json_null());
	return doc;
}

static void print_markdown(FILE *f, const struct lifecycle *lc,
			   const json_t *doc)
{
	fprintf(f, "# coldstart lifecycle benchmark\n\nCreate -> READY -> "
		"destroy of the probe guest (1 vCPU, 2 MiB); %" PRIu64
		" counted cycles per series after %" PRIu64 " warmup; the floor "
		"is the same cycle with bare KVM ioctls, interleaved.\n\n",
		lc->o.c.count, lc->o.c.warmup);
	print_table(f, lc, true);
	fputc('\n', f);
	print_ratios(f, lc);
	print_probes(f, lc, true);
	result__md_warnings(f, doc);
	fputs("\nRaw samples and host metadata: lifecycle.json.\n", f);
}

/* dir/lifecycle.json and dir/lifecycle.md. */
static int save(const struct lifecycle *lc, const json_t *doc)
{
	struct output_text md;
	int ret = output__text_open(&md);

	if (ret < 0)
		return ret;
	print_markdown(md.f, lc, doc);
	ret = output__text_close(&md, "lifecycle.md");
	if (ret == 0)
		ret = result__save(doc, lc->o.c.json, lc->o.c.out_dir, md.text);
	free(md.text);
	return ret;
}

static int emit(const struct lifecycle *lc)
{
	json_t *doc = result_json(lc);
	int ret = 0;

	if (!doc)
		return err__set(ENOMEM, "building the result");
	if (lc->o.c.json) {
		result__print_json(stdout, doc);
	} else {
		print_table(stdout, lc, false);
		print_ratios(stdout, lc);
		print_probes(stdout, lc, false);
	}
	if (lc->o.c.out_dir)
		ret = save(lc, doc);
	json_decref(doc);
	return ret;
}

static int run(void *opts)
{
	struct lifecycle *lc = opts;
	int ret = alloc_series(lc);

	/* the in-process series' VMs load their threads' filters; this
	 * driver's own thread stays unfiltered */
	if (ret == 0 && seccomp__configure(lc->o.seccomp, false) < 0)
		ret = -EINVAL;
	if (ret == 0)
		ret = measure(lc);
	if (ret == 0)
		ret = emit(lc) < 0 ? -EIO : 0; /* a failure, whatever errno */
	free_series(lc);
	return ret;
}

/* ---- options ---- */

static void init(void *opts)
{
	struct lifecycle *lc = opts;

	lc->o = (struct lifecycle_opts){
		.c = { .count = 200, .warmup = 20, .count_max = 1000000,
		       .warmup_max = 1000000 },
		.in_process = true, .process = true, .seccomp = SECCOMP_KILL };
}

static int set_mode(void *opts, const char *arg)
{
	struct lifecycle *lc = opts;

	return args__both("--mode", arg, "in-process", "process",
			  &lc->o.in_process, &lc->o.process);
}

static int set_probes(void *opts, const char *arg)
{
	struct lifecycle *lc = opts;

	lc->o.probes = PROBES_DEFAULT;
	return arg ? probes__parse_set(arg, &lc->o.probes) : 0;
}

static int set_seccomp(void *opts, const char *arg)
{
	return seccomp__parse_mode(arg, &((struct lifecycle *)opts)->o.seccomp);
}

static const struct opt table[] = {
	{ "mode", 0, "MODE", false, "in-process, process or both (default "
	  "both)", set_mode, NULL },
	{ "probes", 0, "SET", true, "eBPF breakdown of the in-process series "
	  "(default set,\nor a list as in `coldstart run --probes`)",
	  set_probes, NULL },
	{ "seccomp", 0, "MODE", false, "the VMs' system call filters: kill "
	  "(default), log or off;\nwith filters on, each process-per-VM "
	  "round also runs one\nVM without them: the filters' cost (median "
	  "of the pairs)", set_seccomp, NULL },
	OPT_END,
};

const struct bench_driver lifecycle_driver = {
	.name = "lifecycle",
	.summary = "create -> READY -> destroy, in-process and "
		   "process-per-VM, against the floor",
	.usage = "Usage: coldstart bench lifecycle [OPTIONS]\n"
		 "Times create -> READY -> destroy of the minimal probe guest "
		 "(1 vCPU, 2 MiB),\nin-process and one process per VM, beside "
		 "the same cycle done with bare KVM\nioctls in the same run "
		 "(the floor). Series are interleaved; a sample is one\n"
		 "cycle of each series.\n",
	.common = BENCH_COUNT | BENCH_WARMUP | BENCH_JSON | BENCH_OUT |
		  BENCH_KVM,
	.opts = table,
	.size = sizeof(struct lifecycle),
	.common_at = offsetof(struct lifecycle, o.c),
	.init = init,
	.run = run,
	.suite = { .quick = "-n 100 -w 10",
		   .smoke = "-n 3 -w 1 --mode in-process" },
};
