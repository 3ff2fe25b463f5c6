/* Synthetic timing samples for the unit tests of the statistics. */
#ifndef COLDSTART_TEST_SAMPLES_H
#define COLDSTART_TEST_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

/* n lognormal samples around `median` with log-sd `sigma` (seeded). */
void samples__lognormal(double *x, size_t n, double median, double sigma,
			uint64_t seed);

#endif
