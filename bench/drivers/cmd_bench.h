/* `coldstart bench` (cmd_bench.c): its drivers in the order help lists
 * them. */
#ifndef COLDSTART_CMD_BENCH_H
#define COLDSTART_CMD_BENCH_H

#include "drivers.h"

#include <stddef.h>

/* The i-th driver: the suite, then bench__drivers(); NULL past the last. */
const struct bench_driver *bench__driver_at(size_t i);

#endif
