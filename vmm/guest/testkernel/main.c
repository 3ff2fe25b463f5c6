/* A ring-0 test kernel for the Linux boot path: it checks what a Linux
 * kernel would read (zero page, command line, E820, MP table, initrd,
 * KVM CPUID leaves) and talks to the devices Linux uses (8250, i8042,
 * CMOS RTC, boot timer), printing one line per check on COM1. Small
 * enough to run where ring 0 is interpreted (PVM), so KVM tests of the
 * loader and devices run on every host. Command line options:
 * tk.signal=port|mmio|both|none (boot-complete variant, default port;
 * none: a guest that never completes its boot),
 * tk.done=none (no guest-done signal after the workload),
 * tk.exit=reset|hang|shutdown|panic|poweroff (default reset through the
 * i8042; panic prints Linux's panic line first, then resets as panic=-1
 * does; poweroff writes ACPI S5 to PM1a control). A disk given as
 * virtio_mmio.device=SIZE@ADDR:IRQ is driven as virtio.c says, before
 * the boot-complete signal, or after it with tk.late (so that a
 * snapshot taken at that signal drives the disk once restored). */
#include "tk.h"

#include <asm/bootparam.h>
#include <stdint.h>

#define BOOT_PORT 0x3f0
#define BOOT_MMIO 0xc0000000ul
#define EBDA 0x9fc00ul

static uint8_t sum(const uint8_t *p, uint32_t len)
{
	uint8_t s = 0;

	while (len--)
		s = (uint8_t)(s + *p++);
	return s;
}

static void check_e820(const struct boot_params *bp)
{
	uint64_t ram = 0;

	for (unsigned int i = 0; i < bp->e820_entries; i++)
		if (bp->e820_table[i].type == 1)
			ram += bp->e820_table[i].size;
	puts_com1("e820: ");
	put_dec(bp->e820_entries);
	puts_com1(" entries, ");
	put_dec(ram >> 10);
	puts_com1(" KiB RAM\n");
}

/* The floating pointer at the top of base memory, its configuration
 * table, both checksums, and the processor entries. */
static void check_mptable(void)
{
	const uint8_t *fp = (const uint8_t *)EBDA, *cfg;
	uint32_t cpus = 0, off;
	uint16_t len, entries;

	if (fp[0] != '_' || fp[1] != 'M' || fp[2] != 'P' || fp[3] != '_' ||
	    sum(fp, 16)) {
		puts_com1("mptable: BAD floating pointer\n");
		return;
	}
	cfg = (const uint8_t *)(uintptr_t)*(const uint32_t *)(fp + 4);
	len = *(const uint16_t *)(cfg + 4);
	entries = *(const uint16_t *)(cfg + 34);
	if (sum(cfg, len)) {
		puts_com1("mptable: BAD checksum\n");
		return;
	}
	off = 44;
	for (uint16_t i = 0; i < entries && off < len; i++) {
		cpus += cfg[off] == 0;
		off += cfg[off] == 0 ? 20 : 8;
	}
	puts_com1("mptable: ");
	put_dec(cpus);
	puts_com1(" cpus\n");
}

/* FNV-1a over the initrd, which the host predicts from the file. */
static void check_initrd(const struct boot_params *bp)
{
	uint64_t addr = bp->hdr.ramdisk_image |
			(uint64_t)bp->ext_ramdisk_image << 32;
	uint64_t size = bp->hdr.ramdisk_size |
			(uint64_t)bp->ext_ramdisk_size << 32;
	const uint8_t *p = (const uint8_t *)(uintptr_t)addr;
	uint32_t h = 2166136261u;

	if (!size) {
		puts_com1("initrd: none\n");
		return;
	}
	for (uint64_t i = 0; i < size; i++)
		h = (h ^ p[i]) * 16777619u;
	puts_com1("initrd: ");
	put_dec(size);
	puts_com1(" bytes fnv1a ");
	put_hex(h);
	putc_com1('\n');
}

static const uint8_t *acpi_table(const uint8_t *xsdt, const char *sig)
{
	uint32_t len = *(const uint32_t *)(xsdt + 4);

	for (uint32_t off = 36; off + 8 <= len; off += 8) {
		const uint8_t *t = (const uint8_t *)(uintptr_t)
			*(const uint64_t *)(xsdt + off);

		if (t[0] == sig[0] && t[1] == sig[1] && t[2] == sig[2] &&
		    t[3] == sig[3])
			return t;
	}
	return 0;
}

/* RSDP from the zero page, XSDT, FADT -> DSDT, MADT: checksums and the
 * MADT's processors, as Linux's ACPI table code reads them. */
