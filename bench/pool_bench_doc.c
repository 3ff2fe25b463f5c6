/* The pool benchmark's result document and its Markdown report. */
#include "pool_bench.h"
#include "pool_bench_int.h"

#include "err.h"
#include "result.h"
#include "result_new.h"
#include "serve.h"
#include "stats.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

/* ---- the document ---- */

/* To what a latency series runs from arrival. */
enum to { TO_DONE, TO_FIRST_RUN, TO_FIRST_OUTPUT };

static double latency(const struct pool_outcome *x, enum to to)
{
	return to == TO_FIRST_RUN ? x->first_ns
	       : to == TO_DONE	  ? x->done_ns
				  : x->output_ns;
}

static int add_latency(json_t *doc, const struct run *r, enum to to,
		       int hit)
{
	static const char *const what[] = {
		[TO_DONE] = "arrival_to_done",
		[TO_FIRST_RUN] = "arrival_to_first_run",
		[TO_FIRST_OUTPUT] = "arrival_to_first_output",
	};
	static const char *const param[] = {
		[TO_DONE] = "done", [TO_FIRST_RUN] = "first_run",
		[TO_FIRST_OUTPUT] = "first_output",
	};
	size_t n = 0;
	double *v = malloc((r->arr->n ? r->arr->n : 1) * sizeof(double));
	char name[64];
	json_t *s;

	if (!v)
		return err__set(ENOMEM, "allocating samples");
	for (size_t i = 0; i < r->arr->n; i++) {
		const struct pool_outcome *x = &r->load.out[i];

		/* a command with no output has no first output byte */
		if (x->ok && (hit < 0 || x->hit == (bool)hit) &&
		    latency(x, to) > 0)
			v[n++] = latency(x, to);
	}
	snprintf(name, sizeof(name), "%s.%s", what[to],
		 hit < 0 ? "all" : hit ? "hit" : "miss");
	s = result__add_series(doc, name, "ns", RESULT_LOWER,
			       json_pack("{s:s, s:s}", "to", param[to],
					 "requests",
					 hit < 0 ? "all" : hit ? "hit" : "miss"),
			       v, n);
	free(v);
	return s ? 0 : -ENOMEM;
}

static double median(const double *v, size_t n)
{
	struct summary sm;

	return n && stats__summarize(v, n, &sm) == 0 ? sm.p50 : 0;
}

/* The baselines' series, and the ratios the pool is judged by: a hit's
 * arrival -> first instruction against a fresh restore's restore start ->
 * first instruction, and a fresh restore against one into a shell. */
static int add_baselines(json_t *doc, const struct pb_opts *o,
			 const struct run *r)
{
	double *hit = malloc((r->arr->n ? r->arr->n : 1) * sizeof(double));
	double f = median(r->fresh, o->baseline);
	double sh = median(r->shell, o->baseline), h;
	size_t n = 0;
	int ret = 0;

	if (!hit)
		return err__set(ENOMEM, "allocating samples");
	for (size_t i = 0; i < r->arr->n; i++)
		if (r->load.out[i].ok && r->load.out[i].hit)
			hit[n++] = r->load.out[i].first_ns;
	h = median(hit, n);
	free(hit);
	if (!result__add_series(doc, "baseline.fresh_restore_to_first_run",
				"ns", RESULT_LOWER,
				json_pack("{s:s}", "restore", "fresh VM"),
				r->fresh, o->baseline) ||
	    !result__add_series(doc, "baseline.shell_restore_to_first_run",
				"ns", RESULT_LOWER,
				json_pack("{s:s}", "restore", "into a shell"),
				r->shell, o->baseline))
		ret = -ENOMEM;
	if (ret == 0 && json_object_set_new(doc, "ratios", json_pack(
			"{s:o, s:o}", "hit_first_run_vs_fresh_restore",
			n && f > 0 ? json_real(h / f) : json_null(),
			"fresh_restore_vs_shell_restore",
			sh > 0 ? json_real(f / sh) : json_null())) < 0)
		ret = -ENOMEM;
	return ret;
}

/* The refills' making times, raw (what `tune pool` resamples), taken
 * with the final counters. */
static int add_make_times(json_t *doc, const struct run *r)
{
	return result__add_series(doc, "refill.make", "ns", RESULT_LOWER,
				  json_pack("{s:s}", "what", "one VM made by "
					    "a refill thread"),
				  r->make_ns, r->nmake) ? 0 : -ENOMEM;
}

