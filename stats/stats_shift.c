/* A distribution-free confidence bound on the shift between two samples:
 * the Hodges-Lehmann estimator and its Moses interval, the one the
 * Mann-Whitney U test inverts to. compare's gate passes a series only
 * when this bound says the change is smaller than the threshold. */
#include "stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

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

/* The differences y[j] - x[i] in (lo, hi] into d (as many as
 * count_at_most(hi) - count_at_most(lo)): for each y[j] the x[i] that
 * give them are a run, found with the same comparisons as the counts. */
static size_t gather(const double *x, size_t nx, const double *y, size_t ny,
		     double lo, double hi, double *d)
{
	size_t m = 0, a = nx, b = nx; /* x[a..] within hi, x[b..] within lo */

	for (size_t j = ny; j-- > 0;) {
		while (a > 0 && y[j] - x[a - 1] <= hi)
			a--;
		while (b > 0 && y[j] - x[b - 1] <= lo)
			b--;
		for (size_t i = a; i < b; i++)
			d[m++] = y[j] - x[i];
	}
	return m;
}

/* The k-th smallest (1-based) of the nx * ny differences y[j] - x[i],
 * by bisection on the value until at most nx + ny differences are left
 * between the bounds, which are then gathered and sorted: O((nx + ny)
 * log) time and no nx * ny array, so a million samples a side cost what
 * sorting them costs. Into *v; 0 or -ENOMEM. */
static int kth_difference(const double *x, size_t nx, const double *y,
			  size_t ny, double k, double *v)
{
	double lo = y[0] - x[nx - 1], hi = y[ny - 1] - x[0], *d;
	double clo = count_at_most(x, nx, y, ny, lo), chi = (double)nx * ny;
	size_t m;
	int ret;

	*v = lo;
	if (clo >= k)
		return 0;
	/* invariant: count(lo) = clo < k <= count(hi) = chi */
	while (chi - clo > (double)(nx + ny)) {
		double mid = lo + (hi - lo) / 2, c;

		if (mid <= lo || mid >= hi) { /* adjacent: hi is the value */
			*v = hi;
			return 0;
		}
		c = count_at_most(x, nx, y, ny, mid);
		if (c >= k)
			hi = mid, chi = c;
		else
			lo = mid, clo = c;
	}
	d = malloc((nx + ny) * sizeof(*d));
	if (!d)
		return -ENOMEM;
	m = gather(x, nx, y, ny, lo, hi, d);
	ret = stats__sort(d, m);
	if (ret == 0)
		*v = d[(size_t)(k - clo) - 1];
	free(d);
	return ret;
}

static double *sorted_copy(const double *a, size_t n, bool logs)
{
	double *c = malloc(n * sizeof(*c));

	if (!c)
		return NULL;
	for (size_t i = 0; i < n; i++)
		c[i] = logs ? log(a[i]) : a[i];
	if (stats__sort(c, n) < 0) {
		free(c);
		return NULL;
	}
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
	double *xs, *ys, m = (double)nx * (double)ny, k, a = 0, b = 0;
	int ret;

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
	k = bound_rank(nx, ny, z);
	out->lo = -INFINITY;
	out->hi = INFINITY;
	ret = kth_difference(xs, nx, ys, ny, floor((m + 1) / 2), &a);
	if (ret == 0)
		ret = kth_difference(xs, nx, ys, ny, ceil((m + 1) / 2), &b);
	out->estimate = (a + b) / 2;
	if (ret == 0 && k >= 1)
		ret = kth_difference(xs, nx, ys, ny, k, &out->lo);
	if (ret == 0 && k >= 1)
		ret = kth_difference(xs, nx, ys, ny, m + 1 - k, &out->hi);
	free(xs);
	free(ys);
	return ret;
}
