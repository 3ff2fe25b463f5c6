/* ACPI tables for Linux guests: how kernels built without MP-table
 * support (Debian's cloud kernel: CONFIG_X86_MPPARSE unset) find their
 * CPUs and the IOAPIC. RSDP -> XSDT -> FADT (-> DSDT) and MADT. The FADT
 * is not hardware-reduced, so the guest keeps the legacy PIC, PIT and ISA
 * IRQs the MP table also describes; its SCI is IRQ 9 (never raised) and
 * its PM1 blocks are the ports of acpi_pm (vmm/pm_x86.c), through which
 * an S5 request (poweroff) reaches the VMM. A pure builder over a buffer
 * that sits at a known guest-physical address. */
#ifndef COLDSTART_ACPI_X86_H
#define COLDSTART_ACPI_X86_H

#include <stddef.h>
#include <stdint.h>

#define ACPI_PM1_EVT_PORT 0x600 /* PM1a event block: status, enable */
#define ACPI_PM1_CNT_PORT 0x604 /* PM1a control block */
#define ACPI_PM1_PORTS 6
#define ACPI_SCI_IRQ 9
#define ACPI_S5_TYPE 5          /* SLP_TYP of \_S5 in our DSDT */
#define ACPI_MAX_CPUS 254u

#define ACPI_MAX_VIRTIO 10u

/* A virtio-mmio device as the DSDT names it to the guest: a device with
 * _HID "LNRO0005", its register window and its interrupt (edge, active
 * high), which is how kernels whose virtio_mmio takes no command-line
 * devices (Debian's cloud kernel) find it. Below 4 GiB. */
struct acpi_virtio {
	uint64_t base;
	uint32_t size;
	uint32_t irq;
};

/* Bytes the tables take for `nr_cpus` CPUs and the virtio devices. */
size_t acpi__size(unsigned int nr_cpus, const struct acpi_virtio *virtio,
		  unsigned int nr_virtio);

/* Writes the tables into `buf` (`len` bytes) that the guest sees at
 * `gpa`, RSDP first (so the RSDP is at `gpa`, which must be 16-byte
 * aligned), with `nr_virtio` devices in the DSDT. -EINVAL for a CPU
 * count outside 1..ACPI_MAX_CPUS, more than ACPI_MAX_VIRTIO devices, a
 * device above 4 GiB or a bad gpa, -ENOSPC when `len` is too small. */
int acpi__build(uint8_t *buf, size_t len, uint64_t gpa, unsigned int nr_cpus,
		const struct acpi_virtio *virtio, unsigned int nr_virtio);

/* 0 when the bytes sum to zero mod 256 (every ACPI checksum). */
uint8_t acpi__sum(const uint8_t *p, size_t len);

#endif
