/* A distribution-free confidence bound on the shift between two samples:
 * the Hodges-Lehmann estimator and its Moses interval, the one the
 * Mann-Whitney U test inverts to. compare's gate passes a series only
 * when this bound says the change is smaller than the threshold. */
#include "stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Pairs (i, j) with y[j] - x[i] <= d, both sorted ascending: as y[j]
 * grows so does the least x[i] that still qualifies, so one pass. */
static double count_at_most(const double *x, size_t nx, const double *y,
			    size_t ny, double d)
{
	double count = 0;
	size_t i = nx; /* x[i..] are >= y[j] - d */

	for (size_t j = ny; j-- > 0;) {
		while (i > 0 && y[j] - x[i - 1] <= d)
			i--;
		count += (double)(nx - i);
	}
	return count;
}

/* The k-th smallest (1-based) of the nx * ny differences y[j] - x[i],
 * by bisection on the value: O((nx + ny) log) time and no nx * ny
 * array, so a million samples a side cost what sorting them costs. */
static double kth_difference(const double *x, size_t nx, const double *y,
			     size_t ny, double k)
{
	double lo = y[0] - x[nx - 1], hi = y[ny - 1] - x[0];

	if (count_at_most(x, nx, y, ny, lo) >= k)
		return lo;
	/* invariant: count(lo) < k <= count(hi) */
	for (int i = 0; i < 200; i++) {
		double mid = lo + (hi - lo) / 2;

		if (mid <= lo || mid >= hi)
			break;
		if (count_at_most(x, nx, y, ny, mid) >= k)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

static double *sorted_copy(const double *a, size_t n, bool logs)
{
	double *c = malloc(n * sizeof(*c));

	if (!c)
		return NULL;
	for (size_t i = 0; i < n; i++)
		c[i] = logs ? log(a[i]) : a[i];
	qsort(c, n, sizeof(*c), cmp_double);
	return c;
}

/* The rank of the one-sided bound: the normal approximation of U's
 * null distribution without the tie correction (which only narrows it),
 * rounded down: both make the interval wider, never narrower. */
static double bound_rank(size_t nx, size_t ny, double z)
{
	double m = (double)nx * (double)ny;

	return floor(m / 2 - z * sqrt(m * (double)(nx + ny + 1) / 12));
}

int stats__shift_ci(const double *x, size_t nx, const double *y, size_t ny,
		    double z, bool logs, struct shift_ci *out)
{
	double *xs, *ys, m = (double)nx * (double)ny, k;

	if (nx == 0 || ny == 0 || !(z >= 0))
		return -EINVAL;
	xs = sorted_copy(x, nx, logs);
	ys = sorted_copy(y, ny, logs);
	if (!xs || !ys) {
		free(xs);
		free(ys);
		return -ENOMEM;
	}
	/* the median of the differences: the mean of the two middle ones
	 * when their count is even */
	out->estimate = (kth_difference(xs, nx, ys, ny, floor((m + 1) / 2)) +
			 kth_difference(xs, nx, ys, ny, ceil((m + 1) / 2))) / 2;
	k = bound_rank(nx, ny, z);
	out->lo = k >= 1 ? kth_difference(xs, nx, ys, ny, k) : -INFINITY;
	out->hi = k >= 1 ? kth_difference(xs, nx, ys, ny, m + 1 - k)
			 : INFINITY;
	free(xs);
	free(ys);
	return 0;
}
