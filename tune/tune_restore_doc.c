/* `coldstart tune restore`: its result document (every sample, the
 * verdicts) and the Markdown report written from the document alone. */
#include "tune_restore.h"
#include "tune_restore_int.h"

#include "args.h"
#include "cli.h"
#include "err.h"
#include "kvm.h"
#include "mem_restore.h"
#include "output.h"
#include "report.h"
#include "restore.h"
#include "result.h"
#include "result_new.h"
#include "snap_linux.h"
#include "snapshot.h"
#include "stats.h"
#include "timeline.h"

#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the result document ---- */

/* "-n 3 raised to 7: ..." when -n asked for fewer samples than the test
 * needs, else "". */
void tune_restore__raised_text(char *buf, size_t len, const struct tune *t)
{
	size_t k = nr_applicable(t);

	buf[0] = '\0';
	if (t->o.count && t->o.count < t->min_count)
		snprintf(buf, len, "-n %" PRIu64 " raised to %zu: with %zu "
			 "comparisons, fewer samples can never reach alpha %g",
			 t->o.count, t->min_count, k ? k - 1 : 0, t->o.alpha);
}

json_t *tune_restore__config_json(const struct tune *t)
{
	json_t *strategies = json_array(), *cache = json_array(), *c;

	for (size_t i = 0; i < t->o.nr_strategies; i++)
		json_array_append_new(strategies,
				      json_string(t->o.strategies[i]->name));
	for (int cold = 0; cold < 2; cold++)
		if (tune_restore__measured(t, cold))
			json_array_append_new(cache,
					      json_string(tune_restore__cache_name(cold)));
	c = json_pack("{s:s, s:s, s:I, s:i, s:I, s:b, s:b, s:o, s:o, s:o, "
		      "s:I, s:f, s:s, s:s, s:I, s:s, s:s, s:s, s:s, s:s}",
		      "snapshot", t->o.dir, "guest",
		      t->info.linux_guest ? "linux" : "probe", "mem_bytes",
		      (json_int_t)t->info.mem_size, "vcpus", (int)t->info.vcpus,
		      "mem_data_bytes", (json_int_t)t->info.data_bytes,
		      "compressed", t->info.compressed, "diff", t->info.diff,
		      "strategies", strategies, "cache", cache, "count_asked",
		      t->o.count ? json_integer((json_int_t)t->o.count)
				 : json_null(),
		      "budget_ns", (json_int_t)t->o.budget_ns, "alpha",
		      t->o.alpha, "test", "mann-whitney-u, two-sided",
		      "correction", "holm", "count", (json_int_t)t->count,
		      "cold_method", "fsync+posix_fadvise(DONTNEED) of the "
		      "snapshot files before each restore", "warm_method",
		      "every snapshot file read before each restore",
		      "held_method", "/proc/self/smaps of the guest memory "
		      "mapping right after the VM ended, before its memory was "
		      "freed: Rss, Pss, Anonymous",
		      "snapshot_fs", t->info.in_memory ? "tmpfs" : "disk",
		      "wset", t->info.had_wset ? "existing"
			      : restore__has_file(t->o.dir, SNAPSHOT_WSET_FILE)
				      ? "recorded by this run"
				      : "none");
	if (c && t->info.linux_guest)
		json_object_set_new(c, "kernel",
				    json_string(t->info.guest.kernel));
	/* result__new names the initrd by its sha256 too */
	if (c && t->info.linux_guest && *t->info.guest.initrd)
		json_object_set_new(c, "initrd",
				    json_string(t->info.guest.initrd));
	return c;
}

/* One number of a sample; NAN where it was not measured. */
typedef double sample_value(const struct restore_sample *s);

static double first_run(const struct restore_sample *s)
{
	return s->ns[RESTORE_FIRST_RUN];
}

static double host_faults(const struct restore_sample *s)
{
	return (double)s->host.faults;
}

static double major_faults(const struct restore_sample *s)
{
	return (double)s->host.major;
}

static double disk_read(const struct restore_sample *s)
{
	return s->host.disk_read == RESTORE_NO_IO ? NAN
						  : (double)s->host.disk_read;
}

static double strategy_faults(const struct restore_sample *s)
{
	return (double)s->mem.faults;
}

static double strategy_read(const struct restore_sample *s)
{
	return (double)s->mem.bytes_read;
}

static double guest_rss(const struct restore_sample *s)
{
	return (double)s->held.guest_rss_kib;
}

static double guest_pss(const struct restore_sample *s)
{
	return (double)s->held.guest_pss_kib;
}

static double guest_anon(const struct restore_sample *s)
{
	return (double)s->held.guest_anon_kib;
}

