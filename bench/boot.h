/* `coldstart bench boot`: N fresh VMs, the distribution of every timeline
 * phase. */
#ifndef COLDSTART_BOOT_H
#define COLDSTART_BOOT_H

#include "driver.h"

#include <math.h>
#include <stddef.h>

extern const struct bench_driver boot_driver;

/* At most this many events are ordered (the timeline has fewer). */
#define BOOT_MAX_EVENTS 64

/* Orders the events that happened in every sample by their mean time.
 * t[ev * n + i]: event ev of sample i in ns since the sample's origin,
 * NAN when it did not happen; nr_events events, n samples. Writes the
 * indices of the events present in all samples to `order`, earliest
 * first, and returns how many. */
size_t boot__phase_order(const double *t, size_t nr_events, size_t n,
			 size_t *order);

#endif
