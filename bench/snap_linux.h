/* `coldstart snapshot create --kernel` and `snapshot restore` of a Linux
 * guest: boot to the boot-complete signal, save the whole machine; rebuild
 * the machine from a snapshot without a kernel and run it to its exit. */
#ifndef COLDSTART_SNAP_LINUX_H
#define COLDSTART_SNAP_LINUX_H

#include "run_opts.h"
#include "snapshot.h"
#include "timeline.h"

#include <stdbool.h>
#include <stdint.h>

/* Boots o->kernel, pauses at boot complete and saves into `dir` with
 * snapshot__save flags. Returns an enum cli_exit (77 on PVM unless
 * --allow-pvm). */
int snap_linux__create(const struct run_cli *o, const char *dir,
		       unsigned int flags);

/* Whether `dir` opens as a snapshot of a Linux guest. */
bool snap_linux__is_linux(const char *dir);

/* `snapshot restore DIR [options]` for a Linux snapshot (argv[1] = DIR);
 * returns an enum cli_exit. */
int snap_linux__restore(int argc, char **argv);

/* restore__once (restore.h) for a Linux-guest snapshot: restores `dir`
 * with `ops`, the machine rebuilt and its console discarded, and runs the
 * guest to its exit; DONE is the guest's done signal. 0 when the guest
 * sent exactly one and ended by a reset. A guest with an agent instead
 * runs `exec` through it (its output captured, not shown): FIRST_PROGRESS
 * is the agent's answer, DONE the command's first output byte (its exit
 * if it wrote nothing), and 0 needs exit status 0. -ENOTSUP when this
 * host cannot do `ops`; -errno with a message. Refuses nothing on PVM:
 * callers do. */
struct kvm_host;
struct guest_mem_ops;
struct restore_sample;
int snap_linux__restore_once(struct kvm_host *kvm, const char *dir,
			     const char *exec, const struct guest_mem_ops *ops,
			     unsigned int flags, struct restore_sample *out);

/* One turn of a session on a snapshot of a guest with an agent: `dir`
 * restored with `strategy`, `exec` run through the agent (its output
 * captured), the guest paused and saved into `save` (a new directory),
 * as a diff against `dir` with `diff`. */
struct snap_turn {
	const char *dir, *exec, *save;
	const char *vsock; /* the agent's socket; NULL: a private one */
	bool diff;
	const struct guest_mem_ops *strategy;
	uint64_t timeout_ns;
};

struct snap_turn_result {
	struct timeline tl; /* restore start ... snapshot saved */
	bool ran;           /* the command ran: status and output are its */
	int status;
	char *out, *err;    /* captured (at most 1 MiB each), NUL-ended */
	struct snapshot_stats saved;
	uint64_t dirty_pages; /* written since the restore (a diff's) */
};

/* 0 with *res filled (free it with snap_linux__turn_free), or -errno
 * with a message (the command's failure is not one: see res->status). */
int snap_linux__turn(struct kvm_host *kvm, const struct snap_turn *t,
		     struct snap_turn_result *res);
void snap_linux__turn_free(struct snap_turn_result *res);

#endif
