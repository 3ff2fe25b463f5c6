/* The units and the clock every room shares: binary sizes, nanoseconds of
 * CLOCK_MONOTONIC, and the comparison qsort() sorts doubles with. */
#ifndef COLDSTART_UNITS_H
#define COLDSTART_UNITS_H

#include <stdint.h>

#define KiB ((uint64_t)1 << 10)
#define MiB ((uint64_t)1 << 20)
#define GiB ((uint64_t)1 << 30)

#define NS_PER_US 1000ull
#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t now_ns(void);

/* qsort() order of doubles, ascending (NaN never reaches it: callers keep
 * only finite samples). */
int cmp_double(const void *a, const void *b);

#endif
