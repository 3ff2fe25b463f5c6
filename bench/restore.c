/* The restore benchmark: snapshots of the probe guest with every page of
 * its memory dirtied (or the user's own snapshot, --snapshot), restored
 * with each memory strategy while the page cache is cold or warm, timed
 * to the first instruction and to DONE, and the same request phase in a
 * VM that never stopped as the baseline.
 * This file: options, snapshots, the measurement and the command (with
 * --snapshot's run). */
#include "restore.h"
#include "restore_int.h"

#include "args.h"
#include "cli.h"
#include "err.h"
#include "mem_restore.h"
#include "output.h"
#include "runner.h"
#include "snapshot.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *out)
{
	fputs("Usage: coldstart bench restore [OPTIONS]\n"
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
	      "`snapshot restore` does.\n\n"
	      "  -n, --count N        counted restores per series (default "
	      "10)\n"
	      "  -w, --warmup N       uncounted restores first (default 1)\n"
	      "  --mem LIST           guest memory sizes (default 64M,256M)\n"
	      "  --ws LIST            working-set sizes (default 16M,64M); "
	      "pairs that do not\n                       fit (ws > mem - 2M) "
	      "are skipped\n"
	      "  --strategy LIST      restore strategies (default: all)\n"
	      "  --cache LIST         warm, cold or both (default warm,cold); "
	      "cold is left out\n                       (and recorded) when "
	      "the snapshots are on tmpfs\n"
	      "  --drop-caches        cold by writing /proc/sys/vm/drop_caches "
	      "(root) instead of\n                       "
	      "posix_fadvise(DONTNEED) on the snapshot files\n"
	      "  --no-baseline        skip the never-stopped series\n"
	      "  --pattern NAME       request-phase order: seq or random "
	      "(default random)\n"
	      "  --op NAME            read (default) or write\n"
	      "  --snapshot-dir DIR   where the snapshots are made (default: "
	      "a new directory in\n                       $TMPDIR or /var/tmp); "
	      "removed afterwards\n"
	      "  --snapshot DIR       restore this snapshot (not with --mem, "
	      "--ws, --pattern,\n                       --op, --no-baseline, "
	      "--snapshot-dir); cold is left\n                       out "
	      "(and recorded) on tmpfs and for diff snapshots\n"
	      "  --allow-pvm          with --snapshot: time a Linux snapshot "
	      "on a PVM host (only\n                       the ring-0 test "
	      "kernel runs there)\n"
	      "  --json               the result document on stdout\n"
	      "  --out DIR            also write DIR/restore.json and "
	      "DIR/restore.md\n"
	      "  --kvm PATH           KVM device (default /dev/kvm)\n"
	      "Exit codes: 0 done, 1 a restore failed, 2 usage or DIR not a "
	      "snapshot, 77 this\nhost cannot (no KVM; a Linux snapshot on "
	      "PVM).\nStrategies:", out);
	for (const struct guest_mem_ops *const *s = mem_restore__strategies();
	     *s; s++)
		fprintf(out, " %s", (*s)->name);
	fputc('\n', out);
}

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

	*o = (struct restore_opts){ .count = 10, .warmup = 1, .warm = true,
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

enum { OPT_MEM = 256, OPT_WS, OPT_STRATEGY, OPT_CACHE, OPT_DROP,
       OPT_NO_BASELINE, OPT_PATTERN, OPT_OP, OPT_SNAPDIR, OPT_JSON,
       OPT_OUT, OPT_KVM, OPT_SNAPSHOT, OPT_PVM };

/* The options that shape the probe snapshots this driver makes itself,
 * and why none applies to the user's own snapshot. */
static const struct {
	int opt;
	const char *name, *why;
} probe_only[] = {
	{ OPT_MEM, "--mem", "its guest memory size was fixed when it was "
	  "made" },
	{ OPT_WS, "--ws", "its working set was fixed when it was made" },
	{ OPT_PATTERN, "--pattern", "its request phase was fixed when it was "
	  "made" },
	{ OPT_OP, "--op", "its request phase was fixed when it was made" },
	{ OPT_NO_BASELINE, "--no-baseline", "there is no never-stopped "
	  "baseline for it (the baseline boots the probe guest this driver "
	  "snapshots itself)" },
	{ OPT_SNAPDIR, "--snapshot-dir", "no snapshot is made: DIR is "
	  "restored where it is" },
};

static void note_probe_only(int c, struct restore_opts *o)
{
	for (size_t i = 0; i < sizeof(probe_only) / sizeof(probe_only[0]); i++)
		if (probe_only[i].opt == c && !o->probe_only)
			o->probe_only = probe_only[i].name;
}

static const char *probe_only_why(const char *name)
{
	for (size_t i = 0; i < sizeof(probe_only) / sizeof(probe_only[0]); i++)
		if (!strcmp(probe_only[i].name, name))
			return probe_only[i].why;
	return "";
}

static int parse_one(int c, char *arg, void *ctx)
{
	struct restore_opts *o = ctx;
	static const char *const patterns[] = { "seq", "random", NULL };
	static const char *const ops[] = { "read", "write", NULL };

	note_probe_only(c, o);
	switch (c) {
	case 'n': return args__u64("--count", arg, 1, 1000000, &o->count);
	case 'w': return args__u64("--warmup", arg, 0, 1000000, &o->warmup);
	case OPT_MEM: return parse_sizes("--mem", arg, o->mems, &o->nr_mems);
	case OPT_WS: return parse_sizes("--ws", arg, o->wss, &o->nr_wss);
	case OPT_STRATEGY: return parse_strategies(arg, o);
	case OPT_CACHE: return parse_cache(arg, o);
	case OPT_DROP: o->drop_caches = true; return 0;
	case OPT_NO_BASELINE: o->baseline = false; return 0;
	case OPT_PATTERN: return args__choice("--pattern", arg, patterns,
					      &o->pattern);
	case OPT_OP: return args__choice("--op", arg, ops, &o->op);
	case OPT_SNAPDIR: o->snapshot_dir = arg; return 0;
	case OPT_JSON: o->json = true; return 0;
	case OPT_OUT: o->out_dir = arg; return 0;
	case OPT_KVM: o->kvm_path = arg; return 0;
	case OPT_SNAPSHOT: o->snapshot = arg; return 0;
	case OPT_PVM: o->allow_pvm = true; return 0;
	default: return err__set(EINVAL, "unhandled option");
	}
}

static size_t plan_groups(const struct restore_opts *o, struct group *g);

/* Option combinations that cannot work are usage errors, found before
 * anything runs: no (mem, ws) pair fits, or only cold caches asked for on
 * a file system whose page cache cannot be evicted (with warm ones too,
 * the run measures those and records cold as left out). */
static int check_opts(const struct restore_opts *o)
{
	struct group g[MAX_SIZES * MAX_SIZES];
	const char *dir = restore__scratch_parent(o->snapshot_dir);

	if (o->snapshot && o->probe_only)
		return err__set(EINVAL, "%s does not apply with --snapshot: %s",
				o->probe_only, probe_only_why(o->probe_only));
	if (o->snapshot && !*o->snapshot)
		return err__set(EINVAL, "--snapshot: empty directory name");
	if (!o->snapshot && o->allow_pvm)
		return err__set(EINVAL, "--allow-pvm applies only with "
				"--snapshot (the probe guest runs on PVM)");
	/* the snapshot itself is checked by restore__check_user */
	if (o->snapshot)
		return 0;
	if (plan_groups(o, g) == 0)
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

/* 0, 1 for --help, or -EINVAL with a message. */
static int parse(int argc, char **argv, struct restore_opts *o)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "mem", required_argument, NULL, OPT_MEM },
		{ "ws", required_argument, NULL, OPT_WS },
		{ "strategy", required_argument, NULL, OPT_STRATEGY },
		{ "cache", required_argument, NULL, OPT_CACHE },
		{ "drop-caches", no_argument, NULL, OPT_DROP },
		{ "no-baseline", no_argument, NULL, OPT_NO_BASELINE },
		{ "pattern", required_argument, NULL, OPT_PATTERN },
		{ "op", required_argument, NULL, OPT_OP },
		{ "snapshot-dir", required_argument, NULL, OPT_SNAPDIR },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "kvm", required_argument, NULL, OPT_KVM },
		{ "snapshot", required_argument, NULL, OPT_SNAPSHOT },
		{ "allow-pvm", no_argument, NULL, OPT_PVM },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ret;

	default_opts(o);
	ret = args__getopt(argc, argv, "n:w:h", opts, parse_one, o);
	if (ret == 1)
		return 1;
	if (ret == 0)
		ret = args__no_operands(argc, argv);
	if (ret == 0)
		ret = check_opts(o);
	return ret;
}

