/* Memory a VMM process uses, from /proc/PID: RSS, PSS and USS of the
 * whole process and of its guest memory mapping, so the VMM's own
 * overhead (each measure beyond the guest's pages) can be reported; and
 * the host's KSM state. */
#ifndef COLDSTART_MEMSTAT_H
#define COLDSTART_MEMSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct memstat {
	uint64_t rss_kib, pss_kib, uss_kib; /* whole process */
	uint64_t guest_rss_kib;     /* guest memory mapping, resident */
	uint64_t guest_pss_kib;     /* its proportional share */
	uint64_t guest_private_kib; /* of which private to this process */
	/* of which anonymous: copies this process owns (written or filled
	 * pages), where the rest are page-cache pages of a mapped file that
	 * every mapper shares */
	uint64_t guest_anon_kib;
	/* The guest mapping carries VmFlags "mg": madvise(MADV_MERGEABLE)
	 * or prctl(PR_SET_MEMORY_MERGE) made it a candidate for KSM. */
	bool guest_mergeable;
};

/* What the process uses beyond its guest mapping (0 where the guest's
 * share exceeds the total, which smaps' rounding allows). */
struct memstat_beyond {
	uint64_t rss_kib, pss_kib, uss_kib;
};

/* Reads /proc/self/smaps_rollup and the smaps entry of the mapping that
 * starts at `guest` (NULL: none). */
int memstat__self(struct memstat *m, const void *guest);

/* The same for process `pid`, whose guest mapping starts at `guest`
 * (0: none). 0, or -errno with a message. */
int memstat__pid(struct memstat *m, pid_t pid, uintptr_t guest);

/* Adds one smaps line ("Rss:   12 kB", ...) to *m: to the process totals
 * when `guest` is false, else to the guest mapping's fields (VmFlags
 * included). Other lines are ignored. */
void memstat__add_line(struct memstat *m, const char *line, bool guest);

/* Opens (and closes) every file process `pid` maps executable: its
 * binary and libraries, as another start of the same program does. On a
 * file system whose page cache of a file is dropped on each open (FUSE
 * without keep_cache: the emulated host's virtiofs) that unmaps those
 * pages from every process, as a later start does to the running ones;
 * elsewhere it changes nothing. The number of files opened, or -errno
 * with a message when the maps are unreadable. */
int memstat__open_text(pid_t pid);

/* RSS, PSS and USS beyond the guest mapping's Rss, Pss and private
 * pages. */
void memstat__beyond_guest(const struct memstat *m, struct memstat_beyond *b);

/* USS beyond the guest's private pages: what the VMM itself costs. */
uint64_t memstat__overhead_kib(const struct memstat *m);

/* The host's KSM counters (/sys/kernel/mm/ksm); -1 where unreadable
 * (a kernel without KSM). */
struct memstat_ksm {
	long long run, pages_shared, pages_sharing, pages_unshared, full_scans;
};

void memstat__ksm(struct memstat_ksm *k);

/* The number after `key` at the start of a line of `path` (e.g.
 * "read_bytes:" in /proc/self/io); -1 when the file or the line is
 * missing. */
long long memstat__file_number(const char *path, const char *key);

/* Pages of process `pid` that KSM merged (/proc/PID/ksm_stat's
 * ksm_merging_pages); -1 where unreadable (older kernels). */
long long memstat__ksm_merging_pages(pid_t pid);

/* KSM's run mode in words: "off", "on", "off, unmerging" or "unknown". */
const char *memstat__ksm_run_text(long long run);

#endif