static json_t *memory_json(const struct memstat *before,
			   const struct memstat *after, unsigned int held,
			   const struct pool_config *pc)
{
	double k = held ? 1.0 / held : 0;
	long long rss = (long long)after->rss_kib - (long long)before->rss_kib;
	long long pss = (long long)after->pss_kib - (long long)before->pss_kib;
	long long uss = (long long)after->uss_kib - (long long)before->uss_kib;
	long long grss = (long long)after->guest_rss_kib -
			 (long long)before->guest_rss_kib;

	/* guest mappings are found by name, which only kernels built with
	 * CONFIG_ANON_VMA_NAME (5.17+) give anonymous memory: elsewhere
	 * only the totals are known */
	bool named = after->guest_rss_kib > 0;

	return json_pack("{s:I, s:f, s:f, s:f, s:o, s:o, s:I}", "held",
			 (json_int_t)held, "rss_kib_per_vm", rss * k,
			 "pss_kib_per_vm", pss * k, "uss_kib_per_vm", uss * k,
			 "guest_rss_kib_per_vm",
			 named ? json_real(grss * k) : json_null(),
			 "beyond_guest_rss_kib_per_vm",
			 named ? json_real((rss - grss) * k) : json_null(),
			 "guest_mem_kib",
			 (json_int_t)(pc->source == POOL_FROM_PROBE
					      ? pc->mem_size / 1024
					      : 0));
}

