/* `coldstart bench rate`: VM creation rate, sequential, concurrent and in
 * bursts, in-process and process-per-VM. */
#ifndef COLDSTART_RATE_H
#define COLDSTART_RATE_H

#include "driver.h"

#include <stddef.h>
#include <stdint.h>

extern const struct bench_driver rate_driver;

/* The default concurrency levels for `cpus` CPUs: 1, 2, 4, ... and
 * 2 * cpus itself, ascending and distinct. Returns how many were written
 * to `levels` (at most `max`). */
size_t rate__default_levels(unsigned int cpus, unsigned int *levels,
			    size_t max);

#endif
