/* Probe kvmexit: VM exits by kind and thread, and the VMM's handling time
 * of exits to user space. Shared by kvmexit.bpf.c and its loader. */
#ifndef COLDSTART_PROBES_KVMEXIT_H
#define COLDSTART_PROBES_KVMEXIT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Its tracepoints (events.h). */
#define KVMEXIT_EVENTS(EV) \
	EV(KVM_PIO, KVMEXIT, "kvm:kvm_pio", "kvm_pio") \
	EV(KVM_MMIO, KVMEXIT, "kvm:kvm_mmio", "kvm_mmio") \
	EV(KVM_FAST_MMIO, KVMEXIT, "kvm:kvm_fast_mmio", "kvm_fast_mmio") \
	EV(KVM_USERSPACE_EXIT, KVMEXIT, "kvm:kvm_userspace_exit", \
	   "kvm_userspace_exit") \
	EV(KVM_EXIT, KVMEXIT, "kvm:kvm_exit", "kvm_exit") \
	EV(KVM_ENTRY, KVMEXIT, "kvm:kvm_entry", "kvm_entry") \
	EV(KVM_EMULATE_INSN, KVMEXIT, "kvm:kvm_emulate_insn", \
	   "kvm_emulate_insn")

enum kvmexit_kind {
	KVMEXIT_PIO_IN,      /* kvm:kvm_pio, in */
	KVMEXIT_PIO_OUT,     /* kvm:kvm_pio, out */
	KVMEXIT_MMIO_READ,   /* kvm:kvm_mmio, read sent to user space */
	KVMEXIT_MMIO_DONE,   /* kvm:kvm_mmio, read completed */
	KVMEXIT_MMIO_WRITE,  /* kvm:kvm_mmio, write */
	KVMEXIT_FAST_MMIO,   /* kvm:kvm_fast_mmio */
	KVMEXIT_USERSPACE,   /* kvm:kvm_userspace_exit, KVM_RUN returned 0 */
	KVMEXIT_USER_ERROR,  /* ... KVM_RUN failed (EINTR: a kick) */
	KVMEXIT_HW,          /* kvm:kvm_exit (not under PVM) */
	KVMEXIT_ENTRY,       /* kvm:kvm_entry (not under PVM) */
	KVMEXIT_EMULATE,     /* kvm:kvm_emulate_insn */
	KVMEXIT_NR_KINDS
};

/* Storage per kind: a power of two, so BPF code can mask an index into
 * bounds the verifier accepts. */
#define KVMEXIT_KIND_SLOTS 16

/* Exits to user space are counted by KVM_EXIT_* reason below the last
 * slot; the last slot collects failed KVM_RUNs (errno set). */
#define KVMEXIT_NR_REASONS 64
#define KVMEXIT_REASON_ERROR (KVMEXIT_NR_REASONS - 1)

#define KVMEXIT_MAX_THREADS 1024

struct kvmexit_thread {
	__u64 kinds[KVMEXIT_KIND_SLOTS];
};

/* An exit to user space not yet followed by the next KVM_RUN. */
struct kvmexit_pending {
	__u64 ts;
	__u32 reason;
	__u32 pad;
};

#endif
