/* Setup-header parsing, E820 map, zero page and initrd placement. */
#include "bootparams_x86.h"

#include "err.h"

#include <asm/e820.h>
#include <stddef.h>
#include <string.h>

#define PAGE_MASK 0xfffull
#define SECTOR 512u
#define DEFAULT_SETUP_SECTS 4u /* setup_sects 0 means 4 */
#define DEFAULT_LOAD_ADDR 0x100000ull
#define LOADER_UNDEFINED 0xff  /* type_of_loader: no assigned ID */

_Static_assert(sizeof(struct boot_params) == 4096, "zero page is a page");
_Static_assert(offsetof(struct boot_params, hdr) == BZ_HDR_OFFSET,
	       "setup header at 0x1f1");

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)le16(p) | (uint32_t)le16(p + 2) << 16;
}

/* The header as the file has it, copied out so fields are aligned. */
static struct setup_header read_hdr(const uint8_t *head)
{
	struct setup_header h;

	memcpy(&h, head + BZ_HDR_OFFSET, sizeof(h));
	return h;
}

static int check_magic(const uint8_t *head, size_t head_len,
		       uint64_t file_size)
{
	if (file_size < BZ_HEAD_SIZE || head_len < BZ_HEAD_SIZE)
		return err__set(ENOEXEC, "%llu bytes: too short for a bzImage "
				"setup header", (unsigned long long)file_size);
	if (le16(head + 0x1fe) != BZ_BOOT_FLAG)
		return err__set(ENOEXEC, "no boot flag 0xaa55 at offset 0x1fe: "
				"not a bzImage");
	if (le32(head + 0x202) != BZ_MAGIC)
		return err__set(ENOEXEC, "no \"HdrS\" magic at offset 0x202: "
				"not a bzImage (or one older than protocol "
				"2.00)");
	return 0;
}

static int check_protocol(const struct setup_header *h)
{
	if (h->version < BZ_MIN_VERSION)
		return err__set(ENOEXEC, "boot protocol %u.%02u is older than "
				"2.12, which 64-bit entry needs",
				h->version >> 8, h->version & 0xff);
	if (!(h->xloadflags & XLF_KERNEL_64))
		return err__set(ENOEXEC, "the kernel has no 64-bit entry point "
				"(xloadflags lacks XLF_KERNEL_64)");
	if (!(h->loadflags & LOADED_HIGH))
		return err__set(ENOEXEC, "the kernel does not load at 1 MiB "
				"(loadflags lacks LOADED_HIGH): a zImage");
	return 0;
}

#define MAX_PHYS_ADDR (1ull << 52) /* x86-64's architectural limit */

/* Sizes and addresses derived from the header, checked against the
 * file. */
static int fill_layout(const uint8_t *head, const struct setup_header *h,
		       uint64_t file_size, struct bz_info *bz)
{
	uint32_t sects = h->setup_sects ? h->setup_sects : DEFAULT_SETUP_SECTS;

	bz->setup_size = (sects + 1) * SECTOR;
	bz->hdr_len = 0x202u + head[0x201] - BZ_HDR_OFFSET;
	if (bz->hdr_len > sizeof(struct setup_header))
		bz->hdr_len = sizeof(struct setup_header);
	if (bz->setup_size >= file_size)
		return err__set(ENOEXEC, "setup of %u sectors leaves no "
				"protected-mode kernel in a %llu-byte file",
				sects, (unsigned long long)file_size);
	bz->kernel_size = file_size - bz->setup_size;
	bz->load_addr = h->pref_address ? h->pref_address : DEFAULT_LOAD_ADDR;
	if (bz->load_addr < DEFAULT_LOAD_ADDR || bz->load_addr & PAGE_MASK)
		return err__set(ENOEXEC, "preferred load address 0x%llx is "
				"below 1 MiB or not page-aligned",
				(unsigned long long)bz->load_addr);
	/* Bounded so that load_addr + init_size cannot wrap. */
	if (bz->load_addr >= MAX_PHYS_ADDR)
		return err__set(ENOEXEC, "preferred load address 0x%llx is "
				"beyond the 52-bit physical address space",
				(unsigned long long)bz->load_addr);
	if (h->init_size < bz->kernel_size)
		return err__set(ENOEXEC, "init_size %u is smaller than the "
				"%llu-byte kernel", h->init_size,
				(unsigned long long)bz->kernel_size);
	return 0;
}

int linux__bz_parse(const uint8_t *head, size_t head_len, uint64_t file_size,
		    struct bz_info *out)
{
	struct setup_header h;
	int ret = check_magic(head, head_len, file_size);

