/* Reading a snapshot's memory file for the restore strategies: data
 * extents, ranges into guest memory, THP-backed memory to fill. */
#ifndef COLDSTART_MEM_SOURCE_H
#define COLDSTART_MEM_SOURCE_H

#include "mem.h"

#include <stddef.h>
#include <stdint.h>

/* 0 when transparent huge pages can be used (enabled is always or
 * madvise), else -ENOTSUP with a message. The kernel's setting is read
 * at the first call and kept: call it before a jail hides /sys. */
int mem_source__thp_available(void);

/* `size` bytes of 2 MiB-aligned anonymous memory advised MADV_HUGEPAGE,
 * untouched, into *out (munmap it with `size`); -errno with a message
 * (-ENOTSUP when THP is off). */
int mem_source__map_thp(size_t size, void **out);

/* Reads [start, end) of the memory file into the same offsets of guest
 * memory, counting stats.bytes_read; -errno with a message (naming a
 * file that shrank under the restore, see mem__check_source). */
int mem_source__read_range(struct guest_mem *m, uint64_t start,
			    uint64_t end);

/* Calls fn for each data extent [start, end) of the first `size` bytes of
 * a sparse file (SEEK_DATA/SEEK_HOLE); stops at fn's first -errno. */
int mem_source__for_each_extent(int fd, uint64_t size,
				 int (*fn)(void *ctx, uint64_t start,
					   uint64_t end),
				 void *ctx);

#endif
