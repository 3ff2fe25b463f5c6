/* The kernel tracepoints the probes count, one index each. Shared by the
 * BPF programs (which count firings for the target process) and the
 * loaders (which record what attached), so it holds only an enum. */
#ifndef COLDSTART_PROBES_EVENTS_H
#define COLDSTART_PROBES_EVENTS_H

enum probes_ev {
	/* VM exits (probe kvmexit) */
	PEV_KVM_PIO,
	PEV_KVM_MMIO,
	PEV_KVM_FAST_MMIO,
	PEV_KVM_USERSPACE_EXIT,
	PEV_KVM_EXIT,
	PEV_KVM_ENTRY,
	PEV_KVM_EMULATE_INSN,
	/* Guest and host memory faults (probe faults) */
	PEV_KVM_PAGE_FAULT,
	PEV_MMU_PAGETABLE_WALK,
	PEV_MMU_SPTE_REQUESTED,
	PEV_MMU_SET_SPTE,
	PEV_MMU_GET_PAGE,
	PEV_MMU_PREPARE_ZAP_PAGE,
	PEV_PAGE_FAULT_USER,
	PEV_PAGE_FAULT_KERNEL,
	/* ioctl latency (probe kvmioctl) */
	PEV_SYS_ENTER_IOCTL,
	PEV_SYS_EXIT_IOCTL,
	/* Scheduling delay (probe schedlat) */
	PEV_SCHED_WAKEUP,
	PEV_SCHED_WAKEUP_NEW,
	PEV_SCHED_SWITCH,
	/* mmap_lock (probe mmaplock) */
	PEV_MMAP_LOCK_START,
	PEV_MMAP_LOCK_ACQUIRED,
	PEV_MMAP_LOCK_RELEASED,
	PEV_COUNT
};

#endif