/* ---- snapshots ---- */

static struct run_config group_guest(const struct restore_opts *o,
				     uint64_t mem, uint64_t ws)
{
	return (struct run_config){
		.mem_size = mem,
		.nr_vcpus = 1,
		.probe = { .init_bytes = mem - 2 * MiB, .ws_bytes = ws,
			   .pattern = o->pattern, .op = o->op, .seed = 1 },
		.timeout_ns = TIMEOUT_NS,
		.verify = true,
	};
}

/* Runs the guest to READY (every page of its memory written) and saves
 * it to `dir`. */
static int make_snapshot(struct kvm_host *kvm, const struct run_config *rc,
			 const char *dir)
{
	struct vm_config vcfg = runner__vm_config(rc);
	struct probe_params p = rc->probe;
	struct snapshot_stats st;
	struct probe probe;
	struct vm *vm;
	int ret = vm__create(kvm, &vcfg, NULL, &vm);

	if (ret < 0)
		return ret;
	p.pause_at_ready = true;
	ret = probe__setup(&probe, vm, &p);
	if (ret == 0)
		ret = vm__start(vm);
	if (ret == 0)
		ret = vm__wait_paused(vm, rc->timeout_ns);
	if (ret == 0)
		ret = snapshot__save(vm, &probe, dir, 0, &st);
	vm__end(vm, VM_STOPPED, "snapshot taken");
	vm__destroy(vm);
	return ret;
}