static const struct {
	const char *key;
	sample_value *fn;
} work_values[] = {
	{ "first_run_ns", first_run },
	{ "guest_rss_kib", guest_rss },
	{ "guest_pss_kib", guest_pss },
	{ "guest_anon_kib", guest_anon },
	{ "disk_read_bytes", disk_read },
	{ "host_faults", host_faults },
	{ "major_faults", major_faults },
	{ "strategy_faults", strategy_faults },
	{ "strategy_bytes_read", strategy_read },
};

#define NR_WORK (sizeof(work_values) / sizeof(work_values[0]))

static void values(const struct cell *c, sample_value *fn, double *out)
{
	for (size_t i = 0; i < c->n; i++)
		out[i] = fn(&c->s[i]);
}

/* {"samples": [...], "median", "mean"}; all null when a sample lacks the
 * value (no I/O accounting). */
static json_t *work_json(const double *v, size_t n)
{
	json_t *arr = json_array();
	double median = 0, sum = 0;

	for (size_t i = 0; i < n; i++) {
		if (isnan(v[i])) {
			json_decref(arr);
			return json_pack("{s:n, s:n, s:n}", "samples", "median",
					 "mean");
		}
		json_array_append_new(arr, json_real(v[i]));
		sum += v[i];
	}
	if (n)
		stats__median(v, n, &median);
	return json_pack("{s:o, s:f, s:f}", "samples", arr, "median", median,
			 "mean", n ? sum / (double)n : 0.0);
}

static char *series_name(char *buf, size_t len, const struct cell *c)
{
	snprintf(buf, len, "%s/%s/done", c->ops->name, tune_restore__cache_name(c->cold));
	return buf;
}

static int add_cell(json_t *doc, const struct cell *c, double *tmp)
{
	json_t *s, *work = json_object();
	char name[96];

	for (size_t i = 0; i < c->n; i++)
		tmp[i] = c->s[i].ns[RESTORE_DONE];
	s = result__add_series(doc, series_name(name, sizeof(name), c), "ns",
			       RESULT_LOWER,
			       json_pack("{s:s, s:s, s:s}", "strategy",
					 c->ops->name, "cache",
					 tune_restore__cache_name(c->cold), "phase", "done"),
			       tmp, c->n);
	if (!s || !work) {
		json_decref(work);
		return err__set(ENOMEM, "building the result");
	}
	for (size_t k = 0; k < NR_WORK; k++) {
		values(c, work_values[k].fn, tmp);
		json_object_set_new(work, work_values[k].key,
				    work_json(tmp, c->n));
	}
	json_object_set_new(s, "work", work);
	if (c->cold)
		json_object_set_new(s, "resident_before_max",
				    json_real(c->resident_max));
	if (c->cold && c->resident_max > 0.01)
		result__warn(doc, "%s cold: up to %.0f %% of the memory file "
			     "was still cached before a restore", c->ops->name,
			     100 * c->resident_max);
	return 0;
}

static json_t *name_list(const struct tune_verdict *v,
			 const struct tune_candidate *c, enum tune_status a,
			 enum tune_status b)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < v->ranked; i++)
		if (v->rank[i].status == a || v->rank[i].status == b)
			json_array_append_new(arr,
					      json_string(c[v->rank[i].idx].name));
	return arr;
}

static json_t *number_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

static json_t *ranking_json(const struct tune_verdict *v,
			    const struct tune_candidate *c)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < v->nr; i++) {
		const struct tune_rank *r = &v->rank[i];
		bool has = r->status != TUNE_NO_SAMPLES;

		json_array_append_new(arr, json_pack(
			"{s:s, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:s}",
			"strategy", c[r->idx].name, "n", (json_int_t)c[r->idx].n,
			"median_ns", has ? json_real(r->median) : json_null(),
			"ci95_median_ns",
			has ? json_pack("[f, f]", r->ci_lo, r->ci_hi)
			    : json_null(),
			"delta_vs_fastest", has ? json_real(r->delta)
						: json_null(),
			"p", number_or_null(r->p), "p_holm",
			number_or_null(r->p_holm), "min_p",
			number_or_null(r->min_p), "status",
			tune_restore__status_name(r->status)));
	}
	return arr;
}

