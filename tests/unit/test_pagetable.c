/* Unit tests for the x86-64 page-table builder (vmm/pagetable_x86.c). */
#include "err.h"
#include "pagetable_x86.h"
#include "units.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* Only the page-table area needs host memory: mapped physical addresses
 * are never dereferenced by the builder. */
#define MEM_SIZE 0x100000ull
#define AREA 0x80000ull
#define AREA_END MEM_SIZE
#define VA_LIMIT (1ull << 47)

/* Hardware bits, spelled out here so the tests do not trust the code's. */
#define E_P (1ull << 0)
#define E_RW (1ull << 1)
#define E_US (1ull << 2)
#define E_PS (1ull << 7)
#define E_NX (1ull << 63)
#define E_ADDR 0x000ffffffffff000ull

struct fixture {
	uint8_t *mem;
	struct pt_builder b;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f || !(f->mem = malloc(MEM_SIZE)))
		return -1;
	/* Garbage, so that tables the builder forgets to clear show up. */
	memset(f->mem, 0xa5, MEM_SIZE);
	if (pt__init(&f->b, f->mem, MEM_SIZE, AREA, AREA_END) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	free(f->mem);
	free(f);
	return 0;
}

static uint64_t entry(const struct fixture *f, uint64_t table, unsigned int idx)
{
	uint64_t e;

	memcpy(&e, f->mem + table + idx * 8ull, sizeof(e));
	return e;
}

static unsigned int idx(uint64_t va, unsigned int level)
{
	return (unsigned int)(va >> (12 + 9 * level)) & 511;
}

/* Asserts that va translates to pa with exactly `flags`. */
static void check_tr(const struct fixture *f, uint64_t va, uint64_t pa,
		     unsigned int flags)
{
	uint64_t got_pa = 0;
	unsigned int got_flags = ~0u;

	assert_int_equal(pt__translate(&f->b, va, &got_pa, &got_flags), 0);
	assert_int_equal(got_pa, pa);
	assert_int_equal(got_flags, flags);
}

static void check_unmapped(const struct fixture *f, uint64_t va)
{
	uint64_t pa;
	unsigned int flags;

	assert_int_equal(pt__translate(&f->b, va, &pa, &flags), -ENOENT);
}

static uint64_t tables_used(const struct fixture *f)
{
	return (f->b.next - AREA) / PT_PAGE_4K;
}

static void init_rejects_bad_areas(void **state)
{
	struct fixture *f = *state;
	struct pt_builder b;

	assert_int_equal(pt__init(&b, f->mem, MEM_SIZE, AREA + 8, AREA_END),
			 -EINVAL);
	assert_int_equal(pt__init(&b, f->mem, MEM_SIZE, AREA, AREA_END - 8),
			 -EINVAL);
	assert_int_equal(pt__init(&b, f->mem, MEM_SIZE, AREA, AREA), -EINVAL);
	assert_int_equal(pt__init(&b, f->mem, MEM_SIZE, AREA_END, AREA),
			 -EINVAL);
	assert_int_equal(pt__init(&b, f->mem, MEM_SIZE, AREA,
				  MEM_SIZE + PT_PAGE_4K), -EINVAL);
	assert_non_null(strstr(err__last(), "page-table area"));
}

static void init_allocates_clear_root(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(f->b.root, AREA);
	assert_int_equal(f->b.next, AREA + PT_PAGE_4K);
	for (unsigned int i = 0; i < 512; i++)
		assert_int_equal(entry(f, f->b.root, i), 0);
	/* Nothing beyond the root was touched. */
	assert_int_equal(f->mem[AREA + PT_PAGE_4K], 0xa5);
}

static void aligned_range_uses_2m_pages(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(pt__map(&f->b, 0x200000, 0x400000, 4 * MiB, PT_WRITE),
			 0);
	/* PML4, PDPT and PD only: no page table for 2 MiB leaves. */
	assert_int_equal(tables_used(f), 3);
	check_tr(f, 0x200000, 0x400000, PT_WRITE);
	check_tr(f, 0x201234, 0x401234, PT_WRITE);
	check_tr(f, 0x5fffff, 0x7fffff, PT_WRITE);
	check_unmapped(f, 0x1fffff);
	check_unmapped(f, 0x600000);
}

