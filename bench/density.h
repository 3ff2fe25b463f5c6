/* `coldstart bench density`: how many held VMs fit in memory, fresh or as
 * snapshot clones sharing the page cache. */
#ifndef COLDSTART_DENSITY_H
#define COLDSTART_DENSITY_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "driver.h"

extern const struct bench_driver density_driver;

/* The held child (density_hold.c): argv "density", then "--hold-fresh"
 * and `coldstart run` options, or "--hold-clone" DIR [--settle=DUR |
 * --vsock=PATH [--exec=CMD]].
 * Returns an enum cli_exit once released. */
int density__hold_child(int argc, char **argv);

/* Least-squares line y = slope * x + intercept through n >= 2 points
 * with distinct x. 0, or -EINVAL. */
int density__fit(const double *x, const double *y, size_t n, double *slope,
		 double *intercept);

/* VMs per GiB at a marginal cost of `kib_per_vm` KiB per VM; 0 when the
 * cost is not positive. */
double density__vms_per_gib(double kib_per_vm);

/* The cost with one more VM, given the cost[] measured with vms[] VMs
 * alive (n >= 1 points): the last cost plus the marginal cost so far,
 * which is the first VM's cost after one point and the least-squares
 * slope (never below 0) after more. */
double density__predict_next(const double *vms, const double *cost,
			     size_t n);

#endif
