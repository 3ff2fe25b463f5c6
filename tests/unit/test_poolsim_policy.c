/* Unit tests for the policies the pool and its simulator share
 * (pool/policy.c): one name table for both, the simulator's baselines
 * after the pool's, the follow policy's need and clamp, cover's quantile
 * of deficits, and the one
 * interface the pool and the simulator call every policy through. */
#include "err.h"
#include "policy.h"
#include "poolsim.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

static void pool_names(void **state)
{
	enum pool_policy p;

	(void)state;
	assert_string_equal(policy__name(POOL_FIXED), "fixed");
	assert_string_equal(policy__name(POOL_FOLLOW), "follow");
	assert_string_equal(policy__name(POOL_MARGINAL), "marginal");
	assert_string_equal(policy__name(POOL_POLICIES), "?");
	for (int i = 0; i < POOL_POLICIES; i++) {
		assert_int_equal(policy__parse(policy__name(i), &p), 0);
		assert_int_equal(p, i);
	}
	/* the simulator's baselines are not the pool's */
	assert_int_equal(policy__parse("ttl", &p), -EINVAL);
	assert_int_equal(policy__parse(NULL, &p), -EINVAL);
}

static void poolsim_names(void **state)
{
	int p, seen = 0;

	(void)state;
	for (int i = 0; i < POOLSIM_POLICIES; i++) {
		assert_int_equal(poolsim__policy_parse(
					 poolsim__policy_name(i), &p), 0);
		assert_int_equal(p, i);
		seen |= 1 << poolsim__policy_at(i);
	}
	/* the pool's policies number alike in both */
	assert_string_equal(poolsim__policy_name(POOL_MARGINAL), "marginal");
	assert_string_equal(poolsim__policy_name(POOLSIM_TTL), "ttl");
	assert_string_equal(poolsim__policy_name(99), "?");
	assert_int_equal(seen, (1 << POOLSIM_POLICIES) - 1);
	assert_int_equal(poolsim__policy_at(0), POOL_FIXED);
	assert_int_equal(poolsim__policy_at(POOLSIM_POLICIES - 1),
			 POOL_COVER);
	assert_string_equal(poolsim__policy_names(),
			    "fixed, ttl, hybrid, follow, marginal, cover");
	assert_int_equal(poolsim__policy_parse("lru", &p), -EINVAL);
	if (!strstr(err__last(), "unknown policy 'lru'"))
		fail_msg("message '%s'", err__last());
}

/* One arrival at 0 with a 10 s half-life: the rate is ln 2 / 10 =
 * 0.0693/s, so a 1 s making with headroom 0.5 needs ceil(0.104) = 1 VM,
 * and 40 arrivals need ceil(40 x 0.104) = 5; the count falls below one
 * half after 10 s (one half-life), and the need to 0. */
static void follow_need(void **state)
{
	struct policy_decay d = { .halflife_s = 10 };

	(void)state;
	policy__decay_add(&d, 0);
	assert_true(fabs(policy__decay_rate(&d, 0) - M_LN2 / 10) < 1e-12);
	assert_true(policy__follow_need(&d, 0, 1, 0.5) == 1);
	assert_true(policy__follow_need(&d, 9.9, 1, 0.5) == 1);
	assert_true(policy__follow_need(&d, 10.1, 1, 0.5) == 0);
	for (int i = 1; i < 40; i++)
		policy__decay_add(&d, 0);
	assert_true(policy__follow_need(&d, 0, 1, 0.5) == 5);
}

/* One interface for every policy: fixed sets none, the others none
 * before the first arrival or a making time, then theirs within the
 * bounds; a bad parameter is named. */
static void target(void **state)
{
	struct policy_params pp;
	struct policy_view v = { .workers = 1, .min = 2, .max = 3 };
	char why[128];

	(void)state;
	policy__defaults(&pp);
	assert_int_equal(policy__check(POOL_FOLLOW, &pp, why, sizeof(why)), 0);
	policy__start(POOL_FOLLOW, &pp, &v);
	assert_true(v.slow.halflife_s == 10 && v.fast.halflife_s == 0);
	assert_true(policy__target(POOL_FOLLOW, &pp, &v, 0) == -1);
	for (int i = 0; i < 40; i++)
		policy__arrival(&v, 0);
	assert_true(policy__target(POOL_FOLLOW, &pp, &v, 0) == -1);
	v.make_avg = 1;
	/* 5 needed, at most 3 */
	assert_true(policy__target(POOL_FOLLOW, &pp, &v, 0) == 3);
	/* nothing expected after ten half-lives: the minimum */
	assert_true(policy__target(POOL_FOLLOW, &pp, &v, 100) == 2);
	assert_true(policy__target(POOL_FIXED, &pp, &v, 0) == -1);
	assert_true(policy__reads(POOL_FOLLOW) & POLICY_READS_MAKE_AVG);
	assert_true(policy__reads(POOL_MARGINAL) & POLICY_READS_MAKE_MOMENTS);
	assert_false(policy__reads(POOL_FIXED) & POLICY_SETS_TARGET);
	policy__start(POOL_MARGINAL, &pp, &v);
	assert_true(v.fast.halflife_s == 3 && !v.arrived);
	pp.burst_halflife_s = 20;
	assert_int_equal(policy__check(POOL_MARGINAL, &pp, why, sizeof(why)),
			 -EINVAL);
	assert_string_equal(why, "burst half-life 20 s (0, or at most the "
			    "half-life 10 s)");
	pp.halflife_s = 0;
	assert_int_equal(policy__check(POOL_FIXED, &pp, why, sizeof(why)),
			 -EINVAL);
}