static void pt_4k_flag_forces_4k_pages(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(pt__map(&f->b, 0x200000, 0x400000, 4 * MiB,
				 PT_WRITE | PT_4K), 0);
	/* PML4, PDPT, PD and one page table per 2 MiB. */
	assert_int_equal(tables_used(f), 5);
	check_tr(f, 0x200000, 0x400000, PT_WRITE | PT_4K);
	check_tr(f, 0x3ff008, 0x5ff008, PT_WRITE | PT_4K);
	check_tr(f, 0x5fffff, 0x7fffff, PT_WRITE | PT_4K);
	check_unmapped(f, 0x600000);
}

static void unaligned_va_or_pa_uses_4k_pages(void **state)
{
	struct fixture *f = *state;

	/* va aligned to 2 MiB, pa only to 4 KiB. */
	assert_int_equal(pt__map(&f->b, 0x200000, 0x401000, 2 * MiB, 0), 0);
	check_tr(f, 0x200000, 0x401000, PT_4K);
	check_tr(f, 0x3fffff, 0x600fff, PT_4K);
	/* pa aligned, va not. */
	assert_int_equal(pt__map(&f->b, 0x801000, 0x800000, 2 * MiB, 0), 0);
	check_tr(f, 0x801000, 0x800000, PT_4K);
	check_tr(f, 0xa00fff, 0x9fffff, PT_4K);
}

static void mixed_range_uses_both_sizes(void **state)
{
	struct fixture *f = *state;

	/* 4 KiB head, one 2 MiB page, 4 KiB tail. */
	assert_int_equal(pt__map(&f->b, 0x1ff000, 0x1ff000,
				 PT_PAGE_4K + 2 * MiB + PT_PAGE_4K, PT_WRITE),
			 0);
	check_tr(f, 0x1ff000, 0x1ff000, PT_WRITE | PT_4K);
	check_tr(f, 0x200000, 0x200000, PT_WRITE);
	check_tr(f, 0x3fffff, 0x3fffff, PT_WRITE);
	check_tr(f, 0x400000, 0x400000, PT_WRITE | PT_4K);
	check_unmapped(f, 0x1fe000);
	check_unmapped(f, 0x401000);
}

static void translate_reports_flags(void **state)
{
	static const unsigned int combos[] = {
		0, PT_WRITE, PT_USER, PT_NX, PT_WRITE | PT_USER,
		PT_WRITE | PT_NX, PT_USER | PT_NX, PT_WRITE | PT_USER | PT_NX,
	};
	struct fixture *f = *state;

	for (unsigned int i = 0; i < sizeof(combos) / sizeof(combos[0]); i++) {
		uint64_t big = 0x40000000ull + i * 2 * MiB;
		uint64_t small = 0x80000000ull + i * PT_PAGE_4K;

		assert_int_equal(pt__map(&f->b, big, big, 2 * MiB, combos[i]),
				 0);
		assert_int_equal(pt__map(&f->b, small, small, PT_PAGE_4K,
					 combos[i]), 0);
		check_tr(f, big + 0x10, big + 0x10, combos[i]);
		check_tr(f, small + 0x10, small + 0x10, combos[i] | PT_4K);
	}
}

static void unmapped_is_enoent(void **state)
{
	struct fixture *f = *state;

	check_unmapped(f, 0);
	assert_int_equal(pt__map(&f->b, 0x1000, 0x1000, PT_PAGE_4K, 0), 0);
	check_unmapped(f, 0);        /* same page table, other entry */
	check_unmapped(f, 0x2000);
	check_unmapped(f, 1ull << 30); /* same PDPT, other PD */
	check_unmapped(f, 1ull << 39); /* other PML4 entry */
	check_unmapped(f, VA_LIMIT);   /* non-canonical */
	check_unmapped(f, ~0ull);
}

static void top_of_lower_half(void **state)
{
	struct fixture *f = *state;
	uint64_t va = VA_LIMIT - 2 * MiB;

	assert_int_equal(pt__map(&f->b, va, 0x200000, 2 * MiB, PT_WRITE), 0);
	check_tr(f, VA_LIMIT - 1, 0x3fffff, PT_WRITE);
	assert_int_equal(idx(va, 3), 255);
	assert_true(entry(f, f->b.root, 255) & E_P);
	assert_int_equal(entry(f, f->b.root, 0), 0);
	assert_int_equal(pt__map(&f->b, VA_LIMIT - PT_PAGE_4K, 0,
				 PT_PAGE_4K, 0), -EEXIST);
}

