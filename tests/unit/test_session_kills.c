/* Unit tests for bench session --kills' logic (bench/session_turn.c):
 * where a child is killed, the verdict on what it left, and what a link
 * it left holds (on directories written by snapforge, SNAPFORGE). */
#include "session.h"
#include "stats.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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

static void forge(const char *dir, const char *args)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "%s %s %s", SNAPFORGE, args, dir);
	assert_int_equal(system(cmd), 0);
}

/* A complete link's bytes come from the link itself, so a turn killed
 * after its save and before its report still counts them (the size:
 * merge policy undercounted such turns). */
static void link_bytes(void **state)
{
	char tmp[] = "/tmp/coldstart-sesskill-XXXXXX", d[128], base[128];
	char why[256] = "";
	uint64_t bytes = 1;

	(void)state;
	assert_non_null(mkdtemp(tmp));
	snprintf(base, sizeof(base), "%s/base", tmp);
	snprintf(d, sizeof(d), "%s/none", tmp);
	assert_int_equal(session__link_state(d, why, sizeof(why), &bytes),
			 SESSION_LINK_ABSENT);
	assert_int_equal(bytes, 0);
	forge(base, "--mem 4 --data-bytes 1048576");
	assert_int_equal(session__link_state(base, why, sizeof(why), &bytes),
			 SESSION_LINK_FULL);
	assert_int_equal(bytes, 1048576);
	snprintf(d, sizeof(d), "%s/diff", tmp);
	snprintf(why, sizeof(why), "--mem 4 --data-bytes 53248 --diff-of %s",
		 base);
	forge(d, why);
	assert_int_equal(session__link_state(d, why, sizeof(why), &bytes),
			 SESSION_LINK_DIFF);
	assert_int_equal(bytes, 53248);
	/* a link whose state file is cut short is torn, and counts nothing */
	snprintf(why, sizeof(why), "truncate -s 100 %s/diff/state", tmp);
	assert_int_equal(system(why), 0);
	why[0] = 0;
	assert_int_equal(session__link_state(d, why, sizeof(why), &bytes),
			 SESSION_LINK_TORN);
	assert_int_equal(bytes, 0);
	assert_true(why[0] != 0);
	snprintf(why, sizeof(why), "rm -rf %s", tmp);
	assert_int_equal(system(why), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kill_point_range),
		cmocka_unit_test(kill_point_seeded),
		cmocka_unit_test(turn_verdicts),
		cmocka_unit_test(lost_first),
		cmocka_unit_test(merge_verdicts),
		cmocka_unit_test(link_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
