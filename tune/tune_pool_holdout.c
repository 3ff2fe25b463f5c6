/* `coldstart tune pool --holdout F`: whether a configuration tuned on
 * yesterday's traffic holds today. The arrivals part by count: the sweep
 * sees the first share, every configuration is then run on the rest, and
 * only one that meets the SLO on both parts is recommended. */
#include "tune_pool.h"
#include "tune_pool_int.h"

#include "err.h"
#include "poolsim.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a's arrivals [from, to), shifted by -at, over a time line of span. */
static int part(const struct arrivals *a, size_t from, size_t to, double at,
		double span, const char *what, struct arrivals *out)
{
	memset(out, 0, sizeof(*out));
	out->t = malloc((to - from) * sizeof(*out->t));
	if (!out->t)
		return err__set(ENOMEM, "--holdout: %zu arrivals", to - from);
	for (size_t i = from; i < to; i++)
		out->t[i - from] = a->t[i] - at;
	out->n = to - from;
	out->span_s = span;
	snprintf(out->desc, sizeof(out->desc), "%s: arrivals %zu to %zu of "
		 "%.160s", what, from + 1, to, a->desc);
	return 0;
}

int tune_pool__split(const struct arrivals *a, double share,
		     struct arrivals *tune, struct arrivals *test)
{
	size_t k = (size_t)llround((1 - share) * (double)a->n);
	double at, end = a->span_s > a->t[a->n - 1] ? a->span_s
						     : a->t[a->n - 1];
	int ret;

	memset(tune, 0, sizeof(*tune));
	memset(test, 0, sizeof(*test));
	if (k < 1 || k >= a->n)
		return err__set(EINVAL, "--holdout %g of %zu arrivals leaves "
				"%s part empty", share, a->n,
				k < 1 ? "the tuning" : "the held-out");
	/* the parts meet at the held-out part's first arrival */
	at = a->t[k];
	ret = part(a, 0, k, 0, at, "tuning part", tune);
	if (ret == 0)
		ret = part(a, k, a->n, at, end - at, "held out", test);
	if (ret < 0) {
		arrivals__free(tune);
		arrivals__free(test);
	}
	return ret;
}

int tune_pool__holdout(struct sweep *sw, size_t from,
		       const struct tp_opts *o, const struct arrivals *test,
		       const struct poolsim_costs *pc)
{
	struct sweep t = { .n = sw->n - from };
	int ret;

	for (size_t i = from; i < sw->n; i++)
		sw->c[i].tune_meets = sw->c[i].meets;
	if (!test->n || from == sw->n)
		return 0;
	t.c = malloc(t.n * sizeof(*t.c));
	if (!t.c)
		return err__set(ENOMEM, "--holdout: %zu configurations", t.n);
	fprintf(stderr, "coldstart tune pool: %zu configurations on the %zu "
		"held-out arrivals\n", t.n, test->n);
	for (size_t i = 0; i < t.n; i++)
		t.c[i] = (struct cand){ .cfg = sw->c[from + i].cfg };
	ret = tune_pool__simulate(&t, test, pc, &o->slo);
	for (size_t i = 0; ret == 0 && i < t.n; i++) {
		struct cand *x = &sw->c[from + i];

		x->test_meets = t.c[i].meets;
		x->test_metric = t.c[i].metric;
		x->test_idle_vm_s = t.c[i].idle_vm_s;
		x->test_hit_ratio = t.c[i].hit_ratio;
		x->meets = x->tune_meets && x->test_meets;
	}
	free(t.c);
	return ret;
}

void tune_pool__tuning_choice(struct sweep *sw)
{
	sw->ho.rec_tune = -1;
	for (size_t i = 0; i < sw->n; i++)
		if (sw->c[i].tune_meets &&
		    (sw->ho.rec_tune < 0 ||
		     tune_pool__cheaper(&sw->c[i], &sw->c[sw->ho.rec_tune])))
			sw->ho.rec_tune = (ssize_t)i;
}

static void metric(char *buf, size_t len, const struct slo *slo, double v)
{
	if (slo->hits)
		snprintf(buf, len, "%.2f %% hits", v);
	else
		snprintf(buf, len, "p%g %.3f ms", slo->pct, v * 1e3);
}

static void md_cand(FILE *f, const struct cand *x, const struct slo *slo)
{
	char m[48], t[48];

	metric(m, sizeof(m), slo, x->metric);
	metric(t, sizeof(t), slo, x->test_metric);
	fprintf(f, "%s %s: tuning part %s, %.1f idle VM-s; held out %s (SLO "
		"%s), %.1f idle VM-s", poolsim__policy_name(x->cfg.policy),
		x->label, m, x->idle_vm_s, t, x->test_meets ? "met" : "missed",
		x->test_idle_vm_s);
}

void tune_pool__md_holdout(FILE *f, const struct sweep *sw,
			   const struct slo *slo)
{
	size_t tuned = 0, held = 0;

	if (!sw->ho.n_test)
		return;
	for (size_t i = 0; i < sw->n; i++) {
		tuned += sw->c[i].tune_meets;
		held += sw->c[i].tune_meets && sw->c[i].test_meets;
	}
	fprintf(f, "## Out of sample (--holdout)\n\n"
		"Tuned on the first %zu arrivals (0 to %.1f s), then every "
		"configuration run on the %zu held out (the rest); %zu of the "
		"%zu that met %s on the tuning part met it on the held-out "
		"part too.\n\n", sw->ho.n_tune, sw->ho.split_s, sw->ho.n_test,
		held, tuned, slo->text);
	if (sw->ho.rec_tune >= 0) {
		fputs("- cheapest on the tuning part: ", f);
		md_cand(f, &sw->c[sw->ho.rec_tune], slo);
		fputs("\n", f);
	}
	if (sw->rec < 0) {
		fputs("- **no configuration meets the SLO on both parts**: "
		      "none is recommended.\n\n", f);
		return;
	}
	fputs("- **recommended, the cheapest that holds out of sample**: ", f);
	md_cand(f, &sw->c[sw->rec], slo);
	fprintf(f, "%s\n\nThe tables below count a configuration as meeting "
		"the SLO only when it meets it on both parts; their numbers "
		"are the tuning part's.\n\n", sw->rec == sw->ho.rec_tune
		? " (the tuning part's own choice: it holds)" : "");
}

json_t *tune_pool__holdout_json(const struct sweep *sw,
				const struct tp_opts *o)
{
	const struct cand *x = sw->ho.rec_tune >= 0 ? &sw->c[sw->ho.rec_tune]
						     : NULL;

	return json_pack("{s:f, s:I, s:I, s:f, s:s?, s:s?, s:b}", "share",
			 o->holdout, "tuning_arrivals",
			 (json_int_t)sw->ho.n_tune, "held_out_arrivals",
			 (json_int_t)sw->ho.n_test, "split_s", sw->ho.split_s,
			 "tuning_choice_policy",
			 x ? poolsim__policy_name(x->cfg.policy) : NULL,
			 "tuning_choice", x ? x->label : NULL,
			 "tuning_choice_holds",
			 sw->ho.rec_tune >= 0 && sw->c[sw->ho.rec_tune].test_meets);
}