	if (ret < 0)
		return ret;
	h = read_hdr(head);
	ret = check_protocol(&h);
	if (ret < 0)
		return ret;
	memset(out, 0, sizeof(*out));
	ret = fill_layout(head, &h, file_size, out);
	if (ret < 0)
		return ret;
	out->version = h.version;
	out->loadflags = h.loadflags;
	out->xloadflags = h.xloadflags;
	out->init_size = h.init_size;
	out->kernel_alignment = h.kernel_alignment;
	out->cmdline_size = h.cmdline_size;
	out->initrd_addr_max = h.initrd_addr_max;
	out->relocatable = h.relocatable_kernel != 0;
	return 0;
}

static int add_entry(struct boot_e820_entry *table, unsigned int max,
		     unsigned int *n, uint64_t addr, uint64_t size,
		     uint32_t type)
{
	if (*n == max)
		return err__set(ENOSPC, "E820 table of %u entries is full",
				max);
	table[(*n)++] = (struct boot_e820_entry){ addr, size, type };
	return 0;
}

int linux__e820(struct boot_e820_entry *table, unsigned int max,
		uint64_t mem_size)
{
	unsigned int n = 0;
	int ret;

	if (mem_size <= LINUX_HIGH_MEM || mem_size > LINUX_MEM_MAX)
		return err__set(EINVAL, "guest memory of %llu bytes: Linux "
				"needs more than 1 MiB and at most 3 GiB",
				(unsigned long long)mem_size);
	ret = add_entry(table, max, &n, 0, LINUX_EBDA_GPA, E820_RAM);
	if (ret == 0)
		ret = add_entry(table, max, &n, LINUX_EBDA_GPA,
				LINUX_HIGH_MEM - LINUX_EBDA_GPA, E820_RESERVED);
	if (ret == 0)
		ret = add_entry(table, max, &n, LINUX_HIGH_MEM,
				mem_size - LINUX_HIGH_MEM, E820_RAM);
	return ret < 0 ? ret : (int)n;
}

int linux__place_initrd(uint64_t mem_size, uint64_t addr_max,
			uint64_t kernel_end, uint64_t size, uint64_t *gpa)
{
	/* One past the last byte the initrd may occupy. */
	uint64_t limit = addr_max < mem_size - 1 ? addr_max + 1 : mem_size;
	uint64_t start;

	if (size == 0)
		return err__set(EINVAL, "the initrd is empty");
	if (size > limit)
		goto too_large;
	start = (limit - size) & ~PAGE_MASK;
	if (start < kernel_end)
		goto too_large;
	*gpa = start;
	return 0;

too_large:
	return err__set(E2BIG, "initrd too large for guest memory: %llu KiB "
			"do not fit between the kernel's end at 0x%llx and "
			"0x%llx (raise --mem)",
			(unsigned long long)(size >> 10),
			(unsigned long long)kernel_end,
			(unsigned long long)limit);
}

/* For an ELF vmlinux there is no header to copy: the fields the kernel
 * reads are set as a loader of a bzImage would leave them. */
static void minimal_header(struct setup_header *h)
{
	h->boot_flag = BZ_BOOT_FLAG;
	h->header = BZ_MAGIC;
	h->version = BZ_MIN_VERSION;
	h->kernel_alignment = 0x1000000;
	h->cmdline_size = LINUX_CMDLINE_MAX - 1;
}

int linux__zero_page(struct boot_params *bp, const struct linux_zero_page *z)
{
	struct setup_header *h = &bp->hdr;
	int n;

	memset(bp, 0, sizeof(*bp));
	if (z->setup_hdr)
		memcpy(h, z->setup_hdr, z->hdr_len < sizeof(*h) ? z->hdr_len
								 : sizeof(*h));
	else
		minimal_header(h);
	h->type_of_loader = LOADER_UNDEFINED;
	h->loadflags |= LOADED_HIGH;
	h->loadflags &= (uint8_t)~QUIET_FLAG;
	h->cmd_line_ptr = (uint32_t)z->cmdline_gpa;
	bp->ext_cmd_line_ptr = (uint32_t)(z->cmdline_gpa >> 32);
	h->ramdisk_image = (uint32_t)z->initrd_gpa;
	bp->ext_ramdisk_image = (uint32_t)(z->initrd_gpa >> 32);
	h->ramdisk_size = (uint32_t)z->initrd_size;
	bp->ext_ramdisk_size = (uint32_t)(z->initrd_size >> 32);
	bp->acpi_rsdp_addr = z->acpi_rsdp;
	n = linux__e820(bp->e820_table, E820_MAX_ENTRIES_ZEROPAGE, z->mem_size);
	if (n < 0)
		return n;
	bp->e820_entries = (uint8_t)n;
	return 0;
}
