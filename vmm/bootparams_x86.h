/* Linux's x86 boot protocol as pure functions: the bzImage setup header,
 * the guest-physical layout of a Linux boot, the E820 map, the zero page
 * (struct boot_params) and initrd placement. Nothing here touches KVM or
 * files, so every rule is unit-tested on buffers. */
#ifndef COLDSTART_BOOTPARAMS_X86_H
#define COLDSTART_BOOTPARAMS_X86_H

#include <asm/bootparam.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Guest-physical layout of a Linux boot (all below 1 MiB but the kernel
 * and initrd). The first page stays free (real-mode IVT and BDA). */
#define LINUX_GDT_GPA 0x1000ull       /* boot GDT, one page */
#define LINUX_TSS_GPA 0x2000ull       /* a zeroed TSS for TR, one page */
#define LINUX_ZERO_PAGE_GPA 0x7000ull /* struct boot_params */
#define LINUX_PT_GPA 0x9000ull        /* identity page tables ... */
#define LINUX_PT_END 0x10000ull       /* ... 7 pages: PML4, PDPT, 4 PDs */
#define LINUX_CMDLINE_GPA 0x20000ull  /* kernel command line */
#define LINUX_CMDLINE_MAX 0x10000ull  /* bytes reserved for it, with NUL */
#define LINUX_ELF_CMDLINE_MAX 2048ull /* x86 COMMAND_LINE_SIZE, with NUL */
#define LINUX_EBDA_GPA 0x9fc00ull     /* top 1 KiB of base memory: MP table */
#define LINUX_ACPI_GPA 0xe0000ull     /* BIOS area: RSDP and ACPI tables */
#define LINUX_HIGH_MEM 0x100000ull    /* 1 MiB: RAM resumes here */
#define LINUX_IDENTITY_MAP 0x100000000ull /* boot page tables map 4 GiB */
/* Guest RAM stays below the boot timer's MMIO page at 3 GiB and KVM's
 * TSS/identity-map pages near 4 GiB: one memslot from GPA 0. */
#define LINUX_MEM_MAX 0xc0000000ull

/* bzImage setup header fields this loader relies on. */
#define BZ_HDR_OFFSET 0x1f1u
#define BZ_MAGIC 0x53726448u  /* "HdrS" at 0x202 */
#define BZ_BOOT_FLAG 0xaa55u  /* at 0x1fe */
#define BZ_MIN_VERSION 0x020c /* 2.12: xloadflags, needed for 64-bit entry */
#define BZ_HEAD_SIZE 1024u    /* bytes of the file linux__bz_parse needs */
#define BZ_ENTRY_64 0x200u    /* 64-bit entry: load address + 0x200 */

struct bz_info {
	uint16_t version;
	uint8_t loadflags;
	uint16_t xloadflags;
	uint32_t setup_size;   /* boot sector + real-mode setup, bytes */
	uint64_t kernel_size;  /* protected-mode part: file size - setup */
	uint64_t load_addr;    /* where the protected-mode part goes */
	uint32_t init_size;    /* memory it needs from load_addr */
	uint32_t kernel_alignment;
	uint32_t cmdline_size; /* longest command line, without the NUL */
	uint32_t initrd_addr_max; /* highest byte an initrd may occupy */
	uint32_t hdr_len;      /* setup header bytes from 0x1f1 */
	bool relocatable;
};

/* Parses and validates the setup header in `head` (the file's first
 * `head_len` bytes, at least BZ_HEAD_SIZE or the whole file) of a file of
 * `file_size` bytes. -ENOEXEC with a message naming the failed check:
 * no boot flag or "HdrS" magic, protocol older than 2.12, no 64-bit entry
 * (XLF_KERNEL_64), not loaded high, setup or kernel outside the file. */
int linux__bz_parse(const uint8_t *head, size_t head_len, uint64_t file_size,
		    struct bz_info *out);

/* Fills `table` (room for `max` entries) with the map a guest of
 * `mem_size` bytes gets: RAM below the EBDA, the EBDA and BIOS area
 * reserved, RAM from 1 MiB. Returns the entry count or -EINVAL/-ENOSPC. */
int linux__e820(struct boot_e820_entry *table, unsigned int max,
		uint64_t mem_size);

/* Where an initrd of `size` bytes goes: the highest page-aligned address
 * at which it ends at or below both `addr_max` (last usable byte) and
 * `mem_size`, not below `kernel_end`. -E2BIG ("initrd too large for guest
 * memory") when it does not fit. */
int linux__place_initrd(uint64_t mem_size, uint64_t addr_max,
			uint64_t kernel_end, uint64_t size, uint64_t *gpa);

struct linux_zero_page {
	const uint8_t *setup_hdr; /* the bzImage's header from 0x1f1, or
				   * NULL for an ELF vmlinux */
	uint32_t hdr_len;
	uint64_t mem_size;
	uint64_t cmdline_gpa;
	uint64_t initrd_gpa, initrd_size; /* size 0: none */
	uint64_t acpi_rsdp;       /* 0: none */
};

/* Zeroes `bp` and fills it: the kernel's setup header (or a minimal one
 * for an ELF vmlinux), loader type "undefined", command line and initrd
 * addresses, the RSDP's address, and the E820 map. */
int linux__zero_page(struct boot_params *bp, const struct linux_zero_page *z);

#endif
