/* `bench density`'s arithmetic: the least-squares line through the
 * density curve, VMs per GiB, and the cost predicted with one more VM. */
#include "density.h"

#include "units.h"

#include <errno.h>

#define KiB_PER_GiB ((double)(GiB / KiB))

int density__fit(const double *x, const double *y, size_t n, double *slope,
		 double *intercept)
{
	double mx = 0, my = 0, sxx = 0, sxy = 0;

	if (n < 2)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		mx += x[i];
		my += y[i];
	}
	mx /= (double)n;
	my /= (double)n;
	for (size_t i = 0; i < n; i++) {
		sxx += (x[i] - mx) * (x[i] - mx);
		sxy += (x[i] - mx) * (y[i] - my);
	}
	if (sxx == 0)
		return -EINVAL;
	*slope = sxy / sxx;
	*intercept = my - *slope * mx;
	return 0;
}

double density__vms_per_gib(double kib_per_vm)
{
	return kib_per_vm > 0 ? KiB_PER_GiB / kib_per_vm : 0;
}

double density__predict_next(const double *vms, const double *cost,
			     size_t n)
{
	double slope = cost[0], icpt;

	if (n >= 2 && density__fit(vms, cost, n, &slope, &icpt) < 0)
		slope = cost[n - 1] - cost[n - 2];
	/* Noise can tilt the fit down; one more VM never frees memory. */
	return cost[n - 1] + (slope > 0 ? slope : 0);
}
