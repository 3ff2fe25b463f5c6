/* The benchmark suite: runs the registered drivers one after another, each
 * as a child process with per-driver quick parameters, measures what the
 * harness itself adds to a sample, writes suite.json and the report. */
#include "suite.h"

#include "args.h"
#include "err.h"
#include "output.h"
#include "report.h"
#include "result.h"
#include "result_new.h"
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

/* Parameters per driver: quick keeps the suite to a few minutes on a
 * 2-core PVM host; smoke only proves every driver runs end to end. */
static const struct {
	const char *driver, *quick, *smoke;
} params[] = {
	{ "lifecycle", "-n 100 -w 10", "-n 3 -w 1 --mode in-process" },
	{ "boot", "-n 50 -w 5", "-n 3 -w 1" },
	{ "restore", "-n 5 -w 1",
	  "-n 2 -w 0 --mem 8M --ws 4M --strategy mmap,prefetch --no-baseline" },
	{ "rate", "-n 20 -w 2 --rounds 3", "-n 2 -w 1 --rounds 1 --workers 1" },
	{ "density", "-n 8 -w 1", "-n 2 -w 0" },
	{ "peers", "-n 10 -w 2", "-n 2 -w 1" },
	{ "pool", "--arrivals poisson:50 --duration 10s --size 4",
	  "--arrivals poisson:20 --duration 1s --size 2" },
};

/* Drivers that are not part of the suite: the floor runs inside
 * lifecycle, probes needs BPF and measures the probes, not VMs, soak
 * runs for many minutes and is run on its own. */
static const char *const excluded[] = { "suite", "floor", "probes", "soak",
					NULL };

#define HARNESS_BLOCKS 200
#define HARNESS_PER_BLOCK 1000

struct suite_opts {
	enum level level;
	const char *out_dir;
	const char *only; /* comma-separated drivers, or NULL */
	bool report;
};

struct run {
	const char *name;
	char args[256];
	int exit;
	double wall_s;
};

static void usage(FILE *out)
{
	fputs("Usage: coldstart bench suite [--quick | --smoke] [--out DIR] "
	      "[--only LIST] [--no-report]\n"
	      "Runs every benchmark driver in turn (lifecycle, boot, restore, "
	      "rate, density,\npeers, pool: whichever this build has) into DIR, "
	      "measures the harness's own overhead\nper sample, writes "
	      "DIR/suite.json and then the report (report.md, CSV, plots).\n"
	      "A driver the host cannot run at all (exit 77) is skipped; one "
	      "that leaves out\npart of its work (cold caches on tmpfs, QEMU "
	      "missing, no huge pages) does\nthe rest and succeeds; the report "
	      "lists both under \"Left out\".\n\n"
	      "  --quick       short runs of each driver (a few minutes in all)\n"
	      "  --smoke       tiny runs: checks that every driver works\n"
	      "  --out DIR     output directory (default results/HOST-DATE)\n"
	      "  --only LIST   only these drivers (comma-separated)\n"
	      "  --no-report   skip the report\n"
	      "  --emulate     run inside the emulated SVM host even with a "
	      "usable /dev/kvm\n"
	      "  --no-emulate  never: without a usable /dev/kvm the drivers "
	      "are skipped\n"
	      "Without a usable /dev/kvm the suite runs inside an emulated SVM "
	      "host\n(coldstart emulate): every driver works there, timings "
	      "are functional\n(an emulated CPU) and the results say so.\n",
	      out);
}

static int parse(int argc, char **argv, struct suite_opts *o)
{
	static const struct option opts[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "smoke", no_argument, NULL, 's' },
		{ "out", required_argument, NULL, 'o' },
		{ "only", required_argument, NULL, 'O' },
		{ "no-report", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct suite_opts){ .level = LEVEL_FULL, .report = true };
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'q': o->level = LEVEL_QUICK; break;
		case 's': o->level = LEVEL_SMOKE; break;
		case 'o': o->out_dir = optarg; break;
		case 'O': o->only = optarg; break;
		case 'R': o->report = false; break;
		case 'h': return 1;
		default:
			return args__bad_option(argv);
		}
	}
	return args__no_operands(argc, argv);
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

static bool is_excluded(const char *name)
{
	for (int i = 0; excluded[i]; i++)
		if (!strcmp(excluded[i], name))
			return true;
	return false;
}

static const char *args_for(const char *driver, enum level level)
{
	for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++)
		if (!strcmp(params[i].driver, driver))
			return level == LEVEL_QUICK ? params[i].quick
			       : level == LEVEL_SMOKE ? params[i].smoke : "";
	return "";
}

