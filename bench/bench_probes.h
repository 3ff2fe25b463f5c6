/* `coldstart bench probes`: the eBPF probes' overhead on the measured
 * metric, from interleaved runs without and with them. */
#ifndef COLDSTART_BENCH_PROBES_H
#define COLDSTART_BENCH_PROBES_H

#include "driver.h"

extern const struct bench_driver probes_driver;

#endif
