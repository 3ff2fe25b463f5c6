/* tune session's interleaving: each round runs every policy's next turn
 * exactly once, round 0 in the order given, and the order rotates one
 * place a round, so over n rounds each policy runs in each place once
 * (none always first, none always last). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "tune_session.h"

#include <string.h>

static void every_policy_once_a_round(void **state)
{
	(void)state;
	for (size_t n = 1; n <= TUNE_SESSION_MAX; n++)
		for (uint64_t round = 0; round < 40; round++) {
			unsigned int seen[TUNE_SESSION_MAX] = { 0 };

			for (size_t j = 0; j < n; j++) {
				size_t i = tune_session__order(round, j, n);

				assert_true(i < n);
				seen[i]++;
			}
			for (size_t i = 0; i < n; i++)
				assert_int_equal(seen[i], 1);
		}
}

static void first_round_in_the_given_order(void **state)
{
	(void)state;
	for (size_t j = 0; j < 4; j++)
		assert_int_equal(tune_session__order(0, j, 4), j);
}

/* Rounds 0..3 of four policies: 0123, 1230, 2301, 3012. */
static void order_rotates(void **state)
{
	static const size_t want[4][4] = {
		{ 0, 1, 2, 3 }, { 1, 2, 3, 0 }, { 2, 3, 0, 1 }, { 3, 0, 1, 2 } };

	(void)state;
	for (uint64_t r = 0; r < 8; r++)
		for (size_t j = 0; j < 4; j++)
			assert_int_equal(tune_session__order(r, j, 4),
					 want[r % 4][j]);
}

/* Over any n consecutive rounds each policy holds each place once. */
static void each_place_once_per_n_rounds(void **state)
{
	(void)state;
	for (size_t n = 2; n <= TUNE_SESSION_MAX; n++)
		for (uint64_t start = 0; start < 5; start++) {
			unsigned int at[TUNE_SESSION_MAX][TUNE_SESSION_MAX];

			memset(at, 0, sizeof(at));
			for (uint64_t r = start; r < start + n; r++)
				for (size_t j = 0; j < n; j++)
					at[tune_session__order(r, j, n)][j]++;
			for (size_t i = 0; i < n; i++)
				for (size_t j = 0; j < n; j++)
					assert_int_equal(at[i][j], 1);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_policy_once_a_round),
		cmocka_unit_test(first_round_in_the_given_order),
		cmocka_unit_test(order_rotates),
		cmocka_unit_test(each_place_once_per_n_rounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