/* Runs one driver as a child process (`coldstart bench NAME ARGS...
 * --out DIR`), so no driver inherits another's memory high-water mark,
 * descriptors or state. Returns its exit code. */
static int run_driver(const struct command *d, const char *out_dir,
		      struct run *r)
{
	char buf[256], *argv[40], *save = NULL;
	const char *exe = cli__self_exe();
	int argc = 0, status;
	uint64_t t0;
	pid_t pid;

	if (!exe)
		return r->exit = cli__error(CLI_FAIL, "bench suite: cannot "
					    "find the coldstart binary");
	snprintf(buf, sizeof(buf), "%s", r->args);
	argv[argc++] = (char *)exe;
	argv[argc++] = "bench";
	argv[argc++] = (char *)d->name;
	for (char *t = strtok_r(buf, " ", &save); t && argc < 36;
	     t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	argv[argc++] = "--out";
	argv[argc++] = (char *)out_dir;
	argv[argc] = NULL;
	fprintf(stderr, "==> bench %s %s\n", d->name, r->args);
	fflush(stdout);
	t0 = timeline__now();
	if (posix_spawn(&pid, exe, NULL, NULL, argv, environ) != 0) {
		r->exit = CLI_FAIL;
	} else {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		r->exit = WIFEXITED(status) ? WEXITSTATUS(status) : CLI_FAIL;
	}
	r->wall_s = (double)(timeline__now() - t0) / 1e9;
	fprintf(stderr, "==> bench %s: %s in %.1f s\n", d->name,
		r->exit == CLI_OK ? "done" : r->exit == CLI_SKIP
			? "skipped (this host cannot run it)" : "FAILED",
		r->wall_s);
	return r->exit;
}

static const char *status_name(int exit)
{
	return exit == CLI_OK ? "ok" : exit == CLI_SKIP ? "skipped" : "failed";
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
	doc = result__new("suite", json_pack("{s:s}", "level", levels[o->level]));
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

/* Every name in --only must be a suite driver of this build. */
static int check_only(const char *only, const struct command *d, size_t nd)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", only);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < nd && (strcmp(d[i].name, t) || is_excluded(t)); i++)
			;
		if (i == nd)
			return err__set(EINVAL, "--only: '%s' is not a driver of "
					"the suite", t);
	}
	return 0;
}

static int run_suite(const struct suite_opts *o, int *failed)
{
	double per[HARNESS_BLOCKS], empty[HARNESS_BLOCKS];
	size_t nd, n = 0;
	const struct command *d = bench__drivers(&nd);
	struct run runs[32];
	uint64_t t0 = timeline__now();
	json_t *doc;
	int ret = o->only ? check_only(o->only, d, nd) : 0;

	if (ret == 0)
		ret = output__mkdirs(o->out_dir);
	if (ret < 0)
		return ret;
	harness_overhead(per, empty);
	for (size_t i = 0; i < nd && n < 32; i++) {
		if (is_excluded(d[i].name) || (o->only && !in_list(o->only, d[i].name)))
			continue;
		runs[n] = (struct run){ .name = d[i].name };
		snprintf(runs[n].args, sizeof(runs[n].args), "%s",
			 args_for(d[i].name, o->level));
		if (run_driver(&d[i], o->out_dir, &runs[n]) != CLI_OK &&
		    runs[n].exit != CLI_SKIP)
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

int suite__check_args(int argc, char **argv)
{
	struct suite_opts o;
	int ret = parse(argc, argv, &o);

	return ret < 0 ? cli__parsed(ret, "bench suite", usage) : 0;
}

int cmd_bench_suite(int argc, char **argv)
{
	char dir[PATH_MAX];
	struct suite_opts o;
	int failed = 0, ret = parse(argc, argv, &o);

	if (ret != 0)
		return cli__parsed(ret, "bench suite", usage);
	if (!o.out_dir) {
		suite__default_dir(dir, sizeof(dir));
		o.out_dir = dir;
	}
	ret = run_suite(&o, &failed);
	if (ret < 0)
		return cli__error(ret == -EINVAL ? CLI_USAGE : CLI_FAIL,
				  "bench suite: %s", err__last());
	printf("suite: results and report in %s/\n", o.out_dir);
	if (failed)
		return cli__error(CLI_FAIL, "bench suite: %d driver(s) failed",
				  failed);
	return CLI_OK;
}
