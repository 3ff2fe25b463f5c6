/* The benchmark suite: runs the registered drivers one after another, each
 * as a child process with per-driver quick parameters, measures what the
 * harness itself adds to a sample, writes suite.json and the report. */
#include "suite.h"

#include "agent_client.h"
#include "args.h"
#include "err.h"
#include "output.h"
#include "regfile.h"
#include "report.h"
#include "result.h"
#include "restore.h"
#include "result_new.h"
#include "snapshot.h"
#include "timeline.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum level { LEVEL_FULL, LEVEL_QUICK, LEVEL_SMOKE };

#define HARNESS_BLOCKS 200
#define HARNESS_PER_BLOCK 1000

/* The user's own guest (--kernel): what boot, restore, rate, density
 * and pool measure instead of the probe guest. */
struct suite_guest {
	const char *kernel, *initrd, *cmdline, *mem, *vcpus;
	/* --rootfs: boot runs a command through the guest's agent, the
	 * snapshot is of the rootfs guest, session runs on it */
	const char *rootfs;
	bool allow_pvm;
	char snap_base[PATH_MAX]; /* mkdtemp'd; holds snap */
	char snap[PATH_MAX];
};

struct suite_opts {
	/* c.out_dir, the guest's options (c.kernel...), the table */
	struct bench_common c;
	enum level level;
	const char *out_dir;
	const char *only; /* comma-separated drivers, or NULL */
	bool report;
	bool emulate, no_emulate; /* where: for `coldstart bench` */
	struct suite_guest guest; /* kernel NULL: the probe guest */
	/* the drivers it runs: the table of `coldstart bench` */
	const struct bench_driver *const *drivers;
	size_t nr_drivers;
	char dir[PATH_MAX]; /* the default out_dir */
};

#define RUN_MAX_ARGS 48

struct run {
	const char *name;
	char args[1024]; /* as recorded in suite.json and printed */
	int exit;
	double wall_s;
};

/* Drivers that measure the user's guest only on its root disk (session's
 * turns through its agent, peers' command under both VMMs). */
static bool needs_rootfs(const struct suite_args *p)
{
	return !p->linux_full && p->root_full;
}

/* Peers boots QEMU's guest too, whose init mounts the root disk. */
static bool needs_initrd(const char *driver)
{
	return !strcmp(driver, "peers");
}

/* The suite's arguments of driver d (its descriptor's), or NULL when
 * the suite does not run it. */
static const struct suite_args *args_of(const struct bench_driver *d)
{
	/* in the suite: with probe-guest levels, or for the user's guest
	 * alone (session) */
	return d && (d->suite.quick || d->suite.linux_full ||
		     d->suite.root_full) ? &d->suite : NULL;
}

/* Why driver d (with the suite's arguments p) does not measure the user's
 * guest g, or NULL when it does. */
static const char *why_not_guest(const struct bench_driver *d,
				 const struct suite_args *p,
				 const struct suite_guest *g)
{
	if (needs_rootfs(p) && (!g->rootfs ||
				(needs_initrd(d->name) && !g->initrd)))
		return "it needs a guest on its root disk: --kernel K "
		       "--initrd I --rootfs R";
	if (!p->linux_full && !p->root_full)
		return "it measures only the built-in probe guest";
	return NULL;
}

/* The driver named `name` among the suite's, or NULL. */
static const struct bench_driver *driver_named(const struct suite_opts *o,
					       const char *name)
{
	for (size_t i = 0; i < o->nr_drivers; i++)
		if (!strcmp(o->drivers[i]->name, name))
			return o->drivers[i];
	return NULL;
}

/* A file the guest needs: a readable regular file, named before any
 * driver runs. */
static int check_file(const char *what, const char *path)
{
	int fd = regfile__open(path, NULL);

	if (fd < 0)
		return err__set(EINVAL, "%s %s: %s", what, path,
				fd == -EINVAL ? "not a regular file"
					      : strerror(-fd));
	close(fd);
	return 0;
}

