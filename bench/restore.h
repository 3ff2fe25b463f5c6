/* `coldstart bench restore`: every memory-restore strategy x guest memory
 * size x working-set size, with the page cache cold and warm, beside the
 * same request phase in a VM that never stopped. And the pieces other
 * restore measurements share (tune_restore.c, snap_linux.c): one timed
 * restore with the host's work counted, and the page-cache state of a
 * snapshot's files. */
#ifndef COLDSTART_RESTORE_BENCH_H
#define COLDSTART_RESTORE_BENCH_H

#include "driver.h"
#include "mem.h"
#include "memstat.h"
#include "snapshot.h"

#include <stdbool.h>
#include <stdint.h>

struct kvm_host;
struct timeline;
struct vm;

extern const struct bench_driver restore_driver;

/* Spans of one restore, from restore start (snapshot__open included). */
enum restore_phase {
	RESTORE_FIRST_RUN,      /* -> first KVM_RUN */
	RESTORE_FIRST_PROGRESS, /* -> the guest's first signal of life */
	RESTORE_DONE,           /* -> the guest's DONE */
	RESTORE_REQUEST,        /* first KVM_RUN -> DONE */
	RESTORE_NR_PHASES
};

/* What the host did for this process during one restore, all threads:
 * page faults (getrusage) and bytes fetched from storage (/proc/self/io
 * read_bytes; RESTORE_NO_IO when the kernel does not count them). */
struct restore_work {
	uint64_t faults, major, disk_read;
};

#define RESTORE_NO_IO UINT64_MAX

/* One restore, measured. */
struct restore_sample {
	double ns[RESTORE_NR_PHASES]; /* -1 where an event did not happen */
	struct mem_stats mem;         /* what the strategy did itself */
	struct restore_work host;     /* restore start -> the VM's end */
	/* With RESTORE_HELD: the process and its guest memory mapping read
	 * from /proc/self right after the VM ended, before its memory is
	 * freed (guest_* fields: what this VM holds). */
	struct memstat held;
};

/* restore__once flags. */
#define RESTORE_HELD 1u /* read struct restore_sample.held */

/* One timed restore of the snapshot at `dir` (restore__once,
 * snap_linux__restore_once); `exec`, for a guest with an agent, is the
 * command it runs (NULL for the others). */
typedef int restore_fn(struct kvm_host *kvm, const char *dir,
		       const char *exec, const struct guest_mem_ops *ops,
		       unsigned int flags, struct restore_sample *out);



/* Restores the probe-guest snapshot at `dir` with `ops`, runs the request
 * phase to DONE and checks the checksum: 0, -ENOTSUP when this host
 * cannot do `ops` (e.g. no huge pages), -errno with a message. */
int restore__once(struct kvm_host *kvm, const char *dir, const char *exec,
		  const struct guest_mem_ops *ops, unsigned int flags,
		  struct restore_sample *out);

/* The steps of restore__once for other guests' restores: work_begin just
 * before restore start; finish once every vCPU stopped and before the VM
 * is destroyed (the host's work so far, the strategy's final stats, with
 * RESTORE_HELD the memory held); spans from the VM's timeline. */
void restore__work_begin(struct restore_work *w);
int restore__finish(struct vm *vm, unsigned int flags,
		    struct restore_sample *out);
void restore__spans(const struct timeline *tl, struct restore_sample *out);

enum restore_cache {
	RESTORE_WARM,      /* every snapshot file read once */
	RESTORE_COLD,      /* fsync + posix_fadvise(DONTNEED) on each */
	RESTORE_COLD_DROP, /* /proc/sys/vm/drop_caches: every clean page */
};

/* Puts the snapshot files of `dir` (state, memory, wset) in the page-cache
 * state `c`; 0 or -errno with a message. */
int restore__cache(const char *dir, enum restore_cache c);

/* Share (0..1) of `dir`'s memory file in the page cache (mincore), -1
 * when it cannot be read. */
