/* What the files of `coldstart tune restore` share: its options, the
 * snapshot's facts, the measured cells, and the functions one file calls
 * in another (tune_restore.c: options, measurement and the command;
 * tune_restore_doc.c: the result document and its report;
 * tune_restore_verdict.c, with its own header: the verdict, pure). */
#ifndef COLDSTART_TUNE_RESTORE_INT_H
#define COLDSTART_TUNE_RESTORE_INT_H

#include "tune_restore.h"

#include "args.h"
#include "cli.h"
#include "err.h"
#include "kvm.h"
#include "mem_restore.h"
#include "output.h"
#include "report.h"
#include "restore.h"
#include "result.h"
#include "result_new.h"
#include "snap_linux.h"
#include "snapshot.h"
#include "stats.h"
#include "timeline.h"
#include "units.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SECOND 1000000000ull
/* Rounds by default: on a 2-core PVM host with a busy neighbour, a third
 * of the samples land in a slow mode, and 20 rounds then missed a 50 %
 * faster strategy in most runs; never below what the test needs
 * (tune_restore__min_samples). */
#define DEFAULT_COUNT 30
#define DEFAULT_BUDGET (60 * SECOND)

/* One strategy under one cache state. */
struct cell {
	const struct guest_mem_ops *ops;
	bool cold;
	struct restore_sample *s; /* count of them */
	size_t n;
	double resident_max; /* cold: the most of the memory file still
			      * cached before a restore */
};

struct tune {
	struct tune_opts o;
	struct restore_snap info;
	restore_fn *once;
	struct kvm_host kvm;
	bool skip[TUNE_MAX];
	char why[TUNE_MAX][320];
	struct cell cells[2][TUNE_MAX]; /* [cold][strategy] */
	size_t count, min_count, rounds;
	uint64_t start_ns, elapsed_ns;
	bool budget_spent;
	const char *cold_why; /* cold asked for, left out: why */
};

static inline const char *tune_restore__cache_name(bool cold)
{
	return cold ? "cold" : "warm";
}

/* Whether the cache state is measured at all. */
static inline bool tune_restore__measured(const struct tune *t, bool cold)
{
	return cold ? t->o.cold : t->o.warm;
}

/* The strategies that apply to this snapshot on this host (known after
 * the trial restores). */
static inline size_t nr_applicable(const struct tune *t)
{
	size_t k = 0;

	for (size_t i = 0; i < t->o.nr_strategies; i++)
		k += !t->skip[i];
	return k;
}

/* tune_restore_doc.c: the result document, its report, and the note when
 * -n was raised */
void tune_restore__raised_text(char *buf, size_t len, const struct tune *t);
json_t *tune_restore__config_json(const struct tune *t);
int tune_restore__fill_doc(json_t *doc, const struct tune *t);
void tune_restore__report(FILE *out, const json_t *doc);

#endif