static int check_guest(const struct suite_guest *g)
{
	int ret = 0;

	if (!g->kernel && (g->initrd || g->cmdline || g->mem || g->vcpus ||
			   g->allow_pvm))
		return err__set(EINVAL, "--initrd, --cmdline, --mem, --vcpus "
				"and --allow-pvm describe the guest of "
				"--kernel, which is missing");
	if (g->kernel)
		ret = check_file("kernel", g->kernel);
	if (ret == 0 && g->initrd)
		ret = check_file("initrd", g->initrd);
	if (ret == 0 && g->rootfs && !g->kernel)
		return err__set(EINVAL, "--rootfs is the root disk of the guest "
				"of --kernel, which is missing");
	if (ret == 0 && g->rootfs)
		ret = check_file("rootfs", g->rootfs);
	return ret;
}

/* Every name in --only must be a suite driver of this build, one that
 * takes the user's guest when there is one. */
static int check_only(const struct suite_opts *o)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", o->only);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		const struct bench_driver *d = driver_named(o, t);
		const struct suite_args *p = args_of(d);

		if (!p)
			return err__set(EINVAL, "--only: '%s' is not a driver of "
					"the suite", t);
		if (!o->guest.kernel && p->quick)
			continue; /* the probe guest's */
		if (!why_not_guest(d, p, &o->guest))
			continue;
		return err__set(EINVAL, "--only: %s %s", t, needs_rootfs(p)
				? "needs a guest on its root disk: --kernel K "
				  "--initrd I --rootfs R"
				: "measures only the built-in probe guest, not "
				  "the guest of --kernel");
	}
	return 0;
}

/* ---- the harness's own cost ---- */

/* Where the empty samples go: volatile, so the stores happen as a
 * driver's do. */
static volatile double sink[HARNESS_PER_BLOCK];

/* Time per sample the harness adds: blocks of empty samples, each timed
 * with two clock reads and stored like a driver's, back to back; one
 * value per block (block time / samples). `empty` gets what an empty
 * sample itself reads as (the second clock read minus the first). */
static void harness_overhead(double *per_sample, double *empty)
{
	for (size_t b = 0; b < HARNESS_BLOCKS; b++) {
		uint64_t start = timeline__now(), t0, dt = 0;

		for (size_t i = 0; i < HARNESS_PER_BLOCK; i++) {
			t0 = timeline__now();
			dt = timeline__now() - t0;
			sink[i] = (double)dt;
		}
		per_sample[b] = (double)(timeline__now() - start) /
				HARNESS_PER_BLOCK;
		empty[b] = (double)dt;
	}
}

/* ---- running the drivers ---- */

static bool in_list(const char *list, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = list; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] != 0))
		if (strcspn(p, ",") == len && !strncmp(p, name, len))
			return true;
	return false;
}

static const char *level_args(const struct bench_driver *d,
			      enum level level, const struct suite_guest *g)
{
	const struct suite_args *p = args_of(d);

	if (!p)
		return "";
	if (g->kernel && g->rootfs && p->root_full)
		return level == LEVEL_QUICK ? p->root_quick
		       : level == LEVEL_SMOKE ? p->root_smoke : p->root_full;
	if (g->kernel)
		return level == LEVEL_QUICK ? p->linux_quick
		       : level == LEVEL_SMOKE ? p->linux_smoke : p->linux_full;
	return level == LEVEL_QUICK ? p->quick
	       : level == LEVEL_SMOKE ? p->smoke : "";
}

/* Appends one argument to argv and, as a shell word (a recorded command
 * can be pasted back), to the recorded text. */
static void add_arg(char **argv, int *argc, char *text, size_t len,
		    const char *arg)
{
	size_t used = strlen(text);
	/* a recorded text cut short stays a readable record: the stream
	 * writes no more than fits before the buffer's last byte */
	FILE *f = len - used > 1 ? fmemopen(text + used, len - used - 1, "w")
				 : NULL;

	if (*argc < RUN_MAX_ARGS - 1)
		argv[(*argc)++] = (char *)arg;
	if (!f)
		return;
	if (used)
		fputc(' ', f);
	output__shell_word(f, arg);
	fclose(f);
	text[len - 1] = 0;
}