static json_t *occupancy_json(const struct run *r)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < r->nticks; i++) {
		const struct tick *t = &r->ticks[i];

		if (json_array_append_new(a, json_pack(
			    "[f, I, I, I, I]", t->t, (json_int_t)t->held,
			    (json_int_t)t->making, (json_int_t)t->target,
			    (json_int_t)t->arrived)) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *config_json(const struct pb_opts *o, const struct arrivals *a)
{
	json_t *c = pool_config__to_json(&o->pc);

	if (c && json_object_update_new(c, json_pack(
			 "{s:s, s:s, s:f, s:f, s:I, s:I, s:I}", "arrivals",
			 o->arrivals_text, "arrivals_desc", a->desc,
			 "duration_s", o->duration_s, "time_scale",
			 o->time_scale, "seed", (json_int_t)o->seed,
			 "concurrency", (json_int_t)o->concurrency, "count",
			 (json_int_t)a->n)) < 0) {
		json_decref(c);
		return NULL;
	}
	return c;
}

json_t *pool_bench__document(const struct pb_opts *o, const struct run *r,
			     const struct pool_stats *st,
			     const struct memstat *m0,
			     const struct memstat *m1, unsigned int held_full,
			     double wall_s)
{
	json_t *doc = result__new("pool", config_json(o, r->arr));
	uint64_t served = st->hits + st->misses + st->waits;
	int ret = 0;

	if (!doc)
		return NULL;
	/* a guest with an agent: also to its command's first output */
	for (int to = o->pc.exec ? TO_FIRST_OUTPUT : TO_FIRST_RUN;
	     to >= TO_DONE && ret == 0; to--)
		for (int hit = -1; hit <= 1 && ret == 0; hit++)
			ret = add_latency(doc, r, (enum to)to, hit);
	if (ret == 0 && r->fresh)
		ret = add_baselines(doc, o, r);
	if (ret == 0)
		ret = add_make_times(doc, r);
	if (ret == 0 && json_object_set_new(doc, "pool", json_pack(
			"{s:o*, s:f, s:I, s:f, s:f, s:f, s:o*, s:o*}", "stats",
			pool_serve__stats_json(st), "hit_ratio",
			served ? (double)st->hits / (double)served : 0.0,
			"failed", (json_int_t)r->load.failed, "wall_s", wall_s,
			"offered_rate", arrivals__mean_rate(r->arr),
			"refill_vms_per_s",
			st->make_s > 0 ? o->pc.workers / st->make_s : 0.0,
			"memory", memory_json(m0, m1, held_full, &o->pc),
			"occupancy", occupancy_json(r))) < 0)
		ret = -ENOMEM;
	if (ret == 0 && r->load.failed)
		result__warn(doc, "%" PRIu64 " requests failed; the first: %s",
			     r->load.failed, r->load.first_error);
	if (ret < 0) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

void pool_bench__report(FILE *out, const json_t *doc)
{
	const json_t *pool = json_object_get(doc, "pool");
	const json_t *st = json_object_get(pool, "stats");
	const json_t *mem = json_object_get(pool, "memory");
	const json_t *cfg = json_object_get(doc, "config");
	const json_t *series = json_object_get(doc, "series");
	char a[64], b[64];
	size_t i;
	json_t *s;

	fprintf(out, "# coldstart pool benchmark\n\n%s against a pool of %s "
		"VMs (%s, %s policy, size %" JSON_INTEGER_FORMAT ", %"
		JSON_INTEGER_FORMAT " refill thread(s), on empty: %s).\n\n",
		json_string_value(json_object_get(cfg, "arrivals_desc")),
		json_string_value(json_object_get(cfg, "hold")),
		json_string_value(json_object_get(cfg, "source")),
		json_string_value(json_object_get(cfg, "policy")),
		json_integer_value(json_object_get(cfg, "size")),
		json_integer_value(json_object_get(cfg, "workers")),
		json_string_value(json_object_get(cfg, "on_empty")));
	fprintf(out, "- hits %.1f %% (%" JSON_INTEGER_FORMAT " hits, %"
		JSON_INTEGER_FORMAT " misses, %" JSON_INTEGER_FORMAT
		" waited; %" JSON_INTEGER_FORMAT " failed)\n",
		100 * json_number_value(json_object_get(pool, "hit_ratio")),
		json_integer_value(json_object_get(st, "hits")),
		json_integer_value(json_object_get(st, "misses")),
		json_integer_value(json_object_get(st, "waits")),
		json_integer_value(json_object_get(pool, "failed")));
	json_array_foreach(series, i, s) {
		const char *name = json_string_value(json_object_get(s, "name"));
		double p50 = result__stat(s, "p50");

		if (!json_is_object(json_object_get(s, "summary")))
			continue;
		result__value_text(a, sizeof(a), "ns", p50, p50);
		result__value_text(b, sizeof(b), "ns", result__stat(s, "p99"),
				   p50);
		fprintf(out, "- %s: median %s, p99 %s (n %" JSON_INTEGER_FORMAT
			")\n", name, a, b,
			json_integer_value(json_object_get(
				json_object_get(s, "summary"), "n")));
	}
	fprintf(out, "- offered %.1f requests/s; refill capacity %.1f VMs/s "
		"(%.3f ms to make one)\n",
		json_number_value(json_object_get(pool, "offered_rate")),
		json_number_value(json_object_get(pool, "refill_vms_per_s")),
		1e3 * json_number_value(json_object_get(st, "make_s")));
	fprintf(out, "- idle VM-seconds %.2f, refill CPU %.3f s, VMs made by "
		"refills %" JSON_INTEGER_FORMAT ", by requests %"
		JSON_INTEGER_FORMAT "\n",
		json_number_value(json_object_get(st, "idle_vm_s")),
		json_number_value(json_object_get(st, "refill_cpu_s")),
		json_integer_value(json_object_get(st, "made")),
		json_integer_value(json_object_get(st, "made_on_demand")));
	fprintf(out, "- memory per VM held (%" JSON_INTEGER_FORMAT " held): "
		"RSS %.0f KiB, PSS %.0f KiB, USS %.0f KiB",
		json_integer_value(json_object_get(mem, "held")),
		json_number_value(json_object_get(mem, "rss_kib_per_vm")),
		json_number_value(json_object_get(mem, "pss_kib_per_vm")),
		json_number_value(json_object_get(mem, "uss_kib_per_vm")));
	if (json_is_number(json_object_get(mem, "beyond_guest_rss_kib_per_vm")))
		fprintf(out, "; beyond its guest memory: RSS %.0f KiB",
			json_number_value(json_object_get(mem,
				"beyond_guest_rss_kib_per_vm")));
	fputs("\n", out);
	if (json_object_get(doc, "ratios")) {
		const json_t *ra = json_object_get(doc, "ratios");

		fprintf(out, "- a hit's arrival -> first instruction is %.2fx a "
			"fresh restore's restore -> first instruction; a fresh "
			"restore takes %.2fx one into a shell (medians, "
			"this run)\n",
			json_number_value(json_object_get(ra,
				"hit_first_run_vs_fresh_restore")),
			json_number_value(json_object_get(ra,
				"fresh_restore_vs_shell_restore")));
	}
	fputs("\n## Series\n\n", out);
	result__md_series(out, doc);
	result__print_skipped(out, doc, true);
	result__md_warnings(out, doc);
	fputs("\nRaw samples, occupancy over time ([t_s, held, making, "
	      "target, arrived]) and host metadata: pool.json.\n", out);
}
