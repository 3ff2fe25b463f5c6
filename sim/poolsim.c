/* The warm-pool simulator (poolsim.h): a binary heap of timed events, the
 * pool's counters, and the five policies' targets (poolsim_policy.c; the
 * inputs' checks: poolsim_check.c). */
#include "poolsim.h"
#include "poolsim_int.h"

#include "err.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Weight of the newest making time in its moving average (pool.c). */
#define MAKE_AVG_WEIGHT 0.2

int poolsim__policy_at(int k)
{
	if (k == 0)
		return POOL_FIXED;
	if (k == 1 || k == 2)
		return k == 1 ? POOLSIM_TTL : POOLSIM_HYBRID;
	return k - 2;
}

const char *poolsim__policy_names(void)
{
	static char names[256];
	size_t used = 0;

	for (int k = 0; k < POOLSIM_POLICIES && used < sizeof(names); k++)
		used += (size_t)snprintf(names + used, sizeof(names) - used,
					 "%s%s", k ? ", " : "",
					 poolsim__policy_name(
						 poolsim__policy_at(k)));
	return names;
}

const char *poolsim__policy_name(int p)
{
	if (p == POOLSIM_TTL)
		return "ttl";
	if (p == POOLSIM_HYBRID)
		return "hybrid";
	return policy__name((enum pool_policy)p);
}

int poolsim__policy_parse(const char *name, int *out)
{
	enum pool_policy p;

	for (int i = POOL_POLICIES; i < POOLSIM_POLICIES; i++) {
		if (name && !strcmp(name, poolsim__policy_name(i))) {
			*out = i;
			return 0;
		}
	}
	if (policy__parse(name, &p) == 0) {
		*out = (int)p;
		return 0;
	}
	return err__set(EINVAL, "poolsim: unknown policy '%s' (%s)",
			name ? name : "", poolsim__policy_names());
}

void poolsim__default_params(struct poolsim_params *p)
{
	memset(p, 0, sizeof(*p));
	p->fixed.n = 1;
	p->ttl.n = 1;
	p->ttl.ttl_s = 600;
	/* Shahrad et al.'s defaults */
	p->hybrid.n = 1;
	p->hybrid.bin_s = 60;
	p->hybrid.range_s = 4 * 3600;
	p->hybrid.head_pct = 5;
	p->hybrid.tail_pct = 99;
	p->hybrid.margin = 0.10;
	p->hybrid.cv_min = 2;
	p->hybrid.min_samples = 10;
	p->hybrid.oob_max = 0.5;
	p->hybrid.forecast_margin = 0.15;
	/* `coldstart pool`'s defaults */
	p->pool.size = 4;
	policy__defaults(&p->pool.params);
}

void poolsim__result_free(struct poolsim_result *r)
{
	if (!r)
		return;
	free(r->latency_s);
	memset(r, 0, sizeof(*r));
}

/* ---- the event queue ---- */

static bool before(const struct event *x, const struct event *y)
{
	if (x->t != y->t)
		return x->t < y->t;
	if (x->kind != y->kind)
		return x->kind < y->kind;
	return x->seq < y->seq;
}

static int push(struct sim *s, struct event ev)
{
	struct heap *h = &s->q;
	size_t i;

	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 64;
		struct event *e = realloc(h->e, cap * sizeof(*e));

		if (!e)
			return err__set(ENOMEM, "poolsim: no memory for %zu "
					"events", cap);
		h->e = e;
		h->cap = cap;
	}
	ev.seq = s->seq++;
	for (i = h->n++; i && before(&ev, &h->e[(i - 1) / 2]); i = (i - 1) / 2)
		h->e[i] = h->e[(i - 1) / 2];
	h->e[i] = ev;
	return 0;
}

static struct event pop(struct heap *h)
{
	struct event top = h->e[0], last = h->e[--h->n];
	size_t i = 0, kid;

	while ((kid = 2 * i + 1) < h->n) {
		if (kid + 1 < h->n && before(&h->e[kid + 1], &h->e[kid]))
			kid++;
		if (!before(&h->e[kid], &last))
			break;
		h->e[i] = h->e[kid];
		i = kid;
	}
	if (h->n)
		h->e[i] = last;
	return top;
}

/* ---- draws ---- */

static double draw(struct stats_rng *rng, const double *s, size_t n)
{
	return n ? s[n == 1 ? 0 : stats__rng_below(rng, n)] : 0;
}

/* ---- rate estimates ---- */

/* Whether the policy reads the making times' moving average. */
static bool reads_make_avg(const struct sim *s)
{
	return s->cfg->policy < POOL_POLICIES &&
	       (policy__reads((enum pool_policy)s->cfg->policy) &
		POLICY_READS_MAKE_AVG);
}

