/* The Intel MultiProcessor Specification 1.4 table: how a guest without
 * ACPI learns its CPUs, its IOAPIC and how ISA interrupts reach it. A pure
 * builder over a buffer that will sit at a known guest-physical address. */
#ifndef COLDSTART_MPTABLE_X86_H
#define COLDSTART_MPTABLE_X86_H

#include <stddef.h>
#include <stdint.h>

#define MPTABLE_LAPIC_ADDR 0xfee00000u
#define MPTABLE_IOAPIC_ADDR 0xfec00000u
#define MPTABLE_ISA_IRQS 16u
#define MPTABLE_MAX_CPUS 254u /* 8-bit APIC IDs, one kept for the IOAPIC */

/* Bytes the table takes for `nr_cpus` CPUs (floating pointer included). */
size_t mptable__size(unsigned int nr_cpus);

/* Writes the floating pointer and the configuration table into `buf`
 * (`len` bytes), which the guest sees at `gpa`: one processor entry per
 * CPU (APIC ID = index, CPU 0 the bootstrap processor), an ISA bus, the
 * IOAPIC (ID nr_cpus) with ISA IRQ n on its pin n, and LINT0 as ExtINT,
 * LINT1 as NMI. Checksums are filled. -EINVAL for a CPU count outside 1..
 * MPTABLE_MAX_CPUS, -ENOSPC when `len` is too small. */
int mptable__build(uint8_t *buf, size_t len, uint32_t gpa,
		   unsigned int nr_cpus);

/* 0 when the bytes sum to zero mod 256 (the spec's checksum rule). */
uint8_t mptable__sum(const uint8_t *p, size_t len);

#endif
