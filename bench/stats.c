/* Percentiles, mean and standard deviation. */
#include "stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double stats__percentile_sorted(const double *sorted, size_t n, double p)
{
	double rank, frac;
	size_t lo;

	if (n == 1)
		return sorted[0];
	rank = p / 100.0 * (double)(n - 1);
	lo = (size_t)rank;
	if (lo >= n - 1)
		return sorted[n - 1];
	frac = rank - (double)lo;
	return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

int stats__summarize(const double *samples, size_t n, struct summary *out)
{
	double *s, sum = 0, sq = 0;

	if (n == 0)
		return -EINVAL;
	s = malloc(n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	memcpy(s, samples, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	out->n = n;
	out->mean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		sq += (s[i] - out->mean) * (s[i] - out->mean);
	out->stddev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
	out->min = s[0];
	out->max = s[n - 1];
	out->p50 = stats__percentile_sorted(s, n, 50);
	out->p90 = stats__percentile_sorted(s, n, 90);
	out->p99 = stats__percentile_sorted(s, n, 99);
	out->p999 = stats__percentile_sorted(s, n, 99.9);
	free(s);
	return 0;
}