/* The verdict in words, for the report and the document. */
static void verdict_text(char *buf, size_t len, const struct tune *t,
			 const struct tune_verdict *v,
			 const struct tune_candidate *c)
{
	const char *fastest = v->ranked ? c[v->rank[0].idx].name : NULL;
	FILE *f = fmemopen(buf, len, "w");
	const char *sep = "";

	if (!f) {
		snprintf(buf, len, "%s", tune_restore__outcome_name(v->outcome));
		return;
	}
	if (!v->ranked)
		fputs("Nothing was measured: the budget was spent before the "
		      "first counted round (the trial restores and one "
		      "uncounted round come first).", f);
	else if (v->outcome == TUNE_WINNER && v->ranked == 1)
		fprintf(f, "%s is the only strategy that ran.", fastest);
	else if (v->outcome == TUNE_WINNER)
		fprintf(f, "%s wins: significantly faster than every other "
			"strategy (Mann-Whitney U, Holm-corrected, alpha %g).",
			fastest, v->alpha);
	else if (v->outcome == TUNE_TIED) {
		fprintf(f, "No single winner: ");
		for (size_t i = 0; i < v->ranked; i++)
			if (v->rank[i].status == TUNE_FASTEST ||
			    v->rank[i].status == TUNE_EQUIVALENT) {
				fprintf(f, "%s%s", sep, c[v->rank[i].idx].name);
				sep = ", ";
			}
		fprintf(f, " show no significant difference (Mann-Whitney U, "
			"Holm-corrected, alpha %g); %s has the smallest median.",
			v->alpha, fastest);
	} else
		fprintf(f, "Undecided: with %zu restores per strategy the test "
			"cannot reach alpha %g over %zu comparisons (it needs "
			"%zu)%s; %s has the smallest median.", t->rounds,
			v->alpha, v->comparisons, t->min_count,
			t->budget_spent ? ", and the budget ran out" : "",
			fastest);
	fclose(f);
}

static json_t *cache_verdict_json(const struct tune *t, bool cold)
{
	struct tune_candidate c[TUNE_MAX];
	struct tune_verdict v;
	size_t k = 0;
	char text[1024], flag[64] = "";
	const char *winner = NULL;
	json_t *j;

	for (size_t i = 0; i < t->o.nr_strategies; i++) {
		const struct cell *cell = &t->cells[cold][i];
		double *ns;

		if (t->skip[i])
			continue;
		ns = malloc((cell->n ? cell->n : 1) * sizeof(double));
		if (!ns)
			goto nomem;
		for (size_t s = 0; s < cell->n; s++)
			ns[s] = cell->s[s].ns[RESTORE_DONE];
		c[k++] = (struct tune_candidate){ cell->ops->name, ns, cell->n };
	}
	if (tune_restore__verdict(c, k, t->o.alpha, &v) < 0)
		goto nomem;
	if (v.outcome == TUNE_WINNER && v.ranked)
		winner = c[v.rank[0].idx].name;
	if (v.ranked)
		snprintf(flag, sizeof(flag), "--mem-restore %s",
			 c[v.rank[0].idx].name);
	verdict_text(text, sizeof(text), t, &v, c);
	j = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:o, s:s}",
		      "outcome", tune_restore__outcome_name(v.outcome),
		      "winner", winner ? json_string(winner) : json_null(),
		      "fastest", v.ranked ? json_string(c[v.rank[0].idx].name)
					  : json_null(),
		      "equivalent", name_list(&v, c, TUNE_FASTEST,
					      TUNE_EQUIVALENT),
		      "undecided", name_list(&v, c, TUNE_UNDECIDED,
					     TUNE_UNDECIDED),
		      "flag", *flag ? json_string(flag) : json_null(),
		      "ranking", ranking_json(&v, c), "samples_needed",
		      (json_int_t)t->min_count, "comparisons",
		      json_integer((json_int_t)v.comparisons), "text", text);
	/* the fastest alone is equivalent to nothing */
	if (json_array_size(json_object_get(j, "equivalent")) < 2)
		json_array_clear(json_object_get(j, "equivalent"));
	for (size_t i = 0; i < k; i++)
		free((double *)c[i].ns);
	return j;
nomem:
	for (size_t i = 0; i < k; i++)
		free((double *)c[i].ns);
	return NULL;
}

static json_t *verdict_json(const struct tune *t)
{
	json_t *v = json_pack("{s:s, s:s, s:s, s:f}", "metric",
			      "restore start -> DONE", "test",
			      "mann-whitney-u, two-sided, against the fastest "
			      "median", "correction", "holm", "alpha",
			      t->o.alpha);

	for (int cold = 0; v && cold < 2; cold++) {
		json_t *c;

		if (!tune_restore__measured(t, cold))
			continue;
		c = cache_verdict_json(t, cold);
		if (!c) {
			json_decref(v);
			return NULL;
		}
		json_object_set_new(v, tune_restore__cache_name(cold), c);
	}
	return v;
}

