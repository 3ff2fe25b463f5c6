/* Descriptive statistics over raw samples (nanoseconds or any unit). */
#ifndef COLDSTART_STATS_H
#define COLDSTART_STATS_H

#include <stddef.h>

struct summary {
	size_t n;
	double min, max, mean, stddev;
	double p50, p90, p99, p999;
};

/* Sorts a copy of the samples and summarises them. -EINVAL when n == 0,
 * -ENOMEM when the copy cannot be made. */
int stats__summarize(const double *samples, size_t n, struct summary *out);

/* Percentile p (0..100) of ascending `sorted`, linearly interpolated
 * between closest ranks (Hyndman-Fan type 7, as R and NumPy default). */
double stats__percentile_sorted(const double *sorted, size_t n, double p);

#endif