/* cover: the quantile of the deficits requests met. Batches of 5 at
 * once, 100 s apart (refills long caught up): deficits 1 to 5, each a
 * fifth of the requests; so the median is 3, the 0.9 quantile 5. */
static void cover(void **state)
{
	struct policy_params pp;
	struct policy_view v = { .workers = 1, .min = 0, .max = 64 };
	char why[128];

	(void)state;
	policy__defaults(&pp);
	pp.cover_q = 0.5;
	assert_int_equal(policy__parse("cover", &(enum pool_policy){ 0 }), 0);
	policy__start(POOL_COVER, &pp, &v);
	policy__arrival(&v, 0);
	/* no making time known: nothing learnt, no target */
	assert_true(policy__target(POOL_COVER, &pp, &v, 0) == -1);
	assert_true(policy__reads(POOL_COVER) & POLICY_READS_MAKE_MOMENTS);
	v.make_mean = 1;
	policy__start(POOL_COVER, &pp, &v);
	for (int b = 0; b < 10; b++)
		for (int i = 0; i < 5; i++)
			policy__arrival(&v, 100.0 * b);
	assert_true(policy__target(POOL_COVER, &pp, &v, 1000) == 3);
	pp.cover_q = 0.9;
	policy__start(POOL_COVER, &pp, &v);
	for (int b = 0; b < 10; b++)
		for (int i = 0; i < 5; i++)
			policy__arrival(&v, 100.0 * b);
	assert_true(policy__target(POOL_COVER, &pp, &v, 1000) == 5);
	/* spread one making time apart, each finds the last one's VM
	 * refilled: a deficit of 1 */
	policy__start(POOL_COVER, &pp, &v);
	for (int i = 0; i < 50; i++)
		policy__arrival(&v, 1.0 * i);
	assert_true(policy__target(POOL_COVER, &pp, &v, 50) == 1);
	/* two workers drain twice as fast: 5 at once, then each of the next
	 * 5, half a making time apart, finds the deficit down by one */
	v.workers = 2;
	policy__start(POOL_COVER, &pp, &v);
	for (int i = 0; i < 5; i++)
		policy__arrival(&v, 0);
	for (int i = 1; i <= 5; i++)
		policy__arrival(&v, 0.5 * i);
	assert_true(policy__target(POOL_COVER, &pp, &v, 3) == 5);
	/* filed by the quiet time before each burst (0.1 s making times,
	 * one worker): pairs after 1000 s lulls, sixes 2 s apart; what the
	 * pool holds as a burst begins follows how long it has been quiet */
	v.workers = 1;
	v.make_mean = 0.1;
	pp.cover_halflife_s = 1e6;
	policy__start(POOL_COVER, &pp, &v);
	for (int b = 1; b <= 20; b++)
		for (int i = 0; i < 2; i++)
			policy__arrival(&v, 1000.0 * b);
	for (int b = 0; b < 20; b++)
		for (int i = 0; i < 6; i++)
			policy__arrival(&v, 30000 + 2.0 * b);
	assert_true(policy__target(POOL_COVER, &pp, &v, 30038 + 3) == 6);
	assert_true(policy__target(POOL_COVER, &pp, &v, 30038 + 2000) == 2);
	/* inside a burst: its own state's */
	policy__arrival(&v, 32038);
	assert_true(policy__target(POOL_COVER, &pp, &v, 32038) == 2);
	pp.cover_q = 0.3;
	assert_int_equal(policy__check(POOL_COVER, &pp, why, sizeof(why)),
			 -EINVAL);
	assert_string_equal(why, "cover quantile 0.3 (0.5 to 0.99999)");
}

static void clamp(void **state)
{
	(void)state;
	assert_int_equal(policy__clamp(0, 2, 8), 2);
	assert_int_equal(policy__clamp(3, 0, 8), 3);
	assert_int_equal(policy__clamp(8, 0, 8), 8);
	assert_int_equal(policy__clamp(1e12, 0, 8), 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pool_names),
		cmocka_unit_test(poolsim_names),
		cmocka_unit_test(follow_need),
		cmocka_unit_test(target),
		cmocka_unit_test(cover),
		cmocka_unit_test(clamp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
