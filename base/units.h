/* The units and the clock every room shares: binary sizes, nanoseconds of
 * CLOCK_MONOTONIC, the comparison qsort() sorts doubles with, and a
 * double's shortest exact text. */
#ifndef COLDSTART_UNITS_H
#define COLDSTART_UNITS_H

#include <stddef.h>
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

/* A finite `v` in the fewest significant digits (%g) that read back as
 * the same double, so 0.99 is printed 0.99 and not 0.98999999999999999. */
void double_text(char *buf, size_t len, double v);

#endif