static int prepare_cache(const struct restore_opts *o, const char *dir,
			 bool cold)
{
	if (!cold)
		return restore__cache(dir, RESTORE_WARM);
	return restore__cache(dir, o->drop_caches ? RESTORE_COLD_DROP
						  : RESTORE_COLD);
}

/* ---- the measurement ---- */

/* A group's samples: a cell per strategy for each cache state, and the
 * never-stopped series; free_group() frees it, also when this failed
 * part way. */
static int alloc_group(struct group *g, const struct restore_opts *o)
{
	size_t nc = 2 * o->nr_strategies;

	g->cells = calloc(nc, sizeof(*g->cells));
	g->never = calloc(o->count, sizeof(double));
	if (!g->cells || !g->never)
		return err__set(ENOMEM, "allocating samples");
	for (size_t i = 0; i < nc; i++) {
		g->cells[i].ops = o->strategies[i % o->nr_strategies];
		for (int p = 0; p < RESTORE_NR_PHASES; p++) {
			g->cells[i].ns[p] = calloc(o->count, sizeof(double));
			if (!g->cells[i].ns[p])
				return err__set(ENOMEM, "allocating samples");
		}
	}
	return 0;
}

static void free_group(struct group *g, const struct restore_opts *o)
{
	for (size_t i = 0; g->cells && i < 2 * o->nr_strategies; i++)
		for (int p = 0; p < RESTORE_NR_PHASES; p++)
			free(g->cells[i].ns[p]);
	free(g->cells);
	free(g->never);
}