/* Whether `driver` measures the user's guest from a snapshot of it. */
static bool takes_snapshot(const char *driver)
{
	return !strcmp(driver, "restore") || !strcmp(driver, "pool") ||
	       !strcmp(driver, "session");
}


/* Whether `driver` takes the root disk (and, but for the snapshot and
 * peers, runs the agent's command there): the snapshot is of the rootfs
 * guest, boot times the command's first output, density holds VMs
 * that ran it, peers boots the disk under both VMMs. */
static bool takes_rootfs(const char *driver, bool *exec)
{
	*exec = !strcmp(driver, "boot") || !strcmp(driver, "density");
	return *exec || !strcmp(driver, "snapshot") ||
	       !strcmp(driver, "peers");
}

/* The options that name the user's guest to `driver`: a Linux guest's
 * files for boot, rate, density and peers, the snapshot of it for
 * restore and pool. */
static void add_guest_args(const struct suite_guest *g, const char *driver,
			   char **argv, int *argc, char *text, size_t len)
{
	/* peers makes both VMMs' command lines itself */
	const char *cmdline = strcmp(driver, "peers") ? g->cmdline : NULL;
	const char *const pairs[][2] = {
		{ "--kernel", g->kernel }, { "--initrd", g->initrd },
		{ "--cmdline", cmdline }, { "--mem", g->mem },
		{ "--vcpus", g->vcpus },
	};
	bool exec;

	if (takes_snapshot(driver)) {
		add_arg(argv, argc, text, len, "--snapshot");
		add_arg(argv, argc, text, len, g->snap);
	} else {
		if (g->rootfs && takes_rootfs(driver, &exec)) {
			add_arg(argv, argc, text, len, "--rootfs");
			add_arg(argv, argc, text, len, g->rootfs);
		}
		if (g->rootfs && takes_rootfs(driver, &exec) && exec) {
			add_arg(argv, argc, text, len, "--exec");
			add_arg(argv, argc, text, len, AGENT_DEFAULT_EXEC);
		}
		for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
			if (!pairs[i][1])
				continue;
			add_arg(argv, argc, text, len, pairs[i][0]);
			add_arg(argv, argc, text, len, pairs[i][1]);
		}
	}
	if (g->allow_pvm)
		add_arg(argv, argc, text, len, "--allow-pvm");
}

/* Runs argv (argv[0] the coldstart binary) and waits; its exit code. */
static int spawn_wait(char **argv)
{
	int status;
	pid_t pid;

	if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) != 0)
		return CLI_FAIL;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : CLI_FAIL;
}

/* Driver d's arguments after `coldstart bench NAME`, its level's (split
 * in `buf`, which must outlive argv) and the guest's, into argv from
 * argc on and into `text` as recorded. */
static void driver_args(const struct bench_driver *d,
			const struct suite_opts *o, char *buf, size_t buf_len,
			char **argv, int *argc, char *text, size_t len)
{
	char *save = NULL;

	snprintf(buf, buf_len, "%s", level_args(d, o->level, &o->guest));
	text[0] = 0;
	for (char *t = strtok_r(buf, " ", &save); t && *argc < 32;
	     t = strtok_r(NULL, " ", &save))
		add_arg(argv, argc, text, len, t);
	if (o->guest.kernel)
		add_guest_args(&o->guest, d->name, argv, argc, text, len);
}

/* Runs one driver as a child process (`coldstart bench NAME ARGS...
 * --out DIR`), so no driver inherits another's memory high-water mark,
 * descriptors or state. Returns its exit code. */
static int run_driver(const struct bench_driver *d,
		      const struct suite_opts *o,
		      struct run *r)
{
	const char *exe = cli__self_exe();
	char buf[256], *argv[RUN_MAX_ARGS];
	int argc = 0;
	uint64_t t0;

