/* Pure logic of the benchmark drivers: boot's phase order, rate's default
 * concurrency levels, density's line fit and VMs per GiB. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "boot.h"
#include "density.h"
#include "rate.h"

#include <errno.h>

static void phase_order_by_mean_time(void **state)
{
	/* 4 events x 3 samples; event 1 is missing in one sample, event 3
	 * happens before event 2 on average. */
	const double t[] = {
		0, 0, 0,
		5, NAN, 5,
		30, 31, 29,
		10, 12, 11,
	};
	size_t order[4];

	(void)state;
	assert_int_equal(boot__phase_order(t, 4, 3, order), 3);
	assert_int_equal(order[0], 0);
	assert_int_equal(order[1], 3);
	assert_int_equal(order[2], 2);
	assert_int_equal(boot__phase_order(t, 4, 0, order), 0);
}

static void default_levels(void **state)
{
	unsigned int l[16];

	(void)state;
	assert_int_equal(rate__default_levels(2, l, 16), 3);
	assert_int_equal(l[0], 1);
	assert_int_equal(l[1], 2);
	assert_int_equal(l[2], 4);
	assert_int_equal(rate__default_levels(3, l, 16), 4); /* 1 2 4 6 */
	assert_int_equal(l[3], 6);
	assert_int_equal(rate__default_levels(1, l, 16), 2); /* 1 2 */
	assert_int_equal(rate__default_levels(64, l, 3), 3);
}

static void fit_exact_line(void **state)
{
	const double x[] = { 1, 2, 3, 4 }, y[] = { 1500, 2500, 3500, 4500 };
	double slope, icpt;

	(void)state;
	assert_int_equal(density__fit(x, y, 4, &slope, &icpt), 0);
	assert_float_equal(slope, 1000, 1e-9);
	assert_float_equal(icpt, 500, 1e-9);
}

static void fit_noisy_line(void **state)
{
	/* Least squares of (1,1), (2,3), (3,2): slope 0.5, intercept 1. */
	const double x[] = { 1, 2, 3 }, y[] = { 1, 3, 2 };
	double slope, icpt;

	(void)state;
	assert_int_equal(density__fit(x, y, 3, &slope, &icpt), 0);
	assert_float_equal(slope, 0.5, 1e-12);
	assert_float_equal(icpt, 1, 1e-12);
}

static void fit_rejects_degenerate(void **state)
{
	const double x[] = { 2, 2 }, y[] = { 1, 3 };
	double slope, icpt;

	(void)state;
	assert_int_equal(density__fit(x, y, 1, &slope, &icpt), -EINVAL);
	assert_int_equal(density__fit(x, y, 2, &slope, &icpt), -EINVAL);
}

static void vms_per_gib(void **state)
{
	(void)state;
	assert_float_equal(density__vms_per_gib(1024), 1024, 1e-9);
	assert_float_equal(density__vms_per_gib(4096), 256, 1e-9);
	assert_float_equal(density__vms_per_gib(0), 0, 0);
	assert_float_equal(density__vms_per_gib(-5), 0, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(phase_order_by_mean_time),
		cmocka_unit_test(default_levels),
		cmocka_unit_test(fit_exact_line),
		cmocka_unit_test(fit_noisy_line),
		cmocka_unit_test(fit_rejects_degenerate),
		cmocka_unit_test(vms_per_gib),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
