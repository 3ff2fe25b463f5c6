/* `bench restore`'s options: the probe snapshots it makes or the user's
 * own (--snapshot), checked before anything runs. */
#include "restore.h"
#include "restore_int.h"

#include "args.h"
#include "err.h"
#include "mem_restore.h"
#include "snapshot.h"

#include <string.h>

/* "64M,256M" into sizes, each a positive multiple of 4 KiB. */
static int parse_sizes(const char *opt, const char *text, uint64_t *out,
		       size_t *n)
{
	char buf[256], *save = NULL, *tok;
	int ret = 0;

	if (snprintf(buf, sizeof(buf), "%s", text) >= (int)sizeof(buf))
		return err__set(EINVAL, "%s: list too long", opt);
	*n = 0;
	for (tok = strtok_r(buf, ",", &save); ret == 0 && tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (*n == MAX_SIZES)
			return err__set(EINVAL, "%s: at most %d sizes", opt,
					MAX_SIZES);
		ret = args__size(opt, tok, &out[*n]);
		if (ret == 0 && (out[*n] == 0 || out[*n] % 4096))
			ret = err__set(EINVAL, "%s: '%s' is not a positive "
				       "multiple of 4 KiB", opt, tok);
		(*n)++;
	}
	if (ret == 0 && *n == 0)
		ret = err__set(EINVAL, "%s: empty list", opt);
	return ret;
}

static int parse_strategies(const char *text, struct restore_opts *o)
{
	char buf[256], *save = NULL, *tok;
	int ret = 0;

	if (snprintf(buf, sizeof(buf), "%s", text) >= (int)sizeof(buf))
		return err__set(EINVAL, "--strategy: list too long");
	o->nr_strategies = 0;
	for (tok = strtok_r(buf, ",", &save); ret == 0 && tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (o->nr_strategies == MAX_STRATEGIES)
			return err__set(EINVAL, "--strategy: too many");
		ret = mem__choose(mem_restore__strategies(), "--strategy", tok,
				  &o->strategies[o->nr_strategies++]);
	}
	if (ret == 0 && o->nr_strategies == 0)
		ret = err__set(EINVAL, "--strategy: empty list");
	return ret;
}

static int parse_cache(const char *text, struct restore_opts *o)
{
	static const char *const names[] = { "warm", "cold", NULL };
	char buf[64], *save = NULL, *tok;
	unsigned int which;
	int ret = 0;

	snprintf(buf, sizeof(buf), "%s", text);
	o->warm = o->cold = false;
	for (tok = strtok_r(buf, ",", &save); ret == 0 && tok;
	     tok = strtok_r(NULL, ",", &save)) {
		ret = args__choice("--cache", tok, names, &which);
		if (ret == 0 && which == 0)
			o->warm = true;
		else if (ret == 0)
			o->cold = true;
	}
	if (ret == 0 && !o->warm && !o->cold)
		ret = err__set(EINVAL, "--cache: empty list");
	return ret;
}

static void default_opts(struct restore_opts *o)
{
	const struct guest_mem_ops *const *s = mem_restore__strategies();

	*o = (struct restore_opts){ .c = { .count = 10, .warmup = 1,
					    .count_max = 1000000,
					    .warmup_max = 1000000 },
				    .warm = true,
				    .cold = true, .baseline = true,
				    .pattern = PROBE_PATTERN_RANDOM,
				    .op = PROBE_OP_READ };
	o->mems[0] = 64 * MiB;
	o->mems[1] = 256 * MiB;
	o->wss[0] = 16 * MiB;
	o->wss[1] = 64 * MiB;
	o->nr_mems = o->nr_wss = 2;
	for (; *s && o->nr_strategies < MAX_STRATEGIES; s++)
		o->strategies[o->nr_strategies++] = *s;
	o->once = restore__once;
}

/* The options that shape the probe snapshots this driver makes itself,
 * and why none applies to the user's own snapshot. */
static const struct {
	const char *name, *why;
} probe_only[] = {
	{ "--mem", "its guest memory size was fixed when it was "
	  "made" },
	{ "--ws", "its working set was fixed when it was made" },
	{ "--pattern", "its request phase was fixed when it was "
	  "made" },
	{ "--op", "its request phase was fixed when it was made" },
	{ "--no-baseline", "there is no never-stopped "
	  "baseline for it (the baseline boots the probe guest this driver "
	  "snapshots itself)" },
	{ "--snapshot-dir", "no snapshot is made: DIR is "
	  "restored where it is" },
};