	if (!exe)
		return r->exit = cli__error(CLI_FAIL, "bench suite: cannot "
					    "find the coldstart binary");
	argv[argc++] = (char *)exe;
	argv[argc++] = "bench";
	argv[argc++] = (char *)d->name;
	driver_args(d, o, buf, sizeof(buf), argv, &argc, r->args,
		    sizeof(r->args));
	argv[argc++] = "--out";
	argv[argc++] = (char *)o->out_dir;
	argv[argc] = NULL;
	fprintf(stderr, "==> bench %s %s\n", d->name, r->args);
	fflush(stdout);
	t0 = timeline__now();
	r->exit = spawn_wait(argv);
	r->wall_s = (double)(timeline__now() - t0) / 1e9;
	fprintf(stderr, "==> bench %s: %s in %.1f s\n", d->name,
		r->exit == CLI_OK ? "done" : r->exit == CLI_SKIP
			? "skipped (this host cannot run it)" : "FAILED",
		r->wall_s);
	return r->exit;
}

/* The snapshot `bench restore` and `bench pool` restore: the user's guest
 * paused at boot complete (`coldstart snapshot create --kernel`), in a
 * new directory under $TMPDIR or /var/tmp. Its exit code. */
static int make_guest_snapshot(struct suite_guest *g)
{
	char *argv[RUN_MAX_ARGS], text[1024] = "";
	int argc = 0, code;

	if (restore__scratch_dir(g->snap_base, NULL, "suite") < 0)
		return cli__error(CLI_FAIL, "bench suite: the guest's "
				  "snapshot: %s", err__last());
	if (snapshot__join(g->snap, g->snap_base, "snap") < 0)
		return cli__error(CLI_FAIL, "bench suite: %s", err__last());
	argv[argc++] = (char *)cli__self_exe();
	add_arg(argv, &argc, text, sizeof(text), "snapshot");
	add_arg(argv, &argc, text, sizeof(text), "create");
	add_arg(argv, &argc, text, sizeof(text), g->snap);
	add_guest_args(g, "snapshot", argv, &argc, text, sizeof(text));
	add_arg(argv, &argc, text, sizeof(text), "--quiet");
	argv[argc] = NULL;
	fprintf(stderr, "==> coldstart %s\n", text);
	code = spawn_wait(argv);
	if (code != CLI_OK)
		fprintf(stderr, "==> snapshot create: %s (exit %d)\n",
			code == CLI_SKIP ? "this host cannot run the guest"
					 : "FAILED", code);
	return code;
}

static const char *status_name(int exit)
{
	return exit == CLI_OK ? "ok" : exit == CLI_SKIP ? "skipped" : "failed";
}

/* The suite's config: its level and, with --kernel, the guest, which
 * result__new names by sha256 as the drivers' documents do. */
static json_t *suite_config(const struct suite_opts *o, const char *level)
{
	const struct suite_guest *g = &o->guest;
	json_t *cfg = json_pack("{s:s}", "level", level);

	if (cfg && g->kernel) {
		json_object_set_new(cfg, "kernel", json_string(g->kernel));
		json_object_set_new(cfg, "initrd", g->initrd
				    ? json_string(g->initrd) : json_null());
		if (g->cmdline)
			json_object_set_new(cfg, "cmdline",
					    json_string(g->cmdline));
		if (g->rootfs)
			json_object_set_new(cfg, "rootfs",
					    json_string(g->rootfs));
	}
	return cfg;
}

