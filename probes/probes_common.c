/* Names and histogram arithmetic for probe reports; built with or without
 * BPF support. */
#include "probes.h"

#include "err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const event_names[PEV_COUNT] = {
	[PEV_KVM_PIO] = "kvm:kvm_pio",
	[PEV_KVM_MMIO] = "kvm:kvm_mmio",
	[PEV_KVM_FAST_MMIO] = "kvm:kvm_fast_mmio",
	[PEV_KVM_USERSPACE_EXIT] = "kvm:kvm_userspace_exit",
	[PEV_KVM_EXIT] = "kvm:kvm_exit",
	[PEV_KVM_ENTRY] = "kvm:kvm_entry",
	[PEV_KVM_EMULATE_INSN] = "kvm:kvm_emulate_insn",
	[PEV_KVM_PAGE_FAULT] = "kvm:kvm_page_fault",
	[PEV_MMU_PAGETABLE_WALK] = "kvmmmu:kvm_mmu_pagetable_walk",
	[PEV_MMU_SPTE_REQUESTED] = "kvmmmu:kvm_mmu_spte_requested",
	[PEV_MMU_SET_SPTE] = "kvmmmu:kvm_mmu_set_spte",
	[PEV_MMU_GET_PAGE] = "kvmmmu:kvm_mmu_get_page",
	[PEV_MMU_PREPARE_ZAP_PAGE] = "kvmmmu:kvm_mmu_prepare_zap_page",
	[PEV_PAGE_FAULT_USER] = "exceptions:page_fault_user",
	[PEV_PAGE_FAULT_KERNEL] = "exceptions:page_fault_kernel",
	[PEV_SYS_ENTER_IOCTL] = "raw_syscalls:sys_enter (KVM ioctls)",
	[PEV_SYS_EXIT_IOCTL] = "raw_syscalls:sys_exit (KVM ioctls)",
	[PEV_SCHED_WAKEUP] = "sched:sched_wakeup",
	[PEV_SCHED_WAKEUP_NEW] = "sched:sched_wakeup_new",
	[PEV_SCHED_SWITCH] = "sched:sched_switch",
	[PEV_MMAP_LOCK_START] = "mmap_lock:mmap_lock_start_locking",
	[PEV_MMAP_LOCK_ACQUIRED] = "mmap_lock:mmap_lock_acquire_returned",
	[PEV_MMAP_LOCK_RELEASED] = "mmap_lock:mmap_lock_released",
};

static const char *const kind_names[KVMEXIT_NR_KINDS] = {
	[KVMEXIT_PIO_IN] = "port I/O in",
	[KVMEXIT_PIO_OUT] = "port I/O out",
	[KVMEXIT_MMIO_READ] = "MMIO read",
	[KVMEXIT_MMIO_DONE] = "MMIO read completed",
	[KVMEXIT_MMIO_WRITE] = "MMIO write",
	[KVMEXIT_FAST_MMIO] = "fast MMIO",
	[KVMEXIT_USERSPACE] = "exit to user space",
	[KVMEXIT_USER_ERROR] = "KVM_RUN error (EINTR)",
	[KVMEXIT_HW] = "kvm_exit",
	[KVMEXIT_ENTRY] = "kvm_entry",
	[KVMEXIT_EMULATE] = "instruction emulated",
};

static const char *const ioctl_names[KVMIOCTL_NR] = {
	[KVMIOCTL_CREATE_VM] = "KVM_CREATE_VM",
	[KVMIOCTL_CREATE_VCPU] = "KVM_CREATE_VCPU",
	[KVMIOCTL_SET_USER_MEMORY_REGION] = "KVM_SET_USER_MEMORY_REGION",
	[KVMIOCTL_SET_USER_MEMORY_REGION2] = "KVM_SET_USER_MEMORY_REGION2",
	[KVMIOCTL_RUN] = "KVM_RUN",
	[KVMIOCTL_SET_REGS] = "KVM_SET_REGS",
	[KVMIOCTL_SET_SREGS] = "KVM_SET_SREGS",
	[KVMIOCTL_SET_CPUID2] = "KVM_SET_CPUID2",
	[KVMIOCTL_GET_SUPPORTED_CPUID] = "KVM_GET_SUPPORTED_CPUID",
	[KVMIOCTL_UFFDIO_REGISTER] = "UFFDIO_REGISTER",
	[KVMIOCTL_UFFDIO_COPY] = "UFFDIO_COPY",
	[KVMIOCTL_UFFDIO_ZEROPAGE] = "UFFDIO_ZEROPAGE",
	[KVMIOCTL_UFFDIO_CONTINUE] = "UFFDIO_CONTINUE",
	[KVMIOCTL_OTHER_KVM] = "other KVM ioctls",
};

/* KVM_EXIT_* values as in <linux/kvm.h>. */
static const char *const reason_names[] = {
	"UNKNOWN", "EXCEPTION", "IO", "HYPERCALL", "DEBUG", "HLT", "MMIO",
	"IRQ_WINDOW_OPEN", "SHUTDOWN", "FAIL_ENTRY", "INTR", "SET_TPR",
	"TPR_ACCESS", "S390_SIEIC", "S390_RESET", "DCR", "NMI",
	"INTERNAL_ERROR", "OSI", "PAPR_HCALL", "S390_UCONTROL", "WATCHDOG",
	"S390_TSCH", "EPR", "SYSTEM_EVENT", "S390_STSI", "IOAPIC_EOI",
	"HYPERV", "ARM_NISV", "X86_RDMSR", "X86_WRMSR", "DIRTY_RING_FULL",
	"AP_RESET_HOLD", "X86_BUS_LOCK", "XEN", "RISCV_SBI", "RISCV_CSR",
	"NOTIFY", "LOONGARCH_IOCSR", "MEMORY_FAULT", "TDX", "ARM_SEA",
};

