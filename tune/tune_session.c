/* `coldstart tune session` (tune_session.h): one session per candidate
 * merge policy, interleaved turn by turn, their drift and bytes, the pick
 * and its document. */
#include "tune_session.h"

#include "cli.h"
#include "diff.h"
#include "err.h"
#include "merge_pick.h"
#include "report.h"
#include "result.h"
#include "result_new.h"
#include "session.h"
#include "stats.h"
#include "units.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* never: the chain grows by one diff a turn; every:4 merges on a clock;
 * chain:4 and chain:8 bound what a resume reads at two depths. */
static const char *const defaults[] = { "never", "chain:4", "chain:8",
					"every:4" };

void tune_session__defaults(struct tune_session_opts *o)
{
	*o = (struct tune_session_opts){ .turns = 12 };
	for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
		o->policies[o->nr_policies++] = defaults[i];
}

int tune_session__check(const struct tune_session_opts *o)
{
	for (size_t i = 0; i < o->nr_policies; i++) {
		struct session_merge_policy p;
		char why[256];

		if (session__parse_merge(o->policies[i], &p) < 0) {
			snprintf(why, sizeof(why), "%s", err__last());
			return err__set(EINVAL, "--policies: %s", why);
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(o->policies[i], o->policies[j]))
				return err__set(EINVAL, "--policies: %s is "
						"named twice", o->policies[i]);
		if (p.kind == MERGE_NEVER && o->turns > SNAPDIFF_MAX_CHAIN)
			return err__set(EINVAL, "--policies never keeps every "
					"diff, and a resume reads at most %u: "
					"at most %u --turns with it",
					SNAPDIFF_MAX_CHAIN, SNAPDIFF_MAX_CHAIN);
	}
	return 0;
}

static double num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* One candidate's figures from its session document. */
static json_t *candidate(const char *policy, const json_t *doc)
{
	const json_t *turns = json_object_get(doc, "turns"), *t;
	size_t n = json_array_size(turns), i, merges = 0;
	double *r = calloc(n ? n : 1, sizeof(*r)), med = NAN, bytes = 0;
	double merge_ns = 0, drift = num(doc, "resume_drift");

	if (!r)
		return NULL;
	json_array_foreach(turns, i, t) {
		r[i] = num(t, "resume_to_first_output_ns");
		bytes += num(t, "mem_bytes") + num(t, "disk_bytes") +
			 num(t, "merged_bytes");
		merges += json_is_true(json_object_get(t, "merged"));
		merge_ns += num(t, "merge_ns");
	}
	if (stats__median(r, n, &med) < 0)
		med = NAN;
	free(r);
	/* bench session writes 0 when the first turns' resume is 0 */
	if (!(drift > 0))
		drift = NAN;
	return json_pack("{s:s, s:o, s:o, s:o, s:I, s:f, s:O}", "merge",
			 policy, "resume_drift",
			 isfinite(drift) ? json_real(drift) : json_null(),
			 "resume_median_ns",
			 isfinite(med) ? json_real(med) : json_null(),
			 "bytes_written_per_turn",
			 n ? json_real(bytes / (double)n) : json_null(),
			 "merges", (json_int_t)merges, "merge_ns_total",
			 merge_ns, "turns", turns);
}

/* "POLICY/resume_to_first_output": one name per policy, as a document's
 * series names must be (a reader refuses a name twice). */
static int add_series(json_t *doc, const char *policy, const json_t *turns)
{
	size_t n = json_array_size(turns), i;
	double *v = calloc(n ? n : 1, sizeof(*v));
	char *name = NULL;
	const json_t *t;
	json_t *js;

	if (v && asprintf(&name, "%s/resume_to_first_output", policy) < 0)
		name = NULL;
	if (!v || !name) {
		free(v);
		return -ENOMEM;
	}
	json_array_foreach(turns, i, t)
		v[i] = num(t, "resume_to_first_output_ns");
	js = result__add_series(doc, name, "ns",
				RESULT_LOWER, json_pack("{s:s, s:s}", "merge",
							policy, "per", "turn"),
				v, n);
	free(v);
	free(name);
	return js ? 0 : -ENOMEM;
}

