/* The host simulator's policies (hostsim.h): each function's next window
 * after a busy minute, and what its loaded VM is worth when memory is
 * short. */
#include "hostsim.h"
#include "hostsim_int.h"

#include <limits.h>
#include <math.h>

/* HYBRID's constants, from the paper (min_samples and oob_max are ours:
 * it says "too few" and "most"). */
#define HYB_HEAD_PCT	5.0
#define HYB_TAIL_PCT	99.0
#define HYB_MARGIN	0.1
#define HYB_CV_MIN	2.0
#define HYB_MIN_SAMPLES 10
#define HYB_OOB_MAX	0.5

/* OURS: the window is chosen again after each of the first idle times,
 * then after every 16th or a miss (the histogram hardly moves). */
#define OURS_EVERY_UNTIL 64
#define OURS_EVERY	 16

static void hist_add(struct hfn *f, int64_t idle)
{
	if (idle > HOSTSIM_RANGE) {
		f->oob++;
		return;
	}
	f->sumsq += 2 * (uint64_t)f->hist[idle] + 1;
	f->hist[idle]++;
	for (int64_t j = 1; j <= idle; j++)
		f->ge[j]++;
	f->in++;
}

/* The smallest idle time with at least pct % of the in-bound ones at or
 * below it. */
static unsigned int hist_pct(const struct hfn *f, double pct)
{
	double want = pct / 100.0 * (double)f->in;
	uint64_t cum = 0;

	for (unsigned int b = 1; b <= HOSTSIM_RANGE; b++) {
		cum += f->hist[b];
		if ((double)cum >= want && cum > 0)
			return b;
	}
	return HOSTSIM_RANGE;
}

static double hist_cv(const struct hfn *f)
{
	double mean = (double)f->in / HOSTSIM_RANGE;
	double var = (double)f->sumsq / HOSTSIM_RANGE - mean * mean;

	return mean > 0 ? sqrt(var > 0 ? var : 0) / mean : 0;
}

static void hybrid_window(struct hsim *s, size_t i)
{
	struct hfn *f = &s->f[i];
	uint64_t total = f->in + f->oob;
	double head, tail;

	s->per[i].histogram = false;
	if (total < HYB_MIN_SAMPLES || !f->in ||
	    (double)f->oob > HYB_OOB_MAX * (double)total ||
	    hist_cv(f) < HYB_CV_MIN) {
		f->lo = 1;
		f->hi = HOSTSIM_RANGE;
		return;
	}
	head = floor((1 - HYB_MARGIN) * hist_pct(f, HYB_HEAD_PCT));
	tail = ceil((1 + HYB_MARGIN) * hist_pct(f, HYB_TAIL_PCT));
	f->lo = head < 1 ? 1 : (unsigned int)head;
	f->hi = (unsigned int)tail;
	s->per[i].histogram = true;
}

/* OURS: the window [a, b] of the best expected hits less priced idle
 * memory, per idle time. With G(j) the idle times >= j (out of bounds
 * included), the idle minutes of [a, b] are the sum of G(j + 1) for j
 * from a to b. */
static void ours_window(struct hsim *s, size_t i)
{
	struct hfn *f = &s->f[i];
	double price = s->cfg->price * s->g[i].idle_weight *
		       s->g[i].mem_mib / 1024.0;
	uint64_t ge[HOSTSIM_RANGE + 2];
	unsigned int heads[2] = { 1, hist_pct(f, HYB_HEAD_PCT) };
	double best = 0;

	if (f->in + f->oob == 0) {
		f->lo = 1;
		f->hi = 10;
		return;
	}
	for (unsigned int j = 1; j <= HOSTSIM_RANGE + 1; j++)
		ge[j] = f->ge[j] + f->oob;
	f->lo = f->hi = 0;
	for (int k = 0; k < (f->in && heads[1] > 1 ? 2 : 1); k++) {
		unsigned int a = heads[k];
		double hits = 0, idle = 0;

		for (unsigned int b = a; b <= HOSTSIM_RANGE; b++) {
			double v;

			hits += f->hist[b];
			idle += (double)ge[b + 1];
			v = hits - price * idle;
			if (v > best) {
				best = v;
				f->lo = a;
				f->hi = b;
			}
		}
	}
	f->changed = 0;
}

void hostsim__after_busy(struct hsim *s, size_t i, uint32_t count)
{
	struct hfn *f = &s->f[i];
	int64_t idle = f->last >= 0 ? s->now - f->last : 0;
	bool missed = f->lo == 0 || idle < f->lo || idle > f->hi;

	if (idle > 0) {
		hist_add(f, idle);
		f->changed++;
	}
	f->last = s->now;
	switch (s->cfg->policy) {
	case HOSTSIM_KEEPALIVE:
		f->lo = 1;
		f->hi = s->cfg->keepalive;
		break;
	case HOSTSIM_HYBRID:
		hybrid_window(s, i);
		break;
	case HOSTSIM_GREEDY_DUAL:
		f->lo = 1;
		f->hi = UINT_MAX;
		f->freq += count;
		f->prio = s->clock + (double)f->freq *
					     (s->g[i].cold_s - s->g[i].hit_s) /
					     s->g[i].mem_mib;
		break;
	default:
		if (f->in + f->oob <= OURS_EVERY_UNTIL || missed ||
		    f->changed >= OURS_EVERY)
			ours_window(s, i);
		break;
	}
}

/* OURS: the chance that an idle time over k ends in (k, hi], per idle
 * MiB (weighted). */
static double ours_worth(const struct hsim *s, size_t i, int64_t k)
{
	const struct hfn *f = &s->f[i];
	int64_t from = k + 1 < 1 ? 1 : k + 1;
	uint64_t over = f->oob, within = 0;

	if (f->in + f->oob == 0)
		return 0;
	if (from <= HOSTSIM_RANGE)
		over += f->ge[from];
	if (from <= HOSTSIM_RANGE && from <= (int64_t)f->hi)
		within = f->ge[from] -
			 f->ge[f->hi < HOSTSIM_RANGE ? f->hi + 1
						     : HOSTSIM_RANGE + 1];
	return over ? (double)within / (double)over /
			      (s->g[i].mem_mib * s->g[i].idle_weight)
		    : 0;
}

double hostsim__worth(const struct hsim *s, size_t i)
{
	const struct hfn *f = &s->f[i];

	switch (s->cfg->policy) {
	case HOSTSIM_GREEDY_DUAL:
		return f->prio;
	case HOSTSIM_OURS:
		return ours_worth(s, i, s->now - f->last);
	default:
		return (double)(f->last + f->hi);
	}
}

double hostsim__prewarm_worth(const struct hsim *s, size_t i)
{
	const struct hfn *f = &s->f[i];

	if (s->cfg->policy == HOSTSIM_OURS)
		return ours_worth(s, i, (int64_t)f->lo - 1);
	return hostsim__worth(s, i);
}
