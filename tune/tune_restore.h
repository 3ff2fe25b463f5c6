/* `coldstart tune restore SNAPSHOT_DIR`: which memory-restore strategy
 * this host should use for one snapshot. Every strategy that applies is
 * timed from restore start to DONE with the page cache warm and cold,
 * interleaved, within a time budget; the verdict names a winner only when
 * it is significantly faster than every other strategy. The verdict is a
 * pure function of the samples (tune_restore_verdict.h), tested apart from
 * KVM. */
#ifndef COLDSTART_TUNE_RESTORE_H
#define COLDSTART_TUNE_RESTORE_H

#include "tune_restore_verdict.h"

#include "mem.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What to measure: `coldstart tune restore`'s options. */
struct tune_opts {
	const char *dir, *kvm_path, *out_dir;
	uint64_t count;    /* 0: the default */
	uint64_t budget_ns;
	double alpha;
	const struct guest_mem_ops *strategies[TUNE_MAX];
	size_t nr_strategies;
	bool warm, cold, json, allow_pvm;
	const char *exec; /* a guest's agent's command (NULL: the default) */
};

/* Every strategy, warm and cold, the default budget and alpha. */
void tune_restore__defaults(struct tune_opts *o);

/* Measures and writes the verdict: an exit code (2 for the snapshot, 77
 * for a Linux guest on PVM, printed), or -errno with err__last(). */
int tune_restore__run(const struct tune_opts *o);

#endif
