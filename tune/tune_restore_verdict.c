/* `coldstart tune restore`'s verdict: pure statistics over the measured
 * candidates (Holm-adjusted tests against the fastest). */
#include "tune_restore_verdict.h"

#include "compare.h"
#include "err.h"
#include "stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CI_RESAMPLES 1000
#define CI_SEED 1

/* ---- the verdict (pure) ---- */

const char *tune_restore__outcome_name(enum tune_outcome o)
{
	static const char *const names[] = {
		[TUNE_WINNER] = "winner",
		[TUNE_TIED] = "tied",
		[TUNE_INCONCLUSIVE] = "inconclusive",
	};

	return names[o];
}

const char *tune_restore__status_name(enum tune_status s)
{
	static const char *const names[] = {
		[TUNE_FASTEST] = "fastest",
		[TUNE_SLOWER] = "slower",
		[TUNE_EQUIVALENT] = "equivalent",
		[TUNE_UNDECIDED] = "undecided",
		[TUNE_NO_SAMPLES] = "no samples",
	};

	return names[s];
}

size_t tune_restore__min_samples(size_t k, double alpha)
{
	size_t m = k > 1 ? k - 1 : 0, n = 1;

	if (m == 0)
		return 1;
	/* the bound halves with every sample or so: this ends quickly */
	while (compare__smallest_p(n, n) * (double)m >= alpha && n < 100000)
		n++;
	return n;
}

static int describe(const struct tune_candidate *c, size_t idx,
		    struct tune_rank *r)
{
	int ret;

	*r = (struct tune_rank){ .idx = idx, .p = NAN, .p_holm = NAN,
				 .min_p = NAN, .status = TUNE_NO_SAMPLES };
	if (!c->n)
		return 0;
	ret = stats__median(c->ns, c->n, &r->median);
	if (ret == 0)
		ret = stats__bootstrap_median_ci(c->ns, c->n, CI_RESAMPLES,
						 0.95, CI_SEED, &r->ci_lo,
						 &r->ci_hi);
	return ret < 0 ? err__set(-ret, "the median of %s", c->name) : 0;
}

/* Candidates with samples first, by median (stable: ties keep their
 * order), then those without. */
static void sort_ranks(const struct tune_candidate *c,
		       struct tune_verdict *v)
{
	for (size_t i = 1; i < v->nr; i++) {
		struct tune_rank r = v->rank[i];
		bool has = c[r.idx].n > 0;
		size_t j = i;

		for (; j > 0; j--) {
			const struct tune_rank *q = &v->rank[j - 1];
			bool before = !c[q->idx].n ? !has
						   : !has || q->median <= r.median;

			if (before)
				break;
			v->rank[j] = *q;
		}
		v->rank[j] = r;
	}
}

/* Holm's step-down adjustment of the comparisons' p-values, rank[1..]:
 * the j-th smallest p times (m - j), kept monotone. */
static void holm(struct tune_verdict *v)
{
	size_t m = v->comparisons, order[TUNE_MAX];
	double running = 0;

	for (size_t i = 0; i < m; i++) {
		size_t j = i;

		for (; j > 0 && v->rank[order[j - 1]].p > v->rank[i + 1].p; j--)
			order[j] = order[j - 1];
		order[j] = i + 1;
	}
	for (size_t j = 0; j < m; j++) {
		struct tune_rank *r = &v->rank[order[j]];

		running = fmax(running, fmin(1, (double)(m - j) * r->p));
		r->p_holm = running;
	}
}

static int against_fastest(const struct tune_candidate *c,
			   struct tune_verdict *v)
{
	const struct tune_candidate *f = &c[v->rank[0].idx];
	struct compare_opts o;

	compare__default_opts(&o);
	o.alpha = v->alpha;
	for (size_t i = 1; i < v->ranked; i++) {
		const struct tune_candidate *s = &c[v->rank[i].idx];
		struct compare_row row;
		int ret = compare__samples(f->ns, f->n, s->ns, s->n, false, 0,
					   &o, &row);

		if (ret < 0)
			return ret;
		v->rank[i].p = row.p;
		v->rank[i].min_p = row.min_p;
		v->rank[i].delta = row.delta;
	}
	return 0;
}

static void judge(struct tune_verdict *v)
{
	bool undecided = false, tied = false;

	v->outcome = TUNE_WINNER;
	if (!v->ranked) {
		v->outcome = TUNE_INCONCLUSIVE;
		return;
	}
	v->rank[0].status = TUNE_FASTEST;
	for (size_t i = 1; i < v->ranked; i++) {
		struct tune_rank *r = &v->rank[i];

		if (r->p_holm < v->alpha)
			r->status = TUNE_SLOWER;
		else if (r->min_p * (double)v->comparisons >= v->alpha)
			r->status = TUNE_UNDECIDED;
		else
			r->status = TUNE_EQUIVALENT;
		undecided |= r->status == TUNE_UNDECIDED;
		tied |= r->status == TUNE_EQUIVALENT;
	}
	if (undecided)
		v->outcome = TUNE_INCONCLUSIVE;
	else if (tied)
		v->outcome = TUNE_TIED;
}

int tune_restore__verdict(const struct tune_candidate *c, size_t n,
			  double alpha, struct tune_verdict *v)
{
	int ret = 0;

	if (n > TUNE_MAX)
		return err__set(EINVAL, "at most %d strategies", TUNE_MAX);
	if (!(alpha > 0 && alpha < 1))
		return err__set(EINVAL, "alpha %g is outside (0, 1)", alpha);
	*v = (struct tune_verdict){ .alpha = alpha, .nr = n };
	for (size_t i = 0; ret == 0 && i < n; i++) {
		ret = describe(&c[i], i, &v->rank[i]);
		v->ranked += c[i].n > 0;
	}
	if (ret < 0)
		return ret;
	sort_ranks(c, v);
	v->comparisons = v->ranked ? v->ranked - 1 : 0;
	if (v->ranked)
		v->rank[0].delta = 0;
	ret = against_fastest(c, v);
	if (ret < 0)
		return ret;
	holm(v);
	judge(v);
	return 0;
}
