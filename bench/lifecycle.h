/* `coldstart bench lifecycle`: create -> READY -> destroy of the minimal
 * probe guest, in-process and process-per-VM, beside the bare-ioctl floor
 * measured in the same run. */
#ifndef COLDSTART_LIFECYCLE_H
#define COLDSTART_LIFECYCLE_H

#include "seccomp.h"

#include <stdbool.h>
#include <stdint.h>

struct lifecycle_opts {
	uint64_t count;   /* counted cycles per series */
	uint64_t warmup;  /* uncounted cycles first, per series */
	bool in_process;
	bool process;
	bool json;        /* JSON on stdout instead of the table */
	const char *out_dir; /* also write lifecycle.json and lifecycle.md */
	const char *kvm_path;
	unsigned int probes; /* enum probes_set over the in-process series */
	enum seccomp_mode seccomp; /* the VMs' filters (default kill) */
};

int cmd_bench_lifecycle(int argc, char **argv);

/* Parses argv (argv[0] = "lifecycle"); 0, 1 for --help, or -EINVAL. */
int lifecycle__parse(int argc, char **argv, struct lifecycle_opts *o);

#endif
