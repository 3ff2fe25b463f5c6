/* Unit tests for the Linux boot-protocol builders (vmm/bootparams_x86.c):
 * setup-header parsing of synthetic and corrupt bzImages, the E820 map,
 * initrd placement and the zero page. */
#include "bootparams_x86.h"
#include "err.h"
#include "units.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define HEAD 4096u

/* Offsets from Documentation/arch/x86/boot.rst, spelled out so the tests
 * do not trust the struct the code uses. */
enum {
	O_SETUP_SECTS = 0x1f1, O_BOOT_FLAG = 0x1fe, O_JUMP_END = 0x201,
	O_HEADER = 0x202, O_VERSION = 0x206, O_LOADFLAGS = 0x211,
	O_RAMDISK_IMAGE = 0x218, O_RAMDISK_SIZE = 0x21c, O_CMD_LINE_PTR = 0x228,
	O_INITRD_MAX = 0x22c, O_ALIGN = 0x230, O_RELOC = 0x234,
	O_XLOADFLAGS = 0x236, O_CMDLINE_SIZE = 0x238, O_PREF = 0x258,
	O_INIT_SIZE = 0x260,
	ZP_E820_ENTRIES = 0x1e8, ZP_E820_TABLE = 0x2d0,
	ZP_TYPE_OF_LOADER = 0x210,
};

static void put16(uint8_t *p, unsigned int off, uint16_t v)
{
	memcpy(p + off, &v, sizeof(v));
}

static void put32(uint8_t *p, unsigned int off, uint32_t v)
{
	memcpy(p + off, &v, sizeof(v));
}

static void put64(uint8_t *p, unsigned int off, uint64_t v)
{
	memcpy(p + off, &v, sizeof(v));
}

