/* The creation-rate benchmark: W workers each creating VMs back to back
 * (create -> READY -> destroy of the probe guest, or create -> boot
 * complete -> destroy of the user's Linux guest) for W = 1 up to twice
 * the CPUs, and bursts of K simultaneous starts; in-process (threads, the
 * probe guest only) and one `coldstart run` process per VM. Latency per
 * VM and VMs/s per level, the latter also as a series of samples (blocks
 * of successive completions; burst rounds). */
#include "rate.h"

#include "args.h"
#include "capacity.h"
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

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_LEVELS 16
#define MAX_WORKERS 256
#define MAX_RUN_ARGS 24 /* the child's `run` and its options, NULL-ended */

struct rate_opts {
	struct bench_common c; /* count, warmup: per worker */
	unsigned int levels[MAX_LEVELS];
	size_t nr_levels;
	uint64_t burst, rounds; /* burst size (0: none), counted rounds */
	bool in_process, process, mode_given;
	/* The guest (c.kernel...: the probe guest, or a Linux guest when
	 * kernel is set) and timeout: `coldstart run` options, passed on as
	 * given. */
	const char *timeout;
	char *run_argv[MAX_RUN_ARGS]; /* "run" and its options */
	struct run_cli run;           /* run_argv parsed: each VM's config */
};

/* What one worker thread needs; samples go to lat[first..]. */
struct worker {
	struct level *lv;
	size_t first;
};

/* One run of W workers: shared by its threads. */
struct level {
	const struct rate_opts *o;
	struct kvm_host *kvm;
	char **argv;        /* process mode: the child's command line */
	bool process;
	uint64_t warmup, count;
	pthread_mutex_t lock; /* the start gate: */
	pthread_cond_t cond;
	unsigned int arrived;  /* workers done with their warmup */
	bool go;               /* the counted part may begin */
	double *lat;
	double *end;      /* sustained: each VM's completion, ns after go */
	uint64_t go_ns;   /* when the gate opened */
	atomic_int failed;
	char error[512];
};

size_t rate__default_levels(unsigned int cpus, unsigned int *levels,
			    size_t max)
{
	unsigned int top = cpus ? 2 * cpus : 2;
	size_t n = 0;

	for (unsigned int w = 1; w < top && n < max; w *= 2)
		levels[n++] = w;
	if (n < max)
		levels[n++] = top;
	return n;
}

static int parse_levels(const char *text, struct rate_opts *o)
{
	char buf[256], *save = NULL, *tok;
	uint64_t v;

	if (snprintf(buf, sizeof(buf), "%s", text) >= (int)sizeof(buf))
		return err__set(EINVAL, "--workers: list too long");
	o->nr_levels = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (o->nr_levels == MAX_LEVELS)
			return err__set(EINVAL, "--workers: at most %d levels",
					MAX_LEVELS);
		if (args__u64("--workers", tok, 1, MAX_WORKERS, &v) < 0)
			return -EINVAL;
		o->levels[o->nr_levels++] = (unsigned int)v;
	}
	if (!o->nr_levels)
		return err__set(EINVAL, "--workers: empty list");
	return 0;
}

/* The child's command line, "run" first; `coldstart run`'s own parser
 * checks it once here, so a bad --mem or an --initrd without --kernel is
 * a usage error before any VM starts, and the in-process VMs get the
 * same config as the processes. */
static int run_args(struct rate_opts *o)
{
	const char *const pairs[][2] = {
		{ "--kernel", o->c.kernel }, { "--initrd", o->c.initrd },
		{ "--cmdline", o->c.cmdline }, { "--mem", o->c.mem },
		{ "--vcpus", o->c.vcpus }, { "--timeout", o->timeout },
		{ "--kvm", o->c.kvm_path },
	};
	int n = 0;

	o->run_argv[n++] = "run";
	o->run_argv[n++] = o->c.kernel ? "--stop-at=boot" : "--stop-at=ready";
	o->run_argv[n++] = "-q";
	if (o->c.allow_pvm)
		o->run_argv[n++] = "--allow-pvm";
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		if (!pairs[i][1])
			continue;
		o->run_argv[n++] = (char *)pairs[i][0];
		o->run_argv[n++] = (char *)pairs[i][1];
	}
	o->run_argv[n] = NULL;
	return run_opts__parse(n, o->run_argv, &o->run);
}

