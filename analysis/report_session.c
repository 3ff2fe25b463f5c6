/* The session driver in the report: turns, resume drift, bytes and merges
 * in the Summary, the per-turn table, which merge policy tune session's
 * rule picks, session.csv and its plot; all from the document's "turns". */
#include "merge_pick.h"
#include "report_driver.h"
#include "report_int.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A turn's number field, NAN when missing or not a number. */
static double num(const json_t *t, const char *key)
{
	const json_t *v = get(t, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The sum of two number fields, NAN when either is missing. */
static double sum2(const json_t *t, const char *a, const char *b)
{
	return num(t, a) + num(t, b);
}

static double saved_bytes(const json_t *t)
{
	return sum2(t, "mem_bytes", "disk_bytes");
}

/* The median of the numbers among v[0..n) (NANs left out), NAN if none. */
static double median(double *v, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (!isnan(v[i]))
			v[k++] = v[i];
	if (!k)
		return NAN;
	qsort(v, k, sizeof(*v), cmp_double);
	return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

/* The median over turns [from, to) of what f gives; NAN if none. */
static double turns_median(const json_t *turns, size_t from, size_t to,
			   double (*f)(const json_t *))
{
	size_t n = to > from ? to - from : 0;
	double *v = calloc(n ? n : 1, sizeof(*v)), m;

	if (!v)
		return NAN;
	for (size_t i = 0; i < n; i++)
		v[i] = f(json_array_get(turns, from + i));
	m = median(v, n);
	free(v);
	return m;
}

static double f_resume(const json_t *t)
{
	return num(t, "resume_to_first_output_ns");
}

static double f_spc(const json_t *t) { return num(t, "saved_per_changed"); }

static double f_merge(const json_t *t)
{
	return json_is_true(get(t, "merged")) ? num(t, "merge_ns") : NAN;
}

/* The turns' array, or NULL when the document has none. */
static const json_t *turns_of(const struct input *in)
{
	const json_t *t = get(in->root, "turns");

	return json_is_array(t) ? t : NULL;
}

/* The median resume of the first three turns and of the last three, and
 * the ratio (bench/session.c's "resume_drift", found again here). */
struct drift {
	double first, last, ratio;
};

static struct drift drift_of(const json_t *turns)
{
	size_t n = json_array_size(turns), k = n < 3 ? n : 3;
	struct drift d = {
		.first = turns_median(turns, 0, k, f_resume),
		.last = turns_median(turns, n - k, n, f_resume),
	};

	d.ratio = d.first > 0 ? d.last / d.first : NAN;
	return d;
}

/* Bytes the session wrote: every turn's snapshot and every merge's. */
static double written_bytes(const json_t *turns)
{
	const json_t *t;
	double w = 0;
	size_t i;

	json_array_foreach(turns, i, t) {
		double m = num(t, "merged_bytes");

		w += isnan(saved_bytes(t)) ? 0 : saved_bytes(t);
		w += isnan(m) ? 0 : m;
	}
	return w;
}

static const char *time_or_dash(char *buf, size_t len, double ns)
{
	if (isnan(ns))
		return "-";
	report__time_text(buf, len, ns);
	return buf;
}

/* v with prec decimals, "-" when missing. */
static const char *fmt_or_dash(char *buf, size_t len, int prec, double v)
{
	if (isnan(v))
		return "-";
	snprintf(buf, len, "%.*f", prec, v);
	return buf;
}

static void sum_session(FILE *md, const struct input *in)
{
	const json_t *turns = turns_of(in), *cfg = get(in->root, "config"), *t;
	char name[REPORT_NAME_LEN], a[48], b[48], c[48], d[48], e[48], f[48];
	char g[48];
	size_t n = json_array_size(turns), merges = 0, i;
	struct drift dr = drift_of(turns);

	json_array_foreach(turns, i, t)
		merges += json_is_true(get(t, "merged"));
	fprintf(md, "- %s: %zu turns of %s snapshots, merge policy %s; resume "
		"to first output %s (median), first three turns %s, last "
		"three %s (drift %sx); snapshot %s MiB per turn (median), "
		"saved/changed %s; %zu merges%s%s%s\n",
		report__summary_name(name, sizeof(name), in), n,
		str_or(cfg, "snapshots", "?"), str_or(cfg, "merge", "?"),
		time_or_dash(a, sizeof(a), turns_median(turns, 0, n, f_resume)),
		time_or_dash(b, sizeof(b), dr.first),
		time_or_dash(c, sizeof(c), dr.last),
		fmt_or_dash(d, sizeof(d), 2, dr.ratio),
		fmt_or_dash(e, sizeof(e), 2,
			    turns_median(turns, 0, n, saved_bytes) / MiB),
		fmt_or_dash(f, sizeof(f), 2,
			    turns_median(turns, 0, n, f_spc)),
		merges, merges ? ", " : "", merges ? time_or_dash(g, sizeof(g),
				turns_median(turns, 0, n, f_merge)) : "",
		merges ? " each (median)" : "");
}

static void md_turn(FILE *md, size_t i, const json_t *t)
{
	char c[9][32];
	const double turn = num(t, "turn");

	fprintf(md, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
		isnan(turn) ? fmt_or_dash(c[0], 32, 0, (double)(i + 1))
			    : fmt_or_dash(c[0], 32, 0, turn),
		fmt_or_dash(c[1], 32, 1, f_resume(t) / 1e6),
		fmt_or_dash(c[2], 32, 1, num(t, "command_ns") / 1e6),
		fmt_or_dash(c[3], 32, 1, sum2(t, "pause_ns", "save_ns") / 1e6),
		fmt_or_dash(c[4], 32, 2, saved_bytes(t) / MiB),
		fmt_or_dash(c[5], 32, 2, num(t, "changed_bytes") / MiB),
		fmt_or_dash(c[6], 32, 2, f_spc(t)),
		fmt_or_dash(c[7], 32, 0, num(t, "chain_length")),
		fmt_or_dash(c[8], 32, 1, f_merge(t) / 1e6));
}

/* The session documents among the inputs, as indexes; their number. */
static size_t session_inputs(const struct report *r, size_t *idx)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->in[i].doc.bench, "session"))
			idx[n++] = i;
	return n;
}

