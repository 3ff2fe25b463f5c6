/* The warm-pool simulator's policies: HYBRID, and every target (the pool's
 * own policies through policy.h). */
#include "poolsim.h"
#include "poolsim_int.h"

#include "err.h"
#include "policy.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* pool.c's refill threads look at a following target this often. */
#define TICKS_PER_S 10

/* ---- HYBRID ---- */

int poolsim__hist_init(struct hist *h, const struct poolsim_config *cfg)
{
	h->nbins = (unsigned int)ceil(cfg->params.hybrid.range_s /
				      cfg->params.hybrid.bin_s - 1e-9);
	h->count = calloc(h->nbins, sizeof(*h->count));
	h->tree = calloc((size_t)h->nbins + 1, sizeof(*h->tree));
	if (!h->count || !h->tree)
		return err__set(ENOMEM, "poolsim: hybrid: no memory for %u "
				"bins", h->nbins);
	return 0;
}

static void hist_add(struct hist *h, double idle_s, double bin_s,
		     double range_s)
{
	unsigned int b;

	if (idle_s >= range_s) {
		h->oob++;
		return;
	}
	b = (unsigned int)(idle_s / bin_s);
	if (b >= h->nbins)
		b = h->nbins - 1;
	h->sumsq += 2.0 * h->count[b] + 1;
	h->count[b]++;
	h->in++;
	for (unsigned int i = b + 1; i <= h->nbins; i += i & -i)
		h->tree[i]++;
}

/* The bin holding percentile pct: the first whose cumulative count
 * reaches pct % of the idle times in bounds (at least one). */
static unsigned int hist_bin_at(const struct hist *h, double pct)
{
	double want = ceil(pct / 100 * (double)h->in - 1e-9);
	uint64_t k = want < 1 ? 1 : (uint64_t)want;
	unsigned int pos = 0, step = 1;

	while (step * 2 <= h->nbins)
		step *= 2;
	for (; step; step /= 2) {
		if (pos + step <= h->nbins && h->tree[pos + step] < k) {
			pos += step;
			k -= h->tree[pos];
		}
	}
	return pos < h->nbins ? pos : h->nbins - 1;
}

static double hist_cv(const struct hist *h)
{
	double mean = (double)h->in / h->nbins;
	double var = h->sumsq / h->nbins - mean * mean;

	return mean > 0 ? sqrt(var > 0 ? var : 0) / mean : 0;
}

/* After an arrival: the idle time since the previous one goes into the
 * histogram and the next window is chosen (poolsim.h). */
static void hybrid_arrival(struct sim *s, double t)
{
	const struct poolsim_hybrid *p = &s->cfg->params.hybrid;
	struct hist *h = &s->hist;
	uint64_t total;
	double idle = t - s->last;

	if (s->arrived)
		hist_add(h, idle, p->bin_s, p->range_s);
	total = h->in + h->oob;
	if (total && total >= p->min_samples &&
	    (double)h->oob > p->oob_max * (double)total) {
		h->win_start = (1 - p->forecast_margin) * idle;
		h->win_end = (1 + p->forecast_margin) * idle;
		s->out->hybrid.forecast++;
	} else if (total < p->min_samples || !h->in ||
		   hist_cv(h) < p->cv_min) {
		h->win_start = 0;
		h->win_end = p->range_s;
		s->out->hybrid.standard++;
	} else {
		double head = hist_bin_at(h, p->head_pct) * p->bin_s;
		double tail = (hist_bin_at(h, p->tail_pct) + 1) * p->bin_s;

		h->win_start = (1 - p->margin) * head;
		h->win_end = (1 + p->margin) * tail;
		s->out->hybrid.histogram++;
	}
	s->out->hybrid.oob = h->oob;
}

/* ---- the pool's own policies (policy.h) ---- */

/* As pool_target.c's pool__retarget(): the target is kept until the
 * first arrival and, for the policies that read them, the first making
 * time is known. */
static unsigned int pool_policy_target(struct sim *s, double t)
{
	double need = policy__target((enum pool_policy)s->cfg->policy,
				     &s->cfg->params.pool.params, &s->view, t);

	return need < 0 ? s->target : (unsigned int)need;
}

/* ---- targets ---- */

/* n inside [start, end) after the last arrival, else 0. */
static unsigned int window_target(const struct sim *s, double t,
				  unsigned int n, double start, double end)
{
	return s->arrived && t >= s->last + start && t < s->last + end ? n : 0;
}

unsigned int poolsim__policy_target(struct sim *s, double t)
{
	const struct poolsim_params *p = &s->cfg->params;

	switch (s->cfg->policy) {
	case POOL_FIXED:
		return p->fixed.n;
	case POOLSIM_TTL:
		return window_target(s, t, p->ttl.n, 0, p->ttl.ttl_s);
	case POOLSIM_HYBRID:
		return window_target(s, t, p->hybrid.n, s->hist.win_start,
				     s->hist.win_end);
	}
	return pool_policy_target(s, t);
}

/* When the target may next change with no event: a window's edge, or
 * the next 100 ms tick while a rate-driven target can still fall. */
double poolsim__policy_next(const struct sim *s, double t)
{
	const struct poolsim_params *p = &s->cfg->params;
	double start = 0, end = 0;

	switch (s->cfg->policy) {
	case POOL_FIXED:
		return INFINITY;
	case POOLSIM_TTL:
		end = p->ttl.ttl_s;
		break;
	case POOLSIM_HYBRID:
		start = s->hist.win_start;
		end = s->hist.win_end;
		break;
	default:
		/* the pool's own: rate-driven, they can fall to their
		 * lower bound */
		if (!s->arrived || s->target <= p->pool.min)
			return INFINITY;
		return (floor(t * TICKS_PER_S) + 1) / TICKS_PER_S;
	}
	if (!s->arrived || t >= s->last + end)
		return INFINITY;
	return t < s->last + start ? s->last + start : s->last + end;
}

void poolsim__policy_arrival(struct sim *s, double t)
{
	switch (s->cfg->policy) {
	case POOLSIM_HYBRID:
		hybrid_arrival(s, t);
		break;
	case POOL_FIXED:
	case POOLSIM_TTL:
		break;
	default:
		policy__arrival(&s->view, t);
	}
	s->arrived = true;
	s->last = t;
}