static void add_skipped(json_t *doc, const struct tune *t)
{
	char what[64];

	if (t->cold_why)
		result__skip(doc, "cold cache", "%s", t->cold_why);
	for (size_t i = 0; i < t->o.nr_strategies; i++) {
		if (!t->skip[i])
			continue;
		snprintf(what, sizeof(what), "strategy %s",
			 t->o.strategies[i]->name);
		result__skip(doc, what, "%s", t->why[i]);
	}
}

static json_t *budget_json(const struct tune *t)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:b}", "budget_ns",
			 (json_int_t)t->o.budget_ns, "elapsed_ns",
			 (json_int_t)t->elapsed_ns, "rounds",
			 (json_int_t)t->rounds, "rounds_planned",
			 (json_int_t)t->count, "spent", t->budget_spent);
}

int tune_restore__fill_doc(json_t *doc, const struct tune *t)
{
	double *tmp = malloc((t->count ? t->count : 1) * sizeof(double));
	json_t *verdict;
	char note[256];
	int ret = tmp ? 0 : err__set(ENOMEM, "building the result");

	add_skipped(doc, t);
	tune_restore__raised_text(note, sizeof(note), t);
	if (*note)
		result__warn(doc, "%s", note);
	if (t->budget_spent)
		result__warn(doc, "the --budget of %.1f s was spent after %zu "
			     "of %zu rounds", (double)t->o.budget_ns / 1e9,
			     t->rounds, t->count);
	for (int cold = 0; ret == 0 && cold < 2; cold++)
		for (size_t i = 0; ret == 0 && tune_restore__measured(t, cold) &&
				   i < t->o.nr_strategies; i++)
			if (!t->skip[i])
				ret = add_cell(doc, &t->cells[cold][i], tmp);
	free(tmp);
	if (ret < 0)
		return ret;
	verdict = verdict_json(t);
	if (!verdict)
		return err__set(ENOMEM, "building the verdict");
	json_object_set_new(doc, "verdict", verdict);
	json_object_set_new(doc, "budget", budget_json(t));
	return 0;
}

/* ---- the report (from the document alone) ---- */

static const json_t *find_series(const json_t *doc, const char *name)
{
	const json_t *s;
	size_t i;

	json_array_foreach(json_object_get(doc, "series"), i, s)
		if (!strcmp(json_string_value(json_object_get(s, "name")),
			    name))
			return s;
	return NULL;
}

static double work_median(const json_t *series, const char *key)
{
	return json_number_value(json_object_get(
		json_object_get(json_object_get(series, "work"), key),
		"median"));
}

/* "1.2" (MiB) from a work value's median, "-" when unmeasured. */
static void mib_text(char *buf, size_t len, const json_t *series,
		     const char *key, double per_mib)
{
	const json_t *m = json_object_get(
		json_object_get(json_object_get(series, "work"), key), "median");

	if (json_is_number(m))
		snprintf(buf, len, "%.1f", json_number_value(m) / per_mib);
	else
		snprintf(buf, len, "-");
}

/* "1.234" ms of an ns value; "-" when it is not a number. */
static void ms_text(char *buf, size_t len, const json_t *ns)
{
	if (json_is_number(ns))
		snprintf(buf, len, "%.3f", json_number_value(ns) / 1e6);
	else
		snprintf(buf, len, "-");
}

static void rank_row(FILE *out, const json_t *doc, const json_t *r,
		     const char *cache, size_t pos)
{
	const char *name = json_string_value(json_object_get(r, "strategy"));
	const json_t *ci = json_object_get(r, "ci95_median_ns");
	const json_t *ph = json_object_get(r, "p_holm");
	char sname[96], med[32], lo[32], hi[32];
	char vs[32] = "-", p[32] = "-", rss[32], pss[32], anon[32], disk[32];
	const json_t *s;

	snprintf(sname, sizeof(sname), "%s/%s/done", name, cache);
	s = find_series(doc, sname);
	ms_text(med, sizeof(med), json_object_get(r, "median_ns"));
	ms_text(lo, sizeof(lo), json_array_get(ci, 0));
	ms_text(hi, sizeof(hi), json_array_get(ci, 1));
	if (pos > 0 && json_is_number(ph)) {
		snprintf(vs, sizeof(vs), "%+.1f %%", 100 * json_number_value(
			json_object_get(r, "delta_vs_fastest")));
		snprintf(p, sizeof(p), "%.2g", json_number_value(ph));
	}
	mib_text(rss, sizeof(rss), s, "guest_rss_kib", 1024);
	mib_text(pss, sizeof(pss), s, "guest_pss_kib", 1024);
	mib_text(anon, sizeof(anon), s, "guest_anon_kib", 1024);
	mib_text(disk, sizeof(disk), s, "disk_read_bytes", (double)MiB);
	fprintf(out, "| %zu | %s | %" JSON_INTEGER_FORMAT " | %s | %s-%s | "
		"%s | %s | %s | %s | %s | %s | %s | %.0f |\n", pos + 1, name,
		json_integer_value(json_object_get(r, "n")), med, lo, hi, vs, p,
		json_string_value(json_object_get(r, "status")), rss, pss, anon,
		disk, work_median(s, "host_faults"));
}

