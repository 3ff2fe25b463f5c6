/* Builds x86-64 4-level page tables inside guest memory, for guests that
 * start in long mode. Works on a host view of guest-physical memory from
 * GPA 0, so it runs (and is tested) without KVM. */
#ifndef COLDSTART_PAGETABLE_X86_H
#define COLDSTART_PAGETABLE_X86_H

#include <stdint.h>

#define PT_WRITE (1u << 0) /* writable */
#define PT_USER (1u << 1)  /* accessible from ring 3 */
#define PT_NX (1u << 2)    /* not executable (needs EFER.NXE) */
#define PT_4K (1u << 3)    /* use 4 KiB pages even where 2 MiB would do */

#define PT_PAGE_4K 0x1000ull
#define PT_PAGE_2M 0x200000ull

struct pt_builder {
	uint8_t *mem;      /* host address of GPA 0 */
	uint64_t mem_size;
	uint64_t next;     /* next free page-table page (GPA) */
	uint64_t end;      /* end of the page-table area (GPA) */
	uint64_t root;     /* GPA of the PML4: the value for CR3 */
};

/* Page-table pages come from [area, area_end), 4 KiB aligned, inside
 * memory; the PML4 is allocated at once. */
int pt__init(struct pt_builder *b, uint8_t *mem, uint64_t mem_size,
	     uint64_t area, uint64_t area_end);

/* Maps [va, va + len) to [pa, ...) with PT_* flags; 2 MiB pages wherever va,
 * pa and the remaining length allow and PT_4K is not set. va, pa and len
 * must be 4 KiB aligned and va canonical lower-half. -EEXIST when part of
 * the range is already mapped, -ENOSPC when the area is exhausted. */
int pt__map(struct pt_builder *b, uint64_t va, uint64_t pa, uint64_t len,
	    unsigned int flags);

/* Walks the tables: physical address and PT_* flags of va's leaf (PT_4K
 * set for a 4 KiB leaf). -ENOENT when unmapped. */
int pt__translate(const struct pt_builder *b, uint64_t va, uint64_t *pa,
		  unsigned int *flags);

#endif
