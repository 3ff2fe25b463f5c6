/* `coldstart tune pool`: its outputs: Markdown, the JSON document, CSV
 * and the plot. */
#include "tune_pool.h"
#include "tune_pool_int.h"

#include "args.h"
#include "arrivals.h"
#include "child.h"
#include "cli.h"
#include "err.h"
#include "kvm.h"
#include "output.h"
#include "plot.h"
#include "poolsim.h"
#include "report.h"
#include "result.h"
#include "result_new.h"
#include "sysinfo.h"
#include "units.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* ---- output ---- */

static void metric_text(char *buf, size_t size, const struct slo *slo,
			double v)
{
	if (slo->hits)
		snprintf(buf, size, "%.2f %%", v);
	else
		snprintf(buf, size, "%.3f ms", v * 1e3);
}

/* The cheapest configuration meeting the SLO that `coldstart pool` can
 * apply (fixed, follow or marginal), or NULL. */
static const struct cand *best_applicable(const struct sweep *sw)
{
	const struct cand *best = NULL;

	for (int p = 0; p < POOL_POLICIES; p++) {
		ssize_t k = sw->best[p];

		if (k >= 0 && (!best || tune_pool__cheaper(&sw->c[k], best)))
			best = &sw->c[k];
	}
	return best;
}

/* The configuration tune-pool.json's "pool_config" holds: the
 * recommendation, or when the pool has not its policy the closest it
 * has; NULL when none. */
static const struct cand *applied(const struct sweep *sw)
{
	if (sw->rec < 0)
		return NULL;
	if (tune_pool__applies(&sw->c[sw->rec]))
		return &sw->c[sw->rec];
	return best_applicable(sw);
}

/* Whether the making-time samples' mean is more than twice off the
 * pool's own refills' mean making time. */
static bool far_from_refills(const struct costs *c)
{
	double m = tune_pool__mean_of(&c->make), r = c->refill_mean_s;

	return r > 0 && (m > 2 * r || 2 * m < r);
}

/* Whether the costs were measured at an arrival rate more than twice
 * off the one simulated: making and miss times depend on the load they
 * were measured under (misses and refills share the host's CPUs). */
static bool far_from_load(const struct costs *c, const struct arrivals *a)
{
	double m = c->measured_rate, r = arrivals__mean_rate(a);

	return m > 0 && r > 0 && (m > 2 * r || 2 * m < r);
}

static void md_load(FILE *f, const struct tp_opts *o, const struct costs *c,
		    const struct arrivals *a)
{
	if (far_from_load(c, a))
		fprintf(f, "Warning: the costs were measured at %.3g arrivals/s "
			"(pool.json: pool.offered_rate), the simulation runs "
			"at %.3g/s: making and miss times depend on the load "
			"they were measured under, since misses and refills "
			"share the host's CPUs. Measure them at this load "
			"(`coldstart bench pool --arrivals %s --out DIR`, then "
			"`--host DIR`).\n\n", c->measured_rate,
			arrivals__mean_rate(a), o->arrivals_text);
}

static void md_costs(FILE *f, const struct costs *c)
{
	fprintf(f, "## Costs\n\n%s, resampled uniformly with the seed:\n\n",
		c->given ? "**Given (--costs or --cost), not measured on a "
			   "host**: what if a VM cost this"
			 : "From the raw samples");
	fprintf(f, ""
		"- hit latency (arrival -> first instruction, VM held): %s, "
		"mean %.3f ms\n"
		"- miss latency (the request makes its VM): %s, mean %.3f ms\n"
		"- making time of one refill: %s, mean %.3f ms\n"
		"- memory per VM held or being made: %s (%.2f MiB)\n"
		"- refill workers: %u; on empty: %s\n\n",
		c->hit.from, tune_pool__mean_of(&c->hit) * 1e3, c->miss.from,
		tune_pool__mean_of(&c->miss) * 1e3, c->make.from, tune_pool__mean_of(&c->make) * 1e3,
		c->mem_from, c->vm_mib, c->workers,
		c->wait_on_empty ? "wait for a refill" : "make (a miss)");
	if (c->make.n == 1)
		fputs("Warning: the making time is one mean, not samples: "
		      "refills are simulated as deterministic.\n\n", f);
	else if (far_from_refills(c))
		fprintf(f, "Warning: the making-time samples average %.3f ms, "
			"the pool's own refills %.3f ms (pool.stats.make_s): "
			"they were measured under other load, so refills are "
			"simulated %s than the pool measured.\n\n",
			tune_pool__mean_of(&c->make) * 1e3, c->refill_mean_s * 1e3,
			tune_pool__mean_of(&c->make) > c->refill_mean_s ? "slower"
							      : "faster");
}