static void record(struct cell *c, const struct restore_sample *s,
		   double resident)
{
	for (int p = 0; p < RESTORE_NR_PHASES; p++)
		c->ns[p][c->n] = s->ns[p];
	c->n++;
	c->faults += s->mem.faults;
	c->bytes_read += s->mem.bytes_read;
	c->host.faults += s->host.faults;
	c->host.major += s->host.major;
	if (s->host.disk_read == RESTORE_NO_IO ||
	    c->host.disk_read == RESTORE_NO_IO)
		c->host.disk_read = RESTORE_NO_IO;
	else
		c->host.disk_read += s->host.disk_read;
	if (resident > c->resident_max)
		c->resident_max = resident;
}

/* Every strategy once per round, the order rotating each round so none
 * always follows the same neighbour. */
static int measure_cache(struct kvm_host *kvm, const struct restore_opts *o,
			 struct group *g, bool cold)
{
	struct cell *cells = g->cells + (cold ? o->nr_strategies : 0);
	uint64_t total = o->warmup + o->count;
	char what[96];
	int ret = 0;

	if (o->snapshot)
		snprintf(what, sizeof(what), "restore snapshot %s",
			 cold ? "cold" : "warm");
	else
		snprintf(what, sizeof(what), "restore mem %" PRIu64 "M ws %"
			 PRIu64 "M %s", g->mem / MiB, g->ws / MiB,
			 cold ? "cold" : "warm");
	for (uint64_t i = 0; ret == 0 && i < total; i++) {
		for (size_t k = 0; ret == 0 && k < o->nr_strategies; k++) {
			size_t idx = (k + i) % o->nr_strategies;
			struct cell *c = &cells[idx];
			struct restore_sample s;
			double resident = 0;

			if (g->skip[idx])
				continue;
			ret = prepare_cache(o, g->dir, cold);
			if (ret == 0 && cold)
				resident = restore__resident_share(g->dir);
			if (ret == 0)
				ret = o->once(kvm, g->dir, c->ops, 0, &s);
			if (ret == 0 && i >= o->warmup)
				record(c, &s, resident);
		}
		output__progress(what, (unsigned long)(i + 1),
				 (unsigned long)total);
	}
	output__progress_done();
	return ret;
}

/* The request phase (READY -> DONE) of a VM that never stopped: the
 * same guest, memory and working set, no snapshot. */
static int measure_never_stopped(struct kvm_host *kvm,
				 const struct restore_opts *o, struct group *g)
{
	struct run_config rc = group_guest(o, g->mem, g->ws);
	uint64_t total = o->warmup + o->count;

	for (uint64_t i = 0; i < total; i++) {
		struct run_result res = { 0 };
		int ret = runner__probe(kvm, &rc, &res);

		if (ret == 0 && !runner__succeeded(&rc, &res))
			ret = err__set(EIO, "never-stopped guest failed: %s",
				       res.reason);
		if (ret < 0)
			return ret;
		if (i >= o->warmup)
			g->never[g->nr_never++] =
				span(&res.tl, TL_GUEST_READY, TL_GUEST_DONE);
		output__progress("never-stopped baseline",
				 (unsigned long)(i + 1), (unsigned long)total);
	}
	output__progress_done();
	return 0;
}

/* One uncounted restore per strategy: prefetch records its working set
 * here, before anything counts; a strategy this host cannot do (-ENOTSUP,
 * e.g. huge pages not reserved) or a user's compressed snapshot cannot
 * (-EINVAL: the strategies that map the memory file or read regions of it
 * refuse one) is skipped with the reason. */
