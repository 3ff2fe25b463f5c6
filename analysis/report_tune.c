/* The tuners' part of report.md: a summary line and a "Tuning" section
 * for each tune-pool.json, tune-restore.json, tune-host.json and
 * tune-session.json, from the
 * documents alone, so a results directory's report carries its
 * recommendations. */
#include "report_tune.h"

#include "result.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *str_of(const json_t *o, const char *key, const char *def)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : def;
}

static double num_of(const json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

/* ---- tune pool ---- */

static double p99_ms(const json_t *cand)
{
	return num_of(json_object_get(cand, "latency_s"), "p99") * 1e3;
}

/* "fixed n=3 (1.178 ms p99, 99.59 % hits, 811.5 idle VM-s)" */
static void cand_text(char *buf, size_t len, const json_t *x)
{
	snprintf(buf, len, "%s %s: p99 %.3f ms, hit ratio %.2f %%, %.1f idle "
		 "VM-seconds, peak %.1f MiB", str_of(x, "policy", "?"),
		 str_of(x, "params", "?"), p99_ms(x),
		 100 * num_of(x, "hit_ratio"), num_of(x, "idle_vm_s"),
		 num_of(x, "peak_mib"));
}

static void pool_summary(FILE *md, const json_t *doc)
{
	const json_t *cfg = json_object_get(doc, "config");
	const json_t *rec = json_object_get(doc, "recommendation");
	const json_t *app = json_object_get(doc, "applicable");
	char text[256];

	if (!json_is_object(rec)) {
		fprintf(md, "- tune pool: no configuration meets %s for %s\n",
			str_of(cfg, "slo", "?"), str_of(cfg, "arrivals_desc",
							"?"));
		return;
	}
	cand_text(text, sizeof(text), rec);
	fprintf(md, "- tune pool (%s, SLO %s): %s", str_of(cfg, "arrivals_desc",
		"?"), str_of(cfg, "slo", "?"), text);
	if (json_is_string(json_object_get(rec, "pool_command")))
		fprintf(md, "; `%s`\n", str_of(rec, "pool_command", ""));
	else if (json_is_object(app))
		fprintf(md, "; applied as %s %s: `%s`\n", str_of(app, "policy",
			"?"), str_of(app, "params", "?"),
			str_of(app, "pool_command", ""));
	else
		fputs("\n", md);
}

/* The cheapest configuration of `policy` that meets the SLO, or NULL. */
static const json_t *cheapest(const json_t *all, const char *policy)
{
	const json_t *x, *best = NULL;
	size_t i;

	json_array_foreach(all, i, x) {
		if (strcmp(str_of(x, "policy", ""), policy) ||
		    !json_is_true(json_object_get(x, "meets_slo")))
			continue;
		if (!best || num_of(x, "idle_vm_s") < num_of(best, "idle_vm_s"))
			best = x;
	}
	return best;
}

static void pool_table(FILE *md, const json_t *all)
{
	static const char *const policies[] = { "fixed", "ttl", "hybrid",
						"follow", "marginal" };

	fputs("\n| policy | cheapest meeting the SLO | hit ratio | p99 ms | "
	      "idle VM-s | peak MiB |\n|---|---|--:|--:|--:|--:|\n", md);
	for (size_t p = 0; p < sizeof(policies) / sizeof(policies[0]); p++) {
		const json_t *x = cheapest(all, policies[p]);

		if (!x) {
			fprintf(md, "| %s | none | | | | |\n", policies[p]);
			continue;
		}
		fprintf(md, "| %s | %s | %.2f %% | %.3f | %.1f | %.1f |\n",
			policies[p], str_of(x, "params", "?"),
			100 * num_of(x, "hit_ratio"), p99_ms(x),
			num_of(x, "idle_vm_s"), num_of(x, "peak_mib"));
	}
}

static void pool_section(FILE *md, const json_t *doc)
{
	const json_t *cfg = json_object_get(doc, "config");
	const json_t *costs = json_object_get(doc, "costs");
	const json_t *rec = json_object_get(doc, "recommendation");
	const json_t *app = json_object_get(doc, "applicable");
	const json_t *budget = json_object_get(doc, "memory_budget");
	char text[256];

	fprintf(md, "\n### Warm pool\n\nSimulated with %s "
		"(hit: %s; miss: %s; making: %s; memory: %s) for arrivals "
		"%s, SLO %s, over %" JSON_INTEGER_FORMAT " configurations.\n",
		json_is_true(json_object_get(costs, "given"))
			? "given costs, not measured on a host"
			: "this host's costs",
		str_of(costs, "hit", "?"), str_of(costs, "miss", "?"),
		str_of(costs, "make", "?"), str_of(costs, "memory", "?"),
		str_of(cfg, "arrivals_desc", "?"), str_of(cfg, "slo", "?"),
		(json_int_t)json_array_size(json_object_get(doc,
							    "configurations")));
	pool_table(md, json_object_get(doc, "configurations"));
	if (!json_is_object(rec)) {
		fputs("\nNo configuration meets the SLO.\n", md);
		return;
	}
	cand_text(text, sizeof(text), rec);
	fprintf(md, "\nRecommendation: **%s**.\n", text);
	if (json_is_string(json_object_get(rec, "pool_command")))
		fprintf(md, "\n    %s\n", str_of(rec, "pool_command", ""));
	else if (json_is_object(app))
		fprintf(md, "\n`coldstart pool` has no %s policy; the cheapest "
			"it applies is %s %s (%.1f idle VM-seconds):\n\n    %s\n",
			str_of(rec, "policy", "?"), str_of(app, "policy", "?"),
			str_of(app, "params", "?"), num_of(app, "idle_vm_s"),
			str_of(app, "pool_command", ""));
	if (json_is_object(budget))
		fprintf(md, "\nIn %.0f MiB: %.0f warm VMs, or %.0f such pools "
			"at their peak.\n", num_of(budget, "bytes") / MiB,
			num_of(budget, "warm_vms"), num_of(budget, "pools"));
}

/* ---- tune restore ---- */

static const char *const caches[] = { "warm", "cold" };

static void restore_summary(FILE *md, const json_t *doc)
{
	const json_t *v = json_object_get(doc, "verdict");

	fputs("- tune restore:", md);
	for (size_t c = 0; c < 2; c++) {
		const json_t *cv = json_object_get(v, caches[c]);

		if (!cv)
			continue;
		fprintf(md, " %s cache: %s (%s)%s", caches[c],
			str_of(cv, "outcome", "?"),
			str_of(cv, "flag", "no flag"), c == 0 ? ";" : "");
	}
	fputs("\n", md);
}

static void restore_rank_row(FILE *md, const json_t *r, size_t pos)
{
	const json_t *med = json_object_get(r, "median_ns");
	const json_t *ph = json_object_get(r, "p_holm");

	if (!json_is_number(med)) {
		fprintf(md, "| %zu | %s | 0 | - | - | - | %s |\n", pos + 1,
			str_of(r, "strategy", "?"), str_of(r, "status", "?"));
		return;
	}
	fprintf(md, "| %zu | %s | %" JSON_INTEGER_FORMAT " | %.3f | ",
		pos + 1, str_of(r, "strategy", "?"),
		json_integer_value(json_object_get(r, "n")),
		json_number_value(med) / 1e6);
	if (pos > 0 && json_is_number(ph))
		fprintf(md, "%+.1f %% | %.2g | ",
			100 * num_of(r, "delta_vs_fastest"),
			json_number_value(ph));
	else
		fputs("- | - | ", md);
	fprintf(md, "%s |\n", str_of(r, "status", "?"));
}

static void restore_section(FILE *md, const json_t *doc)
{
	const json_t *cfg = json_object_get(doc, "config");
	const json_t *v = json_object_get(doc, "verdict");

	fprintf(md, "\n### Memory-restore strategy\n\nSnapshot `%s` (%s "
		"guest), restore start -> DONE; a winner only when "
		"significantly faster than every other (Mann-Whitney U, Holm, "
		"alpha %g).\n", str_of(cfg, "snapshot", "?"),
		str_of(cfg, "guest", "?"), num_of(v, "alpha"));
	for (size_t c = 0; c < 2; c++) {
		const json_t *cv = json_object_get(v, caches[c]), *r;
		size_t i;

		if (!cv)
			continue;
		fprintf(md, "\n%s cache: %s", caches[c], str_of(cv, "text",
								"?"));
		if (json_is_string(json_object_get(cv, "flag")))
			fprintf(md, " Use `%s`.", str_of(cv, "flag", ""));
		fputs("\n\n| rank | strategy | n | DONE ms | vs fastest | "
		      "p (Holm) | status |\n|--:|---|--:|--:|--:|--:|---|\n",
		      md);
		json_array_foreach(json_object_get(cv, "ranking"), i, r)
			restore_rank_row(md, r, i);
	}
}

/* ---- tune host ---- */

static void host_summary(FILE *md, const json_t *doc)
{
	const json_t *t = json_object_get(doc, "trace");
	const json_t *vs = json_object_get(doc, "versus_greedy_dual");

	double fewer = num_of(vs, "fewer_cold_starts_pct");

	fprintf(md, "- tune host (%" JSON_INTEGER_FORMAT " functions of %s, "
		"%.0f MiB): ours has %.1f %% %s cold starts than "
		"greedy-dual\n",
		json_integer_value(json_object_get(t, "functions")),
		str_of(t, "path", "?"), num_of(doc, "budget_mib"),
		fabs(fewer), fewer < 0 ? "more" : "fewer");
}

static void host_section(FILE *md, const json_t *doc)
{
	const json_t *t = json_object_get(doc, "trace");
	const json_t *vs = json_object_get(doc, "versus_greedy_dual");
	const json_t *p;
	size_t i;

	fprintf(md, "\n### Many guests on one host\n\nSimulated: trace `%s` "
		"(%s), %" JSON_INTEGER_FORMAT " functions, %" JSON_INTEGER_FORMAT
		" minutes, %" JSON_INTEGER_FORMAT " invocations, in a memory "
		"budget of %.0f MiB (every function's VM at once: %.0f MiB).\n"
		"\n| policy | cold starts | cold %% | peak MiB | idle GiB-s | "
		"MiB for ours' cold starts |\n|---|--:|--:|--:|--:|--:|\n",
		str_of(t, "path", "?"), str_of(t, "format", "?"),
		json_integer_value(json_object_get(t, "functions")),
		json_integer_value(json_object_get(t, "minutes")),
		json_integer_value(json_object_get(t, "invocations")),
		num_of(doc, "budget_mib"), num_of(doc, "all_vms_mib"));
	json_array_foreach(json_object_get(doc, "policies"), i, p) {
		const json_t *need = json_object_get(p, "mib_for_ours_cold_starts");

		fprintf(md, "| %s | %" JSON_INTEGER_FORMAT " | %.1f | %.0f | "
			"%.0f | ", str_of(p, "policy", "?"),
			json_integer_value(json_object_get(p, "cold_starts")),
			num_of(p, "cold_pct"), num_of(p, "peak_mib"),
			num_of(p, "idle_gib_s"));
		if (json_is_number(need))
			fprintf(md, "%.0f |\n", json_number_value(need));
		else
			fputs("- |\n", md);
	}
	fprintf(md, "\nOurs has %.1f %% %s cold starts than greedy-dual "
		"at the same memory", fabs(num_of(vs, "fewer_cold_starts_pct")),
		num_of(vs, "fewer_cold_starts_pct") < 0 ? "more" : "fewer");
	if (json_is_number(json_object_get(vs, "less_memory_pct")))
		fprintf(md, ", and reaches greedy-dual's cold starts with "
			"%.1f %% less peak memory", num_of(vs,
							  "less_memory_pct"));
	fputs(".\n", md);
}

/* ---- tune session ---- */

/* The recommended candidate, or NULL. */
static const json_t *session_pick(const json_t *doc)
{
	const char *pick = str_of(json_object_get(doc, "recommendation"),
				  "merge", NULL);
	const json_t *c;
	size_t i;

	json_array_foreach(json_object_get(doc, "candidates"), i, c)
		if (pick && !strcmp(str_of(c, "merge", ""), pick))
			return c;
	return NULL;
}

static void session_summary(FILE *md, const json_t *doc)
{
	const json_t *c = session_pick(doc);

	fprintf(md, "- tune session (%" JSON_INTEGER_FORMAT " turns per "
		"policy, %zu policies): ", json_integer_value(json_object_get(
		json_object_get(doc, "config"), "turns")),
		json_array_size(json_object_get(doc, "candidates")));
	if (!c) {
		fputs("no recommendation\n", md);
		return;
	}
	fprintf(md, "--merge %s, drift %.2fx, %.2f MiB written per turn%s\n",
		str_of(c, "merge", "?"), num_of(c, "resume_drift"),
		num_of(c, "bytes_written_per_turn") / MiB,
		json_is_true(json_object_get(json_object_get(doc,
			"recommendation"), "met_target"))
			? "" : " (none kept the drift target: the flattest)");
}

/* A number with `prec` decimals and a suffix, "-" when null. */
static void num_cell(FILE *md, const json_t *c, const char *key,
		     double scale, int prec, const char *suffix)
{
	const json_t *v = json_object_get(c, key);

	if (json_is_number(v))
		fprintf(md, " %.*f%s |", prec, json_number_value(v) / scale,
			suffix);
	else
		fputs(" - |", md);
}

static void session_section(FILE *md, const json_t *doc)
{
	const json_t *cfg = json_object_get(doc, "config");
	const json_t *rec = json_object_get(doc, "recommendation"), *c;
	size_t i;

	fprintf(md, "\n### Session merge policy\n\nA session of %"
		JSON_INTEGER_FORMAT " turns per candidate `bench session "
		"--merge` policy on snapshot `%s`. Rule: %s.\n\n| policy | "
		"resume drift | resume median ms | written MiB / turn | merges "
		"| merge ms total | within %.2fx |\n|---|--:|--:|--:|--:|--:|"
		"---|\n", json_integer_value(json_object_get(cfg, "turns")),
		str_of(cfg, "snapshot", "?"), str_of(rec, "rule", "?"),
		num_of(rec, "target_drift"));
	json_array_foreach(json_object_get(doc, "candidates"), i, c) {
		fprintf(md, "| %s |", str_of(c, "merge", "?"));
		num_cell(md, c, "resume_drift", 1, 2, "x");
		num_cell(md, c, "resume_median_ns", 1e6, 1, "");
		num_cell(md, c, "bytes_written_per_turn", MiB, 2, "");
		num_cell(md, c, "merges", 1, 0, "");
		num_cell(md, c, "merge_ns_total", 1e6, 1, "");
		fprintf(md, " %s |\n", json_is_true(json_object_get(
			c, "within_target")) ? "yes" : "no");
	}
	if (!session_pick(doc)) {
		fputs("\nNo recommendation.\n", md);
		return;
	}
	fprintf(md, "\nRecommended: `--merge %s`%s.\n", str_of(rec, "merge",
		"?"), json_is_true(json_object_get(rec, "met_target"))
		? "" : " (no policy kept resume within the target; this is "
		       "the flattest)");
}

/* ---- every tuner ---- */

/* Each tuner's bench, its own Markdown report, its summary line and its
 * section; the last row (tune restore) also takes any other bench. */
static const struct tuner {
	const char *bench, *file;
	void (*summary)(FILE *md, const json_t *doc);
	void (*section)(FILE *md, const json_t *doc);
} tuners[] = {
	{ "tune-pool", "tune-pool.md", pool_summary, pool_section },
	{ "tune-host", "tune-host.md", host_summary, host_section },
	{ "tune-session", "tune-session.md", session_summary,
	  session_section },
	{ "tune-restore", "tune-restore.md", restore_summary,
	  restore_section },
};

static const struct tuner *tuner_of(const char *bench)
{
	size_t i = 0, last = sizeof(tuners) / sizeof(tuners[0]) - 1;

	while (i < last && strcmp(bench, tuners[i].bench))
		i++;
	return &tuners[i];
}

const char *report_tune__file(const char *bench)
{
	return tuner_of(bench)->file;
}

void report_tune__summary(FILE *md, const json_t *doc)
{
	tuner_of(str_of(doc, "bench", ""))->summary(md, doc);
}

void report_tune__section(FILE *md, const json_t *doc, const char *name,
			  bool full_beside)
{
	const char *bench = str_of(doc, "bench", "");
	const char *note = result__emulated_note(doc);

	tuner_of(bench)->section(md, doc);
	if (note)
		fprintf(md, "\n> %s\n", note);
	if (json_array_size(json_object_get(doc, "warnings"))) {
		fputs("\nWarnings:\n\n", md);
		result__md_warning_list(md, doc);
	}
	fprintf(md, "\nFrom `%s`%s%s.\n", name,
		full_beside ? "; the tuner's full report: " : "",
		full_beside ? report_tune__file(bench) : "");
}
