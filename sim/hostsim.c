/* Many functions' warm VMs in one memory budget: the minute loop, the
 * memory and the evictions (the policies' choices: hostsim_policy.c). */
#include "hostsim.h"
#include "hostsim_int.h"

#include "err.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const policy_names[] = {
	[HOSTSIM_OURS] = "ours",
	[HOSTSIM_HYBRID] = "hybrid-histogram",
	[HOSTSIM_GREEDY_DUAL] = "greedy-dual",
	[HOSTSIM_KEEPALIVE] = "keepalive",
};

const char *hostsim__policy_name(enum hostsim_policy p)
{
	return (unsigned int)p < HOSTSIM_POLICIES ? policy_names[p] : "?";
}

void hostsim__defaults(struct hostsim_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->policy = HOSTSIM_OURS;
	cfg->budget_mib = 1024;
	cfg->keepalive = 10;
	cfg->price = 1;
}

static int check(const struct fn_trace *t, const struct hostsim_guest *g,
		 const struct hostsim_config *cfg)
{
	if ((unsigned int)cfg->policy >= HOSTSIM_POLICIES)
		return err__set(EINVAL, "hostsim: no policy %d", cfg->policy);
	if (!(cfg->budget_mib > 0 && isfinite(cfg->budget_mib)))
		return err__set(EINVAL, "hostsim: the budget must be above 0");
	if (cfg->keepalive < 1 || cfg->keepalive > HOSTSIM_RANGE)
		return err__set(EINVAL, "hostsim: keep-alive of 1 to %d "
				"minutes", HOSTSIM_RANGE);
	if (!(cfg->price >= 0 && isfinite(cfg->price)))
		return err__set(EINVAL, "hostsim: the price must be >= 0");
	if (!t->nfn || !t->nmin || !t->count)
		return err__set(EINVAL, "hostsim: an empty trace");
	for (size_t i = 0; i < t->nfn; i++)
		if (!(g[i].mem_mib > 0 && g[i].mem_mib <= 1 << 30) ||
		    !(g[i].cold_s >= 0 && g[i].cold_s < 1e6) ||
		    !(g[i].hit_s >= 0 && g[i].hit_s < 1e6) ||
		    !(g[i].idle_weight > 0 && g[i].idle_weight < 1e6))
			return err__set(EINVAL, "hostsim: function %s's guest "
					"has a memory, latency or weight out "
					"of range", t->name[i]);
	return 0;
}

static void unload(struct hsim *s, size_t i)
{
	s->f[i].loaded = false;
	s->used_mib -= s->g[i].mem_mib;
	if (s->used_mib < 1e-9)
		s->used_mib = 0;
}

static void evict(struct hsim *s, size_t i)
{
	unload(s, i);
	s->per[i].evicted++;
	s->out->evictions++;
	if (s->cfg->policy == HOSTSIM_GREEDY_DUAL) {
		s->clock = s->f[i].prio;
		s->f[i].freq = 0;
	}
}

/* Evicts idle VMs worth less than `worth`, the least first, until `need`
 * more MiB fit; whether they do. */
static bool make_room(struct hsim *s, double need, double worth)
{
	while (s->used_mib + need > s->cfg->budget_mib + 1e-9) {
		size_t victim = SIZE_MAX;
		double least = worth;

		for (size_t i = 0; i < s->t->nfn; i++) {
			double w;

			if (!s->f[i].loaded || s->f[i].busy)
				continue;
			w = hostsim__worth(s, i);
			if (w < least) {
				least = w;
				victim = i;
			}
		}
		if (victim == SIZE_MAX)
			return false;
		evict(s, victim);
	}
	return true;
}

static void load(struct hsim *s, size_t i)
{
	s->f[i].loaded = true;
	s->used_mib += s->g[i].mem_mib;
}

/* The first invocation of a busy minute whose VM is not loaded. */
static void cold_start(struct hsim *s, size_t i)
{
	s->out->cold++;
	s->per[i].cold++;
	if (!make_room(s, s->g[i].mem_mib, INFINITY)) {
		s->f[i].over = true;
		s->out->overflow++;
	}
	load(s, i);
}

/* At the end of a minute: functions whose window opens with the next
 * one are loaded, if they are worth more than what they would evict. */
static void prewarm(struct hsim *s)
{
	for (size_t i = 0; i < s->t->nfn; i++) {
		struct hfn *f = &s->f[i];

		if (f->loaded || f->last < 0 || f->lo < 2 ||
		    s->now + 1 != f->last + f->lo)
			continue;
		if (make_room(s, s->g[i].mem_mib, hostsim__prewarm_worth(s, i)))
			load(s, i);
	}
}

static void serve(struct hsim *s)
{
	const struct fn_trace *t = s->t;

	for (size_t i = 0; i < t->nfn; i++)
		s->f[i].busy = t->count[i * t->nmin + (size_t)s->now] > 0;
	for (size_t i = 0; i < t->nfn; i++) {
		uint32_t c = t->count[i * t->nmin + (size_t)s->now];

		if (!c)
			continue;
		s->out->invocations += c;
		s->per[i].invocations += c;
		if (!s->f[i].loaded) {
			cold_start(s, i);
			s->out->start_s += s->g[i].cold_s +
					   (double)(c - 1) * s->g[i].hit_s;
		} else {
			s->out->start_s += (double)c * s->g[i].hit_s;
		}
	}
}

/* The minute's memory, then each function's next window; VMs whose
 * window ended, or that ran over the budget, go, and the next minute's
 * pre-warms come. */
static void settle(struct hsim *s)
{
	const struct fn_trace *t = s->t;

	if (s->used_mib > s->out->peak_mib)
		s->out->peak_mib = s->used_mib;
	for (size_t i = 0; i < t->nfn; i++) {
		struct hfn *f = &s->f[i];

		if (f->loaded && !f->busy) {
			s->per[i].idle_mib_min += s->g[i].mem_mib;
			s->out->idle_gib_s += s->g[i].mem_mib * 60.0 / 1024.0;
		}
		if (f->busy) {
			hostsim__after_busy(
				s, i, t->count[i * t->nmin + (size_t)s->now]);
			if (f->over || f->lo != 1)
				unload(s, i);
			f->over = false;
		} else if (f->loaded && s->now >= f->last + f->hi) {
			unload(s, i);
		}
		f->busy = false;
	}
	prewarm(s);
}

int hostsim__run(const struct fn_trace *t, const struct hostsim_guest *g,
		 const struct hostsim_config *cfg, struct hostsim_result *out,
		 struct hostsim_fn *per_fn)
{
	struct hsim s = { .t = t, .g = g, .cfg = cfg, .out = out };
	int err = check(t, g, cfg);

	memset(out, 0, sizeof(*out));
	if (err < 0)
		return err;
	s.f = calloc(t->nfn, sizeof(*s.f));
	s.per = per_fn ? per_fn : calloc(t->nfn, sizeof(*s.per));
	if (!s.f || !s.per) {
		err = err__set(ENOMEM, "hostsim: out of memory");
		goto out;
	}
	memset(s.per, 0, t->nfn * sizeof(*s.per));
	for (size_t i = 0; i < t->nfn; i++)
		s.f[i].last = -1;
	for (s.now = 0; s.now < (int64_t)t->nmin; s.now++) {
		serve(&s);
		settle(&s);
	}
	for (size_t i = 0; i < t->nfn; i++) {
		s.per[i].win_lo = s.f[i].lo;
		s.per[i].win_hi = s.f[i].hi;
	}
out:
	if (s.per != per_fn)
		free(s.per);
	free(s.f);
	return err;
}