/* A Linux guest runs only as `coldstart run --kernel` processes: the
 * in-process runner runs the probe guest alone. */
static int check_guest(struct rate_opts *o)
{
	if (o->c.kernel && o->mode_given && o->in_process)
		return err__set(EINVAL, "--mode %s: a Linux guest (--kernel) "
				"runs as one `coldstart run --kernel` process "
				"per VM; the in-process runner runs only the "
				"probe guest; use --mode process",
				o->process ? "both" : "in-process");
	if (o->c.kernel)
		o->in_process = false;
	return run_args(o);
}

/* A failed child's stderr on one line, without its trailing newline. */
static const char *one_line(char *text)
{
	size_t len = strlen(text);

	while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
		text[--len] = '\0';
	for (char *c = text; *c; c++)
		if (*c == '\n')
			*c = ' ';
	return len ? text : "(nothing on stderr)";
}

/* One `coldstart run` process: it succeeds, or the error names its exit
 * and what it said. */
static int one_process(struct level *lv)
{
	char buf[32], said[256];
	int status, ret = child__run_stderr(lv->argv, &status, said,
					    sizeof(said));

	if (ret < 0 || (WIFEXITED(status) && !WEXITSTATUS(status)))
		return ret;
	return err__set(WIFEXITED(status) && WEXITSTATUS(status) == CLI_SKIP
				? ENOTSUP : EIO,
			"'coldstart run' %s: %s",
			child__status_text(status, buf, sizeof(buf)),
			one_line(said));
}

static int one_vm(struct level *lv)
{
	struct run_config cfg = lv->o->run.cfg;
	struct run_result res = { 0 };
	int ret;

	if (lv->process)
		return one_process(lv);
	cfg.verify = false; /* READY has no checksum to verify */
	ret = runner__probe(lv->kvm, &cfg, &res);
	if (ret == 0 && !runner__succeeded(&cfg, &res))
		ret = err__set(EIO, "probe guest did not reach READY: %s",
			       res.reason);
	return ret;
}

/* Records the first failure; the others stop at their next VM. */
static void fail(struct level *lv)
{
	int expected = 0;

	if (atomic_compare_exchange_strong(&lv->failed, &expected, 1))
		snprintf(lv->error, sizeof(lv->error), "%s", err__last());
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct level *lv = w->lv;

	for (uint64_t i = 0; i < lv->warmup && !atomic_load(&lv->failed); i++)
		if (one_vm(lv) < 0)
			fail(lv);
	pthread_mutex_lock(&lv->lock);
	lv->arrived++;
	pthread_cond_broadcast(&lv->cond);
	while (!lv->go)
		pthread_cond_wait(&lv->cond, &lv->lock);
	pthread_mutex_unlock(&lv->lock);
	for (uint64_t i = 0; i < lv->count && !atomic_load(&lv->failed); i++) {
		uint64_t t0 = timeline__now();

		uint64_t t1;

		if (one_vm(lv) < 0)
			fail(lv);
		t1 = timeline__now();
		lv->lat[w->first + i] = (double)(t1 - t0);
		if (lv->end)
			lv->end[w->first + i] = (double)(t1 - lv->go_ns);
	}
	return NULL;
}

/* Waits until all `nr` started workers finished their warmup, then opens
 * the gate; returns the time it did. */
static uint64_t open_gate(struct level *lv, unsigned int nr)
{
	uint64_t t0;

	pthread_mutex_lock(&lv->lock);
	while (lv->arrived < nr)
		pthread_cond_wait(&lv->cond, &lv->lock);
	lv->go = true;
	t0 = timeline__now();
	lv->go_ns = t0;
	pthread_cond_broadcast(&lv->cond);
	pthread_mutex_unlock(&lv->lock);
	return t0;
}

