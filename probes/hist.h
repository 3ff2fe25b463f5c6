/* A log2 histogram of nanoseconds, filled by BPF programs with atomic adds
 * and read by the loaders. Slot i counts values in [2^i, 2^(i+1)); slot 0
 * also counts 0; the last slot counts everything above. */
#ifndef COLDSTART_PROBES_HIST_H
#define COLDSTART_PROBES_HIST_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define PROBES_HIST_SLOTS 40 /* up to 2^40 ns, about 18 minutes */

struct probes_hist {
	__u64 slots[PROBES_HIST_SLOTS];
	__u64 count;
	__u64 sum_ns;
	__u64 max_ns;
};

#endif
