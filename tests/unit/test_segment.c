/* Unit tests for x86 segment encoding (vmm/segment_x86.c) and the segments
 * and TSS that vmm/cpu_x86.c builds for ring-3 guests. */
#include "cpu_x86.h"
#include "err.h"
#include "guest/probe_abi.h"
#include "segment_x86.h"

#include <errno.h>
#include <linux/kvm.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#define SENTINEL 0x5555555555555555ull

static const struct x86_segment kernel_code = {
	.selector = 0x10, .type = X86_SEG_TYPE_CODE_XR, .s = 1, .dpl = 0,
	.present = 1, .l = 1, .g = 1, .limit = 0xfffff,
};

static void user_segments_encode_flat(void **state)
{
	(void)state;
	assert_int_equal(x86__seg_to_gdt(&x86_user_code),
			 0x00affb000000ffffull);
	assert_int_equal(x86__seg_to_gdt(&x86_user_data),
			 0x00cff3000000ffffull);
	assert_int_equal(x86__seg_to_gdt(&kernel_code), 0x00af9b000000ffffull);
}

static void user_segments_use_abi_selectors(void **state)
{
	(void)state;
	/* The guest reloads nothing: the VMM's selectors must be the ABI's. */
	assert_int_equal(x86_user_code.selector, PROBE_SEL_CODE);
	assert_int_equal(x86_user_data.selector, PROBE_SEL_DATA);
	assert_int_equal(x86_user_code.selector & 3, 3);
	assert_int_equal(x86_user_data.selector & 3, 3);
}

static void base_and_limit_are_split(void **state)
{
	const struct x86_segment seg = {
		.base = 0xfedcba9812345678ull, .limit = 0xabcde,
		.type = X86_SEG_TYPE_DATA_RW, .s = 1, .present = 1, .db = 1,
	};

	(void)state;
	/* limit[15:0] | base[23:0] << 16 | access 0x93 | limit[19:16] and
	 * D/B in byte 6 | base[31:24]; base[63:32] only in the high half. */
	assert_int_equal(x86__seg_to_gdt(&seg), 0x124a93345678bcdeull);
	assert_int_equal(x86__seg_to_gdt_high(&seg), 0xfedcba98ull);
}

