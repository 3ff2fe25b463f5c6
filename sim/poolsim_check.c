/* The warm-pool simulator's checks of its inputs: arrivals, costs, config. */
#include "poolsim.h"
#include "poolsim_int.h"

#include "err.h"

#include <errno.h>
#include <math.h>

/* A histogram of more bins than this is refused (memory, not time). */
#define HYBRID_MAX_BINS 10000000

/* ---- checking the inputs ---- */

static bool finite_in(double x, double lo, double hi)
{
	return isfinite(x) && x >= lo && x <= hi;
}

static int check_samples(const char *name, const double *s, size_t n,
			 bool required, bool positive)
{
	if (!n && required)
		return err__set(EINVAL, "poolsim: no %s samples", name);
	if (n && !s)
		return err__set(EINVAL, "poolsim: %s: %zu samples but no array",
				name, n);
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(s[i]) || s[i] < 0 || (positive && s[i] == 0))
			return err__set(EINVAL, "poolsim: %s sample %zu is %g "
					"(finite and %s 0 s)", name, i, s[i],
					positive ? "above" : "at least");
	}
	return 0;
}

int poolsim__check_costs(const struct poolsim_costs *c)
{
	int ret;

	if (!c)
		return err__set(EINVAL, "poolsim: no costs");
	if ((ret = check_samples("hit latency", c->hit_s, c->n_hit, true,
				 false)) ||
	    (ret = check_samples("miss latency", c->miss_s, c->n_miss, true,
				 false)) ||
	    (ret = check_samples("making time", c->make_s, c->n_make, true,
				 true)) ||
	    (ret = check_samples("service time", c->service_s, c->n_service,
				 false, false)))
		return ret;
	if (!finite_in(c->vm_mib, 0, HUGE_VAL))
		return err__set(EINVAL, "poolsim: memory per VM %g MiB "
				"(finite, at least 0)", c->vm_mib);
	return 0;
}

int poolsim__check_arrivals(const struct arrivals *a)
{
	if (!a || !a->n || !a->t)
		return err__set(EINVAL, "poolsim: no arrivals");
	if (!isfinite(a->span_s))
		return err__set(EINVAL, "poolsim: time line of %g s",
				a->span_s);
	for (size_t i = 0; i < a->n; i++) {
		if (!finite_in(a->t[i], i ? a->t[i - 1] : 0, HUGE_VAL))
			return err__set(EINVAL, "poolsim: arrival %zu at %g s "
					"(finite, from 0 on, ascending)", i,
					a->t[i]);
	}
	return 0;
}

static int check_n(const char *policy, unsigned int n, unsigned int lo,
		   unsigned int max)
{
	if (n < lo || n > max)
		return err__set(EINVAL, "poolsim: %s: %u VMs (%u to the "
				"maximum, %u)", policy, n, lo, max);
	return 0;
}

static int check_hybrid(const struct poolsim_config *cfg)
{
	const struct poolsim_hybrid *h = &cfg->params.hybrid;

	if (!finite_in(h->bin_s, 1e-6, HUGE_VAL) ||
	    !finite_in(h->range_s, h->bin_s, h->bin_s * HYBRID_MAX_BINS))
		return err__set(EINVAL, "poolsim: hybrid: bins of %g s up to "
				"%g s (bins above 0, the range at least one "
				"bin and at most %u)", h->bin_s, h->range_s,
				HYBRID_MAX_BINS);
	if (!finite_in(h->head_pct, 0, 100) ||
	    !finite_in(h->tail_pct, h->head_pct, 100) ||
	    h->tail_pct == h->head_pct)
		return err__set(EINVAL, "poolsim: hybrid: percentiles %g and "
				"%g (0 <= head < tail <= 100)", h->head_pct,
				h->tail_pct);
	if (!finite_in(h->margin, 0, 0.999) ||
	    !finite_in(h->forecast_margin, 0, 0.999) ||
	    !finite_in(h->oob_max, 0, 1) || !finite_in(h->cv_min, 0, HUGE_VAL))
		return err__set(EINVAL, "poolsim: hybrid: margins %g and %g "
				"([0, 1)), OOB share %g ([0, 1]), CV %g (at "
				"least 0)", h->margin, h->forecast_margin,
				h->oob_max, h->cv_min);
	return check_n("hybrid", h->n, 1, cfg->max);
}

/* The pool's own policies: as `coldstart pool` checks them (policy.h). */
static int check_pool_policy(const struct poolsim_config *cfg)
{
	const struct poolsim_pool *p = &cfg->params.pool;
	const char *name = policy__name((enum pool_policy)cfg->policy);
	char why[256];

	if (p->min > cfg->max || p->size < p->min || p->size > cfg->max)
		return err__set(EINVAL, "poolsim: %s: size %u, minimum %u "
				"(min <= size <= max, %u)", name, p->size,
				p->min, cfg->max);
	if (policy__check((enum pool_policy)cfg->policy, &p->params, why,
			  sizeof(why)) < 0)
		return err__set(EINVAL, "poolsim: %s: %s", name, why);
	return 0;
}

int poolsim__check_config(const struct poolsim_config *cfg)
{
	const struct poolsim_params *p = &cfg->params;

	if (cfg->workers < 1 || cfg->workers > POOLSIM_MAX_WORKERS)
		return err__set(EINVAL, "poolsim: %u refill workers (1 to %u)",
				cfg->workers, POOLSIM_MAX_WORKERS);
	if (cfg->max < 1 || cfg->max > POOLSIM_MAX_VMS)
		return err__set(EINVAL, "poolsim: maximum %u VMs (1 to %u)",
				cfg->max, POOLSIM_MAX_VMS);
	switch (cfg->policy) {
	case POOL_FIXED:
		return check_n("fixed", p->fixed.n, 0, cfg->max);
	case POOLSIM_TTL:
		if (!finite_in(p->ttl.ttl_s, 1e-9, HUGE_VAL))
			return err__set(EINVAL, "poolsim: ttl: keep-alive %g s "
					"(finite, above 0)", p->ttl.ttl_s);
		return check_n("ttl", p->ttl.n, 1, cfg->max);
	case POOLSIM_HYBRID:
		return check_hybrid(cfg);
	}
	if (cfg->policy >= 0 && cfg->policy < POOL_POLICIES)
		return check_pool_policy(cfg);
	return err__set(EINVAL, "poolsim: unknown policy %d", (int)cfg->policy);
}
