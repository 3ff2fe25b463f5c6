/* `coldstart tune host`: its report (Markdown, also on stdout), its JSON
 * document, and the files --out writes. */
#include "tune_host.h"
#include "tune_host_int.h"

#include "result_new.h"

#include "err.h"
#include "output.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The functions the report lists one by one, the busiest first. */
#define TH_TOP 20

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static void policy_label(const struct th_run *run, int p, char *buf,
			 size_t size)
{
	if (p == HOSTSIM_OURS)
		snprintf(buf, size, "ours (price %g)", run->pol[p].price);
	else if (p == HOSTSIM_KEEPALIVE)
		snprintf(buf, size, "keepalive (%u min)", run->o->keepalive);
	else
		snprintf(buf, size, "%s",
			 hostsim__policy_name((enum hostsim_policy)p));
}

/* Ours against greedy-dual: fewer cold starts at the budget, and less
 * memory for greedy-dual's cold starts: ours's peak at the least budget
 * that reaches them against greedy-dual's peak. */
static void versus_gd(const struct th_run *run, double *fewer, double *less)
{
	const struct hostsim_result *o = &run->pol[HOSTSIM_OURS].r;
	const struct hostsim_result *g = &run->pol[HOSTSIM_GREEDY_DUAL].r;

	*fewer = g->cold ? 100.0 * (1 - (double)o->cold / (double)g->cold)
			 : 0;
	*less = run->ours_for_gd.mib >= 0 && g->peak_mib > 0
			? 100.0 * (1 - run->ours_for_gd.peak_mib / g->peak_mib)
			: NAN;
}

static int cmp_busiest(const void *a, const void *b, void *ctx)
{
	const struct hostsim_fn *per = ctx;
	uint64_t x = per[*(const size_t *)a].invocations;
	uint64_t y = per[*(const size_t *)b].invocations;

	return x < y ? 1 : x > y ? -1 : 0;
}

static void window_text(const struct hostsim_fn *f, char *buf, size_t size)
{
	if (f->win_lo == 0)
		snprintf(buf, size, "none");
	else if (f->win_lo == 1)
		snprintf(buf, size, "keep %u min", f->win_hi);
	else
		snprintf(buf, size, "pre-warm at +%u, keep to +%u min",
			 f->win_lo, f->win_hi);
}

static void md_policies(const struct th_run *run, FILE *f)
{
	fputs("| policy | cold starts | cold % | peak MiB | idle GiB-s | "
	      "mean start ms | budget for ours's cold starts (MiB) |\n"
	      "|---|---:|---:|---:|---:|---:|---:|\n", f);
	for (int p = 0; p < HOSTSIM_POLICIES; p++) {
		const struct hostsim_result *r = &run->pol[p].r;
		char label[64], need[32];

		policy_label(run, p, label, sizeof(label));
		if (run->pol[p].need.mib < 0)
			snprintf(need, sizeof(need), "not reached");
		else
			snprintf(need, sizeof(need), "%.0f (peak %.0f)",
				 run->pol[p].need.mib,
				 run->pol[p].need.peak_mib);
		fprintf(f, "| %s | %" PRIu64 " | %.2f | %.0f | %.0f | %.2f | "
			"%s |\n", label, r->cold, pct(r->cold, r->invocations),
			r->peak_mib, r->idle_gib_s,
			r->invocations ? 1e3 * r->start_s /
						 (double)r->invocations : 0,
			need);
	}
}

/* Ours's figures for guest type k: its functions' invocations, cold
 * starts, idle GiB-s and the memory its VMs held on average (busy and
 * idle; overflowing VMs too), its share of the budget. */
struct share {
	uint64_t inv, cold;
	double idle_gib_s, mean_mib;
};

static struct share guest_share(const struct th_run *run, size_t k)
{
	const struct fn_trace *t = &run->t;
	struct share sh = { 0 };
	double mib_min = 0;

