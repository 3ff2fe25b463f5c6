/* Unit tests for stats/merge_pick.c: which merge policy a session should
 * use, on hand-made drifts and bytes. */
#include "merge_pick.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

static long pick(const struct merge_score *s, size_t n, bool *met)
{
	return merge_pick__choose(s, n, MERGE_PICK_TARGET, met);
}

/* Two within the target: the cheaper wins though the other is flatter. */
static void cheapest_within_target(void **state)
{
	const struct merge_score s[] = {
		{ 1.60, 10e6 }, /* never: cheapest, but drifts */
		{ 1.02, 40e6 }, /* every:4: flattest, dearest */
		{ 1.15, 25e6 }, /* chain:8 */
	};
	bool met = false;

	(void)state;
	assert_int_equal(pick(s, N(s), &met), 2);
	assert_true(met);
}

/* The boundary: exactly 1.2 meets the target; a faster later resume
 * (drift below 1) meets it too. */
static void boundary_and_below_one(void **state)
{
	const struct merge_score a[] = { { 1.2, 5 }, { 1.0, 9 } };
	const struct merge_score b[] = { { 0.7, 5 }, { 1.0, 9 } };
	bool met = false;

	(void)state;
	assert_int_equal(pick(a, N(a), &met), 0);
	assert_true(met);
	assert_int_equal(pick(b, N(b), &met), 0);
	assert_true(met);
}

/* Equal bytes: the flatter; equal bytes and flatness: the first. */
static void ties(void **state)
{
	const struct merge_score a[] = { { 1.10, 7 }, { 1.05, 7 } };
	const struct merge_score b[] = { { 1.125, 7 }, { 0.875, 7 } };
	const struct merge_score c[] = { { 1.5, 9 }, { 1.5, 3 } };
	bool met = false;

	(void)state;
	assert_int_equal(pick(a, N(a), &met), 1);
	assert_int_equal(pick(b, N(b), &met), 0);
	/* none within, equally flat: the fewer bytes */
	assert_int_equal(pick(c, N(c), &met), 1);
	assert_false(met);
}

/* None within the target: the flattest, however many bytes it writes. */
static void none_within_target(void **state)
{
	const struct merge_score s[] = {
		{ 2.0, 1 }, { 1.3, 100 }, { 1.9, 2 },
	};
	bool met = true;

	(void)state;
	assert_int_equal(pick(s, N(s), &met), 1);
	assert_false(met);
}

static void one_policy(void **state)
{
	const struct merge_score in[] = { { 1.1, 4 } };
	const struct merge_score out[] = { { 3.0, 4 } };
	bool met = false;

	(void)state;
	assert_int_equal(pick(in, 1, &met), 0);
	assert_true(met);
	assert_int_equal(pick(out, 1, &met), 0);
	assert_false(met);
	assert_int_equal(pick(in, 0, &met), -1);
	assert_false(met);
}

/* A run of one or two turns has no drift to speak of (NaN, or inf after
 * a zero first resume): it never meets the target and loses to any
 * finite drift; among none finite, the fewest bytes. */
static void nan_and_inf_drift(void **state)
{
	const struct merge_score a[] = { { NAN, 1 }, { 1.1, 50 } };
	const struct merge_score b[] = { { INFINITY, 1 }, { 5.0, 50 } };
	const struct merge_score c[] = { { NAN, 9 }, { INFINITY, 2 },
					 { NAN, NAN } };
	bool met = true;

	(void)state;
	assert_int_equal(pick(a, N(a), &met), 1);
	assert_true(met);
	assert_int_equal(pick(b, N(b), &met), 1);
	assert_false(met);
	assert_int_equal(pick(c, N(c), &met), 1);
	assert_false(met);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cheapest_within_target),
		cmocka_unit_test(boundary_and_below_one),
		cmocka_unit_test(ties),
		cmocka_unit_test(none_within_target),
		cmocka_unit_test(one_policy),
		cmocka_unit_test(nan_and_inf_drift),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
