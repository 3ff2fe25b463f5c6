/* What the files of `coldstart bench restore` share: its options, the
 * measured cells and groups, and the functions one file calls in another
 * (restore.c: options, snapshots, the measurement and the command;
 * restore_once.c: one timed restore and the page-cache state, restore.h's
 * shared pieces; restore_user.c: a user's snapshot and its checks,
 * restore.h's too; restore_result.c: the result document, text and
 * Markdown). Not for use outside the restore driver. */
#ifndef COLDSTART_RESTORE_INT_H
#define COLDSTART_RESTORE_INT_H

#include "restore.h"

#include "driver.h"
#include "mem.h"
#include "timeline.h"
#include "units.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define MAX_SIZES 8
#define MAX_STRATEGIES 16
#define TIMEOUT_NS (120ull * 1000000000ull)

struct restore_opts {
	struct bench_common c; /* count: restores per series */
	uint64_t mems[MAX_SIZES], wss[MAX_SIZES];
	size_t nr_mems, nr_wss;
	const struct guest_mem_ops *strategies[MAX_STRATEGIES];
	size_t nr_strategies;
	bool warm, cold;     /* page-cache states to measure */
	bool drop_caches;    /* cold: drop every clean page, not just ours */
	bool baseline;       /* the never-stopped series */
	unsigned int pattern, op;
	const char *snapshot_dir;
	/* --snapshot: the user's snapshot, restored as it is */
	const char *snapshot;
	const char *exec; /* --exec, or the default for a guest's agent */
	bool allow_pvm;
	const char *probe_only; /* an option --snapshot refuses, given */
	struct restore_snap snap;
	restore_fn *once; /* restore__once unless --snapshot says otherwise */
};

/* One strategy under one cache state in one (mem, ws) group. */
struct cell {
	const struct guest_mem_ops *ops;
	double *ns[RESTORE_NR_PHASES];
	size_t n;
	uint64_t faults, bytes_read; /* sums over counted samples */
	struct restore_work host;       /* sums over counted samples */
	double resident_max;         /* cold: worst residency before a sample */
};

struct group {
	uint64_t mem, ws;
	char dir[PATH_MAX];
	struct cell *cells; /* nr_strategies per cache state */
	double *never;      /* never-stopped request phase, count */
	size_t nr_never;
	/* strategies this host cannot do (e.g. no huge pages), and why */
	bool skip[MAX_STRATEGIES];
	char why[MAX_STRATEGIES][320];
};

static inline void join(char *out, const char *dir, const char *name)
{
	snprintf(out, PATH_MAX, "%s/%s", dir, name);
}

/* The (mem, ws) pairs that fit, into g (MAX_SIZES^2); how many. */
size_t restore__plan_groups(const struct restore_opts *o, struct group *g);

/* Runs the driver with its parsed options (restore_driver's run). */
int restore__run(void *opts);

/* restore_result.c: prints the result (text or --json) and, with --out,
 * writes restore.json and restore.md. */
int restore__emit(const struct restore_opts *o, const struct group *g,
		  size_t ng, const char *fs, const char *cold_why);

#endif
