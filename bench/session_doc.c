/* bench session's result document (session_int.h): per-turn series,
 * the turns, the drift, the fresh boots, and its Markdown. */
#include "session_int.h"

#include "result.h"
#include "result_new.h"
#include "stats.h"
#include "units.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A per-turn series: sample i is the i-th turn recorded (turn i + 1,
 * but under --kills a turn whose child was killed after its save goes
 * unrecorded). */
static int add_series(json_t *doc, const struct session *s,
		      const char *name, const char *unit,
		      double (*get)(const struct turn *))
{
	double *v = calloc(s->done ? s->done : 1, sizeof(*v));
	json_t *js;

	if (!v)
		return -ENOMEM;
	for (uint64_t i = 0; i < s->done; i++)
		v[i] = get(&s->t[i]);
	js = result__add_series(doc, name, unit, RESULT_LOWER,
				json_pack("{s:s}", "per", "turn"), v,
				(size_t)s->done);
	free(v);
	return js ? 0 : -ENOMEM;
}

static double g_resume(const struct turn *t) { return t->resume_ns; }
static double g_command(const struct turn *t) { return t->command_ns; }
static double g_snapshot(const struct turn *t)
{
	return t->pause_ns + t->save_ns;
}
static double g_bytes(const struct turn *t)
{
	return (double)(t->mem_bytes + t->disk_bytes);
}
static double g_chain(const struct turn *t) { return t->chain; }

static json_t *turns_json(const struct session *s)
{
	json_t *a = json_array();

	for (uint64_t i = 0; i < s->done; i++) {
		const struct turn *t = &s->t[i];

		json_array_append_new(a, json_pack(
			"{s:I, s:f, s:f, s:f, s:f, s:I, s:I, s:I, s:f, s:i, "
			"s:b, s:f, s:I}", "turn", (json_int_t)t->no,
			"resume_to_first_output_ns", t->resume_ns,
			"command_ns", t->command_ns, "pause_ns", t->pause_ns,
			"save_ns", t->save_ns, "mem_bytes",
			(json_int_t)t->mem_bytes, "disk_bytes",
			(json_int_t)t->disk_bytes, "changed_bytes",
			(json_int_t)t->changed_bytes, "saved_per_changed",
			t->changed_bytes ? (double)(t->mem_bytes +
						    t->disk_bytes) /
						   (double)t->changed_bytes
					 : 0.0,
			"chain_length", (int)t->chain, "merged", t->merged,
			"merge_ns", t->merge_ns, "merged_bytes",
			(json_int_t)t->merged_bytes));
	}
	return a;
}

/* The median resume to first output of turns [from, from + n); 0 when
 * there are none or out of memory. */
static double resume_median(const struct session *s, uint64_t from,
			    uint64_t n)
{
	double *v = calloc(n ? n : 1, sizeof(*v)), m = 0;

	for (uint64_t i = 0; v && i < n; i++)
		v[i] = s->t[from + i].resume_ns;
	if (!v || stats__median(v, n, &m) < 0)
		m = 0;
	free(v);
	return m;
}

/* Resume drift: the median of the last three turns' resume over the
 * first three's (as the report finds it again from the turns). */
static double drift(const struct session *s)
{
	uint64_t n = s->done < 3 ? s->done : 3;
	double first = resume_median(s, 0, n);

	return first > 0 ? resume_median(s, s->done - n, n) / first : 0;
}

/* Median resume to first output over median fresh boot to it. */
static double resume_over_boot(const struct session *s)
{
	double boot = 0;

	if (stats__median(s->boot_ns, s->boots, &boot) < 0 || boot <= 0)
		return 0;
	return resume_median(s, 0, s->done) / boot;
}

