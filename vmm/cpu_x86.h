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

/* Sets the host-supported CPUID on the vCPU with its own APIC IDs. */
int x86__vcpu_set_cpuid(struct vcpu *vcpu);

/* Puts the vCPU in 64-bit ring 3 at lm->rip with paging on, IOPL 3 (port
 * I/O from ring 3 exits to the VMM) and interrupts off. */
int x86__vcpu_long_mode_user(struct vcpu *vcpu, const struct x86_long_mode *lm);

#endif
