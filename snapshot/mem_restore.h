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

#endif
