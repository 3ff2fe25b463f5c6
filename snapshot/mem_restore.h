/* Guest-memory restore strategies: guest memory backends (vmm/mem.h) that
 * fill memory from a snapshot's raw memory file, each its own way. */
#ifndef COLDSTART_MEM_RESTORE_H
#define COLDSTART_MEM_RESTORE_H

#include "mem.h"

#include <stdint.h>

/* "eager", "mmap", "populate", "uffd", "prefetch", and the huge-page
 * variants "eager-thp", "eager-huge", "uffd-huge", "prefetch-thp"; NULL
 * if unknown. */
const struct guest_mem_ops *mem_restore__strategy(const char *name);
/* NULL-terminated list, for help text and benchmarks. */
const struct guest_mem_ops *const *mem_restore__strategies(void);

/* 0 when transparent huge pages can be used (enabled is always or
 * madvise), else -ENOTSUP with a message. The kernel's setting is read
 * at the first call and kept: call it before a jail hides /sys. */
int mem_restore__thp_available(void);

/* `size` bytes of 2 MiB-aligned anonymous memory advised MADV_HUGEPAGE,
 * untouched, into *out (munmap it with `size`); -errno with a message
 * (-ENOTSUP when THP is off). */
int mem_restore__map_thp(size_t size, void **out);

/* Reads [start, end) of the memory file into the same offsets of guest
 * memory, counting stats.bytes_read; -errno with a message (naming a
 * file that shrank under the restore, see mem__check_source). */
int mem_restore__read_range(struct guest_mem *m, uint64_t start,
			    uint64_t end);

/* Calls fn for each data extent [start, end) of the first `size` bytes of
 * a sparse file (SEEK_DATA/SEEK_HOLE); stops at fn's first -errno. */
int mem_restore__for_each_extent(int fd, uint64_t size,
				 int (*fn)(void *ctx, uint64_t start,
					   uint64_t end),
				 void *ctx);

#endif
