/* The boot benchmark: N fresh probe-guest VMs (in-process or one
 * `coldstart run` process each, or a Linux guest through `coldstart run
 * --kernel`), one series per timeline phase plus the total. */
#include "boot.h"

#include "args.h"
#include "child.h"
#include "cli.h"
#include "run_opts.h"
#include "err.h"
#include "kvm.h"
#include "output.h"
#include "result.h"
#include "result_new.h"
#include "run_linux.h"
#include "runner.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define MAX_ARGS 64

struct boot_opts {
	/* c.forwarded: `coldstart run` options, passed on as given */
	struct bench_common c;
	bool process;
	struct run_cli run;       /* the forwarded options, parsed */
};

struct boot {
	struct boot_opts o;
	double *t; /* t[ev * count + i]: ns since the sample's origin */
	struct kvm_host kvm;
};

/* The events of one timeline into column i, relative to `origin`. */
static void store(struct boot *b, size_t i, const struct timeline *tl,
		  uint64_t origin)
{
	for (size_t ev = 0; ev < TL_COUNT; ev++)
		b->t[ev * b->o.c.count + i] = tl->t[ev] ?
			(double)(tl->t[ev] - origin) : NAN;
}

static int one_inproc(struct boot *b, struct timeline *tl)
{
	struct run_result res = { 0 };
	int ret;

	res.tl.t[TL_PROCESS_START] = timeline__now();
	ret = runner__probe(&b->kvm, &b->o.run.cfg, &res);
	if (ret == 0 && !runner__succeeded(&b->o.run.cfg, &res))
		ret = err__set(EIO, "the guest failed: %s", res.reason[0] ?
			       res.reason : "wrong checksum");
	*tl = res.tl;
	return ret;
}

/* timeline_ns of a `coldstart run --json` document, back into events. */
static void timeline_from_json(const json_t *obj, struct timeline *tl)
{
	for (int ev = 0; ev < TL_COUNT; ev++) {
		const json_t *v = json_object_get(obj, timeline__key(ev));

		/* +1: the origin itself is 0 ns, which means "absent". */
		tl->t[ev] = json_is_integer(v) ?
			(uint64_t)json_integer_value(v) + 1 : 0;
	}
}

static int one_process(struct boot *b, char **argv, struct timeline *tl)
{
	json_t *doc = NULL;
	char buf[32];
	int status, ret = child__capture(argv, &doc, &status);

	if (ret < 0)
		return ret;
	if (WIFEXITED(status) && WEXITSTATUS(status) == CLI_SKIP)
		ret = err__set(ENOTSUP, "'coldstart run' says this host cannot "
			       "run the guest (exit 77)");
	else if (!WIFEXITED(status) || WEXITSTATUS(status) || !doc)
		ret = err__set(EIO, "'coldstart run' %s%s",
			       child__status_text(status, buf, sizeof(buf)),
			       doc ? "" : " without a JSON result");
	if (ret == 0)
		timeline_from_json(json_object_get(doc, "timeline_ns"), tl);
	json_decref(doc);
	(void)b;
	return ret;
}

static void child_argv(const struct boot_opts *o, const char *exe,
		       char **argv)
{
	int n = 0;

	argv[n++] = (char *)exe;
	argv[n++] = "run";
	argv[n++] = "--json";
	if (o->c.kernel) {
		argv[n++] = "--kernel";
		argv[n++] = (char *)o->c.kernel;
	}
	if (o->c.initrd) {
		argv[n++] = "--initrd";
		argv[n++] = (char *)o->c.initrd;
	}
	for (int i = 0; i < o->c.nr_forwarded; i++)
		argv[n++] = o->c.forwarded[i];
	argv[n] = NULL;
}

static int measure(struct boot *b)
{
	uint64_t total = b->o.c.warmup + b->o.c.count;
	char *argv[MAX_ARGS + 8];
	int ret = 0;

	if (b->o.process) {
		const char *exe = cli__self_exe();

		if (!exe)
			return err__set(ENOENT, "cannot find the coldstart binary");
		child_argv(&b->o, exe, argv);
	}
	for (uint64_t i = 0; ret == 0 && i < total; i++) {
		struct timeline tl = { 0 };

		ret = b->o.process ? one_process(b, argv, &tl)
				   : one_inproc(b, &tl);
		if (ret == 0 && i >= b->o.c.warmup)
			store(b, i - b->o.c.warmup, &tl, tl.t[TL_PROCESS_START]);
		if (i % 8 == 0 || i + 1 == total)
			output__progress("boot", (unsigned long)(i + 1),
					 (unsigned long)total);
	}
	output__progress_done();
	return ret;
}

