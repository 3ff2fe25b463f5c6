/* Unit tests for bench session --kills' pure logic (bench/session_turn.c):
 * where a child is killed, and the verdict on what it left. */
#include "session.h"
#include "stats.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

/* Uniform over [0, 1.2 x measured]: inside it, some past the measured
 * time (they finish first), some in its first tenth (killed early). */
static void kill_point_range(void **state)
{
	struct stats_rng rng;
	const uint64_t m = 1000000000; /* 1 s */
	unsigned int past = 0, early = 0;

	(void)state;
	stats__rng_seed(&rng, 42);
	for (int i = 0; i < 10000; i++) {
		uint64_t p = session__kill_point(&rng, m);

		assert_true(p <= m / 5 * 6);
		past += p > m;
		early += p < m / 10;
	}
	/* 1/6 and 1/12 of 10000, within generous bounds */
	assert_in_range(past, 1400, 1950);
	assert_in_range(early, 650, 1050);
}

/* The same seed gives the same points: a failing run can be redone. */
static void kill_point_seeded(void **state)
{
	struct stats_rng a, b, c;
	int same = 1, differ = 0;

	(void)state;
	stats__rng_seed(&a, 7);
	stats__rng_seed(&b, 7);
	stats__rng_seed(&c, 8);
	for (int i = 0; i < 100; i++) {
		uint64_t pa = session__kill_point(&a, 5000000);

		same &= pa == session__kill_point(&b, 5000000);
		differ |= pa != session__kill_point(&c, 5000000);
	}
	assert_true(same);
	assert_true(differ);
	/* a run measured at 0 ns is killed at once, never past it */
	assert_int_equal(session__kill_point(&a, 0), 0);
}

static enum session_kill_verdict verdict(bool merge, bool killed,
					 bool reported, bool ok, bool lost,
					 enum session_link link)
{
	struct session_kill_end e = { merge, killed, reported, ok, lost,
				      link };

	return session__kill_verdict(&e);
}

/* A turn: done when its link is complete, whether or not the kill came
 * before its report; undone when killed before the link; a half-written
 * link is torn; an unkilled turn without a link failed. */
static void turn_verdicts(void **state)
{
	(void)state;
	assert_int_equal(verdict(false, false, true, true, false,
				 SESSION_LINK_DIFF), SESSION_KILL_DONE);
	assert_int_equal(verdict(false, true, false, false, false,
				 SESSION_LINK_DIFF), SESSION_KILL_DONE);
	assert_int_equal(verdict(false, true, false, false, false,
				 SESSION_LINK_FULL), SESSION_KILL_DONE);
	assert_int_equal(verdict(false, true, false, false, false,
				 SESSION_LINK_ABSENT), SESSION_KILL_UNDONE);
	assert_int_equal(verdict(false, true, false, false, false,
				 SESSION_LINK_TORN), SESSION_KILL_TORN);
	assert_int_equal(verdict(false, false, true, true, false,
				 SESSION_LINK_TORN), SESSION_KILL_TORN);
	assert_int_equal(verdict(false, false, true, false, false,
				 SESSION_LINK_ABSENT), SESSION_KILL_FAILED);
	assert_int_equal(verdict(false, false, false, false, false,
				 SESSION_LINK_ABSENT), SESSION_KILL_FAILED);
	/* saved, but it reported an error: not a turn to go on from */
	assert_int_equal(verdict(false, false, true, false, false,
				 SESSION_LINK_DIFF), SESSION_KILL_FAILED);
}

/* Lost state wins over everything, even a link being absent or torn. */
static void lost_first(void **state)
{
	(void)state;
	assert_int_equal(verdict(false, false, true, false, true,
				 SESSION_LINK_ABSENT), SESSION_KILL_LOST);
	assert_int_equal(verdict(false, true, true, false, true,
				 SESSION_LINK_TORN), SESSION_KILL_LOST);
	/* a report that did not arrive says nothing */
	assert_int_equal(verdict(false, true, false, false, true,
				 SESSION_LINK_ABSENT), SESSION_KILL_UNDONE);
}

/* A merge replaces the top link: done when it became a full snapshot,
 * undone when the diff is still there, torn when the top is gone. */
static void merge_verdicts(void **state)
{
	(void)state;
	assert_int_equal(verdict(true, true, false, false, false,
				 SESSION_LINK_FULL), SESSION_KILL_DONE);
	assert_int_equal(verdict(true, true, false, false, false,
				 SESSION_LINK_DIFF), SESSION_KILL_UNDONE);
	assert_int_equal(verdict(true, true, false, false, false,
				 SESSION_LINK_ABSENT), SESSION_KILL_TORN);
	assert_int_equal(verdict(true, false, true, false, false,
				 SESSION_LINK_DIFF), SESSION_KILL_FAILED);
	assert_int_equal(verdict(true, true, false, false, false,
				 SESSION_LINK_TORN), SESSION_KILL_TORN);
	assert_string_equal(session__verdict_name(SESSION_KILL_TORN), "torn");
	assert_string_equal(session__verdict_name(SESSION_KILL_UNDONE),
			    "undone");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kill_point_range),
		cmocka_unit_test(kill_point_seeded),
		cmocka_unit_test(turn_verdicts),
		cmocka_unit_test(lost_first),
		cmocka_unit_test(merge_verdicts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
