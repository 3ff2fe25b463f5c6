/* The userfaultfd restore strategy (see mem_restore.h). */
#ifndef COLDSTART_MEM_UFFD_H
#define COLDSTART_MEM_UFFD_H

#include "mem.h"

extern const struct guest_mem_ops mem_uffd_ops;
extern const struct guest_mem_ops mem_prefetch_ops;
extern const struct guest_mem_ops mem_uffd_huge_ops;
extern const struct guest_mem_ops mem_prefetch_thp_ops;

/* Fault injection for tests: cancels the handler thread of memory from
 * one of the strategies above, as if it had died. The handler's exit path
 * then fails the VM (mem__on_failure) and stops intercepting faults, so
 * no vCPU blocks on a fault nobody will serve. -EINVAL if m has no
 * running handler. */
int mem_uffd__kill_handler(struct guest_mem *m);

/* The working-set file the prefetch strategies record and replay
 * (SNAPSHOT_WSET_FILE): "CSWSET01", a 32-bit page count, 4 reserved bytes,
 * then that many 32-bit page numbers in first-touch order. */

/* Reads one for guest memory of `pages` pages: *out (malloc'ed) gets its
 * page numbers, *count how many. -ENOENT (no message) when it is missing,
 * else -errno with a message naming the file. */
int mem_uffd__wset_read(const char *path, uint64_t pages, uint32_t **out,
			uint32_t *count);

/* Writes `n` pages as a working-set file at `path` through a new
 * temporary file beside it (output__file_open: a random name, never a
 * link), fsynced and renamed. 0 or -errno, no message. */
int mem_uffd__wset_write(const char *path, const uint32_t *pages, uint32_t n);

/* Installs [dst, dst + len) of a range registered with `uffd`: copied
 * from src, or zero pages when src is 0, in pages of `page` bytes, and
 * skipping pages already present (a concurrent install) instead of
 * failing on them. 0, or -1 with errno set. */
int mem_uffd__install(int uffd, uint64_t dst, uint64_t src, uint64_t len,
		      uint64_t page);

#endif
