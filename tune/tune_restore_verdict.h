/* The verdict of `coldstart tune restore` (tune_restore_verdict.c): which
 * strategy, if any, is significantly the fastest, a pure function of the
 * samples. */
#ifndef COLDSTART_TUNE_RESTORE_VERDICT_H
#define COLDSTART_TUNE_RESTORE_VERDICT_H

#include <stdbool.h>
#include <stddef.h>

/* At most this many strategies take part. */
#define TUNE_MAX 16

/* One strategy's samples of restore start -> DONE (ns), in run order. */
struct tune_candidate {
	const char *name; /* borrowed */
	const double *ns; /* borrowed; n == 0 means it did not run */
	size_t n;
};

/* Where a strategy stands against the fastest. */
enum tune_status {
	TUNE_FASTEST,    /* the smallest median */
	TUNE_SLOWER,     /* significantly slower than the fastest */
	TUNE_EQUIVALENT, /* no significant difference, and the test could
			  * have found one */
	TUNE_UNDECIDED,  /* too few samples for the test to reach alpha */
	TUNE_NO_SAMPLES,
};

struct tune_rank {
	size_t idx;         /* into the candidates */
	double median;      /* ns */
	double ci_lo, ci_hi; /* 95 % bootstrap interval of the median */
	double delta;       /* median / the fastest's median - 1 */
	double p;           /* Mann-Whitney U against the fastest */
	double p_holm;      /* p adjusted by Holm over the comparisons */
	double min_p;       /* the smallest p these sample sizes allow */
	enum tune_status status;
};

enum tune_outcome {
	TUNE_WINNER,       /* the fastest beats every other significantly
			    * (or is the only one that ran) */
	TUNE_TIED,         /* others show no significant difference from
			    * the fastest */
	TUNE_INCONCLUSIVE, /* some comparison could not reach alpha with
			    * these samples, or nothing ran */
};

struct tune_verdict {
	enum tune_outcome outcome;
	double alpha;
	size_t nr;          /* candidates */
	size_t ranked;      /* with samples; rank[0..ranked) by median */
	size_t comparisons; /* ranked - 1: the Holm family */
	struct tune_rank rank[TUNE_MAX]; /* then those without samples */
};

/* Ranks `n` candidates (n <= TUNE_MAX) by median and compares the fastest
 * with each other one: the two-sided Mann-Whitney U test that `coldstart
 * compare` uses (compare__samples), p-values adjusted by Holm's step-down
 * method over the ranked - 1 comparisons. A comparison is undecided when
 * even its smallest possible p, times the number of comparisons, is not
 * below alpha. Ties in the median go to the earlier candidate. 0,
 * -EINVAL (n out of range, alpha outside (0, 1)), -ENOMEM. */
int tune_restore__verdict(const struct tune_candidate *c, size_t n,
			  double alpha, struct tune_verdict *v);

/* The least samples per strategy with which `k` strategies' k - 1
 * comparisons can all be significant at alpha after Holm's correction
 * (the smallest p, 2 / C(2n, n), below alpha / (k - 1)); 1 for k <= 1. */
size_t tune_restore__min_samples(size_t k, double alpha);

/* "winner", "tied", "inconclusive"; "fastest", "slower", "equivalent",
 * "undecided", "no samples". */
const char *tune_restore__outcome_name(enum tune_outcome o);
const char *tune_restore__status_name(enum tune_status s);

#endif