static const char *flag_caveat(const char *outcome)
{
	if (!strcmp(outcome, "tied"))
		return " (the smallest median; the strategies equivalent to "
		       "it do as well)";
	if (!strcmp(outcome, "inconclusive"))
		return " (provisional: the smallest median so far)";
	return "";
}

static void cache_report(FILE *out, const json_t *doc, const char *cache)
{
	const json_t *v = json_object_get(json_object_get(doc, "verdict"),
					  cache);
	const json_t *ranking = json_object_get(v, "ranking"), *r;
	const json_t *flag = json_object_get(v, "flag");
	size_t i;

	if (!v)
		return;
	fprintf(out, "\n## %s cache\n\n**Verdict:** %s\n\n", cache,
		json_string_value(json_object_get(v, "text")));
	if (json_is_string(flag))
		fprintf(out, "Use: `%s`%s\n\n", json_string_value(flag),
			flag_caveat(json_string_value(json_object_get(
				v, "outcome"))));
	fputs("| rank | strategy | n | DONE ms (median) | 95 % CI ms | "
	      "vs fastest | p (Holm) | status | RSS MiB | PSS MiB | anon MiB "
	      "| disk MiB | host faults |\n|--:|---|--:|--:|--:|--:|--:|---|"
	      "--:|--:|--:|--:|--:|\n", out);
	json_array_foreach(ranking, i, r)
		rank_row(out, doc, r, cache, i);
}

void tune_restore__report(FILE *out, const json_t *doc)
{
	const json_t *cfg = json_object_get(doc, "config");
	const json_t *b = json_object_get(doc, "budget");
	const json_t *v = json_object_get(doc, "verdict");

	fprintf(out, "# coldstart tune restore\n\nSnapshot `%s` (%s guest, "
		"%" JSON_INTEGER_FORMAT " MiB, %" JSON_INTEGER_FORMAT
		" vCPU). Each strategy restored it and ran it to DONE%s; "
		"the page cache warm (the snapshot files read before each "
		"restore) or cold (fsync + posix_fadvise(DONTNEED) of them "
		"before each), every (cache, strategy) once per round, the "
		"order rotating: %" JSON_INTEGER_FORMAT " of %"
		JSON_INTEGER_FORMAT " rounds in %.1f s (budget %.1f s%s). A "
		"winner is named only when it is significantly faster than "
		"every other strategy: two-sided Mann-Whitney U test against "
		"the fastest median (as `coldstart compare`), p-values "
		"Holm-corrected over those comparisons, alpha %g. Memory "
		"held: the guest memory mapping right after the VM ended "
		"(/proc/self/smaps, medians): RSS, PSS, and anon, the pages "
		"this VM owns (copied or written); the rest of RSS is page "
		"cache of the memory file, shared by every VM restored from "
		"it. Disk MiB: what the process read from storage per "
		"restore (/proc/self/io read_bytes, median); host faults: "
		"its minor + major page faults per restore (getrusage, "
		"median).\n",
		json_string_value(json_object_get(cfg, "snapshot")),
		json_string_value(json_object_get(cfg, "guest")),
		json_integer_value(json_object_get(cfg, "mem_bytes")) >> 20,
		json_integer_value(json_object_get(cfg, "vcpus")),
		strcmp(json_string_value(json_object_get(cfg, "guest")),
		       "linux") ? "" : " (its done signal)",
		json_integer_value(json_object_get(b, "rounds")),
		json_integer_value(json_object_get(b, "rounds_planned")),
		(double)json_integer_value(json_object_get(b, "elapsed_ns")) /
			1e9,
		(double)json_integer_value(json_object_get(b, "budget_ns")) /
			1e9,
		json_is_true(json_object_get(b, "spent")) ? ", spent" : "",
		json_number_value(json_object_get(v, "alpha")));
	cache_report(out, doc, "warm");
	cache_report(out, doc, "cold");
	result__print_skipped(out, doc, true);
	result__md_warnings(out, doc);
	fputs("\nRaw samples, per-restore work and host metadata: "
	      "tune-restore.json.\n", out);
}
