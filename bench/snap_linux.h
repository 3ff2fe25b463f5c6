/* `coldstart snapshot create --kernel` and `snapshot restore` of a Linux
 * guest: boot to the boot-complete signal, save the whole machine; rebuild
 * the machine from a snapshot without a kernel and run it to its exit. */
#ifndef COLDSTART_SNAP_LINUX_H
#define COLDSTART_SNAP_LINUX_H

#include "cmd_run.h"

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

#endif
