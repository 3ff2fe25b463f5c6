/* `coldstart bench ab`: one driver as A and B, interleaved, gated. */
#ifndef COLDSTART_BENCH_AB_H
#define COLDSTART_BENCH_AB_H

#include "driver.h"

extern const struct bench_driver ab_driver;

#endif