static void check_acpi(const struct boot_params *bp)
{
	const uint8_t *rsdp = (const uint8_t *)(uintptr_t)bp->acpi_rsdp_addr;
	const uint8_t *xsdt, *fadt, *madt, *dsdt;
	uint32_t cpus = 0;
	int ok;

	ok = rsdp && !sum(rsdp, 20) && !sum(rsdp, 36) && rsdp[15] == 2;
	xsdt = ok ? (const uint8_t *)(uintptr_t)*(const uint64_t *)(rsdp + 24)
		  : 0;
	ok = ok && !sum(xsdt, *(const uint32_t *)(xsdt + 4));
	fadt = ok ? acpi_table(xsdt, "FACP") : 0;
	madt = ok ? acpi_table(xsdt, "APIC") : 0;
	ok = ok && fadt && madt && !sum(fadt, *(const uint32_t *)(fadt + 4)) &&
	     !sum(madt, *(const uint32_t *)(madt + 4));
	dsdt = ok ? (const uint8_t *)(uintptr_t)*(const uint64_t *)(fadt + 140)
		  : 0;
	ok = ok && dsdt && dsdt[0] == 'D' &&
	     !sum(dsdt, *(const uint32_t *)(dsdt + 4));
	if (!ok) {
		puts_com1("acpi: BAD tables\n");
		return;
	}
	for (uint32_t off = 44; off < *(const uint32_t *)(madt + 4);
	     off += madt[off + 1])
		cpus += madt[off] == 0 && (madt[off + 4] & 1);
	puts_com1("acpi: rsdp ");
	put_hex(bp->acpi_rsdp_addr);
	puts_com1(", checksums ok, madt: ");
	put_dec(cpus);
	puts_com1(" cpus\n");
}

static void check_cpuid(void)
{
	uint32_t a = 0x40000000, b, c, d;
	char sig[13];

	__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "=c"(c), "=d"(d));
	for (int i = 0; i < 4; i++) {
		sig[i] = (char)(b >> (8 * i));
		sig[4 + i] = (char)(c >> (8 * i));
		sig[8 + i] = (char)(d >> (8 * i));
	}
	sig[12] = 0;
	puts_com1("cpuid: ");
	puts_com1(sig);
	putc_com1('\n');
}

/* What the 8250 driver's probe checks: scratch register, loopback modem
 * status, FIFOs (a 16550A). */
static void check_uart(void)
{
	int ok;

	outb(COM1 + 7, 0x5a);
	ok = inb(COM1 + 7) == 0x5a;
	outb(COM1 + 4, 0x1a); /* loop, RTS, OUT2 */
	ok &= (inb(COM1 + 6) & 0xf0) == 0x90;
	outb(COM1 + 4, 0x00);
	outb(COM1 + 2, 0x01);
	ok &= (inb(COM1 + 2) & 0xc0) == 0xc0;
	puts_com1(ok ? "uart: 16550A\n" : "uart: BAD\n");
}

static void check_i8042(void)
{
	outb(0x64, 0xaa); /* self-test */
	puts_com1((inb(0x64) & 1) && inb(0x60) == 0x55 ? "i8042: ok\n"
						      : "i8042: BAD\n");
}

static void check_rtc(void)
{
	uint8_t cent, year;

	outb(0x70, 0x32);
	cent = inb(0x71);
	outb(0x70, 0x09);
	year = inb(0x71);
	puts_com1("rtc: year ");
	putc_com1((char)('0' + (cent >> 4)));
	putc_com1((char)('0' + (cent & 0xf)));
	putc_com1((char)('0' + (year >> 4)));
	putc_com1((char)('0' + (year & 0xf)));
	putc_com1('\n');
}

static void signal_boot(const char *cmdline)
{
	int mmio = has(cmdline, "tk.signal=mmio") ||
		   has(cmdline, "tk.signal=both");

	if (has(cmdline, "tk.signal=none"))
		return;
	if (!has(cmdline, "tk.signal=mmio"))
		outb(BOOT_PORT, 123);
	if (mmio)
		*(volatile uint8_t *)BOOT_MMIO = 123;
}

static void finish(const char *cmdline)
{
	if (has(cmdline, "tk.exit=hang"))
		return; /* the caller halts with interrupts off */
	if (has(cmdline, "tk.exit=panic"))
		puts_com1("Kernel panic - not syncing: test kernel asked to\n");
	if (has(cmdline, "tk.exit=poweroff")) /* SLP_TYP 5, SLP_EN */
		__asm__ volatile("outw %0, %1" : : "a"((uint16_t)(5 << 10 | 1 << 13)),
				 "Nd"((uint16_t)0x604));
	if (has(cmdline, "tk.exit=shutdown")) {
		/* No IDT: the fault becomes a triple fault. */
		__asm__ volatile("ud2");
	}
	outb(0x64, 0xfe);
}

void tk_main(const struct boot_params *bp);

void tk_main(const struct boot_params *bp)
{
	const char *cmdline = (const char *)(uintptr_t)(
		bp->hdr.cmd_line_ptr | (uint64_t)bp->ext_cmd_line_ptr << 32);

	puts_com1("coldstart test kernel\n");
	if (bp->hdr.header != 0x53726448) {
		puts_com1("zero page: BAD header magic\n");
		outb(0x64, 0xfe);
		return;
	}
	puts_com1("cmdline: ");
	puts_com1(cmdline);
	putc_com1('\n');
	check_e820(bp);
	check_mptable();
	check_acpi(bp);
	check_initrd(bp);
	check_cpuid();
	check_uart();
	check_i8042();
	check_rtc();
	if (!has(cmdline, "tk.late"))
		check_virtio(cmdline);
	signal_boot(cmdline);
	if (has(cmdline, "tk.late"))
		check_virtio(cmdline);
	puts_com1("workload done\n");
	if (!has(cmdline, "tk.done=none"))
		outb(BOOT_PORT, 124);
	finish(cmdline);
}