static uint32_t get32(const uint8_t *p, unsigned int off)
{
	uint32_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

/* A valid header like a 6.1 kernel's: protocol 2.15, 27 setup sectors. */
static void synthetic(uint8_t *h)
{
	memset(h, 0, HEAD);
	h[O_SETUP_SECTS] = 27;
	put16(h, O_BOOT_FLAG, 0xaa55);
	h[O_JUMP_END] = 0x6a; /* header ends at 0x26c */
	memcpy(h + O_HEADER, "HdrS", 4);
	put16(h, O_VERSION, 0x020f);
	h[O_LOADFLAGS] = 0x01;
	put32(h, O_INITRD_MAX, 0x7fffffff);
	put32(h, O_ALIGN, 0x200000);
	h[O_RELOC] = 1;
	put16(h, O_XLOADFLAGS, 0x1 | 0x2);
	put32(h, O_CMDLINE_SIZE, 2047);
	put64(h, O_PREF, 0x1000000);
	put32(h, O_INIT_SIZE, 48 * MiB);
}

static void parses_valid(void **state)
{
	uint8_t h[HEAD];
	struct bz_info bz;
	uint64_t file = 8 * MiB;

	(void)state;
	synthetic(h);
	assert_int_equal(linux__bz_parse(h, HEAD, file, &bz), 0);
	assert_int_equal(bz.version, 0x020f);
	assert_int_equal(bz.setup_size, 28 * 512);
	assert_int_equal(bz.kernel_size, file - 28 * 512);
	assert_int_equal(bz.load_addr, 0x1000000);
	assert_int_equal(bz.init_size, 48 * MiB);
	assert_int_equal(bz.cmdline_size, 2047);
	assert_int_equal(bz.initrd_addr_max, 0x7fffffff);
	assert_int_equal(bz.hdr_len, 0x26c - 0x1f1);
	assert_true(bz.relocatable);
}

static void defaults(void **state)
{
	uint8_t h[HEAD];
	struct bz_info bz;

	(void)state;
	synthetic(h);
	h[O_SETUP_SECTS] = 0; /* means 4 */
	put64(h, O_PREF, 0);  /* load at 1 MiB */
	assert_int_equal(linux__bz_parse(h, HEAD, 8 * MiB, &bz), 0);
	assert_int_equal(bz.setup_size, 5 * 512);
	assert_int_equal(bz.load_addr, MiB);
}

static void expect_reject(const uint8_t *h, size_t len, uint64_t file,
			  const char *needle)
{
	struct bz_info bz;

	assert_int_equal(linux__bz_parse(h, len, file, &bz), -ENOEXEC);
	if (!strstr(err__last(), needle))
		fail_msg("'%s' lacks '%s'", err__last(), needle);
}

static void rejects_corrupt(void **state)
{
	uint8_t h[HEAD];

	(void)state;
	synthetic(h);
	expect_reject(h, 512, 512, "too short");
	h[O_BOOT_FLAG] = 0;
	expect_reject(h, HEAD, 8 * MiB, "no boot flag");
	synthetic(h);
	h[O_HEADER] = 'X';
	expect_reject(h, HEAD, 8 * MiB, "no \"HdrS\" magic");
	synthetic(h);
	put16(h, O_VERSION, 0x020b);
	expect_reject(h, HEAD, 8 * MiB, "2.11 is older than 2.12");
	synthetic(h);
	put16(h, O_XLOADFLAGS, 0x2);
	expect_reject(h, HEAD, 8 * MiB, "XLF_KERNEL_64");
	synthetic(h);
	h[O_LOADFLAGS] = 0;
	expect_reject(h, HEAD, 8 * MiB, "LOADED_HIGH");
	synthetic(h);
	h[O_SETUP_SECTS] = 255;
	expect_reject(h, HEAD, 64 * 1024, "leaves no protected-mode kernel");
	synthetic(h);
	put64(h, O_PREF, 0x1000123);
	expect_reject(h, HEAD, 8 * MiB, "not page-aligned");
	synthetic(h);
	put32(h, O_INIT_SIZE, 4096);
	expect_reject(h, HEAD, 8 * MiB, "init_size 4096 is smaller");
	/* Near the top of the address space load_addr + init_size would
	 * wrap to a small end that passes any memory-size check. */
	synthetic(h);
	put64(h, O_PREF, 0xfffffffffff00000ull);
	put32(h, O_INIT_SIZE, 0x300000);
	expect_reject(h, HEAD, 2 * MiB, "beyond the 52-bit physical address");
	synthetic(h);
	put64(h, O_PREF, 1ull << 52);
	expect_reject(h, HEAD, 8 * MiB, "beyond the 52-bit physical address");
}

/* Random bytes never pass: the two magics alone make that certain. */
static void rejects_noise(void **state)
{
	uint8_t h[HEAD];
	struct bz_info bz;

	(void)state;
	srand(7);
	for (int round = 0; round < 200; round++) {
		for (size_t i = 0; i < HEAD; i++)
			h[i] = (uint8_t)rand();
		assert_int_equal(linux__bz_parse(h, HEAD, 8 * MiB, &bz),
				 -ENOEXEC);
	}
}

static void e820_layout(void **state)
{
	struct boot_e820_entry t[8];
	int n;

	(void)state;
	n = linux__e820(t, 8, 256 * MiB);
	assert_int_equal(n, 3);
	assert_int_equal(t[0].addr, 0);
	assert_int_equal(t[0].size, 0x9fc00);
	assert_int_equal(t[0].type, 1);
	assert_int_equal(t[1].addr, 0x9fc00);
	assert_int_equal(t[1].addr + t[1].size, MiB);
	assert_int_equal(t[1].type, 2);
	assert_int_equal(t[2].addr, MiB);
	assert_int_equal(t[2].addr + t[2].size, 256 * MiB);
	assert_int_equal(t[2].type, 1);
}

static void e820_limits(void **state)
{
	struct boot_e820_entry t[8];

	(void)state;
	assert_int_equal(linux__e820(t, 8, MiB), -EINVAL);
	assert_int_equal(linux__e820(t, 8, 3072 * MiB + 2 * MiB), -EINVAL);
	assert_int_equal(linux__e820(t, 8, 3072 * MiB), 3);
	assert_int_equal(linux__e820(t, 2, 64 * MiB), -ENOSPC);
}

static void initrd_placement(void **state)
{
	uint64_t gpa;

	(void)state;
	/* Highest page-aligned start that ends inside memory. */
	assert_int_equal(linux__place_initrd(256 * MiB, 0x7fffffff, 64 * MiB,
					     10000, &gpa), 0);
	assert_int_equal(gpa, (256 * MiB - 10000) & ~0xfffull);
	assert_true(gpa + 10000 <= 256 * MiB);
	/* initrd_addr_max (last byte) below memory's end caps it. */
	assert_int_equal(linux__place_initrd(256 * MiB, 128 * MiB - 1,
					     64 * MiB, 4096, &gpa), 0);
	assert_int_equal(gpa, 128 * MiB - 4096);
	/* Exactly fills the room above the kernel. */
	assert_int_equal(linux__place_initrd(128 * MiB, ~0ull, 64 * MiB,
					     64 * MiB, &gpa), 0);
	assert_int_equal(gpa, 64 * MiB);
}

static void initrd_too_large(void **state)
{
	uint64_t gpa = 0;

	(void)state;
	assert_int_equal(linux__place_initrd(128 * MiB, ~0ull, 64 * MiB,
					     64 * MiB + 1, &gpa), -E2BIG);
	assert_non_null(strstr(err__last(),
			       "initrd too large for guest memory"));
	assert_int_equal(linux__place_initrd(128 * MiB, ~0ull, 0,
					     300 * MiB, &gpa), -E2BIG);
	assert_int_equal(linux__place_initrd(128 * MiB, ~0ull, 0, 0, &gpa),
			 -EINVAL);
}

static void zero_page_from_bzimage(void **state)
{
	uint8_t h[HEAD];
	struct boot_params *bp = malloc(sizeof(*bp));
	const uint8_t *raw = (const uint8_t *)bp;
	struct linux_zero_page z = {
		.setup_hdr = h + 0x1f1, .hdr_len = 0x26c - 0x1f1,
		.mem_size = 128 * MiB, .cmdline_gpa = 0x20000,
		.initrd_gpa = 100 * MiB, .initrd_size = 12345,
	};

	(void)state;
	assert_non_null(bp);
	synthetic(h);
	memset(bp, 0xcc, sizeof(*bp));
	assert_int_equal(linux__zero_page(bp, &z), 0);
	assert_int_equal(memcmp(raw + O_HEADER, "HdrS", 4), 0);
	assert_int_equal(raw[ZP_TYPE_OF_LOADER], 0xff);
	assert_int_equal(get32(raw, O_CMD_LINE_PTR), 0x20000);
	assert_int_equal(get32(raw, O_RAMDISK_IMAGE), 100 * MiB);
	assert_int_equal(get32(raw, O_RAMDISK_SIZE), 12345);
	assert_int_equal(get32(raw, O_CMDLINE_SIZE), 2047); /* the kernel's */
	assert_int_equal(raw[ZP_E820_ENTRIES], 3);
	assert_int_equal(get32(raw, ZP_E820_TABLE + 2 * 20), MiB);
	/* Beyond the header the page was zeroed. */
	assert_int_equal(raw[0x26c], 0);
	assert_int_equal(raw[0xfff], 0);
	free(bp);
}

static void zero_page_for_elf(void **state)
{
	struct boot_params *bp = malloc(sizeof(*bp));
	const uint8_t *raw = (const uint8_t *)bp;
	struct linux_zero_page z = { .mem_size = 64 * MiB,
				     .cmdline_gpa = 0x20000 };

	(void)state;
	assert_non_null(bp);
	assert_int_equal(linux__zero_page(bp, &z), 0);
	assert_int_equal(memcmp(raw + O_HEADER, "HdrS", 4), 0);
	assert_int_equal(raw[O_BOOT_FLAG] | raw[O_BOOT_FLAG + 1] << 8, 0xaa55);
	assert_int_equal(get32(raw, O_RAMDISK_SIZE), 0);
	assert_int_equal(raw[ZP_E820_ENTRIES], 3);
	z.mem_size = 4096ull * MiB;
	assert_int_equal(linux__zero_page(bp, &z), -EINVAL);
	free(bp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_valid),
		cmocka_unit_test(defaults),
		cmocka_unit_test(rejects_corrupt),
		cmocka_unit_test(rejects_noise),
		cmocka_unit_test(e820_layout),
		cmocka_unit_test(e820_limits),
		cmocka_unit_test(initrd_placement),
		cmocka_unit_test(initrd_too_large),
		cmocka_unit_test(zero_page_from_bzimage),
		cmocka_unit_test(zero_page_for_elf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