/* A policy that meets nothing: the closest it came, and the fixed pool
 * that does meet the SLO, if one does (never a silent miss). */
static void md_unmet(FILE *f, const struct sweep *sw, const struct slo *slo,
		     int p, size_t n)
{
	const struct cand *x = tune_pool__closest(sw, p, slo);
	char m[32];

	metric_text(m, sizeof(m), slo, x ? x->metric : 0);
	fprintf(f, "| %s | %zu | none meets the SLO%s%s: closest %s with %s",
		poolsim__policy_name(p), n,
		sw->best[POOL_FIXED] >= 0 ? ", though fixed " : "",
		sw->best[POOL_FIXED] >= 0 ? sw->c[sw->best[POOL_FIXED]].label
					  : "", m, x ? x->label : "");
	fprintf(f, " | %.2f %% | %.3f ms | %s | %.1f | %.1f |\n",
		x ? 100 * x->hit_ratio : 0, x ? x->p[2] * 1e3 : 0, m,
		x ? x->idle_vm_s : 0, x ? x->peak_mib : 0);
}

static void md_table(FILE *f, const struct sweep *sw, const struct slo *slo)
{
	char m[32];

	fprintf(f, "## Cheapest configuration per policy meeting %s%s\n\n"
		"| policy | configurations | best configuration | hit ratio | "
		"p99 | %s | idle VM-s | peak MiB |\n"
		"|---|---|---|---|---|---|---|---|\n", slo->text,
		sw->ho.n_test ? " on both parts" : "",
		slo->hits ? "hits" : "SLO metric");
	for (int k = 0; k < POOLSIM_POLICIES; k++) {
		int p = poolsim__policy_at(k);
		size_t n = 0;
		const struct cand *x;

		for (size_t i = 0; i < sw->n; i++)
			n += sw->c[i].cfg.policy == p;
		if (!n)
			continue;
		if (sw->best[p] < 0) {
			md_unmet(f, sw, slo, p, n);
			continue;
		}
		x = &sw->c[sw->best[p]];
		metric_text(m, sizeof(m), slo, x->metric);
		fprintf(f, "| %s | %zu | %s | %.2f %% | %.3f ms | %s | %.1f | "
			"%.1f |\n", poolsim__policy_name(p), n, x->label,
			100 * x->hit_ratio, x->p[2] * 1e3, m, x->idle_vm_s,
			x->peak_mib);
	}
	fprintf(f, "\nPools swept up to %u VMs; the bound is %u (%s): a "
		"policy that meets nothing is swept on to larger pools up to "
		"it.\n\n", sw->max, sw->bound, sw->bound_from);
}