	for (size_t i = 0; i < t->nfn; i++) {
		if (run->gs.fn_type[i] != k)
			continue;
		sh.inv += run->per[i].invocations;
		sh.cold += run->per[i].cold;
		mib_min += run->per[i].idle_mib_min;
		sh.idle_gib_s += run->per[i].idle_mib_min * 60.0 / 1024.0;
		for (size_t m = 0; m < t->nmin; m++)
			if (t->count[i * t->nmin + m])
				mib_min += run->gs.fn[i].mem_mib;
	}
	sh.mean_mib = mib_min / (double)t->nmin;
	return sh;
}

static void md_guests(const struct th_run *run, FILE *f)
{
	fputs("\n| guest | MiB per VM | cold ms | warm ms | functions | "
	      "invocations | cold starts | idle GiB-s | mean MiB held |\n"
	      "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n", f);
	for (size_t k = 0; k < run->gs.ntype; k++) {
		const struct hostsim_type *ty = &run->gs.type[k];
		struct share sh = guest_share(run, k);

		fprintf(f, "| %s | %g | %g | %g | %zu | %" PRIu64 " | %" PRIu64
			" | %.0f | %.0f |\n", ty->name, ty->g.mem_mib,
			ty->g.cold_s * 1e3, ty->g.hit_s * 1e3, ty->nfn, sh.inv,
			sh.cold, sh.idle_gib_s, sh.mean_mib);
	}
}

static int md_functions(const struct th_run *run, FILE *f)
{
	size_t n = run->t.nfn, *order = malloc(n * sizeof(*order));

	if (!order)
		return err__set(ENOMEM, "tune host: out of memory");
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), cmp_busiest, run->per);
	fprintf(f, "\nThe %sfunctions, busiest first (every one is in "
		"tune-host.json):\n\n| function | guest | invocations | "
		"cold starts | window after a busy minute |\n"
		"|---|---|---:|---:|---|\n", n > TH_TOP ? "20 busiest " : "");
	for (size_t j = 0; j < n && j < TH_TOP; j++) {
		const struct hostsim_fn *p = &run->per[order[j]];
		char w[64];

		window_text(p, w, sizeof(w));
		fprintf(f, "| %s | %s | %" PRIu64 " | %" PRIu64 " | %s |\n",
			run->t.name[order[j]],
			run->gs.type[run->gs.fn_type[order[j]]].name,
			p->invocations, p->cold, w);
	}
	free(order);
	return 0;
}

int tune_host__markdown(const struct th_run *run, FILE *f)
{
	const struct hostsim_result *o = &run->pol[HOSTSIM_OURS].r;
	double fewer, less;

	versus_gd(run, &fewer, &less);
	fprintf(f, "# tune host\n\nTrace %s (%s): %zu functions, %zu "
		"minutes, %" PRIu64 " invocations. %zu guest type%s (%s). "
		"Memory budget %.0f MiB (every function's VM at once: %.0f "
		"MiB; the busiest minute's busy VMs: %.0f MiB).\n\n",
		run->o->trace,
		arrivals__format_name(run->t.format), run->t.nfn, run->t.nmin,
		o->invocations, run->gs.ntype, run->gs.ntype == 1 ? "" : "s",
		run->o->guests ? run->o->guests : "--mem, --cold, --warm",
		run->budget_mib, run->all_mib, run->busy_mib);
	if (run->busy_mib > run->budget_mib)
		fputs("The busy VMs alone need more than the budget: every "
		      "policy runs them over it (overflows), and keeps "
		      "little.\n\n", f);
	md_policies(run, f);
	fprintf(f, "\nAgainst greedy-dual at %.0f MiB: ours has %.1f %% %s "
		"cold starts", run->budget_mib, fabs(fewer),
		fewer < 0 ? "more" : "fewer");
	if (isnan(less))
		fprintf(f, "; ours does not reach greedy-dual's %" PRIu64
			" cold starts even with every VM held.\n",
			run->pol[HOSTSIM_GREEDY_DUAL].r.cold);
	else
		fprintf(f, ", and reaches greedy-dual's %" PRIu64 " cold starts "
			"with a budget of %.0f MiB (price %g), peaking at %.0f "
			"MiB: %.1f %% less than greedy-dual's peak of %.0f "
			"MiB.\n", run->pol[HOSTSIM_GREEDY_DUAL].r.cold,
			run->ours_for_gd.mib, run->ours_for_gd.price,
			run->ours_for_gd.peak_mib, less,
			run->pol[HOSTSIM_GREEDY_DUAL].r.peak_mib);
	fputs("\n## Recommendation: ours, per guest\n", f);
	md_guests(run, f);
	if (md_functions(run, f) < 0)
		return -ENOMEM;
	fprintf(f, "\nOurs keeps each function's VM in the window that "
		"saves the most cold starts for its idle memory, at one price "
		"for every function (%g cold starts per idle GiB-minute, %s); "
		"memory searched by bisection to 0.5 %%. %lu simulations, "
		"%.2f s.\n", run->pol[HOSTSIM_OURS].price,
		run->o->price_set ? "as --price gave it"
				  : "the best swept at the budget",
		run->sims, run->elapsed_s);
	return 0;
}

