/* The userfaultfd restore strategy (see mem_restore.h). */
#ifndef COLDSTART_MEM_UFFD_H
#define COLDSTART_MEM_UFFD_H

#include "mem.h"

extern const struct guest_mem_ops mem_uffd_ops;
extern const struct guest_mem_ops mem_prefetch_ops;
extern const struct guest_mem_ops mem_uffd_huge_ops;

#endif
