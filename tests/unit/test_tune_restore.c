/* Unit tests for the verdict of `coldstart tune restore`
 * (tune_restore__verdict, tune_restore__min_samples) on synthetic
 * samples: a clear winner is named, identical distributions are
 * equivalent, too few samples leave it undecided, Holm's adjustment. */
#include "compare.h"
#include "err.h"
#include "stats.h"
#include "tune_restore.h"
#include "samples.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define N 20
#define ALPHA 0.01

static struct tune_verdict verdict(const struct tune_candidate *c, size_t n)
{
	struct tune_verdict v;

	assert_int_equal(tune_restore__verdict(c, n, ALPHA, &v), 0);
	return v;
}

/* The rank entry of candidate `idx`. */
static const struct tune_rank *rank_of(const struct tune_verdict *v,
				       size_t idx)
{
	for (size_t i = 0; i < v->nr; i++)
		if (v->rank[i].idx == idx)
			return &v->rank[i];
	fail_msg("candidate %zu is not ranked", idx);
	return NULL;
}

/* Four strategies around 1 ms, one 20 % faster, 3 % noise: named. */
static void clear_winner_is_named(void **state)
{
	static double x[5][N];
	struct tune_candidate c[5];
	struct tune_verdict v;

	(void)state;
	for (size_t i = 0; i < 5; i++) {
		samples__lognormal(x[i], N, i == 3 ? 0.8e6 : 1e6, 0.03, 10 + i);
		c[i] = (struct tune_candidate){ "s", x[i], N };
	}
	v = verdict(c, 5);
	assert_int_equal(v.outcome, TUNE_WINNER);
	assert_int_equal(v.ranked, 5);
	assert_int_equal(v.comparisons, 4);
	assert_int_equal(v.rank[0].idx, 3);
	assert_int_equal(v.rank[0].status, TUNE_FASTEST);
	assert_true(fabs(v.rank[0].median - 0.8e6) < 0.03e6);
	assert_true(v.rank[0].ci_lo <= v.rank[0].median &&
		    v.rank[0].median <= v.rank[0].ci_hi);
	for (size_t i = 1; i < 5; i++) {
		assert_int_equal(v.rank[i].status, TUNE_SLOWER);
		assert_true(v.rank[i].p_holm < ALPHA);
		assert_true(v.rank[i].delta > 0.15 && v.rank[i].delta < 0.35);
		/* ranked by median */
		assert_true(v.rank[i - 1].median <= v.rank[i].median);
	}
}

/* Three strategies from one distribution: no winner, all equivalent. */
static void identical_distributions_are_equivalent(void **state)
{
	static double x[3][N];
	struct tune_candidate c[3];
	struct tune_verdict v;

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		samples__lognormal(x[i], N, 1e6, 0.1, 20 + i);
		c[i] = (struct tune_candidate){ "s", x[i], N };
	}
	v = verdict(c, 3);
	assert_int_equal(v.outcome, TUNE_TIED);
	assert_int_equal(v.rank[0].status, TUNE_FASTEST);
	for (size_t i = 1; i < 3; i++) {
		assert_int_equal(v.rank[i].status, TUNE_EQUIVALENT);
		assert_true(v.rank[i].p_holm >= ALPHA);
	}
}

/* The very same samples twice: p = 1, and the tie in the median goes to
 * the candidate named first. */
static void same_samples_tie_to_the_first(void **state)
{
	double x[N];
	struct tune_candidate c[2] = { { "a", x, N }, { "b", x, N } };
	struct tune_verdict v;

	(void)state;
	samples__lognormal(x, N, 1e6, 0.1, 30);
	v = verdict(c, 2);
	assert_int_equal(v.outcome, TUNE_TIED);
	assert_int_equal(v.rank[0].idx, 0);
	assert_int_equal(v.rank[1].status, TUNE_EQUIVALENT);
	assert_true(v.rank[1].p == 1 && v.rank[1].p_holm == 1);
	assert_true(v.rank[1].delta == 0);
}