static json_t *result_json(const struct th_run *run, int p)
{
	const struct hostsim_result *r = &run->pol[p].r;
	json_t *j = json_pack(
		"{s:s, s:I, s:I, s:f, s:f, s:f, s:f, s:I, s:I}", "policy",
		hostsim__policy_name((enum hostsim_policy)p), "invocations",
		(json_int_t)r->invocations, "cold_starts", (json_int_t)r->cold,
		"cold_pct", pct(r->cold, r->invocations), "peak_mib",
		r->peak_mib, "idle_gib_s", r->idle_gib_s, "start_s", r->start_s,
		"evictions", (json_int_t)r->evictions, "overflows",
		(json_int_t)r->overflow);

	if (!j)
		return NULL;
	json_object_set_new(j, "mib_for_ours_cold_starts",
			    run->pol[p].need.mib < 0
				    ? json_null()
				    : json_real(run->pol[p].need.mib));
	json_object_set_new(j, "peak_mib_there",
			    run->pol[p].need.mib < 0
				    ? json_null()
				    : json_real(run->pol[p].need.peak_mib));
	if (p == HOSTSIM_OURS)
		json_object_set_new(j, "price", json_real(run->pol[p].price));
	if (p == HOSTSIM_KEEPALIVE)
		json_object_set_new(j, "keepalive_min",
				    json_integer(run->o->keepalive));
	return j;
}

