/* Probe mmaplock: contention on the target's mmap_lock. Shared by
 * mmaplock.bpf.c and its loader. */
#ifndef COLDSTART_PROBES_MMAPLOCK_H
#define COLDSTART_PROBES_MMAPLOCK_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Its tracepoints (events.h). */
#define MMAPLOCK_EVENTS(EV) \
	EV(MMAP_LOCK_START, MMAPLOCK, "mmap_lock:mmap_lock_start_locking", \
	   "mmap_lock_start_locking") \
	EV(MMAP_LOCK_ACQUIRED, MMAPLOCK, \
	   "mmap_lock:mmap_lock_acquire_returned", \
	   "mmap_lock_acquire_returned") \
	EV(MMAP_LOCK_RELEASED, MMAPLOCK, "mmap_lock:mmap_lock_released", \
	   "mmap_lock_released")

#define MMAPLOCK_MAX_THREADS 1024

enum mmaplock_hist {
	MMAPLOCK_WAIT_READ,  /* start_locking -> acquire_returned, read */
	MMAPLOCK_WAIT_WRITE, /* ... write */
	MMAPLOCK_HOLD_WRITE, /* acquire_returned -> released, write */
	MMAPLOCK_NR_HISTS
};

#endif
