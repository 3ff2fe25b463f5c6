/* `coldstart tune pool`: the sweep past its first grid. A grid sized from
 * the trace's busiest second stops short of what bursty traffic needs, and
 * "no configuration meets the SLO" would then be false: each policy that
 * meets none is swept again at pools twice as large, up to the bound the
 * user can see (--max-vms, --memory-budget), and the cheapest fixed size
 * is narrowed to the smallest that meets the SLO. */
#include "tune_pool.h"
#include "tune_pool_int.h"

#include "err.h"
#include "poolsim.h"
#include "stats.h"
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The parts the sweep runs on: the tuning part (all, without
 * --holdout) and the held-out one (none: n 0). */
struct parts {
	const struct tp_opts *o;
	const struct arrivals *a, *test;
	const struct poolsim_costs *pc;
};

static int simulate_from(struct sweep *sw, size_t from,
			 const struct parts *p)
{
	struct sweep part = { .c = sw->c + from, .n = sw->n - from };
	int ret = tune_pool__simulate(&part, p->a, p->pc, &p->o->slo);

	return ret ? ret : tune_pool__holdout(sw, from, p->o, p->test, p->pc);
}

/* A copy of candidate i's configuration (its outcome cleared), or NULL
 * when out of memory; i's address may change. */
static struct cand *copy_of(struct sweep *sw, size_t i, const struct costs *c)
{
	struct cand from = sw->c[i], *x;

	x = tune_pool__add(sw, from.cfg.policy, c, from.cfg.seed);
	if (x) {
		*x = (struct cand){ .cfg = from.cfg };
		memcpy(x->label, from.label, sizeof(x->label));
	}
	return x;
}

static struct cand *add_fixed(struct sweep *sw, const struct costs *c,
			      uint64_t seed, unsigned int n)
{
	struct cand *x = tune_pool__add(sw, POOL_FIXED, c, seed);

	if (x) {
		x->cfg.params.fixed.n = n;
		if (x->cfg.max < n)
			x->cfg.max = n;
		snprintf(x->label, sizeof(x->label), "n=%u", n);
	}
	return x;
}

/* The largest n of policy p's candidates (ttl, hybrid). */
static unsigned int largest_n(const struct sweep *sw, int p)
{
	unsigned int n = 0;

	for (size_t i = 0; i < sw->n; i++) {
		const struct poolsim_params *q = &sw->c[i].cfg.params;
		unsigned int k = p == POOLSIM_TTL ? q->ttl.n : q->hybrid.n;

		if (sw->c[i].cfg.policy == p && k > n)
			n = k;
	}
	return n;
}

/* label's " max=N" (appended, or replaced) set to max. */
static void set_max_label(char *label, size_t size, unsigned int max)
{
	char *at = strstr(label, " max=");
	size_t len = at ? (size_t)(at - label) : strlen(label);

	snprintf(label + len, size - len, " max=%u", max);
}

/* Policy p again at pools up to `max`: fixed sizes above the last grid;
 * ttl and hybrid holding max where they held their largest; the pool's
 * own policies with the bound raised where their target reached it. */
static void widen(struct sweep *sw, int p, unsigned int old, unsigned int max,
		  const struct costs *c, uint64_t seed)
{
	size_t n = sw->n;
	unsigned int top = p == POOLSIM_TTL || p == POOLSIM_HYBRID
				   ? largest_n(sw, p)
				   : 0;

	if (p == POOL_FIXED) {
		for (unsigned int i = 1; i <= 20; i++) {
			unsigned int k = old + (unsigned int)lround(
						       (double)i * (max - old) /
						       20);

			if (k > old + (unsigned int)lround((double)(i - 1) *
							   (max - old) / 20))
				add_fixed(sw, c, seed, k);
		}
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct cand *x = &sw->c[i];
		struct poolsim_params *q;
		const char *rest;

		if (x->cfg.policy != p || x->cfg.max != old)
			continue;
		q = &x->cfg.params;
		if (p == POOLSIM_TTL || p == POOLSIM_HYBRID) {
			if ((p == POOLSIM_TTL ? q->ttl.n : q->hybrid.n) != top)
				continue;
			if (!(x = copy_of(sw, i, c)))
				return;
			q = &x->cfg.params;
			*(p == POOLSIM_TTL ? &q->ttl.n : &q->hybrid.n) = max;
			rest = strchr(sw->c[i].label, ' ');
			snprintf(x->label, sizeof(x->label), "n=%u%s", max,
				 rest ? rest : "");
		} else {
			if (x->peak_pool < x->cfg.max || !(x = copy_of(sw, i, c)))
				continue;
			set_max_label(x->label, sizeof(x->label), max);
		}
		x->cfg.max = max;
	}
}

