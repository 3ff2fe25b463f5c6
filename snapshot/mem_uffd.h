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

#endif