static void double_map_is_eexist(void **state)
{
	struct fixture *f = *state;

	/* 4 KiB into an existing 2 MiB leaf. */
	assert_int_equal(pt__map(&f->b, 0x200000, 0x200000, 2 * MiB, 0), 0);
	assert_int_equal(pt__map(&f->b, 0x201000, 0x900000, PT_PAGE_4K, 0),
			 -EEXIST);
	assert_non_null(strstr(err__last(), "0x201000"));
	/* 2 MiB over an existing page table. */
	assert_int_equal(pt__map(&f->b, 0x5ff000, 0x5ff000, PT_PAGE_4K, 0),
			 0);
	assert_int_equal(pt__map(&f->b, 0x400000, 0x400000, 2 * MiB, 0),
			 -EEXIST);
	/* The same leaf twice, both sizes. */
	assert_int_equal(pt__map(&f->b, 0x5ff000, 0x5ff000, PT_PAGE_4K, 0),
			 -EEXIST);
	assert_int_equal(pt__map(&f->b, 0x200000, 0x200000, 2 * MiB, 0),
			 -EEXIST);
	/* A range whose tail collides. */
	assert_int_equal(pt__map(&f->b, 0x5fd000, 0x5fd000, 3 * PT_PAGE_4K, 0),
			 -EEXIST);
	/* The earlier mappings are unchanged. */
	check_tr(f, 0x201000, 0x201000, 0);
	check_tr(f, 0x5ff000, 0x5ff000, PT_4K);
}

static void bad_arguments_are_einval(void **state)
{
	struct fixture *f = *state;
	uint64_t used = f->b.next;

	assert_int_equal(pt__map(&f->b, 0x1008, 0x1000, PT_PAGE_4K, 0),
			 -EINVAL);
	assert_int_equal(pt__map(&f->b, 0x1000, 0x1008, PT_PAGE_4K, 0),
			 -EINVAL);
	assert_int_equal(pt__map(&f->b, 0x1000, 0x1000, 0x800, 0), -EINVAL);
	assert_int_equal(pt__map(&f->b, VA_LIMIT, 0, PT_PAGE_4K, 0), -EINVAL);
	assert_int_equal(pt__map(&f->b, 0xffff800000000000ull, 0, PT_PAGE_4K,
				 0), -EINVAL);
	/* Starts canonical, runs past the lower half. */
	assert_int_equal(pt__map(&f->b, VA_LIMIT - PT_PAGE_4K, 0,
				 2 * PT_PAGE_4K, 0), -EINVAL);
	/* Physical addresses beyond 52 bits, and a wrapping pa range. */
	assert_int_equal(pt__map(&f->b, 0, 1ull << 52, PT_PAGE_4K, 0),
			 -EINVAL);
	assert_int_equal(pt__map(&f->b, 0, ~0ull - 0xfff, 2 * PT_PAGE_4K, 0),
			 -EINVAL);
	assert_non_null(strstr(err__last(), "cannot map"));
	/* Rejected before allocating anything. */
	assert_int_equal(f->b.next, used);
	check_unmapped(f, 0);
}

static void exhausted_area_is_enospc(void **state)
{
	struct fixture *f = *state;
	struct pt_builder b;

	/* Room for PML4, PDPT and PD: 2 MiB leaves fit, a page table not. */
	assert_int_equal(pt__init(&b, f->mem, MEM_SIZE, AREA,
				  AREA + 3 * PT_PAGE_4K), 0);
	assert_int_equal(pt__map(&b, 0x200000, 0x200000, 2 * MiB, 0), 0);
	assert_int_equal(pt__map(&b, 0x400000, 0x400000, PT_PAGE_4K, 0),
			 -ENOSPC);
	assert_non_null(strstr(err__last(), "full"));
	assert_int_equal(b.next, AREA + 3 * PT_PAGE_4K);
	/* A root alone cannot map anything. */
	assert_int_equal(pt__init(&b, f->mem, MEM_SIZE, AREA,
				  AREA + PT_PAGE_4K), 0);
	assert_int_equal(pt__map(&b, 0, 0, PT_PAGE_4K, 0), -ENOSPC);
}

static void many_tables_fit_until_area_ends(void **state)
{
	struct fixture *f = *state;
	uint64_t capacity = (AREA_END - AREA) / PT_PAGE_4K;
	uint64_t va = 0;
	int ret;

	/* Every 4 KiB mapping 2 MiB apart needs a fresh page table. */
	while ((ret = pt__map(&f->b, va, va, PT_PAGE_4K, PT_4K)) == 0)
		va += 2 * MiB;
	assert_int_equal(ret, -ENOSPC);
	assert_int_equal(f->b.next, AREA_END);
	/* PML4 + PDPT + PD + one PT per mapping, with one PD per 1 GiB:
	 * the first 512 mappings share a PD; capacity is well below that. */
	assert_int_equal(va / (2 * MiB), capacity - 3);
	check_tr(f, va - 2 * MiB, va - 2 * MiB, PT_4K);
}