/* Whether a policy swept (on and simulated) meets nothing yet. */
static bool unmet(const struct sweep *sw, int p)
{
	if (sw->best[p] >= 0)
		return false;
	for (size_t i = 0; i < sw->n; i++)
		if (sw->c[i].cfg.policy == p)
			return true;
	return false;
}

/* The smallest fixed size meeting the SLO between the largest simulated
 * one that does not and the cheapest that does, by bisection. */
static int narrow_fixed(struct sweep *sw, const struct costs *c,
			const struct parts *p)
{
	unsigned int hi, lo = 0;
	bool have_lo = false;
	int ret = 0;

	if (sw->best[POOL_FIXED] < 0)
		return 0;
	hi = sw->c[sw->best[POOL_FIXED]].cfg.params.fixed.n;
	for (size_t i = 0; i < sw->n; i++) {
		const struct cand *x = &sw->c[i];

		if (x->cfg.policy == POOL_FIXED && !x->meets &&
		    x->cfg.params.fixed.n < hi &&
		    (!have_lo || x->cfg.params.fixed.n > lo)) {
			lo = x->cfg.params.fixed.n;
			have_lo = true;
		}
	}
	while (ret == 0 && have_lo && hi - lo > 1) {
		unsigned int mid = lo + (hi - lo) / 2;
		size_t from = sw->n;

		if (!add_fixed(sw, c, p->o->seed, mid))
			return err__set(ENOMEM, "growing the sweep");
		ret = simulate_from(sw, from, p);
		if (sw->c[from].meets)
			hi = mid;
		else
			lo = mid;
	}
	return ret;
}

double tune_pool__hits_floor(const struct costs *c, const struct slo *slo)
{
	double *s, v;

	if (slo->hits || !c->hit.n || !(s = malloc(c->hit.n * sizeof(*s))))
		return 0;
	memcpy(s, c->hit.s, c->hit.n * sizeof(*s));
	qsort(s, c->hit.n, sizeof(*s), cmp_double);
	v = stats__percentile_sorted(s, c->hit.n, slo->pct);
	free(s);
	return v;
}

int tune_pool__extend(struct sweep *sw, const struct tp_opts *o,
		      const struct costs *c, const struct arrivals *a,
		      const struct arrivals *test,
		      const struct poolsim_costs *pc)
{
	struct parts parts = { .o = o, .a = a, .test = test, .pc = pc };
	/* no pool beats its own hits: a larger one cannot help */
	bool hopeless = !o->slo.hits &&
			tune_pool__hits_floor(c, &o->slo) > o->slo.goal;
	int ret = tune_pool__holdout(sw, 0, o, test, pc);

	tune_pool__choose(sw, &o->slo);
	while (ret == 0 && !hopeless && sw->max < sw->bound) {
		unsigned int old = sw->max;
		size_t from = sw->n;
		bool any = false;

		for (int k = 0; k < POOLSIM_POLICIES; k++)
			any |= unmet(sw, poolsim__policy_at(k));
		if (!any)
			break;
		sw->max = old * 2 < sw->bound ? old * 2 : sw->bound;
		for (int k = 0; k < POOLSIM_POLICIES; k++)
			if (unmet(sw, poolsim__policy_at(k)))
				widen(sw, poolsim__policy_at(k), old, sw->max,
				      c, o->seed);
		fprintf(stderr, "coldstart tune pool: %zu configurations "
			"simulated; the policies with none meeting %s up to "
			"%u VMs are swept on up to %u\n", from, o->slo.text,
			old, sw->max);
		ret = simulate_from(sw, from, &parts);
		if (ret == 0)
			tune_pool__choose(sw, &o->slo);
	}
	if (ret == 0)
		ret = narrow_fixed(sw, c, &parts);
	if (ret == 0)
		tune_pool__choose(sw, &o->slo);
	return ret;
}

const struct cand *tune_pool__closest(const struct sweep *sw, int p,
				      const struct slo *slo)
{
	const struct cand *best = NULL;

	for (size_t i = 0; i < sw->n; i++) {
		const struct cand *x = &sw->c[i];

		if (x->cfg.policy != p)
			continue;
		/* a percentile often ties at the miss latency (every
		 * configuration with more than 1 % misses): then the one
		 * with the most hits came closest, not the cheapest */
		if (!best ||
		    (slo->hits ? x->metric > best->metric
			       : x->metric < best->metric) ||
		    (x->metric == best->metric && !slo->hits &&
		     x->hit_ratio > best->hit_ratio) ||
		    (x->metric == best->metric &&
		     (slo->hits || x->hit_ratio == best->hit_ratio) &&
		     tune_pool__cheaper(x, best)))
			best = x;
	}
	return best;
}