const char *probes__event_name(enum probes_ev ev)
{
	return ev < PEV_COUNT ? event_names[ev] : "?";
}

const char *probes__exit_kind_name(enum kvmexit_kind kind)
{
	return kind < KVMEXIT_NR_KINDS ? kind_names[kind] : "?";
}

const char *probes__ioctl_name(enum kvmioctl_cmd cmd)
{
	return cmd < KVMIOCTL_NR ? ioctl_names[cmd] : "?";
}

const char *probes__exit_reason_name(unsigned int reason)
{
	static __thread char buf[24];

	if (reason == KVMEXIT_REASON_ERROR)
		return "KVM_RUN error (EINTR)";
	if (reason < sizeof(reason_names) / sizeof(reason_names[0]))
		return reason_names[reason];
	snprintf(buf, sizeof(buf), "reason %u", reason);
	return buf;
}

static const char *const probe_names[] = { "kvmexit", "faults", "kvmioctl",
					   "schedlat", "mmaplock",
					   "faulttime" };

#define NR_PROBE_NAMES (sizeof(probe_names) / sizeof(probe_names[0]))

const char *probes__probe_name(unsigned int bit)
{
	for (unsigned int i = 0; i < NR_PROBE_NAMES; i++)
		if (bit == 1u << i)
			return probe_names[i];
	return "?";
}

unsigned int probes__event_probe(enum probes_ev ev)
{
	if (ev <= PEV_KVM_EMULATE_INSN)
		return PROBES_KVMEXIT;
	if (ev == PEV_MMU_SET_SPTE || ev == PEV_MMU_PAGETABLE_WALK ||
	    ev == PEV_KVM_PAGE_FAULT)
		return PROBES_FAULTTIME;
	if (ev <= PEV_PAGE_FAULT_KERNEL)
		return PROBES_FAULTS;
	if (ev <= PEV_SYS_EXIT_IOCTL)
		return PROBES_KVMIOCTL;
	if (ev <= PEV_SCHED_SWITCH)
		return PROBES_SCHEDLAT;
	return PROBES_MMAPLOCK;
}

static int parse_name(const char *name, size_t len, unsigned int *set)
{
	if (len == 7 && !strncmp(name, "default", len)) {
		*set |= PROBES_DEFAULT;
		return 0;
	}
	if (len == 3 && !strncmp(name, "all", len)) {
		*set |= PROBES_ALL;
		return 0;
	}
	for (unsigned int i = 0; i < NR_PROBE_NAMES; i++)
		if (strlen(probe_names[i]) == len &&
		    !strncmp(name, probe_names[i], len)) {
			*set |= 1u << i;
			return 0;
		}
	return err__set(EINVAL, "'%.*s' is not a probe: give default, all "
			"or a list of kvmexit, faults, kvmioctl, schedlat, "
			"mmaplock, faulttime", (int)len, name);
}

int probes__parse_set(const char *text, unsigned int *set)
{
	unsigned int s = 0;

	if (!*text) {
		*set = PROBES_DEFAULT;
		return 0;
	}
	while (*text) {
		size_t len = strcspn(text, ",");
		int ret = parse_name(text, len, &s);

		if (ret < 0)
			return ret;
		text += len + (text[len] == ',');
	}
	*set = s;
	return 0;
}

enum probes_ev probes__exit_kind_event(enum kvmexit_kind kind)
{
	static const enum probes_ev ev[KVMEXIT_NR_KINDS] = {
		[KVMEXIT_PIO_IN] = PEV_KVM_PIO,
		[KVMEXIT_PIO_OUT] = PEV_KVM_PIO,
		[KVMEXIT_MMIO_READ] = PEV_KVM_MMIO,
		[KVMEXIT_MMIO_DONE] = PEV_KVM_MMIO,
		[KVMEXIT_MMIO_WRITE] = PEV_KVM_MMIO,
		[KVMEXIT_FAST_MMIO] = PEV_KVM_FAST_MMIO,
		[KVMEXIT_USERSPACE] = PEV_KVM_USERSPACE_EXIT,
		[KVMEXIT_USER_ERROR] = PEV_KVM_USERSPACE_EXIT,
		[KVMEXIT_HW] = PEV_KVM_EXIT,
		[KVMEXIT_ENTRY] = PEV_KVM_ENTRY,
		[KVMEXIT_EMULATE] = PEV_KVM_EMULATE_INSN,
	};

	return kind < KVMEXIT_NR_KINDS ? ev[kind] : PEV_COUNT;
}

bool probes__observed(const struct probes_report *r, enum probes_ev ev)
{
	return ev < PEV_COUNT && r->attached[ev] && r->events[ev] > 0;
}

double probes__hist_percentile(const struct probes_hist *h, double p)
{
	double rank, below = 0, max = (double)h->max_ns;

	if (!h->count)
		return 0;
	if (h->count == 1)
		return (double)h->sum_ns;
	rank = p / 100.0 * (double)h->count;
	for (int i = 0; i < PROBES_HIST_SLOTS; i++) {
		double n = (double)h->slots[i];
		double lo = i ? (double)(1ull << i) : 0;
		double hi = (double)(1ull << (i + 1));

		if (max > 0 && hi > max + 1)
			hi = max + 1; /* the top slot ends at the maximum */
		if (n > 0 && below + n >= rank)
			return lo + (hi - lo) * (rank - below) / n;
		below += n;
	}
	return max;
}

void probes__report_free(struct probes_report *r)
{
	if (!r)
		return;
	free(r->threads);
	free(r->timeline);
	free(r);
}
