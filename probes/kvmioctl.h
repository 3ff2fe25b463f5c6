/* Probe kvmioctl: latency of the KVM (and userfaultfd) ioctls a VMM
 * issues. Shared by kvmioctl.bpf.c and its loader. */
#ifndef COLDSTART_PROBES_KVMIOCTL_H
#define COLDSTART_PROBES_KVMIOCTL_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Its tracepoints (events.h). */
#define KVMIOCTL_EVENTS(EV) \
	EV(SYS_ENTER_IOCTL, KVMIOCTL, "raw_syscalls:sys_enter (KVM ioctls)", \
	   "sys_enter") \
	EV(SYS_EXIT_IOCTL, KVMIOCTL, "raw_syscalls:sys_exit (KVM ioctls)", \
	   "sys_exit")

/* The ioctls timed one by one; the loader fills their numbers in. */
enum kvmioctl_cmd {
	KVMIOCTL_CREATE_VM,
	KVMIOCTL_CREATE_VCPU,
	KVMIOCTL_SET_USER_MEMORY_REGION,
	KVMIOCTL_SET_USER_MEMORY_REGION2,
	KVMIOCTL_RUN,
	KVMIOCTL_SET_REGS,
	KVMIOCTL_SET_SREGS,
	KVMIOCTL_SET_CPUID2,
	KVMIOCTL_GET_SUPPORTED_CPUID,
	KVMIOCTL_UFFDIO_REGISTER,
	KVMIOCTL_UFFDIO_COPY,
	KVMIOCTL_UFFDIO_ZEROPAGE,
	KVMIOCTL_UFFDIO_CONTINUE,
	KVMIOCTL_OTHER_KVM, /* any other ioctl of type KVMIO (0xAE) */
	KVMIOCTL_NR
};

#define KVMIOCTL_TYPE_KVM 0xAEu
#define KVMIOCTL_MAX_THREADS 1024

struct kvmioctl_thread {
	__u64 runs;   /* KVM_RUN calls */
	__u64 run_ns; /* time inside KVM_RUN */
};

struct kvmioctl_pending {
	__u64 ts;
	__u32 cmd; /* enum kvmioctl_cmd */
	__u32 pad;
};

#endif