size_t boot__phase_order(const double *t, size_t nr_events, size_t n,
			 size_t *order)
{
	double mean[BOOT_MAX_EVENTS];
	size_t k = 0;

	for (size_t ev = 0; ev < nr_events && ev < BOOT_MAX_EVENTS; ev++) {
		double sum = 0;
		size_t i;

		for (i = 0; i < n && !isnan(t[ev * n + i]); i++)
			sum += t[ev * n + i];
		if (n == 0 || i < n)
			continue;
		mean[ev] = sum / (double)n;
		/* Insertion sort: a dozen events at most. */
		size_t j = k++;
		for (; j > 0 && mean[order[j - 1]] > mean[ev]; j--)
			order[j] = order[j - 1];
		order[j] = ev;
	}
	return k;
}

static const char *event_key(size_t ev)
{
	return timeline__key((enum tl_event)ev);
}

/* Events seen in some samples but not all are worth a word. */
static void partial_warnings(json_t *doc, const struct boot *b)
{
	size_t n = b->o.c.count;

	for (size_t ev = 0; ev < TL_COUNT; ev++) {
		size_t seen = 0;

		for (size_t i = 0; i < n; i++)
			seen += !isnan(b->t[ev * n + i]);
		if (seen && seen < n)
			result__warn(doc, "event %s happened in %zu of %zu "
				     "samples; it is left out of the phases",
				     event_key(ev), seen, n);
	}
}

static int add_phase(json_t *doc, const struct boot *b, size_t from,
		     size_t to, const char *name, double *buf)
{
	size_t n = b->o.c.count;

	for (size_t i = 0; i < n; i++)
		buf[i] = b->t[to * n + i] - b->t[from * n + i];
	return result__add_series(doc, name, "ns", RESULT_LOWER,
				  json_pack("{s:s, s:s}", "from",
					    event_key(from), "to",
					    event_key(to)), buf, n)
	       ? 0 : -ENOMEM;
}

static int add_series(json_t *doc, const struct boot *b)
{
	size_t order[TL_COUNT], k = boot__phase_order(b->t, TL_COUNT,
						      b->o.c.count, order);
	double *buf = calloc(b->o.c.count, sizeof(double));
	char name[64];
	int ret = buf ? 0 : err__set(ENOMEM, "allocating samples");

	for (size_t j = 1; ret == 0 && j < k; j++) {
		snprintf(name, sizeof(name), "phase.%s", event_key(order[j]));
		ret = add_phase(doc, b, order[j - 1], order[j], name, buf);
	}
	if (ret == 0 && k >= 2)
		ret = add_phase(doc, b, order[0], order[k - 1], "total", buf);
	free(buf);
	partial_warnings(doc, b);
	return ret;
}

static json_t *config_json(const struct boot_opts *o)
{
	json_t *args = json_array();
	json_t *cfg = json_pack("{s:s, s:s, s:s?, s:s?, s:I, s:I}", "guest",
				o->c.kernel ? "linux" : "probe", "mode",
				o->process ? "process" : "in-process",
				"kernel", o->c.kernel, "initrd", o->c.initrd,
				"count", (json_int_t)o->c.count, "warmup",
				(json_int_t)o->c.warmup);

	for (int i = 0; i < o->c.nr_forwarded; i++)
		json_array_append_new(args, json_string(o->c.forwarded[i]));
	json_object_set_new(cfg, "run_args", args);
	if (!o->c.kernel) {
		json_object_set_new(cfg, "mem_bytes",
				    json_integer((json_int_t)o->run.cfg.mem_size));
		json_object_set_new(cfg, "vcpus",
				    json_integer(o->run.cfg.nr_vcpus));
	}
	return cfg;
}

static void report(FILE *out, const json_t *doc)
{
	const json_t *cfg = json_object_get(doc, "config");

	fprintf(out, "# coldstart boot benchmark\n\n%s guest, %s, %"
		JSON_INTEGER_FORMAT " counted VMs after %" JSON_INTEGER_FORMAT
		" warmup. Each phase is the step from the previous timeline "
		"event (params: from, to); total spans the first to the last "
		"event.\n\n",
		json_string_value(json_object_get(cfg, "guest")),
		json_string_value(json_object_get(cfg, "mode")),
		json_integer_value(json_object_get(cfg, "count")),
		json_integer_value(json_object_get(cfg, "warmup")));
	result__md_series(out, doc);
	result__md_warnings(out, doc);
}

/* A Linux guest needs hardware virtualization: PVM cannot boot one.
 * Returns an enum cli_exit, CLI_OK to go on. */