/* The candidate a session document is for merge_pick: its drift and
 * the bytes it wrote per turn. */
static struct merge_score score_of(const json_t *turns)
{
	size_t n = json_array_size(turns);

	return (struct merge_score){
		.drift = drift_of(turns).ratio,
		.bytes = n ? written_bytes(turns) / (double)n : NAN,
	};
}

/* After the last session document: when the inputs hold several merge
 * policies, the one merge_pick names, by the rule tune session uses. */
static void md_which_policy(struct report *r, const struct input *in)
{
	size_t *idx = calloc(r->n, sizeof(*idx)), n, policies = 0;
	struct merge_score *sc = calloc(r->n ? r->n : 1, sizeof(*sc));
	bool met = false;
	long best;

	if (!idx || !sc)
		goto out;
	n = session_inputs(r, idx);
	if (!n || &r->in[idx[n - 1]] != in)
		goto out;
	for (size_t k = 0; k < n; k++) {
		const char *p = str_or(get(r->in[idx[k]].root, "config"), "merge",
				       "?");
		size_t j = 0;

		while (j < k && strcmp(p, str_or(get(r->in[idx[j]].root,
						     "config"), "merge", "?")))
			j++;
		policies += j == k;
		sc[k] = score_of(turns_of(&r->in[idx[k]]));
	}
	best = merge_pick__choose(sc, n, MERGE_PICK_TARGET, &met);
	if (policies > 1 && best >= 0 && isfinite(sc[best].drift)) {
		const struct input *b = &r->in[idx[best]];
		const json_t *bt = turns_of(b);

		fprintf(r->md, "\nWhich policy: of these runs only, merge "
			"policy %s (%s) %s: its last three turns over its "
			"first three %.2fx, %.1f MiB written in all (snapshots "
			"and merges)%s; the rule, as tune session's: %s.\n",
			str_or(get(b->root, "config"), "merge", "?"), b->label,
			met ? "kept resume to first output within 1.20x of its "
			      "first turns' writing the fewest bytes per turn"
			    : "kept resume to first output flattest (none kept "
			      "it within 1.20x)",
			sc[best].drift, written_bytes(bt) / MiB,
			json_array_size(bt) < 6 ? ", though with fewer than six "
			"turns its first and last three overlap" : "",
			merge_pick__rule);
	}
out:
	free(sc);
	free(idx);
}

/* bench session --kills: how many kills the session survived, or where
 * its state was lost or torn. */