static json_t *suite_doc(const struct suite_opts *o, const struct run *runs,
			 size_t n, const double *per, const double *empty,
			 double wall_s)
{
	static const char *const levels[] = { "full", "quick", "smoke" };
	json_t *drivers = json_array(), *doc, *h;
	struct summary sp, se;

	for (size_t i = 0; i < n; i++)
		json_array_append_new(drivers, json_pack(
			"{s:s, s:s, s:s, s:i, s:f}", "name", runs[i].name,
			"args", runs[i].args, "status", status_name(runs[i].exit),
			"exit", runs[i].exit, "wall_s", runs[i].wall_s));
	doc = result__new("suite", suite_config(o, levels[o->level]));
	if (!doc)
		return NULL;
	result__add_series(doc, "harness.per_sample", "ns", RESULT_LOWER,
			   json_pack("{s:i}", "samples_per_value",
				     HARNESS_PER_BLOCK),
			   per, HARNESS_BLOCKS);
	stats__summarize(per, HARNESS_BLOCKS, &sp);
	stats__summarize(empty, HARNESS_BLOCKS, &se);
	h = json_pack("{s:f, s:f, s:f, s:s}", "overhead_ns_p50", sp.p50,
		      "overhead_ns_p99", sp.p99, "empty_sample_ns_p50", se.p50,
		      "method", "blocks of 1000 empty samples, each timed with "
		      "two CLOCK_MONOTONIC reads and stored; block time / 1000");
	json_object_set_new(doc, "harness", h);
	json_object_set_new(doc, "drivers", drivers);
	json_object_set_new(doc, "wall_s", json_real(wall_s));
	return doc;
}

static int report_all(const char *dir, const struct run *runs, size_t n)
{
	char paths[16][PATH_MAX], *inputs[17];
	struct report_opts ro = { .out_dir = dir, .md = true, .png = true,
				  .svg = true, .inputs = inputs, .quiet = true };
	bool skipped;
	int ret;

	for (size_t i = 0; i < n && ro.nr_inputs < 16; i++) {
		snprintf(paths[ro.nr_inputs], PATH_MAX, "%s/%s.json", dir,
			 runs[i].name);
		if (runs[i].exit == CLI_OK && access(paths[ro.nr_inputs], R_OK) == 0)
			inputs[ro.nr_inputs] = paths[ro.nr_inputs], ro.nr_inputs++;
	}
	snprintf(paths[ro.nr_inputs], PATH_MAX, "%s/suite.json", dir);
	inputs[ro.nr_inputs] = paths[ro.nr_inputs];
	ro.nr_inputs++;
	ret = report__generate(&ro, &skipped);
	if (ret == 0 && skipped)
		fprintf(stderr, "coldstart: bench suite: warning: gnuplot is "
			"not installed; the report has no plots\n");
	return ret;
}

void suite__default_dir(char *buf, size_t len)
{
	char host[64] = "host";
	time_t now = time(NULL);
	struct tm tm;

	gethostname(host, sizeof(host) - 1);
	gmtime_r(&now, &tm);
	snprintf(buf, len, "results/%s-%04d%02d%02d-%02d%02d%02d", host,
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min, tm.tm_sec);
}

/* Whether the suite runs driver d: not excluded, in --only, and with a
 * guest of the user's, one that takes it. */
static bool will_run(const struct suite_opts *o,
		     const struct bench_driver *d)
{
	const struct suite_args *p = args_of(d);

	if (!p || (o->only && !in_list(o->only, d->name)))
		return false;
	if (!o->guest.kernel) /* the probe guest's, if it has levels */
		return p->quick != NULL;
	return why_not_guest(d, p, &o->guest) == NULL;
}

bool suite__driver_args(const void *opts, const char *name, char *text,
			size_t len)
{
	const struct suite_opts *o = opts;
	const struct bench_driver *d = driver_named(o, name);
	char buf[256], *argv[RUN_MAX_ARGS];
	int argc = 0;

	if (!d || !will_run(o, d))
		return false;
	driver_args(d, o, buf, sizeof(buf), argv, &argc, text, len);
	return true;
}

