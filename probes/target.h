/* Sizes and types shared by every probe's BPF side and the loaders. */
#ifndef COLDSTART_PROBES_TARGET_H
#define COLDSTART_PROBES_TARGET_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "events.h"

/* Per-CPU rows; CPUs beyond alias earlier rows, which stays correct
 * (counts are atomic, slots check their tid). A power of two. */
#define TARGET_MAX_CPUS 16
/* counts[] row length: PEV_COUNT rounded up to a 64-byte multiple. */
#define TARGET_COUNT_STRIDE ((PEV_COUNT + 7) / 8 * 8)

/* What a thread started on a CPU, and when (see target.bpf.h). */
struct target_slot {
	__u64 ts;
	__u32 tid;
	__u32 aux;
};

#endif