/* The first of them given, for the error with --snapshot. */
static struct restore_opts *probe_only_given(void *opts, const char *name)
{
	struct restore_opts *o = opts;

	if (!o->probe_only)
		o->probe_only = name;
	return o;
}

static const char *probe_only_why(const char *name)
{
	for (size_t i = 0; i < sizeof(probe_only) / sizeof(probe_only[0]); i++)
		if (!strcmp(probe_only[i].name, name))
			return probe_only[i].why;
	return "";
}

/* Option combinations that cannot work are usage errors, found before
 * anything runs: no (mem, ws) pair fits, or only cold caches asked for on
 * a file system whose page cache cannot be evicted (with warm ones too,
 * the run measures those and records cold as left out). */
static int check(void *opts)
{
	const struct restore_opts *o = opts;
	struct group g[MAX_SIZES * MAX_SIZES];
	const char *dir = restore__scratch_parent(o->snapshot_dir);

	if (o->snapshot && o->probe_only)
		return err__set(EINVAL, "%s does not apply with --snapshot: %s",
				o->probe_only, probe_only_why(o->probe_only));
	if (o->snapshot && !*o->snapshot)
		return err__set(EINVAL, "--snapshot: empty directory name");
	if (!o->snapshot && o->exec)
		return err__set(EINVAL, "--exec applies only with --snapshot "
				"of a guest with an agent (the probe guest "
				"runs no commands)");
	if (!o->snapshot && o->allow_pvm)
		return err__set(EINVAL, "--allow-pvm applies only with "
				"--snapshot (the probe guest runs on PVM)");
	/* the snapshot itself is checked by restore__check_user */
	if (o->snapshot)
		return 0;
	if (restore__plan_groups(o, g) == 0)
		return err__set(EINVAL, "no memory size fits any working set "
				"(each needs mem >= ws + 2M, mem a multiple of "
				"2M)");
	if (o->cold && !o->warm && restore__in_memory(dir))
		return err__set(EINVAL, "%s is in memory (tmpfs): its page "
				"cache cannot be evicted, so --cache cold means "
				"nothing there; use --snapshot-dir on a disk or "
				"--cache warm", dir);
	return 0;
}

static void init(void *opts)
{
	default_opts(opts);
}

static int set_mem(void *opts, const char *arg)
{
	struct restore_opts *o = probe_only_given(opts, "--mem");

	return parse_sizes("--mem", arg, o->mems, &o->nr_mems);
}

static int set_ws(void *opts, const char *arg)
{
	struct restore_opts *o = probe_only_given(opts, "--ws");

	return parse_sizes("--ws", arg, o->wss, &o->nr_wss);
}

static int set_strategy(void *opts, const char *arg)
{
	return parse_strategies(arg, opts);
}

static int set_cache(void *opts, const char *arg)
{
	return parse_cache(arg, opts);
}

static int set_drop(void *opts, const char *arg)
{
	(void)arg;
	((struct restore_opts *)opts)->drop_caches = true;
	return 0;
}

static int set_no_baseline(void *opts, const char *arg)
{
	(void)arg;
	probe_only_given(opts, "--no-baseline")->baseline = false;
	return 0;
}

static int set_pattern(void *opts, const char *arg)
{
	static const char *const patterns[] = { "seq", "random", NULL };

	return args__choice("--pattern", arg, patterns,
			    &probe_only_given(opts, "--pattern")->pattern);
}

static int set_op(void *opts, const char *arg)
{
	static const char *const ops[] = { "read", "write", NULL };

	return args__choice("--op", arg, ops,
			    &probe_only_given(opts, "--op")->op);
}

static int set_snapdir(void *opts, const char *arg)
{
	probe_only_given(opts, "--snapshot-dir")->snapshot_dir = arg;
	return 0;
}

static int set_snapshot(void *opts, const char *arg)
{
	((struct restore_opts *)opts)->snapshot = arg;
	return 0;
}

static int set_exec(void *opts, const char *arg)
{
	((struct restore_opts *)opts)->exec = arg;
	return 0;
}

static int set_allow_pvm(void *opts, const char *arg)
{
	(void)arg;
	((struct restore_opts *)opts)->allow_pvm = true;
	return 0;
}