double restore__resident_share(const char *dir);

/* Whether `dir` is on a file system kept in memory (tmpfs, ramfs), whose
 * page cache cannot be evicted: cold caches mean nothing there. */
bool restore__in_memory(const char *dir);

/* Where a command makes snapshots for itself: `given` (e.g.
 * --snapshot-dir), else $TMPDIR, else /var/tmp. */
const char *restore__scratch_parent(const char *given);

/* A new directory PARENT/coldstart-WHO-XXXXXX (mkdtemp) there, for
 * snapshots a command makes for itself and removes afterwards;
 * PARENT as restore__scratch_parent(parent). 0, or -errno with a
 * message and base empty. */
int restore__scratch_dir(char base[PATH_MAX], const char *parent,
			 const char *who);

/* Removes the snapshot directory `snap` made in `base` (by
 * restore__scratch_dir) and then base, and empties base; nothing when
 * base is empty, so it is safe after a failure and twice. */
void restore__remove_scratch(char base[PATH_MAX], const char *snap);

/* ---- a user's snapshot (bench restore --snapshot, tune restore) ---- */

/* What the restore measurements need to know of a snapshot directory. */
struct restore_snap {
	bool linux_guest, compressed, diff;
	bool in_memory; /* on tmpfs */
	bool had_wset;  /* DIR/wset existed before this run */
	uint64_t mem_size, data_bytes;
	uint32_t vcpus;
	bool agent; /* a Linux guest with an agent: run a command */
	bool vsock; /* a vsock device, with or without an agent */
	char rootfs[SNAP_GUEST_PATH_MAX]; /* its drive 0's image, or "" */
	struct snap_guest_rec guest; /* linux_guest: what it was booted from */
	struct probe_params params;  /* the probe guest's */
};

/* -EINVAL naming `dir` unless it holds a snapshot this coldstart can
 * restore, and what it holds; opening it reads and validates it (a diff
 * against its base chain) and modifies nothing. */
int restore__inspect(const char *dir, struct restore_snap *info);

/* CLI_SKIP (77), with the reason, when `info` (of `dir`) is a Linux
 * guest's snapshot and this host's KVM is PVM, unless allow_pvm; else
 * CLI_OK. */
int restore__check_pvm(const char *cmd, const char *dir,
		       const struct restore_snap *info, bool allow_pvm);

/* The checks of a user's snapshot before /dev/kvm is opened, as enum
 * cli_exit: `dir` must hold a snapshot this coldstart can restore (else
 * 2, the message naming `dir`, prefixed by `cmd`); a Linux guest on a
 * PVM host is 77 unless allow_pvm. */
int restore__check_snapshot(const char *cmd, const char *dir,
			    bool allow_pvm, struct restore_snap *info);

/* The checks before /dev/kvm is opened, as enum cli_exit: `dir` must hold
 * a snapshot this coldstart can restore (else 2, the message naming
 * `dir`); cold caches that mean nothing for it (a diff, tmpfs) are left
 * out with the reason in *cold_why (NULL when none; 2 when cold was all
 * that was asked); a Linux guest on a PVM host is 77 unless allow_pvm.
 * `cmd` prefixes the messages. */
int restore__check_user(const char *cmd, const char *dir, bool allow_pvm,
			bool *warm, bool *cold, struct restore_snap *info,
			const char **cold_why);

/* The timed restore for this snapshot's guest. */
restore_fn *restore__once_for(const struct restore_snap *info);

/* The command a restore of `info`'s guest runs: `*exec` as given, the
 * default for a guest with an agent; CLI_USAGE (printed, naming `cmd`)
 * for a command given to a guest without one, and for a guest with a
 * vsock device but no agent (its timed runs would be through one);
 * else CLI_OK. */
int restore__agent_exec(const char *cmd, const struct restore_snap *info,
			const char **exec);

/* Whether dir/name exists. */
bool restore__has_file(const char *dir, const char *name);

#endif