static int check_host(const struct boot_opts *o)
{
	for (int i = 0; i < o->c.nr_forwarded; i++)
		if (!strcmp(o->c.forwarded[i], "--allow-pvm"))
			return CLI_OK; /* e.g. our ring-0 test kernel */
	if (o->c.kernel && kvm__device_flavour() == KVM_FLAVOUR_PVM)
		return cli__error(CLI_SKIP, "bench boot --kernel: %s",
				  run_linux__pvm_refusal());
	return CLI_OK;
}

static int run(struct boot *b)
{
	json_t *doc;
	int ret = 0;

	if (!b->o.process)
		ret = kvm__open(&b->kvm, b->o.run.kvm_path);
	if (ret < 0)
		return ret;
	ret = measure(b);
	if (!b->o.process)
		kvm__close(&b->kvm);
	if (ret < 0)
		return ret;
	doc = result__new("boot", config_json(&b->o));
	if (!doc)
		return -ENOMEM;
	ret = add_series(doc, b);
	if (ret == 0)
		ret = result__emit(doc, b->o.c.json, b->o.c.out_dir, report);
	json_decref(doc);
	return ret < 0 ? -EIO : 0;
}

static int run_boot(void *opts)
{
	struct boot *b = opts;
	int ret = check_host(&b->o);

	if (ret != CLI_OK)
		return ret;
	b->t = calloc(b->o.c.count * TL_COUNT, sizeof(double));
	if (!b->t)
		return cli__error(CLI_FAIL, "bench boot: out of memory");
	ret = run(b);
	free(b->t);
	return ret;
}

/* ---- options ---- */

static int check_forwarded(struct boot_opts *o)
{
	char *args[MAX_ARGS];
	int n = 0;

	args[n++] = "boot";
	for (int i = 0; i < o->c.nr_forwarded; i++) {
		const char *a = o->c.forwarded[i];

		if (!strcmp(a, "--quiet") || !strcmp(a, "--probes") ||
		    !strcmp(a, "--misbehave"))
			return err__set(EINVAL, "'%s' is not a boot option", a);
		args[n++] = o->c.forwarded[i];
	}
	/* A Linux guest's options belong to `coldstart run --kernel`. */
	if (o->c.kernel)
		return 0;
	return run_opts__parse(n, args, &o->run);
}

static int check(void *opts)
{
	struct boot_opts *o = &((struct boot *)opts)->o;
	int ret = 0;

	if (o->c.initrd && !o->c.kernel)
		ret = err__set(EINVAL, "--initrd needs --kernel");
	if (ret == 0)
		ret = check_forwarded(o);
	if (o->c.kernel)
		o->process = true;
	return ret;
}

static void init(void *opts)
{
	struct boot *b = opts;

	b->o.c = (struct bench_common){ .count = 100, .warmup = 10,
					.count_max = 1000000,
					.warmup_max = 1000000 };
}

static int set_mode(void *opts, const char *arg)
{
	static const char *const modes[] = { "in-process", "process", NULL };
	unsigned int m = 0;
	int ret = args__choice("--mode", arg, modes, &m);

	((struct boot *)opts)->o.process = m == 1;
	return ret;
}

static const struct opt table[] = {
	{ "mode", 0, "MODE", false, "in-process (default: one VM after another "
	  "in this process)\nor process (one `coldstart run` per VM; adds "
	  "process start\nand /dev/kvm open to the timeline)", set_mode,
	  NULL },
	OPT_END,
};

const struct bench_driver boot_driver = {
	.name = "boot",
	.summary = "N fresh VMs: the distribution of every timeline phase",
	.usage = "Usage: coldstart bench boot [OPTIONS] [RUN OPTIONS]\n"
		 "Boots N fresh VMs one after another and reports the "
		 "distribution of every\ntimeline phase (the step from the "
		 "previous event) and of the total. A sample is\none VM. "
		 "--kernel boots a Linux guest (`coldstart run --kernel`) and "
		 "implies\n--mode process; on PVM hosts it is refused (exit 77) "
		 "unless --allow-pvm is\npassed on to `coldstart run`.\n",
	.epilog = "Any other option is a `coldstart run` option for the probe "
		  "workload, e.g.\n--init 8M --ws 8M --vcpus 2 --stop-at "
		  "ready --kvm PATH.\n",
	.common = BENCH_COUNT | BENCH_WARMUP | BENCH_JSON | BENCH_OUT |
		  BENCH_KERNEL | BENCH_INITRD,
	.forwards = true,
	.opts = table,
	.size = sizeof(struct boot),
	.common_at = offsetof(struct boot, o.c),
	.init = init,
	.check = check,
	.run = run_boot,
	.suite = { .quick = "-n 50 -w 5", .smoke = "-n 3 -w 1",
		   .linux_full = "", .linux_quick = "-n 20 -w 2",
		   .linux_smoke = "-n 2 -w 0" },
};
