/* Probe faults: guest memory faults (KVM's shadow or TDP MMU) and host
 * page faults of the VMM process, as counts, a handling-time histogram
 * and a timeline of individual faults through a ring buffer (per-thread
 * figures come from the timeline). Shared by faults.bpf.c and its
 * loader. */
#ifndef COLDSTART_PROBES_FAULTS_H
#define COLDSTART_PROBES_FAULTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Its tracepoints (events.h); the timed ones are faulttime's, attached
 * only with that probe. */
#define FAULTS_EVENTS(EV) \
	EV(KVM_PAGE_FAULT, FAULTTIME, "kvm:kvm_page_fault", "kvm_page_fault") \
	EV(MMU_PAGETABLE_WALK, FAULTTIME, "kvmmmu:kvm_mmu_pagetable_walk", \
	   "kvm_mmu_pagetable_walk") \
	EV(MMU_SPTE_REQUESTED, FAULTS, "kvmmmu:kvm_mmu_spte_requested", \
	   "kvm_mmu_spte_requested") \
	EV(MMU_SET_SPTE, FAULTTIME, "kvmmmu:kvm_mmu_set_spte", \
	   "kvm_mmu_set_spte") \
	EV(MMU_GET_PAGE, FAULTS, "kvmmmu:kvm_mmu_get_page", \
	   "kvm_mmu_get_page") \
	EV(MMU_PREPARE_ZAP_PAGE, FAULTS, "kvmmmu:kvm_mmu_prepare_zap_page", \
	   "kvm_mmu_prepare_zap_page") \
	EV(PAGE_FAULT_USER, FAULTS, "exceptions:page_fault_user", \
	   "page_fault_user") \
	EV(PAGE_FAULT_KERNEL, FAULTS, "exceptions:page_fault_kernel", \
	   "page_fault_kernel")

#define FAULTS_RINGBUF_BYTES (2u << 20)
/* Records go to the ring buffer in batches, staged per CPU: one ring
 * buffer operation (a lock shared by all CPUs) per FAULTS_BATCH faults.
 * A power of two. */
#define FAULTS_BATCH 16

enum faults_kind {
	FAULTS_GUEST = 1,       /* a guest fault: ts, gpa; timed: dur_ns */
	FAULTS_HOST_USER = 2,   /* a host fault in user mode: ts, address */
	FAULTS_HOST_KERNEL = 3, /* a host fault in kernel mode: ts, address */
};

#define FAULTS_FLAG_WRITE 1u /* the guest fault was a write */

/* One ring-buffer record. */
struct faults_event {
	__u64 ts;     /* CLOCK_MONOTONIC ns; for a guest fault, its start */
	__u64 addr;   /* guest-physical (guest) or host-virtual address */
	__u32 dur_ns; /* timed guest faults: start to SPTE set; else 0 */
	__u32 tid;
	__u16 kind;   /* enum faults_kind */
	__u16 flags;  /* FAULTS_FLAG_* */
	__u32 pad;
};

/* One CPU's records not yet in the ring buffer; a ring-buffer record is
 * its full ev[] array. */
struct faults_stage {
	__u32 n;
	__u32 pad;
	struct faults_event ev[FAULTS_BATCH];
};

#endif