static int run_suite(struct suite_opts *o, int *failed)
{
	double per[HARNESS_BLOCKS], empty[HARNESS_BLOCKS];
	size_t nd = o->nr_drivers, n = 0;
	const struct bench_driver *const *d = o->drivers;
	struct run runs[32];
	uint64_t t0 = timeline__now();
	json_t *doc;
	int ret = output__mkdirs(o->out_dir);

	if (ret < 0)
		return ret;
	harness_overhead(per, empty);
	for (size_t i = 0; i < nd && n < 32; i++) {
		if (!will_run(o, d[i])) {
			if (o->guest.kernel && args_of(d[i]) && !o->only)
				fprintf(stderr, "==> bench %s: not run (%s)\n",
					d[i]->name, why_not_guest(d[i],
						args_of(d[i]), &o->guest));
			continue;
		}
		runs[n] = (struct run){ .name = d[i]->name };
		if (o->guest.kernel && takes_snapshot(d[i]->name) &&
		    (runs[n].exit = make_guest_snapshot(&o->guest)) != CLI_OK)
			snprintf(runs[n].args, sizeof(runs[n].args),
				 "not run: snapshot create of the guest "
				 "failed");
		else
			run_driver(d[i], o, &runs[n]);
		restore__remove_scratch(o->guest.snap_base, o->guest.snap);
		if (runs[n].exit != CLI_OK && runs[n].exit != CLI_SKIP)
			(*failed)++;
		n++;
	}
	doc = suite_doc(o, runs, n, per, empty,
			(double)(timeline__now() - t0) / 1e9);
	if (!doc)
		return -ENOMEM;
	ret = result__write(doc, o->out_dir, NULL);
	json_decref(doc);
	if (ret == 0 && o->report)
		ret = report_all(o->out_dir, runs, n);
	return ret;
}

static int run(void *opts)
{
	struct suite_opts *o = opts;
	int failed = 0, ret;

	if (!o->out_dir) {
		suite__default_dir(o->dir, sizeof(o->dir));
		o->out_dir = o->dir;
	}
	ret = run_suite(o, &failed);
	if (ret < 0)
		return cli__error(ret == -EINVAL ? CLI_USAGE : CLI_FAIL,
				  "bench suite: %s", err__last());
	printf("suite: results and report in %s/\n", o->out_dir);
	if (failed)
		return cli__error(CLI_FAIL, "bench suite: %d driver(s) failed",
				  failed);
	return CLI_OK;
}

void suite__placement(const void *opts, bool *emulate, bool *no_emulate)
{
	const struct suite_opts *o = opts;

	*emulate = o->emulate;
	*no_emulate = o->no_emulate;
}

/* ---- options ---- */

static void init(void *opts)
{
	struct suite_opts *o = opts;

	o->level = LEVEL_FULL;
	o->report = true;
}

/* The guest's options (the common rows) and the table, into place. */
static int check(void *opts)
{
	struct suite_opts *o = opts;
	const struct bench_common *c = &o->c;
	struct suite_guest *g = &o->guest;
	uint64_t v;
	int ret = 0;

	o->drivers = c->table;
	o->nr_drivers = c->nr_table;
	o->out_dir = c->out_dir;
	*g = (struct suite_guest){ .kernel = c->kernel, .initrd = c->initrd,
				   .cmdline = c->cmdline, .mem = c->mem,
				   .vcpus = c->vcpus, .rootfs = g->rootfs,
				   .allow_pvm = c->allow_pvm };
	if (g->mem)
		ret = args__size("--mem", g->mem, &v);
	if (ret == 0 && g->vcpus)
		ret = args__u64("--vcpus", g->vcpus, 1, 64, &v);
	if (ret == 0)
		ret = check_guest(g);
	if (ret == 0 && o->only)
		ret = check_only(o);
	return ret;
}

static int set_quick(void *opts, const char *arg)
{
	(void)arg;
	((struct suite_opts *)opts)->level = LEVEL_QUICK;
	return 0;
}

static int set_smoke(void *opts, const char *arg)
{
	(void)arg;
	((struct suite_opts *)opts)->level = LEVEL_SMOKE;
	return 0;
}

static int set_only(void *opts, const char *arg)
{
	((struct suite_opts *)opts)->only = arg;
	return 0;
}