/* Each field alone, so a bit landing in the wrong place is caught. */
static void each_field_has_its_bits(void **state)
{
	static const struct {
		struct x86_segment seg;
		uint64_t gdt;
	} cases[] = {
		{ { .limit = 0x00001 }, 1ull << 0 },
		{ { .limit = 0x08000 }, 1ull << 15 },
		{ { .limit = 0x10000 }, 1ull << 48 },
		{ { .limit = 0x80000 }, 1ull << 51 },
		{ { .base = 0x000001 }, 1ull << 16 },
		{ { .base = 0x800000 }, 1ull << 39 },
		{ { .base = 0x01000000 }, 1ull << 56 },
		{ { .base = 0x80000000 }, 1ull << 63 },
		{ { .base = 0x100000000ull }, 0 },
		{ { .type = 0x1 }, 1ull << 40 },
		{ { .type = 0x8 }, 1ull << 43 },
		{ { .s = 1 }, 1ull << 44 },
		{ { .dpl = 1 }, 1ull << 45 },
		{ { .dpl = 2 }, 1ull << 46 },
		{ { .present = 1 }, 1ull << 47 },
		{ { .l = 1 }, 1ull << 53 },
		{ { .db = 1 }, 1ull << 54 },
		{ { .g = 1 }, 1ull << 55 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(x86__seg_to_gdt(&cases[i].seg), cases[i].gdt);
}

static void kvm_limit_is_in_bytes(void **state)
{
	struct x86_segment seg = x86_user_code;
	struct kvm_segment k;

	(void)state;
	x86__seg_to_kvm(&seg, &k);
	assert_int_equal(k.limit, 0xffffffffu);
	seg.limit = 0;
	x86__seg_to_kvm(&seg, &k);
	assert_int_equal(k.limit, 0xfffu);
	seg.limit = 0x12345;
	seg.g = 0;
	x86__seg_to_kvm(&seg, &k);
	assert_int_equal(k.limit, 0x12345u);
}

static void kvm_fields_are_copied(void **state)
{
	struct kvm_segment k;

	(void)state;
	memset(&k, 0xaa, sizeof(k));
	x86__seg_to_kvm(&x86_user_code, &k);
	assert_int_equal(k.base, 0);
	assert_int_equal(k.selector, 0x33);
	assert_int_equal(k.type, X86_SEG_TYPE_CODE_XR);
	assert_int_equal(k.present, 1);
	assert_int_equal(k.dpl, 3);
	assert_int_equal(k.db, 0);
	assert_int_equal(k.s, 1);
	assert_int_equal(k.l, 1);
	assert_int_equal(k.g, 1);
	assert_int_equal(k.avl, 0);
	assert_int_equal(k.unusable, 0);
	assert_int_equal(k.padding, 0);

	x86__seg_to_kvm(&x86_user_data, &k);
	assert_int_equal(k.selector, 0x2b);
	assert_int_equal(k.type, X86_SEG_TYPE_DATA_RW);
	assert_int_equal(k.db, 1);
	assert_int_equal(k.l, 0);
}

static void kvm_absent_segment_is_unusable(void **state)
{
	const struct x86_segment seg = { .base = 0x1234000, .selector = 0x18 };
	struct kvm_segment k;

	(void)state;
	x86__seg_to_kvm(&seg, &k);
	assert_int_equal(k.present, 0);
	assert_int_equal(k.unusable, 1);
	assert_int_equal(k.base, 0x1234000);
}

static void tss_bytes_open_every_port(void **state)
{
	/* Guard bytes on both sides catch writes outside the TSS. */
	static uint8_t buf[16 + X86_TSS_IOMAP_SIZE + 16];
	uint8_t *tss = buf + 16;
	uint16_t iomap_base;

	(void)state;
	memset(buf, 0xaa, sizeof(buf));
	x86__tss_open_iomap(tss, 0x3000, PROBE_SEL_TSS);
	memcpy(&iomap_base, tss + 0x66, sizeof(iomap_base));
	assert_int_equal(iomap_base, 0x68);
	for (size_t i = 0; i < 0x66; i++)
		assert_int_equal(tss[i], 0);
	/* 65536 ports, one bit each, all clear = allowed. */
	for (size_t i = 0x68; i < 0x68 + 8192; i++)
		assert_int_equal(tss[i], 0);
	assert_int_equal(tss[X86_TSS_IOMAP_SIZE - 1], 0xff);
	for (size_t i = 0; i < 16; i++) {
		assert_int_equal(buf[i], 0xaa);
		assert_int_equal(tss[X86_TSS_IOMAP_SIZE + i], 0xaa);
	}
	assert_true(X86_TSS_IOMAP_SIZE <= PROBE_TSS_SIZE);
}

static void tss_descriptor_is_a_16_byte_system_segment(void **state)
{
	static uint8_t tss[X86_TSS_IOMAP_SIZE];
	const uint64_t base = 0xfedcba9876543000ull;
	struct x86_segment seg;

	(void)state;
	seg = x86__tss_open_iomap(tss, base, 0x40);
	assert_int_equal(seg.base, base);
	assert_int_equal(seg.limit, X86_TSS_IOMAP_SIZE - 1);
	assert_int_equal(seg.selector, 0x40);
	assert_int_equal(seg.type, 0xb);
	assert_int_equal(seg.s, 0);
	assert_int_equal(seg.present, 1);
	assert_int_equal(seg.g, 0);
	/* limit 0x2068, base[23:0] 0x543000, access 0x8b, base[31:24] 0x76. */
	assert_int_equal(x86__seg_to_gdt(&seg), 0x76008b5430002068ull);
	assert_int_equal(x86__seg_to_gdt_high(&seg), base >> 32);
}

static void gdt_fill_places_by_selector(void **state)
{
	static uint8_t tss_bytes[X86_TSS_IOMAP_SIZE];
	const struct x86_segment tss =
		x86__tss_open_iomap(tss_bytes, 0xabcd00003000ull, 0x40);
	const struct x86_segment *const segs[] = {
		&x86_user_code, &x86_user_data, &tss,
	};
	uint64_t gdt[16];

	(void)state;
	for (size_t i = 0; i < 16; i++)
		gdt[i] = SENTINEL;
	assert_int_equal(x86__gdt_fill(gdt, 16, segs, 3), 0);
	assert_int_equal(gdt[6], 0x00affb000000ffffull);
	assert_int_equal(gdt[5], 0x00cff3000000ffffull);
	assert_int_equal(gdt[8], x86__seg_to_gdt(&tss));
	assert_int_equal(gdt[9], 0xabcdull);
	for (size_t i = 0; i < 16; i++)
		if (i < 5 || i == 7 || i > 9)
			assert_int_equal(gdt[i], SENTINEL);
}

static void gdt_fill_rejects_out_of_range(void **state)
{
	struct x86_segment code = x86_user_code, tss = { .present = 1 };
	const struct x86_segment *const one_code[] = { &code };
	const struct x86_segment *const one_tss[] = { &tss };
	uint64_t gdt[16];

	(void)state;
	for (size_t i = 0; i < 16; i++)
		gdt[i] = SENTINEL;
	code.selector = 16 << 3;
	assert_int_equal(x86__gdt_fill(gdt, 16, one_code, 1), -ERANGE);
	assert_non_null(strstr(err__last(), "0x80"));
	code.selector = 15 << 3 | 3;
	assert_int_equal(x86__gdt_fill(gdt, 16, one_code, 1), 0);
	assert_int_equal(gdt[15], x86__seg_to_gdt(&code));
	/* Slot 0 is the null descriptor. */
	code.selector = 0x3;
	assert_int_equal(x86__gdt_fill(gdt, 16, one_code, 1), -ERANGE);
	assert_int_equal(gdt[0], SENTINEL);
	/* A system descriptor needs two slots. */
	tss.selector = 15 << 3;
	assert_int_equal(x86__gdt_fill(gdt, 16, one_tss, 1), -ERANGE);
	tss.selector = 14 << 3;
	assert_int_equal(x86__gdt_fill(gdt, 16, one_tss, 1), 0);
	assert_int_equal(gdt[15], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(user_segments_encode_flat),
		cmocka_unit_test(user_segments_use_abi_selectors),
		cmocka_unit_test(base_and_limit_are_split),
		cmocka_unit_test(each_field_has_its_bits),
		cmocka_unit_test(kvm_limit_is_in_bytes),
		cmocka_unit_test(kvm_fields_are_copied),
		cmocka_unit_test(kvm_absent_segment_is_unusable),
		cmocka_unit_test(tss_bytes_open_every_port),
		cmocka_unit_test(tss_descriptor_is_a_16_byte_system_segment),
		cmocka_unit_test(gdt_fill_places_by_selector),
		cmocka_unit_test(gdt_fill_rejects_out_of_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