/* Nothing meets the SLO: what it would take. */
static void md_would_take(FILE *f, const struct sweep *sw,
			  const struct costs *c, const struct slo *slo)
{
	double floor_s = tune_pool__hits_floor(c, slo);
	const struct cand *x = tune_pool__closest(sw, POOL_FIXED, slo);
	char m[32];

	if (!slo->hits && floor_s > slo->goal) {
		fprintf(f, "What it would take: faster hits. Even a pool that "
			"never misses starts requests at p%g = %.3f ms (the "
			"hit latencies alone), above the SLO's %.3f ms; no "
			"pool size changes that.\n\n", slo->pct, floor_s * 1e3,
			slo->goal * 1e3);
		return;
	}
	if (x && x->cfg.params.fixed.n >= sw->bound) {
		metric_text(m, sizeof(m), slo, x->metric);
		fprintf(f, "What it would take: more than %u warm VMs (%.1f "
			"MiB), the bound (%s): at %u the SLO metric is %s. "
			"Raise the bound, or relax the SLO.\n\n", sw->bound,
			sw->bound * c->vm_mib, sw->bound_from, sw->bound, m);
		return;
	}
	fputs("What it would take: a larger pool does not get there (the "
	      "misses come from refills that cannot keep up): add refill "
	      "workers (--workers), make VMs faster, or relax the SLO.\n\n",
	      f);
}

/* load_off: the costs come from another load (far_from_load) */
static void md_recommendation(FILE *f, const struct sweep *sw,
			      const struct costs *c, const struct slo *slo,
			      bool load_off, const char *dir)
{
	const struct cand *x, *alt;
	char *cmd;

	fputs("## Recommendation\n\n", f);
	if (sw->rec < 0) {
		fprintf(f, "No configuration meets %s among the %zu simulated%s. "
			"%s the SLO, add refill workers (--workers), or see "
			"pareto.csv for what each configuration reaches; the "
			"closest per policy is in the table above.\n\n",
			slo->text, sw->n, sw->ho.n_test ? " on both parts" : "",
			load_off ? "First measure the costs "
			"at this load (the warning above): under a heavier one "
			"VMs are made slower. Else relax" : "Relax");
		md_would_take(f, sw, c, slo);
		return;
	}
	x = &sw->c[sw->rec];
	fprintf(f, "**%s %s**: %.1f idle VM-seconds, peak %.1f MiB (%u VMs), "
		"hit ratio %.2f %%, p99 %.3f ms.\n\n", poolsim__policy_name(
			x->cfg.policy), x->label, x->idle_vm_s, x->peak_mib,
		x->peak_pool, 100 * x->hit_ratio, x->p[2] * 1e3);
	if (tune_pool__applies(x)) {
		cmd = tune_pool__command(c, x, dir);
		fprintf(f, "Apply it with:\n\n    %s\n\n", cmd ? cmd : "");
		free(cmd);
		return;
	}
	fprintf(f, "The %s policy is simulated only: `coldstart pool` has "
		"fixed, follow and marginal. ",
		poolsim__policy_name(x->cfg.policy));
	alt = best_applicable(sw);
	if (!alt) {
		fputs("No fixed, follow or marginal configuration meets the SLO, so no "
		      "pool command applies.\n\n", f);
		return;
	}
	cmd = tune_pool__command(c, alt, dir);
	fprintf(f, "The closest that `coldstart pool` applies (%s %s, %.1f "
		"idle VM-seconds):\n\n    %s\n\n", poolsim__policy_name(
			alt->cfg.policy), alt->label, alt->idle_vm_s,
		cmd ? cmd : "");
	free(cmd);
}

static void md_budget(FILE *f, const struct sweep *sw, const struct costs *c,
		      uint64_t budget)
{
	double mib = (double)budget / (double)MiB;

	fprintf(f, "## Memory budget %.0f MiB\n\n", mib);
	fprintf(f, "- warm VMs that fit: %.0f (%.2f MiB each)\n",
		floor(mib / c->vm_mib), c->vm_mib);
	if (sw->rec >= 0 && sw->c[sw->rec].peak_mib > 0)
		fprintf(f, "- pools of the recommendation that fit at their "
			"peak (%.1f MiB): %.0f\n\n", sw->c[sw->rec].peak_mib,
			floor(mib / sw->c[sw->rec].peak_mib));
	else if (sw->rec >= 0)
		fputs("- the recommendation holds no VM at its peak: any "
		      "number of such pools fit\n\n", f);
	else
		fputs("- pools: no recommendation to size\n\n", f);
}