static int trials(struct kvm_host *kvm, const struct restore_opts *o,
		  struct group *g)
{
	for (size_t i = 0; i < o->nr_strategies; i++) {
		struct restore_sample s;
		int ret = o->once(kvm, g->dir, o->strategies[i], 0, &s);

		if (ret == -ENOTSUP || (ret == -EINVAL && o->snap.compressed)) {
			g->skip[i] = true;
			snprintf(g->why[i], sizeof(g->why[i]), "%s: %s",
				 ret == -ENOTSUP ? "this host cannot do it"
						 : "this snapshot cannot",
				 err__last());
			continue;
		}
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int measure_group(struct kvm_host *kvm, const struct restore_opts *o,
			 const char *base, struct group *g)
{
	struct run_config rc = group_guest(o, g->mem, g->ws);
	int ret;

	if (snprintf(g->dir, sizeof(g->dir), "%s/mem%" PRIu64 "M-ws%" PRIu64
		     "M", base, g->mem / MiB, g->ws / MiB) >= (int)sizeof(g->dir))
		return err__set(ENAMETOOLONG, "snapshot directory %s: path "
				"too long", base);
	ret = make_snapshot(kvm, &rc, g->dir);
	if (ret == 0)
		ret = trials(kvm, o, g);
	if (ret == 0 && o->warm)
		ret = measure_cache(kvm, o, g, false);
	if (ret == 0 && o->cold)
		ret = measure_cache(kvm, o, g, true);
	if (ret == 0 && o->baseline)
		ret = measure_never_stopped(kvm, o, g);
	snapshot__abort_dir(g->dir);
	return ret;
}

/* ---- the command ---- */

const char *restore__scratch_parent(const char *given)
{
	const char *tmp = getenv("TMPDIR");

	if (given)
		return given;
	return tmp && *tmp ? tmp : "/var/tmp";
}

int restore__scratch_dir(char base[PATH_MAX], const char *parent,
			 const char *who)
{
	int ret = 0;

	parent = restore__scratch_parent(parent);
	if (snprintf(base, PATH_MAX, "%s/coldstart-%s-XXXXXX", parent, who) >=
	    PATH_MAX)
		ret = err__set(ENAMETOOLONG, "a snapshot directory in %s: "
			       "the path is too long", parent);
	else if (!mkdtemp(base))
		ret = err__sys(errno, "creating a snapshot directory %s", base);
	if (ret < 0)
		base[0] = 0; /* nothing for restore__remove_scratch */
	return ret;
}

void restore__remove_scratch(char base[PATH_MAX], const char *snap)
{
	if (!base[0])
		return;
	snapshot__abort_dir(snap);
	rmdir(base);
	base[0] = 0;
}

/* A fresh directory for the snapshots (check_opts refused cold caches
 * on tmpfs); *fs names its file system kind for the config. */
static int snapshot_base(const struct restore_opts *o, char *base,
			 const char **fs)
{
	int ret = restore__scratch_dir(base, o->snapshot_dir, "restore");

	if (ret == 0)
		*fs = restore__in_memory(base) ? "tmpfs" : "disk";
	return ret;
}

static size_t plan_groups(const struct restore_opts *o, struct group *g)
{
	size_t n = 0;

	for (size_t i = 0; i < o->nr_mems; i++)
		for (size_t j = 0; j < o->nr_wss; j++) {
			if (o->mems[i] % (2 * MiB) ||
			    o->wss[j] + 2 * MiB > o->mems[i])
				continue;
			g[n].mem = o->mems[i];
			g[n++].ws = o->wss[j];
		}
	return n;
}

/* Cold caches on tmpfs mean nothing (no page cache to evict): the run
 * measures warm ones alone and says why in cold_why (check_opts refused
 * cold alone). */
static void drop_cold_on_tmpfs(struct restore_opts *o, const char *fs,
			       const char *base, char *cold_why, size_t len)
{
	cold_why[0] = '\0';
	if (!o->cold || strcmp(fs, "tmpfs"))
		return;
	o->cold = false;
	snprintf(cold_why, len, "the snapshot directory %s is in memory "
		 "(tmpfs): its page cache cannot be evicted, so only warm "
		 "restores were measured; use --snapshot-dir on a disk", base);
}

/* The user's snapshot as the one group of the run: its memory size and,
 * for the probe guest, the working set it was made with (a Linux guest's
 * is unknown: 0). The directory is only read, never removed. */
static int user_group(const struct restore_opts *o, struct group *g)
{
	g->mem = o->snap.mem_size;
	g->ws = o->snap.linux_guest ? 0 : o->snap.params.ws_bytes;
	if (snprintf(g->dir, sizeof(g->dir), "%s", o->snapshot) >=
	    (int)sizeof(g->dir))
		return err__set(ENAMETOOLONG, "snapshot directory %s: path "
				"too long", o->snapshot);
	return alloc_group(g, o);
}

/* `bench restore --snapshot DIR` after its options were parsed; returns
 * an enum cli_exit (2 for DIR, 77 for a Linux snapshot on PVM, before
 * /dev/kvm is opened). */
static int run_user(struct restore_opts *o)
{
	struct group g = { 0 };
	const char *cold_why = NULL;
	struct kvm_host kvm;
	int ret, code;

	code = restore__check_user("bench restore", o->snapshot, o->allow_pvm,
				   &o->warm, &o->cold, &o->snap, &cold_why);
	if (code != CLI_OK)
		return code;
	o->once = restore__once_for(&o->snap);
	ret = kvm__open(&kvm, o->kvm_path);
	if (ret < 0)
		return cli__error(cli__exit_for(ret), "bench restore: %s",
				  err__last());
	ret = user_group(o, &g);
	if (ret == 0)
		ret = trials(&kvm, o, &g);
	if (ret == 0 && o->warm)
		ret = measure_cache(&kvm, o, &g, false);
	if (ret == 0 && o->cold)
		ret = measure_cache(&kvm, o, &g, true);
	kvm__close(&kvm);
	if (ret == 0)
		ret = restore__emit(o, &g, 1, o->snap.in_memory ? "tmpfs"
								: "disk",
				    cold_why ? cold_why : "");
	free_group(&g, o);
	if (ret < 0)
		return cli__error(cli__exit_for(ret), "bench restore: %s",
				  err__last());
	return CLI_OK;
}

static int run(const struct restore_opts *asked)
{
	struct group groups[MAX_SIZES * MAX_SIZES] = { 0 };
	struct restore_opts opts = *asked, *o = &opts;
	size_t ng = plan_groups(o, groups);
	char base[PATH_MAX], cold_why[PATH_MAX + 200];
	const char *fs = "disk";
	struct kvm_host kvm;
	int ret;

	ret = kvm__open(&kvm, o->kvm_path);
	if (ret < 0)
		return ret;
	ret = snapshot_base(o, base, &fs);
	if (ret < 0) {
		kvm__close(&kvm);
		return ret;
	}
	drop_cold_on_tmpfs(o, fs, base, cold_why, sizeof(cold_why));
	if (*cold_why)
		fprintf(stderr, "coldstart: bench restore: %s\n", cold_why);
	for (size_t i = 0; ret == 0 && i < ng; i++) {
		ret = alloc_group(&groups[i], o);
		if (ret == 0)
			ret = measure_group(&kvm, o, base, &groups[i]);
	}
	rmdir(base);
	kvm__close(&kvm);
	if (ret == 0)
		ret = restore__emit(o, groups, ng, fs, cold_why);
	for (size_t i = 0; i < ng; i++)
		free_group(&groups[i], o);
	return ret;
}

int cmd_bench_restore(int argc, char **argv)
{
	struct restore_opts o;
	int ret = parse(argc, argv, &o);

	if (ret != 0)
		return cli__parsed(ret, "bench restore", usage);
	if (o.snapshot)
		return run_user(&o);
	ret = run(&o);
	/* options were checked by parse(): whatever fails now is the run's */
	if (ret < 0)
		return cli__error(cli__exit_for(ret), "bench restore: %s",
				  err__last());
	return CLI_OK;
}
