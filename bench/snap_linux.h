/* `coldstart snapshot create --kernel` and `snapshot restore` of a Linux
 * guest: boot to the boot-complete signal, save the whole machine; rebuild
 * the machine from a snapshot without a kernel and run it to its exit. */
#ifndef COLDSTART_SNAP_LINUX_H
#define COLDSTART_SNAP_LINUX_H

#include "run_opts.h"

#include <stdbool.h>

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

#endif