static char *markdown(const struct tp_opts *o, const struct costs *c,
		      const struct arrivals *a, const struct sweep *sw,
		      const struct validation *v)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	fputs("# coldstart tune pool\n\n", f);
	if (c->emulated)
		fprintf(f, "**Warning: the costs were measured inside an "
			"emulated host (%s); its latencies and making times "
			"are not those of real hardware, and neither is this "
			"recommendation.**\n\n", c->emulated);
	fprintf(f, "Results: %s; arrivals: %s (%zu over %.1f s, %.3f/s); "
		"SLO: %s; seed %llu; %zu configurations, target bound %u.\n\n",
		o->host ? o->host : "none (costs given)", a->desc, a->n, a->span_s, arrivals__mean_rate(a),
		o->slo.text, (unsigned long long)o->seed, sw->n, sw->max);
	md_costs(f, c);
	md_load(f, o, c, a);
	tune_pool__md_holdout(f, sw, &o->slo);
	md_table(f, sw, &o->slo);
	md_recommendation(f, sw, c, &o->slo, far_from_load(c, a), o->out_dir);
	if (o->budget_set)
		md_budget(f, sw, c, o->budget);
	if (v)
		tune_pool__md_validation(f, v, tune_pool__mean_of(&c->make));
	/* the files are named only where they are written, the plot only
	 * when gnuplot can draw it */
	if (o->out_dir)
		fprintf(f, "Every configuration's outcome: tune-pool.json; the "
			"Pareto frontier (SLO metric against idle "
			"VM-seconds): pareto.csv%s.\n", plot__available()
			? ", pareto.png" : "");
	fclose(f);
	return text;
}

/* dir: x's configuration is dir/tune-pool.json's "pool_config" */
static json_t *cand_json(const struct cand *x, const struct costs *c,
			 const char *dir)
{
	char *cmd = tune_pool__command(c, x, dir);
	json_t *j = json_pack("{s:s, s:s, s:I, s:I, s:I, s:f, s:{s:f, s:f, s:f, "
			 "s:f}, s:f, s:f, s:I, s:f, s:b, s:b, s:s?}",
			 "policy", poolsim__policy_name(x->cfg.policy),
			 "params", x->label, "hits", (json_int_t)x->hits,
			 "misses", (json_int_t)x->misses, "waits",
			 (json_int_t)x->waits, "hit_ratio", x->hit_ratio,
			 "latency_s", "p50", x->p[0], "p90", x->p[1], "p99",
			 x->p[2], "p99_9", x->p[3], "idle_vm_s", x->idle_vm_s,
			 "peak_mib", x->peak_mib, "peak_vms",
			 (json_int_t)x->peak_pool, "slo_metric", x->metric,
			 "meets_slo", x->meets, "pareto", x->frontier,
			 "pool_command", cmd && *cmd ? cmd : NULL);

	free(cmd);
	return j;
}

/* cand_json, with the held-out part's outcome under --holdout */
static json_t *cand_json_ho(const struct cand *x, const struct costs *c,
			    const char *dir, const struct sweep *sw)
{
	json_t *j = cand_json(x, c, dir);

	if (j && sw->ho.n_test)
		json_object_set_new(j, "holdout", json_pack(
			"{s:b, s:b, s:f, s:f, s:f}", "meets_slo_tuning",
			x->tune_meets, "meets_slo_held_out", x->test_meets,
			"slo_metric_held_out", x->test_metric,
			"idle_vm_s_held_out", x->test_idle_vm_s,
			"hit_ratio_held_out", x->test_hit_ratio));
	return j;
}

