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

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	g->never = calloc(o->c.count, sizeof(double));
	if (!g->cells || !g->never)
		return err__set(ENOMEM, "allocating samples");
	for (size_t i = 0; i < nc; i++) {
		g->cells[i].ops = o->strategies[i % o->nr_strategies];
		for (int p = 0; p < RESTORE_NR_PHASES; p++) {
			g->cells[i].ns[p] = calloc(o->c.count, sizeof(double));
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
	uint64_t total = o->c.warmup + o->c.count;
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
				ret = o->once(kvm, g->dir, o->exec, c->ops, 0, &s);
			if (ret == 0 && i >= o->c.warmup)
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
	uint64_t total = o->c.warmup + o->c.count;

	for (uint64_t i = 0; i < total; i++) {
		struct run_result res = { 0 };
		int ret = runner__probe(kvm, &rc, &res);

		if (ret == 0 && !runner__succeeded(&rc, &res))
			ret = err__set(EIO, "never-stopped guest failed: %s",
				       res.reason);
		if (ret < 0)
			return ret;
		if (i >= o->c.warmup)
			g->never[g->nr_never++] =
				timeline__span_ns(&res.tl, TL_GUEST_READY, TL_GUEST_DONE);
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
		int ret = o->once(kvm, g->dir, o->exec, o->strategies[i], 0,
				  &s);

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

size_t restore__plan_groups(const struct restore_opts *o, struct group *g)
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
	if (code == CLI_OK)
		code = restore__agent_exec("bench restore", &o->snap, &o->exec);
	if (code != CLI_OK)
		return code;
	o->once = restore__once_for(&o->snap);
	ret = kvm__open(&kvm, o->c.kvm_path);
	if (ret < 0)
		return ret;
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
	return ret;
}

static int run(const struct restore_opts *asked)
{
	struct group groups[MAX_SIZES * MAX_SIZES] = { 0 };
	struct restore_opts opts = *asked, *o = &opts;
	size_t ng = restore__plan_groups(o, groups);
	char base[PATH_MAX], cold_why[PATH_MAX + 200];
	const char *fs = "disk";
	struct kvm_host kvm;
	int ret;

	ret = kvm__open(&kvm, o->c.kvm_path);
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

int restore__run(void *opts)
{
	struct restore_opts *o = opts;

	if (o->snapshot)
		return run_user(o);
	/* options were checked by parse: whatever fails now is the run's */
	return run(o);
}
