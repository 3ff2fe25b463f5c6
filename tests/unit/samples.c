/* Synthetic timing samples for the unit tests (samples.h). */
#include "samples.h"

#include "stats.h"

#include <math.h>

void samples__lognormal(double *x, size_t n, double median, double sigma,
			uint64_t seed)
{
	struct stats_rng rng;

	stats__rng_seed(&rng, seed);
	for (size_t i = 0; i < n; i++)
		x[i] = median * exp(sigma * stats__rng_normal(&rng));
}