static json_t *document(const struct tp_opts *o, const struct costs *c,
			const struct arrivals *a, const struct sweep *sw,
			const struct validation *v)
{
	json_t *doc = result__new("tune-pool", json_pack(
		"{s:s?, s:s, s:s, s:f, s:f, s:I, s:s, s:I, s:b, s:I, s:I, s:I, "
		"s:s}", "host", o->host, "arrivals", o->arrivals_text, "arrivals_desc",
		a->desc, "duration_s", a->span_s, "time_scale", o->time_scale,
		"seed", (json_int_t)o->seed, "slo", o->slo.text, "workers",
		(json_int_t)c->workers, "wait_on_empty", c->wait_on_empty,
		"max", (json_int_t)sw->max, "count", (json_int_t)a->n,
		"bound", (json_int_t)sw->bound, "bound_from", sw->bound_from));
	json_t *all = json_array();

	if (!doc || !all)
		goto fail;
	for (size_t i = 0; i < sw->n; i++)
		if (json_array_append_new(all, cand_json_ho(&sw->c[i], c,
							    NULL, sw)) < 0)
			goto fail;
	if (json_object_set_new(doc, "costs", json_pack(
		    "{s:s, s:s, s:s, s:s, s:f, s:s?, s:b}", "hit", c->hit.from,
		    "miss", c->miss.from, "make", c->make.from, "memory",
		    c->mem_from, "vm_mib", c->vm_mib, "emulated",
		    c->emulated, "given", c->given)) < 0 ||
	    json_object_set_new(doc, "configurations", all) < 0)
		goto fail;
	all = NULL;
	json_object_set_new(doc, "recommendation",
			    sw->rec < 0 ? json_null()
					: cand_json_ho(&sw->c[sw->rec], c,
						       o->out_dir, sw));
	if (sw->rec >= 0 && !tune_pool__applies(&sw->c[sw->rec]) &&
	    best_applicable(sw))
		json_object_set_new(doc, "applicable",
				    cand_json(best_applicable(sw), c,
					      o->out_dir));
	/* what `pool --config tune-pool.json` runs */
	if (applied(sw))
		json_object_set_new(doc, "pool_config",
				    tune_pool__config_json(c, applied(sw)));
	if (o->budget_set && sw->rec >= 0)
		json_object_set_new(doc, "memory_budget", json_pack(
			"{s:I, s:f, s:f}", "bytes", (json_int_t)o->budget,
			"warm_vms", floor((double)o->budget / (double)MiB /
					  c->vm_mib),
			"pools", sw->c[sw->rec].peak_mib > 0
				? floor((double)o->budget / (double)MiB /
					sw->c[sw->rec].peak_mib)
				: -1.0));
	if (sw->ho.n_test)
		json_object_set_new(doc, "holdout",
				    tune_pool__holdout_json(sw, o));
	if (c->given)
		result__warn(doc, "the costs were given (--costs or --cost), "
			     "not measured on a host");
	if (v)
		json_object_set_new(doc, "validation",
				    tune_pool__validation_json(v, o->out_dir));
	if (v && *v->emulated)
		result__warn(doc, "validation measured on an emulated host "
			     "(%s): its latencies differ from real hardware's",
			     v->emulated);
	if (c->emulated)
		result__warn(doc, "the costs come from an emulated host (%s): "
			     "the recommendation does not hold for real "
			     "hardware", c->emulated);
	if (far_from_load(c, a))
		result__warn(doc, "the costs were measured at %.3g arrivals/s, "
			     "the simulation runs at %.3g/s: making and miss "
			     "times depend on load", c->measured_rate,
			     arrivals__mean_rate(a));
	if (c->make.n == 1)
		result__warn(doc, "the making time is one mean "
			     "(pool.stats.make_s), not samples");
	else if (far_from_refills(c))
		result__warn(doc, "the making-time samples average %.3f ms, "
			     "the pool's own refills %.3f ms (pool.stats."
			     "make_s)", tune_pool__mean_of(&c->make) * 1e3,
			     c->refill_mean_s * 1e3);
	return doc;
fail:
	json_decref(all);
	json_decref(doc);
	return NULL;
}