static json_t *functions_json(const struct th_run *run)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < run->t.nfn; i++) {
		const struct hostsim_fn *p = &run->per[i];
		json_t *name = output__json_string(run->t.name[i]);

		if (!name || json_array_append_new(a, json_pack(
			"{s:o, s:s, s:I, s:I, s:f, s:i, s:i}", "function", name,
			"guest", run->gs.type[run->gs.fn_type[i]].name,
			"invocations", (json_int_t)p->invocations,
			"cold_starts", (json_int_t)p->cold, "idle_gib_s",
			p->idle_mib_min * 60.0 / 1024.0, "window_from_min",
			(int)p->win_lo, "window_to_min", (int)p->win_hi))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *guests_json(const struct th_run *run)
{
	json_t *a = json_array();

	for (size_t k = 0; a && k < run->gs.ntype; k++) {
		const struct hostsim_type *ty = &run->gs.type[k];
		struct share sh = guest_share(run, k);

		if (json_array_append_new(a, json_pack(
			"{s:s, s:f, s:f, s:f, s:f, s:I, s:{s:I, s:I, s:f, s:f}}",
			"name", ty->name, "mem_mib", ty->g.mem_mib, "cold_ms",
			ty->g.cold_s * 1e3, "hit_ms", ty->g.hit_s * 1e3,
			"idle_weight", ty->g.idle_weight, "functions",
			(json_int_t)ty->nfn, "ours", "invocations",
			(json_int_t)sh.inv, "cold_starts", (json_int_t)sh.cold,
			"idle_gib_s", sh.idle_gib_s, "mean_mib_held",
			sh.mean_mib))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

json_t *tune_host__json(const struct th_run *run)
{
	json_t *doc, *pols = json_array();
	double fewer, less;

	versus_gd(run, &fewer, &less);
	for (int p = 0; pols && p < HOSTSIM_POLICIES; p++)
		if (json_array_append_new(pols, result_json(run, p))) {
			json_decref(pols);
			pols = NULL;
		}
	/* a result document's head (schema, bench, sysinfo), so that a
	 * results directory it is written into still compares, exports and
	 * reports (as a tuner's document), and then what tune host found */
	doc = result__new("tune-host", NULL);
	if (doc && json_object_update_new(doc, json_pack(
			"{s:s, s:{s:o, s:s, s:I, s:I, s:I}, s:f, s:f, s:f, s:o, "
			"s:o, s:o, s:{s:f, s:o, s:o, s:o}, s:I, s:f}",
			"tool", "tune host", "trace", "path",
			output__json_string(run->o->trace), "format",
			arrivals__format_name(run->t.format), "functions",
			(json_int_t)run->t.nfn, "minutes",
			(json_int_t)run->t.nmin, "invocations",
			(json_int_t)run->pol[0].r.invocations, "budget_mib",
			run->budget_mib, "all_vms_mib", run->all_mib,
			"busy_peak_mib", run->busy_mib,
			"guests", guests_json(run), "policies", pols,
			"functions", functions_json(run), "versus_greedy_dual",
			"fewer_cold_starts_pct", fewer, "mib_for_its_cold_starts",
			run->ours_for_gd.mib < 0
				? json_null()
				: json_real(run->ours_for_gd.mib),
			"peak_mib_there",
			run->ours_for_gd.mib < 0
				? json_null()
				: json_real(run->ours_for_gd.peak_mib),
			"less_memory_pct",
			isnan(less) ? json_null() : json_real(less),
			"simulations", (json_int_t)run->sims, "elapsed_s",
			run->elapsed_s)) < 0) {
		json_decref(doc);
		doc = NULL;
	}
	if (doc) { /* simulated: it ran no guest, no seccomp filter */
		json_object_del(doc, "guest");
		json_object_del(doc, "seccomp");
	}
	if (!doc)
		err__set(ENOMEM, "tune host: building the document");
	return doc;
}

static int print_json(const json_t *doc)
{
	char *text = json_dumps(doc, JSON_INDENT(2));

	if (!text)
		return err__set(ENOMEM, "tune host: out of memory");
	puts(text);
	free(text);
	return 0;
}

int tune_host__outputs(const struct th_run *run)
{
	json_t *doc = tune_host__json(run);
	struct output_text t;
	int err = doc ? 0 : -ENOMEM;

	if (err == 0 && run->o->json)
		err = print_json(doc);
	else if (err == 0)
		err = tune_host__markdown(run, stdout);
	if (err == 0 && run->o->out_dir) {
		err = output__mkdirs(run->o->out_dir);
		if (err < 0)
			err = err__sys(-err, "creating %s", run->o->out_dir);
		if (err == 0)
			err = output__write_json(run->o->out_dir,
						 "tune-host.json", doc);
		if (err == 0)
			err = output__text_open(&t);
		if (err == 0 && tune_host__markdown(run, t.f) < 0) {
			fclose(t.f);
			free(t.text);
			err = -ENOMEM;
		} else if (err == 0) {
			err = output__text_write(&t, run->o->out_dir,
						 "tune-host.md");
		}
	}
	json_decref(doc);
	return err;
}
