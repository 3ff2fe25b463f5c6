/* Probe schedlat: how long the target's threads wait on a run queue
 * between becoming runnable and running. Shared by schedlat.bpf.c and its
 * loader. */
#ifndef COLDSTART_PROBES_SCHEDLAT_H
#define COLDSTART_PROBES_SCHEDLAT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Its tracepoints (events.h). */
#define SCHEDLAT_EVENTS(EV) \
	EV(SCHED_WAKEUP, SCHEDLAT, "sched:sched_wakeup", "sched_wakeup") \
	EV(SCHED_WAKEUP_NEW, SCHEDLAT, "sched:sched_wakeup_new", \
	   "sched_wakeup_new") \
	EV(SCHED_SWITCH, SCHEDLAT, "sched:sched_switch", "sched_switch")

#define SCHEDLAT_MAX_THREADS 1024

struct schedlat_thread {
	__u64 waits;
	__u64 delay_ns;
	__u64 max_ns; /* one writer: the CPU switching the thread in */
};

#endif