/* A 20 % faster strategy with 3 samples each: the test cannot reach
 * alpha, so nothing is named and nothing called equivalent. */
static void too_few_samples_are_undecided(void **state)
{
	double fast[3] = { 0.80e6, 0.81e6, 0.79e6 };
	double slow[3] = { 1.00e6, 1.01e6, 0.99e6 };
	struct tune_candidate c[2] = { { "slow", slow, 3 },
				       { "fast", fast, 3 } };
	struct tune_verdict v;

	(void)state;
	v = verdict(c, 2);
	assert_int_equal(v.outcome, TUNE_INCONCLUSIVE);
	assert_int_equal(v.rank[0].idx, 1);
	assert_int_equal(v.rank[1].status, TUNE_UNDECIDED);
	assert_true(v.rank[1].min_p >= ALPHA);
}

/* Perfectly separated samples: named with min_samples per strategy, not
 * with one fewer. */
static void min_samples_is_the_threshold(void **state)
{
	static double x[7][64];
	struct tune_candidate c[7];
	size_t n = tune_restore__min_samples(7, ALPHA);

	(void)state;
	/* 2 / C(14, 7) = 5.8e-4 < 0.01 / 6, 2 / C(12, 6) = 2.2e-3 is not */
	assert_int_equal(n, 7);
	for (size_t k = n - 1; k <= n; k++) {
		struct tune_verdict v;

		for (size_t i = 0; i < 7; i++) {
			for (size_t s = 0; s < k; s++)
				x[i][s] = (i + 1) * 1e6 + (double)s;
			c[i] = (struct tune_candidate){ "s", x[i], k };
		}
		v = verdict(c, 7);
		assert_int_equal(v.outcome, k == n ? TUNE_WINNER
						   : TUNE_INCONCLUSIVE);
		assert_int_equal(v.rank[0].idx, 0);
	}
}

static void min_samples_by_count(void **state)
{
	(void)state;
	assert_int_equal(tune_restore__min_samples(0, ALPHA), 1);
	assert_int_equal(tune_restore__min_samples(1, ALPHA), 1);
	/* 2 / C(10, 5) = 0.0079 < 0.01; 2 / C(8, 4) = 0.029 is not */
	assert_int_equal(tune_restore__min_samples(2, ALPHA), 5);
	assert_int_equal(tune_restore__min_samples(2, 0.05), 4);
	/* more comparisons need more samples, never fewer */
	for (size_t k = 2; k < TUNE_MAX; k++) {
		size_t n = tune_restore__min_samples(k, ALPHA);

		assert_true(n >= tune_restore__min_samples(k - 1, ALPHA));
		assert_true(compare__smallest_p(n, n) * (double)(k - 1) <
			    ALPHA);
		assert_true(compare__smallest_p(n - 1, n - 1) *
				    (double)(k - 1) >= ALPHA);
	}
}

/* Holm: the smallest p times m, the next times m - 1, kept monotone; a
 * strategy equivalent to the fastest and one clearly slower. */