static void raw_entries_match_hardware_format(void **state)
{
	struct fixture *f = *state;
	uint64_t va2m = 0x40200000ull, va4k = 0x40401000ull;
	uint64_t pml4e, pdpte, pde, leaf2m, pte;

	assert_int_equal(pt__map(&f->b, va2m, 0x600000, 2 * MiB, PT_NX), 0);
	assert_int_equal(pt__map(&f->b, va4k, 0x7000, PT_PAGE_4K,
				 PT_WRITE | PT_USER), 0);

	/* Intermediate entries: a table inside the area, P|RW|US, not NX,
	 * whatever the leaf's restrictions. */
	pml4e = entry(f, f->b.root, idx(va2m, 3));
	assert_int_equal(pml4e & ~E_ADDR, E_P | E_RW | E_US);
	assert_in_range(pml4e & E_ADDR, AREA, AREA_END - PT_PAGE_4K);
	pdpte = entry(f, pml4e & E_ADDR, idx(va2m, 2));
	assert_int_equal(pdpte & ~E_ADDR, E_P | E_RW | E_US);
	assert_in_range(pdpte & E_ADDR, AREA, AREA_END - PT_PAGE_4K);
	assert_int_not_equal(pdpte & E_ADDR, pml4e & E_ADDR);

	/* The 2 MiB leaf: address, P, PS, NX; read-only, supervisor. */
	leaf2m = entry(f, pdpte & E_ADDR, idx(va2m, 1));
	assert_int_equal(leaf2m, 0x600000 | E_P | E_PS | E_NX);

	/* The 4 KiB leaf under a PDE that is a table, not a leaf. */
	pde = entry(f, pdpte & E_ADDR, idx(va4k, 1));
	assert_int_equal(pde & ~E_ADDR, E_P | E_RW | E_US);
	pte = entry(f, pde & E_ADDR, idx(va4k, 0));
	assert_int_equal(pte, 0x7000 | E_P | E_RW | E_US);
	/* The rest of that page table is clear despite the 0xa5 fill. */
	assert_int_equal(entry(f, pde & E_ADDR, idx(va4k, 0) + 1), 0);
}

static void translate_stops_at_tables_outside_memory(void **state)
{
	struct fixture *f = *state;
	uint64_t bogus = MEM_SIZE | E_P | E_RW, pa;
	unsigned int flags;

	memcpy(f->mem + f->b.root, &bogus, sizeof(bogus));
	assert_int_equal(pt__translate(&f->b, 0x1000, &pa, &flags), -EFAULT);
}

/* The end of the physical range counts too: a page at 1 << 52 would fall
 * outside the PTE address field and silently map physical 0. */
static void pa_range_crossing_52_bits_is_einval(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(pt__map(&f->b, 0, (1ull << 52) - PT_PAGE_4K,
				 2 * PT_PAGE_4K, PT_4K), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(init_rejects_bad_areas, setup,
						teardown),
		cmocka_unit_test_setup_teardown(init_allocates_clear_root,
						setup, teardown),
		cmocka_unit_test_setup_teardown(aligned_range_uses_2m_pages,
						setup, teardown),
		cmocka_unit_test_setup_teardown(pt_4k_flag_forces_4k_pages,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			unaligned_va_or_pa_uses_4k_pages, setup, teardown),
		cmocka_unit_test_setup_teardown(mixed_range_uses_both_sizes,
						setup, teardown),
		cmocka_unit_test_setup_teardown(translate_reports_flags, setup,
						teardown),
		cmocka_unit_test_setup_teardown(unmapped_is_enoent, setup,
						teardown),
		cmocka_unit_test_setup_teardown(top_of_lower_half, setup,
						teardown),
		cmocka_unit_test_setup_teardown(double_map_is_eexist, setup,
						teardown),
		cmocka_unit_test_setup_teardown(bad_arguments_are_einval, setup,
						teardown),
		cmocka_unit_test_setup_teardown(exhausted_area_is_enospc, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			many_tables_fit_until_area_ends, setup, teardown),
		cmocka_unit_test_setup_teardown(
			raw_entries_match_hardware_format, setup, teardown),
		cmocka_unit_test_setup_teardown(
			translate_stops_at_tables_outside_memory, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			pa_range_crossing_52_bits_is_einval, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