/* Runs `nr` workers of lv; the wall time of the counted part in *wall. */
static int run_workers(struct level *lv, unsigned int nr, uint64_t *wall)
{
	pthread_t tid[MAX_WORKERS];
	struct worker w[MAX_WORKERS];
	unsigned int started = 0;
	uint64_t t0;

	atomic_store(&lv->failed, 0);
	lv->arrived = 0;
	lv->go = false;
	pthread_mutex_init(&lv->lock, NULL);
	pthread_cond_init(&lv->cond, NULL);
	for (; started < nr; started++) {
		w[started] = (struct worker){ lv, (size_t)started * lv->count };
		if (pthread_create(&tid[started], NULL, worker_main,
				   &w[started])) {
			err__set(EAGAIN, "cannot start worker %u", started);
			fail(lv);
			break;
		}
	}
	t0 = open_gate(lv, started);
	for (unsigned int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	*wall = timeline__now() - t0;
	pthread_cond_destroy(&lv->cond);
	pthread_mutex_destroy(&lv->lock);
	if (atomic_load(&lv->failed))
		return err__set(EIO, "%s", lv->error);
	return 0;
}

struct rig {
	struct kvm_host kvm;
	char *argv[MAX_RUN_ARGS + 1]; /* the binary, then o->run_argv */
};

static struct level level_for(const struct rate_opts *o, struct rig *rig,
			      bool process)
{
	return (struct level){ .o = o, .kvm = &rig->kvm, .argv = rig->argv,
			       .process = process };
}

static const char *mode_name(bool process)
{
	return process ? "process" : "in-process";
}

/* The latency series of one level and, beside it, its VMs/s series of
 * nr_rates samples. */
static int add_level(json_t *doc, bool process, const char *kind,
		     unsigned int workers, const double *lat, size_t n,
		     double vms_per_s, const double *rates, size_t nr_rates)
{
	char name[64];
	json_t *s;

	snprintf(name, sizeof(name), "%s.%s%u", process ? "process" : "inproc",
		 kind, workers);
	s = result__add_series(doc, name, "ns", RESULT_LOWER,
			       json_pack("{s:s, s:s, s:i}", "mode",
					 mode_name(process), "kind",
					 !strcmp(kind, "w") ? "sustained"
							    : "burst",
					 "workers", (int)workers), lat, n);
	if (!s)
		return -ENOMEM;
	json_object_set_new(s, "vms_per_s", json_real(vms_per_s));
	return nr_rates ? capacity__add_rate_series(doc, s, rates, nr_rates)
			: 0;
}

/* Sustained rate at every level of one mode. */
static int sustained(json_t *doc, const struct rate_opts *o, struct rig *rig,
		     bool process)
{
	int ret = 0;

	for (size_t l = 0; ret == 0 && l < o->nr_levels; l++) {
		double rates[CAPACITY_RATE_BLOCKS];
		unsigned int nr = o->levels[l];
		struct level lv = level_for(o, rig, process);
		uint64_t wall;

		lv.warmup = o->c.warmup;
		lv.count = o->c.count;
		lv.lat = calloc(nr * o->c.count, sizeof(double));
		lv.end = calloc(nr * o->c.count, sizeof(double));
		if (!lv.lat || !lv.end) {
			free(lv.lat);
			free(lv.end);
			return err__set(ENOMEM, "allocating samples");
		}
		output__progress(process ? "rate, process" : "rate, in-process",
				 (unsigned long)l + 1, (unsigned long)o->nr_levels);
		ret = run_workers(&lv, nr, &wall);
		if (ret == 0)
			ret = add_level(doc, process, "w", nr, lv.lat,
					nr * o->c.count,
					1e9 * (double)(nr * o->c.count) /
						(double)wall, rates,
					capacity__block_rates(
						lv.end, nr * o->c.count,
						CAPACITY_RATE_BLOCKS, rates));
		free(lv.lat);
		free(lv.end);
	}
	output__progress_done();
	return ret;
}

/* K workers of one VM each, released together; one uncounted round
 * first. The makespans go into the series as "makespan_ns". */
static int burst(json_t *doc, const struct rate_opts *o, struct rig *rig,
		 bool process)
{
	unsigned int k = (unsigned int)o->burst;
	struct level lv = level_for(o, rig, process);
	double *lat = calloc(k * o->rounds, sizeof(double));
	double *span = calloc(o->rounds, sizeof(double));
	double *rates = calloc(o->rounds, sizeof(double));
	json_t *spans = json_array();
	double total = 0;
	int ret = lat && span && rates ? 0
				       : err__set(ENOMEM, "allocating samples");

	lv.count = 1;
	for (uint64_t r = 0; ret == 0 && r <= o->rounds; r++) {
		uint64_t wall;

		lv.lat = lat + (r ? r - 1 : 0) * k;
		ret = run_workers(&lv, k, &wall);
		if (r) {
			span[r - 1] = (double)wall;
			total += (double)wall;
			json_array_append_new(spans, json_integer((json_int_t)wall));
		}
	}
	for (uint64_t r = 0; ret == 0 && r < o->rounds; r++)
		rates[r] = 1e9 * (double)k / span[r]; /* VMs/s of round r */
	if (ret == 0)
		ret = add_level(doc, process, "burst", k, lat, k * o->rounds,
				1e9 * (double)(k * o->rounds) / total, NULL, 0);
	if (ret == 0) {
		json_t *all = json_object_get(doc, "series");
		json_t *s = json_array_get(all, json_array_size(all) - 1);

		json_object_set(s, "makespan_ns", spans);
		json_object_set_new(s, "makespan_summary",
				    result__summary_json(span, o->rounds));
		ret = capacity__add_rate_series(doc, s, rates, o->rounds);
	}
	json_decref(spans);
	free(lat);
	free(span);
	free(rates);
	return ret;
}

static int open_rig(struct rig *rig, const struct rate_opts *o)
{
	const char *exe = cli__self_exe();
	int n = 0;

	if (!exe)
		return err__set(ENOENT, "cannot find the coldstart binary");
	rig->argv[0] = (char *)exe;
	do
		rig->argv[n + 1] = o->run_argv[n];
	while (o->run_argv[n++]);
	return kvm__open(&rig->kvm, o->c.kvm_path);
}

static int measure(json_t *doc, const struct rate_opts *o)
{
	struct rig rig;
	int ret = open_rig(&rig, o);

	if (ret < 0)
		return ret;
	for (int p = 0; ret == 0 && p < 2; p++) {
		if (!(p ? o->process : o->in_process))
			continue;
		ret = sustained(doc, o, &rig, p);
		if (ret == 0 && o->burst)
			ret = burst(doc, o, &rig, p);
	}
	kvm__close(&rig.kvm);
	return ret;
}

static json_t *config_json(const struct rate_opts *o)
{
	json_t *levels = json_array();

	for (size_t i = 0; i < o->nr_levels; i++)
		json_array_append_new(levels, json_integer(o->levels[i]));
	return json_pack("{s:s, s:s?, s:s?, s:s?, s:I, s:i, s:s, s:I, s:o, "
			 "s:I, s:I, s:I, s:I}",
			 "guest", o->c.kernel ? "linux" : "probe", "kernel",
			 o->c.kernel, "initrd", o->c.initrd, "cmdline",
			 o->c.kernel ? run_linux__cmdline(&o->run) : NULL,
			 "mem_bytes", (json_int_t)o->run.cfg.mem_size,
			 "vcpus", (int)o->run.cfg.nr_vcpus, "stop_at",
			 o->c.kernel ? "boot" : "ready", "timeout_ns",
			 (json_int_t)o->run.cfg.timeout_ns, "workers", levels,
			 "burst", (json_int_t)o->burst, "rounds",
			 (json_int_t)o->rounds, "count", (json_int_t)o->c.count,
			 "warmup", (json_int_t)o->c.warmup);
}

/* "the probe guest (2 MiB, 1 vCPU)", or the Linux guest's kernel by
 * path and sha256 (the document's guest object) and its initrd. */
static void report_guest(FILE *out, const json_t *doc)
{
	const json_t *cfg = json_object_get(doc, "config");
	const json_t *g = json_object_get(doc, "guest");
	const char *kernel = json_string_value(json_object_get(cfg, "kernel"));
	const char *initrd = json_string_value(json_object_get(cfg, "initrd"));
	const char *sum = json_string_value(json_object_get(
		json_object_get(g, "kernel"), "sha256"));
	json_int_t mem = json_integer_value(json_object_get(cfg, "mem_bytes"));
	json_int_t vcpus = json_integer_value(json_object_get(cfg, "vcpus"));

	fprintf(out, "the %s guest (",
		json_string_value(json_object_get(cfg, "guest")));
	if (kernel)
		fprintf(out, "kernel `%s`, sha256 `%.16s`, initrd %s, ",
			kernel, sum ? sum : "?", initrd ? initrd : "none");
	fprintf(out, "%" JSON_INTEGER_FORMAT " MiB, %" JSON_INTEGER_FORMAT
		" vCPU%s)", mem >> 20, vcpus, vcpus == 1 ? "" : "s");
}

static void report(FILE *out, const json_t *doc)
{
	const char *stop = json_string_value(json_object_get(
		json_object_get(doc, "config"), "stop_at"));
	const json_t *s;
	size_t i;

	fprintf(out, "# coldstart creation-rate benchmark\n\nCreate -> %s -> "
		"destroy of ", stop && !strcmp(stop, "boot") ? "boot complete"
							     : "READY");
	report_guest(out, doc);
	fputs(". Sustained: W workers back to back; burst: K simultaneous "
	      "starts per round. Latency per VM in ms.\n\n| mode | kind | "
	      "workers | VMs/s | median ms | p90 ms | p99 ms | max ms |\n"
	      "|---|---|--:|--:|--:|--:|--:|--:|\n", out);
	json_array_foreach(json_object_get(doc, "series"), i, s) {
		const json_t *p = json_object_get(s, "params");
		char num[32];

		if (!json_is_number(json_object_get(s, "vms_per_s")))
			continue; /* a level's VMs/s series */
		fprintf(out, "| %s | %s | %" JSON_INTEGER_FORMAT " | %s | "
			"%.3f | %.3f | %.3f | %.3f |\n",
			json_string_value(json_object_get(p, "mode")),
			json_string_value(json_object_get(p, "kind")),
			json_integer_value(json_object_get(p, "workers")),
			result__rate_text(num, sizeof(num), json_number_value(
				json_object_get(s, "vms_per_s"))),
			result__stat(s, "p50") / 1e6, result__stat(s, "p90") / 1e6,
			result__stat(s, "p99") / 1e6, result__stat(s, "max") / 1e6);
	}
	result__md_warnings(out, doc);
}

static int run(void *opts)
{
	struct rate_opts *o = opts;
	json_t *doc;
	int ret;

	if (o->c.kernel) {
		ret = run_linux__check_guest("bench rate", o->c.kernel,
					     o->c.initrd,
					     run_linux__cmdline(&o->run),
					     o->run.cfg.mem_size,
					     o->run.cfg.nr_vcpus, o->c.allow_pvm);
		if (ret != CLI_OK)
			return ret;
	}
	doc = result__new("rate", config_json(o));
	if (!doc)
		return -EIO;
	ret = measure(doc, o);
	if (ret == 0)
		ret = result__emit(doc, o->c.json, o->c.out_dir, report) < 0
		      ? -EIO : 0; /* a failure, whatever errno */
	json_decref(doc);
	return ret;
}

/* ---- options ---- */

static void init(void *opts)
{
	struct rate_opts *o = opts;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	o->c = (struct bench_common){ .count = 40, .warmup = 4,
				      .count_max = 1000000,
				      .warmup_max = 1000000 };
	o->rounds = 5;
	o->in_process = o->process = true;
	o->burst = 4 * (uint64_t)(cpus > 0 ? cpus : 1);
	o->nr_levels = rate__default_levels(cpus > 0 ? (unsigned int)cpus : 1,
					    o->levels, MAX_LEVELS);
}

static int set_workers(void *opts, const char *arg)
{
	return parse_levels(arg, opts);
}

static int set_burst(void *opts, const char *arg)
{
	return args__u64("--burst", arg, 0, MAX_WORKERS,
			 &((struct rate_opts *)opts)->burst);
}

static int set_rounds(void *opts, const char *arg)
{
	return args__u64("--rounds", arg, 1, 100000,
			 &((struct rate_opts *)opts)->rounds);
}

static int set_mode(void *opts, const char *arg)
{
	struct rate_opts *o = opts;

	o->mode_given = true;
	return args__both("--mode", arg, "in-process", "process",
			  &o->in_process, &o->process);
}

/* Passed on to `coldstart run` as given, as are the guest's options. */
static int set_timeout(void *opts, const char *arg)
{
	((struct rate_opts *)opts)->timeout = arg;
	return 0;
}

static const struct opt table[] = {
	{ "workers", 0, "LIST", false, "concurrency levels, e.g. 1,2,4 "
	  "(default 1, 2, 4, ... up to\ntwice the online CPUs)", set_workers,
	  NULL },
	{ "burst", 0, "K", false, "simultaneous starts per burst (default "
	  "4 x CPUs; 0: none)", set_burst, NULL },
	{ "rounds", 0, "N", false, "counted bursts (default 5, after one "
	  "uncounted)", set_rounds, NULL },
	{ "mode", 0, "MODE", false, "in-process, process or both (default "
	  "both; process with\n--kernel)", set_mode, NULL },
	{ "timeout", 0, "DUR", false, "fail a VM that has not reached READY "
	  "(boot complete with\n--kernel) after DUR (default 60s)",
	  set_timeout, NULL },
	OPT_END,
};

static int check(void *opts)
{
	return check_guest(opts);
}

const struct bench_driver rate_driver = {
	.name = "rate",
	.summary = "VM creation rate: sequential, concurrent workers and "
		   "bursts",
	.usage = "Usage: coldstart bench rate [OPTIONS]\n"
		 "VM creation rate: W workers each create VMs back to back at "
		 "each concurrency\nlevel, then bursts of K simultaneous "
		 "starts; in-process (threads) and one\n`coldstart run` "
		 "process per VM. A VM is create -> READY -> destroy of the "
		 "probe\nguest (2 MiB, 1 vCPU by default) or, with --kernel, "
		 "create -> boot complete ->\ndestroy of your Linux guest "
		 "(`coldstart run --kernel ... --stop-at boot`,\nprocess mode "
		 "only). Reports latency percentiles and VMs/s per level. A "
		 "sample\nis one VM of one worker.\n",
	.common = BENCH_COUNT | BENCH_WARMUP | BENCH_JSON | BENCH_OUT |
		  BENCH_KVM | BENCH_GUEST,
	.opts = table,
	.size = sizeof(struct rate_opts),
	.common_at = offsetof(struct rate_opts, c),
	.init = init,
	.check = check,
	.run = run,
	.suite = { .quick = "-n 20 -w 2 --rounds 3",
		   .smoke = "-n 2 -w 1 --rounds 1 --workers 1",
		   .linux_full = "", .linux_quick = "-n 4 -w 1 --rounds 2",
		   .linux_smoke = "-n 1 -w 0 --rounds 1 --workers 1 "
				  "--burst 2" },
};