static void csv_row(FILE *f, const struct cand *x)
{
	fprintf(f, "%s,%s,%.6f,%.9g,%.4f,%.6f,%.3f,%d,%d\n",
		poolsim__policy_name(x->cfg.policy), x->label, x->idle_vm_s,
		x->metric, 100 * x->hit_ratio, x->p[2] * 1e3, x->peak_mib,
		x->meets, x->frontier);
}

/* pareto.csv: every configuration, "pareto" 1 on the frontier; the
 * frontier's rows first, by idle VM-seconds, so that a plot draws them
 * as one line (n is ~200: a selection sort will do). */
static int write_csv(const char *dir, const struct sweep *sw)
{
	bool *done = calloc(sw->n ? sw->n : 1, sizeof(bool));
	struct output_text t;
	int ret = done ? output__text_open(&t)
		       : err__set(ENOMEM, "building pareto.csv");

	if (ret < 0) {
		free(done);
		return ret;
	}
	fputs("policy,params,idle_vm_s,slo_metric,hit_pct,p99_ms,peak_mib,"
	      "meets_slo,pareto\n", t.f);
	for (;;) {
		ssize_t next = -1;

		for (size_t i = 0; i < sw->n; i++)
			if (sw->c[i].frontier && !done[i] &&
			    (next < 0 || tune_pool__cheaper(&sw->c[i], &sw->c[next])))
				next = (ssize_t)i;
		if (next < 0)
			break;
		done[next] = true;
		csv_row(t.f, &sw->c[next]);
	}
	for (size_t i = 0; i < sw->n; i++)
		if (!done[i])
			csv_row(t.f, &sw->c[i]);
	free(done);
	return output__text_write(&t, dir, "pareto.csv");
}

static void draw(const char *dir, const struct slo *slo)
{
	char vars[512];

	if (!plot__available())
		return;
	snprintf(vars, sizeof(vars), "in='pareto.csv'; fmt='png'; "
		 "hits=%d; goal=%.9g; slo='%s'", slo->hits,
		 slo->hits ? slo->goal : slo->goal * 1e3, slo->text);
	if (plot__run(dir, "pareto", vars, "pareto.png") < 0)
		fprintf(stderr, "coldstart: warning: %s\n", err__last());
}

int tune_pool__outputs(const struct tp_opts *o, const struct costs *c,
		   const struct arrivals *a, const struct sweep *sw,
		   const struct validation *v)
{
	json_t *doc = document(o, c, a, sw, v);
	char *md = markdown(o, c, a, sw, v);
	int ret = doc && md ? 0 : -ENOMEM;

	if (ret == 0 && o->json)
		result__print_json(stdout, doc);
	else if (ret == 0)
		fputs(md, stdout);
	if (v && *v->emulated)
		fprintf(stderr, "coldstart: warning: validation measured on "
			"an emulated host (%s): its results differ from real "
			"hardware's\n", v->emulated);
	if (c->emulated)
		fprintf(stderr, "coldstart: warning: costs from an emulated "
			"host (%s): the recommendation does not hold for real "
			"hardware\n", c->emulated);
	if (far_from_load(c, a))
		fprintf(stderr, "coldstart: warning: the costs were measured "
			"at %.3g arrivals/s, the simulation runs at %.3g/s: "
			"measure them at this load for a recommendation that "
			"holds\n", c->measured_rate, arrivals__mean_rate(a));
	if (ret == 0 && o->out_dir && v)
		ret = tune_pool__write_validation(o->out_dir, v);
	if (ret == 0 && o->out_dir)
		ret = result__write(doc, o->out_dir, md);
	if (ret == 0 && o->out_dir)
		ret = write_csv(o->out_dir, sw);

	if (ret == 0 && o->out_dir) {
		draw(o->out_dir, &o->slo);
		if (!o->json)
			printf("results written to %s/\n", o->out_dir);
		report__join("tune pool", o->out_dir, o->json);
	}
	free(md);
	json_decref(doc);
	return ret;
}