static void note_make_time(struct sim *s, double took)
{
	double avg = s->view.make_avg;

	s->view.make_avg = avg ? (1 - MAKE_AVG_WEIGHT) * avg +
					 MAKE_AVG_WEIGHT * took
			       : took;
}

/* ---- the pool ---- */

/* The VMs-held integral up to t (the time line's end at most). */
static void advance(struct sim *s, double t)
{
	double upto = t < s->end ? t : s->end;

	if (upto > s->idle_at) {
		s->out->idle_vm_s += s->held * (upto - s->idle_at);
		s->idle_at = upto;
	}
	s->now = t;
}

static void note_peaks(struct sim *s)
{
	struct poolsim_result *o = s->out;

	if (s->now > s->end)
		return;
	if (s->held > o->peak_held)
		o->peak_held = s->held;
	if (s->held + s->making > o->peak_pool)
		o->peak_pool = s->held + s->making;
	if (s->serving > o->peak_serving)
		o->peak_serving = s->serving;
}

/* Request i has its VM: after `waited` s, plus `drawn` s to its first
 * instruction (a hit's latency, or a miss's, which makes its VM). It
 * runs, and its VM is destroyed when done. */
static int start_request(struct sim *s, size_t i, double drawn, bool miss)
{
	double waited = s->now - s->a->t[i];
	double service = draw(&s->rng_service, s->c->service_s,
			      s->c->n_service);

	s->out->latency_s[i] = waited + drawn;
	s->serving++;
	return push(s, (struct event){ .t = s->now + drawn + service,
				       .dur = drawn, .kind = EV_DONE,
				       .miss = miss });
}

static int miss(struct sim *s, size_t i)
{
	s->out->misses++;
	return start_request(s, i, draw(&s->rng_lat, s->c->miss_s,
					s->c->n_miss), true);
}

/* Request i takes a VM: one held on its arrival (a hit), or one just
 * refilled for it after a wait. */
static int take(struct sim *s, size_t i)
{
	return start_request(s, i, draw(&s->rng_lat, s->c->hit_s,
					s->c->n_hit), false);
}

/* After every event: the target, then reaping, refills, and requests
 * that can no longer wait for a refill; then the policy's next timer. */
static int settle(struct sim *s)
{
	double next;
	int ret;

	s->target = poolsim__policy_target(s, s->now);
	if (s->target > s->cfg->max)
		s->target = s->cfg->max;
	if (s->held > s->target) {
		s->out->reaped += s->held - s->target;
		s->held = s->target;
	}
	while (s->held + s->making < s->target &&
	       s->making < s->cfg->workers) {
		double d = draw(&s->rng_make, s->c->make_s, s->c->n_make);

		s->making++;
		ret = push(s, (struct event){ .t = s->now + d, .dur = d,
					      .kind = EV_MADE });
		if (ret < 0)
			return ret;
	}
	while (s->wait_head < s->wait_tail && !s->target && !s->making) {
		size_t i = s->waiting[s->wait_head++];

		s->out->wait_s += s->now - s->a->t[i];
		ret = miss(s, i);
		if (ret < 0)
			return ret;
	}
	note_peaks(s);
	next = poolsim__policy_next(s, s->now);
	if (next < s->timer_at) {
		s->timer_at = next;
		return push(s, (struct event){ .t = next, .kind = EV_TIMER });
	}
	return 0;
}

static int on_arrival(struct sim *s, size_t i)
{
	int ret;

	s->out->requests++;
	poolsim__policy_arrival(s, s->now);
	if (s->held) {
		s->held--;
		s->out->hits++;
		ret = take(s, i);
		return ret < 0 ? ret : settle(s);
	}
	/* pool.c retargets before deciding whether a refill can come */
	ret = settle(s);
	if (ret < 0)
		return ret;
	if (s->cfg->wait_on_empty && (s->target || s->making)) {
		s->waiting[s->wait_tail++] = i;
		return 0;
	}
	ret = miss(s, i);
	note_peaks(s);
	return ret;
}

static int on_made(struct sim *s, const struct event *ev)
{
	int ret;

	s->making--;
	s->out->makes++;
	if (reads_make_avg(s))
		note_make_time(s, ev->dur);
	if (s->wait_head < s->wait_tail) {
		size_t i = s->waiting[s->wait_head++];

		s->out->waits++;
		s->out->wait_s += s->now - s->a->t[i];
		ret = take(s, i);
		if (ret < 0)
			return ret;
	} else {
		s->held++;
	}
	return settle(s);
}

static int on_done(struct sim *s, const struct event *ev)
{
	s->serving--;
	/* pool.c learns the making time from a miss's own VM too */
	if (!ev->miss || !reads_make_avg(s))
		return 0;
	note_make_time(s, ev->dur);
	return settle(s);
}

