/* x86-64 vCPU setup: CPUID from KVM_GET_SUPPORTED_CPUID and long mode from
 * the first instruction (no firmware, no real mode). */
#ifndef COLDSTART_CPU_X86_H
#define COLDSTART_CPU_X86_H

#include "segment_x86.h"

#include <stdbool.h>
#include <stdint.h>

struct vcpu;

/* Segments for a guest that starts in ring 3. The selectors are the ones
 * PVM requires (they equal Linux's user selectors), and work everywhere. */
extern const struct x86_segment x86_user_code;
extern const struct x86_segment x86_user_data;

/* Bytes a TSS with a full I/O permission bitmap occupies. */
#define X86_TSS_IOMAP_SIZE (0x68u + 8192u + 1u)

/* Writes a 64-bit TSS whose I/O bitmap allows every port into `dst`
 * (X86_TSS_IOMAP_SIZE bytes) and returns the descriptor for it at guest
 * address `base`. Ring-3 port I/O checks this bitmap on PVM (IOPL is not
 * honoured there), and KVM needs a valid TR everywhere. */
struct x86_segment x86__tss_open_iomap(uint8_t *dst, uint64_t base,
				       uint16_t selector);

struct x86_long_mode {
	uint64_t cr3;   /* GPA of the PML4 */
	uint64_t rip, rsp;
	uint64_t rdi, rsi;       /* first two arguments to the entry point */
	uint64_t gdt_base;       /* guest's GDT (filled by the caller) */
	uint16_t gdt_limit;
	struct x86_segment tss;
	bool nx;                 /* set EFER.NXE (page tables use PT_NX) */
};

/* Guest-physical addresses KVM needs for its own use on x86 (the TSS
 * of real-mode emulation, 3 pages, and the EPT identity map, 1 page), just
 * below the 4 GiB boundary where no guest RAM lives. */
#define X86_KVM_IDENTITY_MAP_ADDR 0xfffbc000ull
#define X86_KVM_TSS_ADDR 0xfffbd000ull

struct vm;

/* Creates the in-kernel interrupt controllers (PIC, IOAPIC, a LAPIC per
 * vCPU created afterwards) and the PIT. Call before creating vCPUs. */
int x86__vm_create_irqchip(struct vm *vm);

/* Sets the host-supported CPUID on the vCPU with its own APIC IDs, the
 * hypervisor bit and KVM's paravirt leaves (0x40000000 "KVMKVMKVM",
 * 0x40000001 features as the host supports them). */
int x86__vcpu_set_cpuid(struct vcpu *vcpu);

/* Ring-0 segments of Linux's 64-bit boot protocol (__BOOT_CS, __BOOT_DS)
 * and a TSS for TR, which KVM needs valid. */
extern const struct x86_segment x86_kernel_code;
extern const struct x86_segment x86_kernel_data;
#define X86_KERNEL_TSS_SELECTOR 0x20

/* Puts the vCPU in 64-bit ring 0 at lm->rip with paging on and interrupts
 * off, segments x86_kernel_code/data and lm->tss, the other general
 * registers zero (what Linux's 64-bit entry expects, RSI = zero page). */
int x86__vcpu_long_mode_kernel(struct vcpu *vcpu,
			       const struct x86_long_mode *lm);

/* MSRs an OS expects from firmware: fast strings on, MTRRs enabled with
 * write-back default, TSC 0, syscall MSRs cleared. */
int x86__vcpu_set_msr_defaults(struct vcpu *vcpu);

/* Programs the vCPU's LAPIC as a PC's firmware leaves it: LINT0 ExtINT
 * (the PIC's output), LINT1 NMI. Needs the in-kernel irqchip. */
int x86__vcpu_set_lint(struct vcpu *vcpu);

/* Runnable (the bootstrap processor) or waiting for INIT/SIPI (APs). */
int x86__vcpu_set_mp_state(struct vcpu *vcpu, bool runnable);

/* Puts the vCPU in 64-bit ring 3 at lm->rip with paging on, IOPL 3 (port
 * I/O from ring 3 exits to the VMM) and interrupts off. */
int x86__vcpu_long_mode_user(struct vcpu *vcpu, const struct x86_long_mode *lm);

#endif