static void holm_adjusts_step_down(void **state)
{
	static double x[4][N];
	struct tune_candidate c[4];
	const struct tune_rank *r[4];
	struct tune_verdict v;
	double ps[3];

	(void)state;
	samples__lognormal(x[0], N, 1.0e6, 0.05, 40); /* fastest */
	samples__lognormal(x[1], N, 1.0e6, 0.05, 41); /* the same */
	samples__lognormal(x[2], N, 1.5e6, 0.05, 42); /* clearly slower */
	samples__lognormal(x[3], N, 1.3e6, 0.05, 43); /* slower */
	for (size_t i = 0; i < 4; i++)
		c[i] = (struct tune_candidate){ "s", x[i], N };
	v = verdict(c, 4);
	for (size_t i = 0; i < 4; i++)
		r[i] = rank_of(&v, i);
	assert_int_equal(v.outcome, TUNE_TIED);
	assert_int_equal(r[2]->status, TUNE_SLOWER);
	assert_int_equal(r[3]->status, TUNE_SLOWER);
	/* whichever of 0 and 1 came out fastest, the other is equivalent */
	assert_int_equal(r[0]->status == TUNE_FASTEST ? r[1]->status
						      : r[0]->status,
			 TUNE_EQUIVALENT);
	for (size_t i = 1; i < 4; i++) {
		ps[i - 1] = v.rank[i].p;
		assert_true(v.rank[i].p_holm >= v.rank[i].p);
		assert_true(v.rank[i].p_holm <= 1);
	}
	/* the smallest p is multiplied by the 3 comparisons */
	for (size_t i = 1; i < 4; i++)
		if (v.rank[i].p <= ps[0] && v.rank[i].p <= ps[1] &&
		    v.rank[i].p <= ps[2])
			assert_true(fabs(v.rank[i].p_holm -
					 fmin(1, 3 * v.rank[i].p)) < 1e-15);
	/* monotone: a larger p never gets a smaller adjusted one */
	for (size_t i = 1; i < 4; i++)
		for (size_t j = 1; j < 4; j++)
			if (v.rank[i].p < v.rank[j].p)
				assert_true(v.rank[i].p_holm <=
					    v.rank[j].p_holm);
}

/* A strategy without samples ranks last and is no comparison; one alone
 * wins by default; nothing at all is inconclusive. */
static void missing_and_lone_candidates(void **state)
{
	double x[N];
	struct tune_candidate c[2] = { { "none", NULL, 0 }, { "one", x, N } };
	struct tune_verdict v;

	(void)state;
	samples__lognormal(x, N, 1e6, 0.1, 50);
	v = verdict(c, 2);
	assert_int_equal(v.ranked, 1);
	assert_int_equal(v.comparisons, 0);
	assert_int_equal(v.outcome, TUNE_WINNER);
	assert_int_equal(v.rank[0].idx, 1);
	assert_int_equal(v.rank[1].idx, 0);
	assert_int_equal(v.rank[1].status, TUNE_NO_SAMPLES);
	v = verdict(c, 1);
	assert_int_equal(v.ranked, 0);
	assert_int_equal(v.outcome, TUNE_INCONCLUSIVE);
}

static void bad_arguments(void **state)
{
	struct tune_candidate c[TUNE_MAX + 1] = { { "s", NULL, 0 } };
	struct tune_verdict v;

	(void)state;
	assert_int_equal(tune_restore__verdict(c, TUNE_MAX + 1, ALPHA, &v),
			 -EINVAL);
	assert_int_equal(tune_restore__verdict(c, 1, 0, &v), -EINVAL);
	assert_int_equal(tune_restore__verdict(c, 1, 1, &v), -EINVAL);
	assert_non_null(strstr(err__last(), "alpha"));
}

static void names(void **state)
{
	(void)state;
	assert_string_equal(tune_restore__outcome_name(TUNE_WINNER), "winner");
	assert_string_equal(tune_restore__outcome_name(TUNE_TIED), "tied");
	assert_string_equal(tune_restore__status_name(TUNE_EQUIVALENT),
			    "equivalent");
	assert_string_equal(tune_restore__status_name(TUNE_UNDECIDED),
			    "undecided");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(clear_winner_is_named),
		cmocka_unit_test(identical_distributions_are_equivalent),
		cmocka_unit_test(same_samples_tie_to_the_first),
		cmocka_unit_test(too_few_samples_are_undecided),
		cmocka_unit_test(min_samples_is_the_threshold),
		cmocka_unit_test(min_samples_by_count),
		cmocka_unit_test(holm_adjusts_step_down),
		cmocka_unit_test(missing_and_lone_candidates),
		cmocka_unit_test(bad_arguments),
		cmocka_unit_test(names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