static int step(struct sim *s, size_t *next_arrival)
{
	struct event ev;
	size_t i = *next_arrival;

	if (i < s->a->n &&
	    (!s->q.n || s->a->t[i] < s->q.e[0].t ||
	     (s->a->t[i] == s->q.e[0].t && s->q.e[0].kind > EV_ARRIVAL))) {
		advance(s, s->a->t[i]);
		(*next_arrival)++;
		return on_arrival(s, i);
	}
	ev = pop(&s->q);
	advance(s, ev.t);
	switch (ev.kind) {
	case EV_MADE:
		return on_made(s, &ev);
	case EV_DONE:
		return on_done(s, &ev);
	case EV_TIMER:
		if (ev.t == s->timer_at)
			s->timer_at = INFINITY;
		return settle(s);
	case EV_ARRIVAL:
		break;
	}
	return 0;
}

/* The state at time 0: the first target held, as after pool__start and
 * pool__wait_filled. */
/* A pool policy's first target and view (policy.h): it learns the rate
 * from the arrivals, the moving average from the simulated makings, and
 * the makings' mean and spread from make_s. */
static void start_policy(struct sim *s)
{
	const struct poolsim_pool *p = &s->cfg->params.pool;
	enum pool_policy pol = (enum pool_policy)s->cfg->policy;

	s->target = p->size;
	policy__start(pol, &p->params, &s->view);
	s->view.workers = s->cfg->workers;
	s->view.min = p->min;
	s->view.max = s->cfg->max;
	s->view.wait_on_empty = s->cfg->wait_on_empty;
	if (policy__reads(pol) & POLICY_READS_MAKE_MOMENTS)
		policy__moments(s->c->make_s, s->c->n_make, &s->view.make_mean,
				&s->view.make_cs2);
}

static int sim_init(struct sim *s)
{
	const struct poolsim_config *cfg = s->cfg;
	uint64_t seed = cfg->seed;
	int ret = 0;

	stats__rng_seed(&s->rng_make, stats__splitmix64(&seed));
	stats__rng_seed(&s->rng_lat, stats__splitmix64(&seed));
	stats__rng_seed(&s->rng_service, stats__splitmix64(&seed));
	s->end = s->a->span_s > s->a->t[s->a->n - 1] ? s->a->span_s
						      : s->a->t[s->a->n - 1];
	s->timer_at = INFINITY;
	s->out->duration_s = s->end;
	s->out->latency_s = calloc(s->a->n, sizeof(*s->out->latency_s));
	s->waiting = malloc(s->a->n * sizeof(*s->waiting));
	if (!s->out->latency_s || !s->waiting)
		return err__set(ENOMEM, "poolsim: no memory for %zu requests",
				s->a->n);
	if (cfg->policy == POOL_FIXED)
		s->target = cfg->params.fixed.n;
	if (cfg->policy != POOL_FIXED && cfg->policy < POOL_POLICIES)
		start_policy(s);
	if (cfg->policy == POOLSIM_HYBRID)
		ret = poolsim__hist_init(&s->hist, cfg);
	s->held = s->target;
	note_peaks(s);
	return ret;
}

static void summarize(struct poolsim_result *o, double vm_mib)
{
	o->peak_mib = o->peak_pool * vm_mib;
	o->hit_ratio = o->requests ? (double)o->hits / (double)o->requests : 0;
}

int poolsim__run(const struct arrivals *a, const struct poolsim_costs *c,
		 const struct poolsim_config *cfg, struct poolsim_result *out)
{
	struct sim s = { .a = a, .c = c, .cfg = cfg, .out = out };
	size_t next = 0;
	int ret;

	if (!out)
		return err__set(EINVAL, "poolsim: no result");
	memset(out, 0, sizeof(*out));
	if (!cfg)
		return err__set(EINVAL, "poolsim: no configuration");
	if ((ret = poolsim__check_arrivals(a)) ||
	    (ret = poolsim__check_costs(c)) ||
	    (ret = poolsim__check_config(cfg)))
		return ret;
	ret = sim_init(&s);
	/* past the time line's end only requests still waiting matter */
	while (ret == 0 && (next < a->n || s.q.n) &&
	       (s.wait_head < s.wait_tail ||
		(next < a->n ? a->t[next] : s.q.e[0].t) <= s.end))
		ret = step(&s, &next);
	if (ret == 0)
		advance(&s, s.end);
	if (ret == 0)
		ret = stats__summarize(out->latency_s, a->n, &out->latency);
	if (ret == 0)
		summarize(out, c->vm_mib);
	free(s.q.e);
	free(s.waiting);
	free(s.hist.count);
	free(s.hist.tree);
	if (ret < 0)
		poolsim__result_free(out);
	return ret;
}
