/* Unit tests for analysis/capacity.c: VMs per GiB from a density
 * curve, VMs per second over blocks of completions, VMs per host by memory
 * and the series a document from before them gets, against values worked
 * out by hand in the comments. */
#include "capacity.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#define GiB_KiB 1048576.0

/* One sample per VM after the first: 1 GiB over what it added; a VM
 * that added nothing (noise) is left out; one VM alone gives one. */
static void vms_per_gib_from_curve(void **state)
{
	const double cost[] = { 4900, 9000, 13096, 13000, 17096 };
	const double one[] = { 4096 };
	double v[5];

	(void)state;
	/* increments 4100, 4096, -96 (left out), 4096 */
	assert_int_equal(capacity__vms_per_gib(cost, 5, v), 3);
	assert_true(fabs(v[0] - GiB_KiB / 4100) < 1e-9);
	assert_true(fabs(v[1] - 256) < 1e-9);
	assert_true(fabs(v[2] - 256) < 1e-9);
	assert_int_equal(capacity__vms_per_gib(one, 1, v), 1);
	assert_true(fabs(v[0] - 256) < 1e-9);
}

/* 8 completions in 4 blocks of 2, from the start: (0, 10], (10, 20],
 * (20, 40], (40, 80] ms -> 200, 200, 100, 50 VMs/s; the order of the
 * input does not matter. */
static void block_rates(void **state)
{
	double ends[] = { 80e6, 5e6, 10e6, 15e6, 20e6, 30e6, 40e6, 60e6 };
	double zero[] = { 0, 0 }, v[8];

	(void)state;
	assert_int_equal(capacity__block_rates(ends, 8, 4, v), 4);
	assert_true(fabs(v[0] - 200) < 1e-9 && fabs(v[1] - 200) < 1e-9);
	assert_true(fabs(v[2] - 100) < 1e-9 && fabs(v[3] - 50) < 1e-9);
	/* fewer VMs than blocks: a block each */
	assert_int_equal(capacity__block_rates(ends, 2, 8, v), 2);
	/* a block that took no time has no rate */
	assert_int_equal(capacity__block_rates(zero, 2, 2, v), 0);
}

/* 16 GiB: the reserve is 10 % (1.6 GiB); 4 GiB: 1 GiB. (16 GiB - 1.6 GiB
 * - 600 KiB) / 5000 KiB = 3019.66 -> 3019; nothing fits a host smaller
 * than the reserve; a cost that is not positive gives -1. */
static void vms_by_memory(void **state)
{
	(void)state;
	assert_true(fabs(capacity__reserve_kib(16 * GiB_KiB) -
			 1.6 * GiB_KiB) < 1e-6);
	assert_true(fabs(capacity__reserve_kib(4 * GiB_KiB) - GiB_KiB) < 1e-9);
	assert_true(capacity__vms_by_memory(16 * GiB_KiB, 600, 5000) == 3019);
	/* negative shared memory (a fit's intercept) counts as none */
	assert_true(capacity__vms_by_memory(16 * GiB_KiB, -600, 5000) == 3019);
	assert_true(capacity__vms_by_memory(0.5 * GiB_KiB, 0, 5000) == 0);
	assert_true(capacity__vms_by_memory(16 * GiB_KiB, 0, 0) == -1);
}

static const json_t *series_named(const json_t *doc, const char *name)
{
	const json_t *s;
	size_t i;

	json_array_foreach(json_object_get(doc, "series"), i, s)
		if (!strcmp(json_string_value(json_object_get(s, "name")), name))
			return s;
	return NULL;
}

/* An old rate document: the burst's VMs/s per round (8 VMs in 8 and 16
 * ms: 1000 and 500), the sustained level's one overall rate; bigger is
 * better; a series there already is kept, not added twice. */
static void derive_old_rate_document(void **state)
{
	json_t *doc = json_pack(
		"{s:s, s:[], s:[{s:s, s:s, s:{s:s, s:s, s:i}, s:[i], s:f},"
		" {s:s, s:s, s:{s:s, s:s, s:i}, s:[i], s:f, s:[i, i]}]}",
		"bench", "rate", "warnings", "series",
		"name", "process.w2", "unit", "ns", "params", "mode", "process",
		"kind", "sustained", "workers", 2, "samples_ns", 1000000,
		"vms_per_s", 640.0,
		"name", "process.burst8", "unit", "ns", "params", "mode",
		"process", "kind", "burst", "workers", 8, "samples_ns", 3000000,
		"vms_per_s", 666.7, "makespan_ns", 8000000, 16000000);
	const json_t *s, *b;

	(void)state;
	assert_int_equal(capacity__derive_series(doc), 0);
	s = series_named(doc, "process.w2.vms_per_s");
	b = series_named(doc, "process.burst8.vms_per_s");
	assert_non_null(s);
	assert_non_null(b);
	assert_string_equal(json_string_value(json_object_get(s, "better")),
			    "higher");
	assert_int_equal(json_array_size(json_object_get(s, "samples")), 1);
	assert_true(fabs(json_number_value(json_array_get(
		json_object_get(s, "samples"), 0)) - 640) < 1e-9);
	assert_true(fabs(json_number_value(json_array_get(
		json_object_get(b, "samples"), 1)) - 500) < 1e-9);
	assert_string_equal(json_string_value(json_object_get(
		json_object_get(b, "params"), "kind")), "burst");
	assert_int_equal(capacity__derive_series(doc), 0);
	assert_int_equal(json_array_size(json_object_get(doc, "series")), 4);
	json_decref(doc);
}

/* An old density document: MODE.vms_per_gib from the curve's costs. */
static void derive_old_density_document(void **state)
{
	json_t *doc = json_pack(
		"{s:s, s:[], s:[], s:{s:{s:[{s:f}, {s:f}, {s:f}]}}}",
		"bench", "density", "warnings", "series", "density", "clone",
		"curve", "cost_kib", 4000.0, "cost_kib", 4512.0, "cost_kib",
		5024.0);
	const json_t *s;

	(void)state;
	assert_int_equal(capacity__derive_series(doc), 0);
	s = series_named(doc, "clone.vms_per_gib");
	assert_non_null(s);
	assert_string_equal(json_string_value(json_object_get(s, "unit")),
			    "vms_per_gib");
	assert_int_equal(json_array_size(json_object_get(s, "samples")), 2);
	assert_true(fabs(json_number_value(json_array_get(
		json_object_get(s, "samples"), 0)) - 2048) < 1e-9);
	json_decref(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(vms_per_gib_from_curve),
		cmocka_unit_test(block_rates),
		cmocka_unit_test(vms_by_memory),
		cmocka_unit_test(derive_old_rate_document),
		cmocka_unit_test(derive_old_density_document),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