static void md_kills(FILE *md, const json_t *k)
{
	const json_t *f = get(k, "failure");
	char tmp[48];

	if (!json_is_object(k))
		return;
	if (json_is_object(f)) {
		fprintf(md, "\nCrash consistency (--kills, seed %.0f): the "
			"session's state was %s at kill %.0f of %.0f (%s %.0f): "
			"%s.\n", num(k, "seed"), str_or(f, "verdict", "?"),
			num(f, "kill"), num(k, "requested"), str_or(f, "of", "?"),
			num(f, "turn"), str_or(f, "what", "?"));
		return;
	}
	fprintf(md, "\nCrash consistency (--kills, seed %.0f): the session "
		"survived %.0f SIGKILLs of its turns and merges (%.0f finished "
		"first): %.0f turns and %.0f merges completed despite them, %s "
		"temporaries of killed writers; turn %.0f found every earlier "
		"turn's state.\n", num(k, "seed"), num(k, "made"),
		num(k, "finished_first"), num(k, "turns_completed"),
		num(k, "merges_completed"),
		fmt_or_dash(tmp, sizeof(tmp), 0,
			    num(k, "temporaries_removed_by_next_writer") +
				    num(k, "temporaries_left")),
		num(k, "last_turn"));
}

static void md_session(struct report *r, const struct input *in)
{
	const json_t *turns = turns_of(in), *t;
	size_t i;

	fprintf(r->md, "\nTurns of `%s`, each resumed from the newest "
		"snapshot, paused and saved as a %s snapshot; merge policy "
		"%s.\n", str_or(get(in->root, "config"), "exec", "?"),
		str_or(get(in->root, "config"), "snapshots", "?"),
		str_or(get(in->root, "config"), "merge", "?"));
	md_kills(r->md, get(in->root, "kills"));
	if (!turns) {
		fputs("\nThe document has no turns table.\n", r->md);
		md_which_policy(r, in);
		return;
	}
	fputs("\n| turn | resume -> first output ms | command ms | pause + "
	      "snapshot ms | saved MiB | changed MiB | saved / changed | "
	      "chain | merge ms |\n|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
	      r->md);
	json_array_foreach(turns, i, t)
		md_turn(r->md, i, t);
	md_which_policy(r, in);
}

/* A CSV number, empty when missing (gnuplot skips it). */
static void csv_num(FILE *f, int prec, double v, const char *sep)
{
	if (!isnan(v))
		fprintf(f, "%.*f", prec, v);
	fputs(sep, f);
}

/* One line per turn per session document, named "LABEL/POLICY" so
 * several sessions share one plot. */
static void session_csv(FILE *f, const struct report *r)
{
	fputs("session,turn,resume_ms,command_ms,snapshot_ms,saved_mib,"
	      "changed_mib,chain,merged\n", f);
	for (size_t i = 0; i < r->n; i++) {
		const json_t *turns = turns_of(&r->in[i]), *t;
		char name[160], safe[160];
		size_t k;

		if (strcmp(r->in[i].doc.bench, "session"))
			continue;
		snprintf(name, sizeof(name), "%s/%s", r->in[i].label,
			 str_or(get(r->in[i].root, "config"), "merge", "?"));
		safe_name(safe, sizeof(safe), name);
		json_array_foreach(turns, k, t) {
			double turn = num(t, "turn");

			fprintf(f, "%s,%.0f,", safe, isnan(turn) ? k + 1.0 : turn);
			csv_num(f, 3, f_resume(t) / 1e6, ",");
			csv_num(f, 3, num(t, "command_ns") / 1e6, ",");
			csv_num(f, 3, sum2(t, "pause_ns", "save_ns") / 1e6,
				",");
			csv_num(f, 3, saved_bytes(t) / MiB, ",");
			csv_num(f, 3, num(t, "changed_bytes") / MiB, ",");
			csv_num(f, 0, num(t, "chain_length"), ",");
			fprintf(f, "%d\n", json_is_true(get(t, "merged")));
		}
	}
}

static void plot_session(struct report *r)
{
	report__plot_table(r, "session", session_csv, 0, "sessions", NULL,
			   "session turns: resume, snapshot size, chain");
}

const struct report_driver report_driver_session = {
	.name = "session",
	.summary = sum_session,
	.md = md_session,
	.csv_name = "session.csv",
	.csv = session_csv,
	.plot = plot_session,
	.plot_what = "each session's resume, snapshot MiB and chain length "
		     "per turn",
};