/* The pick over the candidates, into the document. */
static int recommend(json_t *doc)
{
	json_t *cands = json_object_get(doc, "candidates"), *c;
	size_t n = json_array_size(cands), i;
	struct merge_score *s = calloc(n ? n : 1, sizeof(*s));
	bool met = false;
	long best;

	if (!s)
		return -ENOMEM;
	json_array_foreach(cands, i, c) {
		s[i].drift = num(c, "resume_drift");
		s[i].bytes = num(c, "bytes_written_per_turn");
		json_object_set_new(c, "within_target", json_boolean(
			isfinite(s[i].drift) &&
			s[i].drift <= MERGE_PICK_TARGET));
	}
	best = merge_pick__choose(s, n, MERGE_PICK_TARGET, &met);
	free(s);
	if (best < 0)
		return err__set(EINVAL, "no candidate policy");
	json_object_set_new(doc, "recommendation", json_pack(
		"{s:O, s:b, s:f, s:s}", "merge",
		json_object_get(json_array_get(cands, (size_t)best), "merge"),
		"met_target", met, "target_drift", MERGE_PICK_TARGET, "rule",
		merge_pick__rule));
	return 0;
}

static json_t *config_json(const struct tune_session_opts *o)
{
	json_t *p = json_array();

	for (size_t i = 0; i < o->nr_policies; i++)
		json_array_append_new(p, json_string(o->policies[i]));
	return json_pack(
		"{s:s, s:s?, s:I, s:o, s:s?, s:s, s:s, s:s, s:s}", "snapshot",
		o->snapshot, "exec", o->exec, "turns", (json_int_t)o->turns,
		"policies", p, "strategy",
		o->strategy ? o->strategy->name : NULL, "resume_is",
		"restore start -> the turn command's first output byte "
		"(bench session's turns)", "drift_is",
		"median resume of the last three turns over the first three",
		"bytes_written_is",
		"per turn: the turn's snapshot (memory and disk) plus any "
		"merge's output, all the disk traffic the policy costs",
		"measured_as",
		"one session of --turns turns per policy on this host, "
		"interleaved turn by turn (round k runs turn k of every policy, "
		"the order rotating each round), each in its own work "
		"directory");
}

static void report(FILE *out, const json_t *doc)
{
	const json_t *cands = json_object_get(doc, "candidates"), *c;
	const json_t *rec = json_object_get(doc, "recommendation");
	const json_t *cfg = json_object_get(doc, "config");
	size_t i;

	fprintf(out, "# coldstart tune session\n\n%d turns per merge policy "
		"on %s, interleaved turn by turn.\n\n| policy | resume drift | resume median ms | "
		"written MiB / turn | merges | merge ms total | within 1.20x "
		"|\n|---|---|---|---|---|---|---|\n",
		(int)json_integer_value(json_object_get(cfg, "turns")),
		json_string_value(json_object_get(cfg, "snapshot")));
	json_array_foreach(cands, i, c)
		fprintf(out, "| %s | %.2fx | %.1f | %.2f | %d | %.1f | %s |\n",
			json_string_value(json_object_get(c, "merge")),
			num(c, "resume_drift"), num(c, "resume_median_ns") / 1e6,
			num(c, "bytes_written_per_turn") / MiB,
			(int)json_integer_value(json_object_get(c, "merges")),
			num(c, "merge_ns_total") / 1e6,
			json_is_true(json_object_get(c, "within_target"))
				? "yes" : "no");
	fprintf(out, "\nRule: %s.\n\nRecommended: --merge %s%s\n",
		json_string_value(json_object_get(rec, "rule")),
		json_string_value(json_object_get(rec, "merge")),
		json_is_true(json_object_get(rec, "met_target"))
			? "" : " (no policy kept resume within 20 % of the "
			       "first turns'; this is the flattest)");
	if (json_integer_value(json_object_get(cfg, "turns")) < 6)
		fputs("With fewer than six turns the first and last three "
		      "overlap: the drift says little.\n", out);
}

