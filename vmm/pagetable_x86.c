/* 4-level page-table construction and walking. */
#include "pagetable_x86.h"

#include "err.h"

#include <string.h>

#define PTE_P (1ull << 0)
#define PTE_RW (1ull << 1)
#define PTE_US (1ull << 2)
#define PTE_PS (1ull << 7)
#define PTE_NX (1ull << 63)
#define PTE_ADDR 0x000ffffffffff000ull
#define VA_LIMIT (1ull << 47)

static uint64_t *table_at(const struct pt_builder *b, uint64_t gpa)
{
	return (uint64_t *)(b->mem + gpa);
}

static int alloc_table(struct pt_builder *b, uint64_t *gpa)
{
	if (b->next + PT_PAGE_4K > b->end)
		return err__set(ENOSPC, "page-table area ending at 0x%llx is "
				"full", (unsigned long long)b->end);
	*gpa = b->next;
	memset(b->mem + b->next, 0, PT_PAGE_4K);
	b->next += PT_PAGE_4K;
	return 0;
}

int pt__init(struct pt_builder *b, uint8_t *mem, uint64_t mem_size,
	     uint64_t area, uint64_t area_end)
{
	memset(b, 0, sizeof(*b));
	if (area % PT_PAGE_4K || area_end % PT_PAGE_4K || area >= area_end ||
	    area_end > mem_size)
		return err__set(EINVAL, "bad page-table area 0x%llx-0x%llx",
				(unsigned long long)area,
				(unsigned long long)area_end);
	b->mem = mem;
	b->mem_size = mem_size;
	b->next = area;
	b->end = area_end;
	return alloc_table(b, &b->root);
}

static uint64_t leaf_bits(unsigned int flags)
{
	uint64_t e = PTE_P;

	if (flags & PT_WRITE)
		e |= PTE_RW;
	if (flags & PT_USER)
		e |= PTE_US;
	if (flags & PT_NX)
		e |= PTE_NX;
	return e;
}

/* The next-level table under entry `idx` of `table`, created if absent.
 * Intermediate entries are permissive; leaves carry the restrictions. */
static int descend(struct pt_builder *b, uint64_t table, unsigned int idx,
		   uint64_t *next)
{
	uint64_t *e = &table_at(b, table)[idx];
	int ret;

	if (*e & PTE_P) {
		if (*e & PTE_PS)
			return -EEXIST;
		*next = *e & PTE_ADDR;
		return 0;
	}
	ret = alloc_table(b, next);
	if (ret < 0)
		return ret;
	*e = *next | PTE_P | PTE_RW | PTE_US;
	return 0;
}

static unsigned int va_index(uint64_t va, unsigned int level)
{
	return (va >> (12 + 9 * level)) & 511;
}

/* Installs one leaf at `level` (0 = 4 KiB PTE, 1 = 2 MiB PDE). */
static int map_one(struct pt_builder *b, uint64_t va, uint64_t pa,
		   unsigned int level, unsigned int flags)
{
	uint64_t table = b->root, *e;
	int ret;

	for (unsigned int l = 3; l > level; l--) {
		ret = descend(b, table, va_index(va, l), &table);
		if (ret < 0)
			goto busy;
	}
	e = &table_at(b, table)[va_index(va, level)];
	if (*e & PTE_P) {
		ret = -EEXIST;
		goto busy;
	}
	*e = pa | leaf_bits(flags) | (level ? PTE_PS : 0);
	return 0;
busy:
	if (ret == -EEXIST)
		return err__set(EEXIST, "guest virtual 0x%llx is already mapped",
				(unsigned long long)va);
	return ret;
}

int pt__map(struct pt_builder *b, uint64_t va, uint64_t pa, uint64_t len,
	    unsigned int flags)
{
	if ((va | pa | len) % PT_PAGE_4K || va >= VA_LIMIT ||
	    len > VA_LIMIT - va || pa + len < pa || (pa + len - 1) >> 52)
		return err__set(EINVAL, "cannot map 0x%llx bytes at 0x%llx",
				(unsigned long long)len,
				(unsigned long long)va);
	while (len) {
		int big = !(flags & PT_4K) && len >= PT_PAGE_2M &&
			  !(va % PT_PAGE_2M) && !(pa % PT_PAGE_2M);
		uint64_t step = big ? PT_PAGE_2M : PT_PAGE_4K;
		int ret = map_one(b, va, pa, big ? 1 : 0, flags);

		if (ret < 0)
			return ret;
		va += step;
		pa += step;
		len -= step;
	}
	return 0;
}

static unsigned int entry_flags(uint64_t e)
{
	return ((e & PTE_RW) ? PT_WRITE : 0) | ((e & PTE_US) ? PT_USER : 0) |
	       ((e & PTE_NX) ? PT_NX : 0);
}

int pt__translate(const struct pt_builder *b, uint64_t va, uint64_t *pa,
		  unsigned int *flags)
{
	uint64_t table = b->root, e;

	if (va >= VA_LIMIT)
		return -ENOENT;
	for (unsigned int l = 3;; l--) {
		if (table + PT_PAGE_4K > b->mem_size)
			return -EFAULT;
		e = table_at(b, table)[va_index(va, l)];
		if (!(e & PTE_P))
			return -ENOENT;
		if (l == 0 || (l == 1 && (e & PTE_PS)))
			break;
		table = e & PTE_ADDR;
	}
	if (e & PTE_PS) {
		*pa = (e & PTE_ADDR & ~(PT_PAGE_2M - 1)) | (va & (PT_PAGE_2M - 1));
		*flags = entry_flags(e);
	} else {
		*pa = (e & PTE_ADDR) | (va & (PT_PAGE_4K - 1));
		*flags = entry_flags(e) | PT_4K;
	}
	return 0;
}