json_t *session__result(const struct session *s)
{
	const struct session_opts *o = s->o;
	json_t *doc = result__new("session", json_pack(
		"{s:s, s:s, s:s, s:I, s:s, s:s, s:s, s:s, s:I, s:I}",
		"snapshot", o->snapshot, "kernel", s->info.guest.kernel,
		"initrd", s->info.guest.initrd, "turns",
		(json_int_t)o->turns, "exec", o->exec, "snapshots",
		o->full ? "full" : "diff", "merge",
		o->full ? "none (full snapshots)" : o->merge_text,
		"strategy", o->strategy->name, "think_ns",
		(json_int_t)o->think_ns, "turns_done", (json_int_t)s->done));

	if (!doc)
		return NULL;
	if (add_series(doc, s, "resume_to_first_output", "ns", g_resume) ||
	    add_series(doc, s, "command", "ns", g_command) ||
	    add_series(doc, s, "pause_and_snapshot", "ns", g_snapshot) ||
	    add_series(doc, s, "snapshot_bytes", "bytes", g_bytes) ||
	    add_series(doc, s, "chain_length", "count", g_chain)) {
		json_decref(doc);
		return NULL;
	}
	json_object_set_new(doc, "turns", turns_json(s));
	json_object_set_new(doc, "resume_drift", json_real(drift(s)));
	if (s->boots && !result__add_series(doc, "fresh_boot_to_first_output",
					    "ns", RESULT_LOWER,
					    json_pack("{s:s}", "per", "boot"),
					    s->boot_ns, (size_t)s->boots)) {
		json_decref(doc);
		return NULL;
	}
	if (s->boots)
		json_object_set_new(doc, "resume_over_boot",
				    json_real(resume_over_boot(s)));
	if (s->kills)
		json_object_set(doc, "kills", s->kills);
	return doc;
}

void session__report(FILE *out, const json_t *doc)
{
	const json_t *turns = json_object_get(doc, "turns"), *t;
	size_t i;

	fputs("# coldstart session benchmark\n\n", out);
	fprintf(out, "Turns of `%s` on %s: each resumes the newest snapshot, "
		"runs the command and the continuity check, pauses and saves "
		"a %s snapshot (merge policy %s).\n\n",
		json_string_value(json_object_get(json_object_get(doc, "config"),
						  "exec")),
		json_string_value(json_object_get(json_object_get(doc, "config"),
						  "snapshot")),
		json_string_value(json_object_get(json_object_get(doc, "config"),
						  "snapshots")),
		json_string_value(json_object_get(json_object_get(doc, "config"),
						  "merge")));
	fputs("| turn | resume -> first output ms | command ms | pause + "
	      "snapshot ms | saved MiB | changed MiB | saved / changed | "
	      "chain | merge ms |\n|---|---|---|---|---|---|---|---|---|\n",
	      out);
	json_array_foreach(turns, i, t) {
		double saved = (double)json_integer_value(
			json_object_get(t, "mem_bytes")) +
			(double)json_integer_value(json_object_get(t, "disk_bytes"));

		char merge[32] = "-";

		if (json_is_true(json_object_get(t, "merged")))
			snprintf(merge, sizeof(merge), "%.1f",
				 json_real_value(json_object_get(t, "merge_ns")) /
					 1e6);
		fprintf(out, "| %d | %.1f | %.1f | %.1f | %.2f | %.2f | %.2f "
			"| %d | %s |\n",
			(int)json_integer_value(json_object_get(t, "turn")),
			json_real_value(json_object_get(t,
				"resume_to_first_output_ns")) / 1e6,
			json_real_value(json_object_get(t, "command_ns")) / 1e6,
			(json_real_value(json_object_get(t, "pause_ns")) +
			 json_real_value(json_object_get(t, "save_ns"))) / 1e6,
			saved / MiB,
			(double)json_integer_value(json_object_get(
				t, "changed_bytes")) / MiB,
			json_real_value(json_object_get(t, "saved_per_changed")),
			(int)json_integer_value(json_object_get(t, "chain_length")),
			merge);
	}
	fprintf(out, "\nResume drift (median of the last three turns over the "
		"first three): %.2fx.\n",
		json_real_value(json_object_get(doc, "resume_drift")));
	if (json_object_get(doc, "resume_over_boot"))
		fprintf(out, "Resume to first output over a fresh boot to first "
			"output of the same guest and command (medians, "
			"process start for the boot): %.2fx.\n",
			json_real_value(json_object_get(doc,
							"resume_over_boot")));
}
