/* `coldstart bench soak`: many create -> DONE -> destroy cycles in one
 * process, with the process's descriptors and RSS and the kernel's slab
 * memory (KVM's caches where readable) at every checkpoint, and their
 * growth per 1,000 cycles: what leaks when a VMM runs for days. */
#ifndef COLDSTART_SOAK_H
#define COLDSTART_SOAK_H

#include "driver.h"

#include <jansson.h>
#include <stdio.h>

extern const struct bench_driver soak_driver;

/* /proc/slabinfo's caches whose name contains "kvm", read from `f`:
 * their memory (slabs x pages per slab x page size) in KiB, summed into
 * *total_kib; each cache's own into `by_cache` when not NULL (a JSON
 * object, name -> KiB). 0, or -EINVAL when `f` is not slabinfo 2.x. */
int soak__kvm_slab(FILE *f, long page_size, long long *total_kib,
		   json_t *by_cache);

#endif