size_t tune_session__order(uint64_t round, size_t j, size_t n)
{
	return (size_t)((j + round) % n);
}

/* Every policy's session started, each in its own work directory. */
static int start_all(const struct tune_session_opts *o,
		     struct session_run **runs)
{
	int ret = 0;

	for (size_t i = 0; ret == 0 && i < o->nr_policies; i++) {
		struct session_spec sp = {
			.command = "tune session", .snapshot = o->snapshot,
			.exec = o->exec, .merge = o->policies[i],
			.work_dir = o->work_dir, .kvm_path = o->kvm_path,
			.strategy = o->strategy, .turns = o->turns,
			.allow_pvm = o->allow_pvm };

		ret = session__start(&sp, &runs[i]);
		if (ret < 0)
			ret = err__set(-ret, "policy %s: %s", o->policies[i],
				       err__last());
	}
	return ret;
}

/* Round k runs turn k of every policy, the order rotating each round
 * (as tune restore's rounds): a load swing on the host hits all alike,
 * and no policy always runs first, on a host the others just left. */
static int interleave(const struct tune_session_opts *o,
		      struct session_run **runs)
{
	size_t n = o->nr_policies;
	int ret = 0;

	for (uint64_t k = 0; ret == 0 && k < o->turns; k++)
		for (size_t j = 0; ret == 0 && j < n; j++) {
			size_t i = tune_session__order(k, j, n);

			fprintf(stderr, "coldstart: tune session: round %llu/"
				"%llu: policy %s (%zu/%zu)\n",
				(unsigned long long)k + 1,
				(unsigned long long)o->turns, o->policies[i],
				i + 1, n);
			ret = session__next_turn(runs[i]);
			if (ret < 0)
				ret = err__set(-ret, "policy %s: %s",
					       o->policies[i], err__last());
		}
	return ret;
}

/* Each policy's session ended and, when all turns ran, its candidate
 * and series into the document, in the order the policies were given. */
static int finish_all(const struct tune_session_opts *o,
		      struct session_run **runs, int ret, json_t *doc)
{
	json_t *cands = json_array();

	if (!cands && ret == 0)
		ret = err__set(ENOMEM, "the result document");
	json_object_set_new(doc, "candidates", cands);
	for (size_t i = 0; i < o->nr_policies; i++) {
		json_t *one = NULL, *c;

		if (ret != 0) { /* a session that stopped is no candidate */
			session__finish(runs[i], NULL);
			continue;
		}
		ret = session__finish(runs[i], &one);
		c = ret == 0 ? candidate(o->policies[i], one) : NULL;
		if (ret == 0 && (!c || json_array_append_new(cands, c) ||
				 add_series(doc, o->policies[i],
					    json_object_get(one, "turns"))))
			ret = err__set(ENOMEM, "the result document");
		json_decref(one);
	}
	return ret;
}

static int measure(const struct tune_session_opts *o, json_t *doc)
{
	struct session_run *runs[TUNE_SESSION_MAX] = { 0 };
	int ret = start_all(o, runs);

	if (ret == 0)
		ret = interleave(o, runs);
	return finish_all(o, runs, ret, doc);
}

int tune_session__run(const struct tune_session_opts *o)
{
	json_t *doc;
	int ret = tune_session__check(o);

	if (ret < 0)
		return ret;
	ret = session__check_snapshot("tune session", o->snapshot,
				      o->allow_pvm);
	if (ret != CLI_OK)
		return ret;
	doc = result__new("tune-session", config_json(o));
	if (!doc)
		return err__set(ENOMEM, "the result document");
	ret = measure(o, doc);
	if (ret == 0)
		ret = recommend(doc);
	if (ret == 0)
		ret = result__emit(doc, o->json, o->out_dir, report);
	if (ret == 0 && o->out_dir)
		report__join("tune session", o->out_dir, o->json);
	json_decref(doc);
	return ret;
}
