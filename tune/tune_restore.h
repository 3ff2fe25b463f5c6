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

int cmd_tune_restore(int argc, char **argv);

#endif