static const struct opt table[] = {
	{ "mem", 0, "LIST", false, "guest memory sizes (default 64M,256M)",
	  set_mem, NULL },
	{ "ws", 0, "LIST", false, "working-set sizes (default 16M,64M); pairs "
	  "that do not\nfit (ws > mem - 2M) are skipped", set_ws, NULL },
	{ "strategy", 0, "LIST", false, "restore strategies (default: all)",
	  set_strategy, NULL },
	{ "cache", 0, "LIST", false, "warm, cold or both (default warm,cold); "
	  "cold is left out\n(and recorded) when the snapshots are on tmpfs",
	  set_cache, NULL },
	{ "drop-caches", 0, NULL, false, "cold by writing "
	  "/proc/sys/vm/drop_caches (root) instead of\n"
	  "posix_fadvise(DONTNEED) on the snapshot files", set_drop, NULL },
	{ "no-baseline", 0, NULL, false, "skip the never-stopped series",
	  set_no_baseline, NULL },
	{ "pattern", 0, "NAME", false, "request-phase order: seq or random "
	  "(default random)", set_pattern, NULL },
	{ "op", 0, "NAME", false, "read (default) or write", set_op, NULL },
	{ "snapshot-dir", 0, "DIR", false, "where the snapshots are made "
	  "(default: a new directory in\n$TMPDIR or /var/tmp); removed "
	  "afterwards", set_snapdir, NULL },
	{ "snapshot", 0, "DIR", false, "restore this snapshot (not with "
	  "--mem, --ws, --pattern,\n--op, --no-baseline, --snapshot-dir); "
	  "cold is left\nout (and recorded) on tmpfs and for diff snapshots",
	  set_snapshot, NULL },
	{ "allow-pvm", 0, NULL, false, "with --snapshot: time a Linux "
	  "snapshot on a PVM host (only\nthe ring-0 test kernel runs there)",
	  set_allow_pvm, NULL },
	{ "exec", 0, "CMD", false, "with --snapshot of a --rootfs guest: the "
	  "command its agent\nruns, timed to its first output byte (default: "
	  "a python3\nthat imports json, re, subprocess, urllib.request)",
	  set_exec, NULL },
	OPT_END,
};

/* The strategies, after the exit codes: the list is the build's. */
static void more_help(FILE *out)
{
	fputs("Strategies:", out);
	for (const struct guest_mem_ops *const *s = mem_restore__strategies();
	     *s; s++)
		fprintf(out, " %s", (*s)->name);
	fputc('\n', out);
}

const struct bench_driver restore_driver = {
	.name = "restore",
	.summary = "snapshot restore strategies x memory x working set "
		   "(or --snapshot DIR), cold and warm cache",
	.usage = "Usage: coldstart bench restore [OPTIONS]\n"
		 "       coldstart bench restore --snapshot DIR [OPTIONS]\n"
		 "Creates snapshots of the probe guest with all of its memory "
		 "dirtied, restores\neach with every memory strategy and times "
		 "restore -> first KVM_RUN, -> first\nguest progress and -> DONE "
		 "of the request phase (which touches the working set),\nwith "
		 "the snapshot files evicted from the page cache (cold) and "
		 "cached (warm),\nbeside the same request phase in a VM that never "
		 "stopped. Strategies are\ninterleaved. With --snapshot, "
		 "restores the snapshot DIR instead (probe or Linux\nguest, "
		 "plain or diff, made by `coldstart snapshot create`), as it "
		 "is: to DONE,\nfor Linux the guest's done signal; no baseline. "
		 "DIR is only read, except that\nthe prefetch strategies record "
		 "DIR/wset on their first restore when it is\nmissing, as "
		 "`snapshot restore` does.\n",
	.epilog = "Exit codes: 0 done, 1 a restore failed, 2 usage or DIR not "
		  "a snapshot, 77 this\nhost cannot (no KVM; a Linux snapshot "
		  "on PVM).\n",
	.more_help = more_help,
	.common = BENCH_COUNT | BENCH_WARMUP | BENCH_JSON | BENCH_OUT |
		  BENCH_KVM,
	.opts = table,
	.size = sizeof(struct restore_opts),
	.common_at = offsetof(struct restore_opts, c),
	.init = init,
	.check = check,
	.run = restore__run,
	.suite = { .quick = "-n 5 -w 1",
		   .smoke = "-n 2 -w 0 --mem 8M --ws 4M --strategy "
			    "mmap,prefetch --no-baseline",
		   .linux_full = "", .linux_quick = "-n 5 -w 1",
		   .linux_smoke = "-n 2 -w 0 --strategy mmap,uffd --cache "
				  "warm" },
};