static int set_no_report(void *opts, const char *arg)
{
	(void)arg;
	((struct suite_opts *)opts)->report = false;
	return 0;
}

static int set_emulate(void *opts, const char *arg)
{
	(void)arg;
	((struct suite_opts *)opts)->emulate = true;
	return 0;
}

static int set_no_emulate(void *opts, const char *arg)
{
	(void)arg;
	((struct suite_opts *)opts)->no_emulate = true;
	return 0;
}

static int set_kernel(void *opts, const char *arg)
{
	((struct suite_opts *)opts)->c.kernel = arg;
	return 0;
}

static int set_rootfs(void *opts, const char *arg)
{
	((struct suite_opts *)opts)->guest.rootfs = arg;
	return 0;
}

static int set_out(void *opts, const char *arg)
{
	((struct suite_opts *)opts)->c.out_dir = arg;
	return 0;
}

static const struct opt table[] = {
	{ "quick", 0, NULL, false, "short runs of each driver (a few minutes "
	  "in all)", set_quick, NULL },
	{ "smoke", 0, NULL, false, "tiny runs: checks that every driver "
	  "works", set_smoke, NULL },
	{ "out", 0, "DIR", false, "output directory (default "
	  "results/HOST-DATE)", set_out, NULL },
	{ "only", 0, "LIST", false, "only these drivers (comma-separated)",
	  set_only, NULL },
	{ "no-report", 0, NULL, false, "skip the report", set_no_report,
	  NULL },
	{ "emulate", 0, NULL, false, "run inside the emulated SVM host even "
	  "with a usable /dev/kvm", set_emulate, NULL },
	{ "no-emulate", 0, NULL, false, "never: without a usable /dev/kvm the "
	  "drivers are skipped", set_no_emulate, NULL },
	OPT_HEADING("Your own guest instead of the built-in probe guest:"),
	{ "kernel", 0, "FILE", false, "a Linux bzImage or vmlinux: boot, rate "
	  "and density boot it,\nrestore and pool restore a snapshot of it "
	  "taken at boot\ncomplete; lifecycle measures only the probe guest "
	  "and is\nnot run, peers and session run only with --rootfs",
	  set_kernel, NULL },
	{ "rootfs", 0, "FILE", false, "the guest's root disk (image build "
	  "--rootfs): boot times\na python3 through its agent to first "
	  "output, density holds\nVMs that ran it, each on its own overlay, "
	  "restore and pool\nrestore its snapshot, session runs turns on "
	  "it, peers boots\nit under QEMU microvm too (with --initrd)",
	  set_rootfs, NULL },
	OPT_END,
};

const struct bench_driver suite_driver = {
	.name = "suite",
	.summary = "every driver in turn (--quick, --smoke), then the report",
	.usage = "Usage: coldstart bench suite [--quick | --smoke] [--out DIR] "
		 "[--only LIST] [--no-report]\n"
		 "                           [--kernel FILE [--initrd FILE] "
		 "[--cmdline TEXT] ...]\n"
		 "Runs every benchmark driver in turn (lifecycle, boot, "
		 "restore, rate, density,\npeers, pool: whichever this build "
		 "has) into DIR, measures the harness's own overhead\nper "
		 "sample, writes DIR/suite.json and then the report "
		 "(report.md, CSV, plots).\nA driver the host cannot run at "
		 "all (exit 77) is skipped; one that leaves out\npart of its "
		 "work (cold caches on tmpfs, QEMU missing, no huge pages) "
		 "does\nthe rest and succeeds; the report lists both under "
		 "\"Left out\".\n",
	.epilog = "Without a usable /dev/kvm the suite runs inside an emulated "
		  "SVM host\n(coldstart emulate): every driver works there, "
		  "timings are functional\n(an emulated CPU) and the results "
		  "say so.\n",
	.common = BENCH_GUEST & ~BENCH_KERNEL,
	.opts = table,
	.size = sizeof(struct suite_opts),
	.common_at = offsetof(struct suite_opts, c),
	.init = init,
	.check = check,
	.run = run,
};
