/* Memory a VMM process uses, from /proc/self: RSS, PSS and USS of the
 * whole process and the resident part of guest memory, so the VMM's own
 * overhead (USS beyond the guest pages) can be reported. */
#ifndef COLDSTART_MEMSTAT_H
#define COLDSTART_MEMSTAT_H

#include <stddef.h>
#include <stdint.h>

struct memstat {
	uint64_t rss_kib, pss_kib, uss_kib; /* whole process */
	uint64_t guest_rss_kib;     /* guest memory mapping, resident */
	uint64_t guest_private_kib; /* of which private to this process */
};

/* Reads /proc/self/smaps_rollup and the smaps entry of the mapping that
 * starts at `guest` (NULL: none). */
int memstat__self(struct memstat *m, const void *guest);

/* USS beyond the guest's private pages: what the VMM itself costs. */
uint64_t memstat__overhead_kib(const struct memstat *m);

#endif
