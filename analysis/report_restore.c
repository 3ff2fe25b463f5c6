/* The restore driver in the report: one row per strategy, cache state
 * and size, its CSV file, its report.md tables, its summary lines and its
 * plot. */
#include "report_driver.h"
#include "report_int.h"

#include "err.h"
#include "result.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- restore rows: one per strategy x cache x mem x ws ---- */

enum { RP_FIRST_RUN, RP_FIRST_PROGRESS, RP_DONE, RP_REQUEST, NR_RP };
static const char *const rp_names[NR_RP] = { "first_run", "first_progress",
					     "done", "request" };

struct rrow {
	char strategy[32], cache[8];
	json_int_t mem, ws;
	int order; /* first appearance of the strategy */
	size_t n;
	double med[NR_RP], done_p90, faults, mib;
	/* the host's work for the process: page faults (all, major) and
	 * MiB fetched from storage, NAN when the document lacks them */
	double host_faults, major_faults, disk_mib;
};

/* The rows, and lookups that were scans of every row (quadratic in a
 * document of many strategies or sizes): `at`, the first row of each
 * (strategy, cache, mem, ws) by its row_key, and `order`, each
 * strategy's order, both while the rows are made; `found` the first row
 * of each key in the sorted rows, and the same key without the cache. */
struct rrows {
	struct rrow *v;
	size_t n, cap;
	json_t *at, *order, *found;
};

static void rrows_free(struct rrows *rows)
{
	free(rows->v);
	json_decref(rows->at);
	json_decref(rows->order);
	json_decref(rows->found);
	*rows = (struct rrows){ 0 };
}

/* A row's key; cache NULL: any cache. Lengths keep names apart that
 * would run together. NULL without memory. */
static char *row_key(const char *strategy, const char *cache,
		     json_int_t mem, json_int_t ws)
{
	char *key;

	if (asprintf(&key, "%zu:%s%s%zu:%s:%" JSON_INTEGER_FORMAT ":%"
		     JSON_INTEGER_FORMAT, strlen(strategy), strategy,
		     cache ? "" : "*", cache ? strlen(cache) : 0,
		     cache ? cache : "", mem, ws) < 0)
		return NULL;
	return key;
}

/* The value of `key` (made by row_key, freed here) in index, or -1;
 * with `put` >= 0 it becomes that value when absent. */
static json_int_t index_at(json_t *index, char *key, json_int_t put)
{
	const json_t *v = key ? json_object_get(index, key) : NULL;
	json_int_t at = v ? json_integer_value(v) : -1;

	if (key && !v && put >= 0)
		json_object_set_new_nocheck(index, key, json_integer(put));
	free(key);
	return at;
}

/* The row of strategy, cache and sizes, made when there is none. Rows
 * hold their names made safe (safe_name, cut short), and a name is found
 * only as such, as when each row was compared in turn. */
static struct rrow *rrow_get(struct rrows *rows, const char *strategy,
			     const char *cache, json_int_t mem, json_int_t ws)
{
	const json_t *first = json_object_get(rows->order, strategy);
	int order = first ? (int)json_integer_value(first) : (int)rows->n;
	json_int_t at = index_at(rows->at, row_key(strategy, cache, mem, ws),
				 -1);
	struct rrow *w;

	if (at >= 0)
		return &rows->v[at];
	if (rows->n == rows->cap) {
		size_t cap = rows->cap ? 2 * rows->cap : 32;
		struct rrow *v = realloc(rows->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		rows->v = v;
		rows->cap = cap;
	}
	rows->v[rows->n] = (struct rrow){ .mem = mem, .ws = ws, .order = order,
					  .host_faults = NAN,
					  .major_faults = NAN,
					  .disk_mib = NAN };
	w = &rows->v[rows->n];
	safe_name(w->strategy, sizeof(w->strategy), strategy);
	safe_name(w->cache, sizeof(w->cache), cache);
	index_at(rows->at, row_key(w->strategy, w->cache, mem, ws),
		 (json_int_t)rows->n);
	if (!json_object_get(rows->order, w->strategy))
		json_object_set_new_nocheck(rows->order, w->strategy,
					    json_integer(order));
	rows->n++;
	return w;
}

/* Documents from before a field existed (or without I/O accounting)
 * give NAN, shown as "-" or an empty CSV field. */
static double number_or_nan(const json_t *o, const char *key)
{
	const json_t *v = get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* "mem 64 MiB, ws 16 MiB"; without a working set (a Linux guest's
 * snapshot, `bench restore --snapshot`: unknown, 0) "mem 256 MiB". */
static const char *size_text(char *buf, size_t len, json_int_t mem,
			     json_int_t ws)
{
	if (ws)
		snprintf(buf, len, "mem %" JSON_INTEGER_FORMAT " MiB, ws %"
			 JSON_INTEGER_FORMAT " MiB", mem >> 20, ws >> 20);
	else
		snprintf(buf, len, "mem %" JSON_INTEGER_FORMAT " MiB",
			 mem >> 20);
	return buf;
}

/* A working set in MiB, `none` when unknown (0). */
static const char *ws_text(char *buf, size_t len, json_int_t ws,
			   const char *none)
{
	if (ws)
		snprintf(buf, len, "%" JSON_INTEGER_FORMAT, ws >> 20);
	else
		snprintf(buf, len, "%s", none);
	return buf;
}

/* An overview column's size: "64/16" (mem/ws MiB); "32 MiB" without a
 * working set, where a pair would read "32/-". */
static const char *cell_text(char *buf, size_t len, json_int_t mem,
			     json_int_t ws)
{
	if (ws)
		snprintf(buf, len, "%" JSON_INTEGER_FORMAT "/%"
			 JSON_INTEGER_FORMAT, mem >> 20, ws >> 20);
	else
		snprintf(buf, len, "%" JSON_INTEGER_FORMAT " MiB", mem >> 20);
	return buf;
}

/* "%.*f" of v, or `none` when v is NAN. */
static const char *num_text(char *buf, size_t len, double v, int prec,
			    const char *none)
{
	if (isnan(v))
		snprintf(buf, len, "%s", none);
	else
		snprintf(buf, len, "%.*f", prec, v);
	return buf;
}

static void rrow_add(struct rrows *rows, const struct input *in,
		     const json_t *s)
{
	const json_t *p = get(s, "params");
	const char *phase = str_or(p, "phase", "");
	const struct result_series *rs = result__find(&in->doc,
						      str_or(s, "name", ""));
	struct rrow *w;
	struct sstat st;
	int ph;

	for (ph = 0; ph < NR_RP && strcmp(phase, rp_names[ph]); ph++)
		;
	if (ph == NR_RP || !rs || !json_is_string(get(p, "strategy")) ||
	    report__stats(in, (size_t)(rs - in->doc.series), &st) < 0)
		return;
	w = rrow_get(rows, str_or(p, "strategy", ""), str_or(p, "cache", "-"),
		     json_integer_value(get(p, "mem_bytes")),
		     json_integer_value(get(p, "ws_bytes")));
	if (!w)
		return;
	w->n = st.s.n;
	w->med[ph] = st.s.p50 / 1e6;
	if (ph == RP_REQUEST && !strcmp(w->strategy, "never-stopped"))
		w->med[RP_DONE] = st.s.p50 / 1e6; /* its DONE is the request */
	if (ph == RP_DONE) {
		w->done_p90 = st.s.p90 / 1e6;
		w->faults = json_number_value(get(s, "faults_mean"));
		w->mib = json_number_value(get(s, "bytes_read_mean")) / 1048576.0;
		w->host_faults = number_or_nan(s, "host_faults_mean");
		w->major_faults = number_or_nan(s, "major_faults_mean");
		w->disk_mib = number_or_nan(s, "disk_read_bytes_mean") /
			      1048576.0;
	}
}

static int rrow_cmp(const void *a, const void *b)
{
	const struct rrow *x = a, *y = b;
	int c;

	if (x->order != y->order)
		return x->order - y->order;
	c = strcmp(y->cache, x->cache); /* warm before cold */
	if (c)
		return c;
	if (x->ws != y->ws)
		return x->ws < y->ws ? -1 : 1;
	return (x->mem > y->mem) - (x->mem < y->mem);
}

static void restore_rows(const struct input *in, struct rrows *rows)
{
	const json_t *s;
	size_t i;

	*rows = (struct rrows){ .at = json_object(), .order = json_object(),
				.found = json_object() };
	if (!rows->at || !rows->order || !rows->found)
		return;
	json_array_foreach(get(in->root, "series"), i, s)
		rrow_add(rows, in, s);
	if (rows->n)
		qsort(rows->v, rows->n, sizeof(*rows->v), rrow_cmp);
	for (size_t k = 0; k < rows->n; k++) {
		const struct rrow *w = &rows->v[k];

		index_at(rows->found, row_key(w->strategy, w->cache, w->mem,
					      w->ws), (json_int_t)k);
		index_at(rows->found, row_key(w->strategy, NULL, w->mem,
					      w->ws), (json_int_t)k);
	}
}

static void restore_csv(FILE *f, const struct report *r)
{
	int i = report__find_input(r, "restore");
	struct rrows rows = { 0 };

	/* new columns go at the end, so readers of the old ones keep
	 * working */
	fputs("strategy,cache,mem_mib,ws_mib,n,first_run_ms,first_progress_ms,"
	      "done_ms,done_p90_ms,request_ms,faults,mib_read,host_faults,"
	      "major_faults,disk_mib_read\n", f);
	if (i < 0)
		return;
	restore_rows(&r->in[i], &rows);
	for (size_t k = 0; k < rows.n; k++) {
		const struct rrow *w = &rows.v[k];
		char hf[32], mf[32], dm[32], ws[32];

		/* an unknown working set is empty, not 0: no size */
		fprintf(f, "%s,%s,%" JSON_INTEGER_FORMAT ",%s,%zu,%.4f,%.4f,"
			"%.4f,%.4f,%.4f,%.0f,%.2f,%s,%s,%s\n", w->strategy,
			w->cache, w->mem >> 20,
			ws_text(ws, sizeof(ws), w->ws, ""), w->n,
			w->med[RP_FIRST_RUN], w->med[RP_FIRST_PROGRESS],
			w->med[RP_DONE], w->done_p90, w->med[RP_REQUEST],
			w->faults, w->mib,
			num_text(hf, sizeof(hf), w->host_faults, 0, ""),
			num_text(mf, sizeof(mf), w->major_faults, 0, ""),
			num_text(dm, sizeof(dm), w->disk_mib, 2, ""));
	}
	rrows_free(&rows);
}

static void md_restore_row(FILE *md, const struct rrow *w)
{
	char hf[32], mf[32], dm[32], ws[32];

	/* the never-stopped VM has only its request phase */
	if (!strcmp(w->strategy, "never-stopped")) {
		fprintf(md, "| never stopped | - | %" JSON_INTEGER_FORMAT " | %s "
			"| - | - | - | %.3f | - | - | - | - | - |\n",
			w->mem >> 20, ws_text(ws, sizeof(ws), w->ws, "-"),
			w->med[RP_REQUEST]);
		return;
	}
	fprintf(md, "| %s | %s | %" JSON_INTEGER_FORMAT " | %s | %.3f | %.3f "
		"| %.3f | %.3f | %.0f | %.1f | %s | %s | %s |\n", w->strategy,
		w->cache, w->mem >> 20, ws_text(ws, sizeof(ws), w->ws, "-"),
		w->med[RP_FIRST_RUN], w->med[RP_DONE],
		w->done_p90, w->med[RP_REQUEST], w->faults, w->mib,
		num_text(hf, sizeof(hf), w->host_faults, 0, "-"),
		num_text(mf, sizeof(mf), w->major_faults, 0, "-"),
		num_text(dm, sizeof(dm), w->disk_mib, 1, "-"));
}

/* The cells (mem, ws) in the rows' order: sizes, without cache state. */
struct cell {
	json_int_t mem, ws;
};

#define MAX_CELLS 16

static size_t cells_of(const struct rrows *rows, struct cell *c)
{
	size_t n = 0;

	for (size_t k = 0; k < rows->n; k++) {
		size_t j;

		for (j = 0; j < n && (c[j].mem != rows->v[k].mem ||
				      c[j].ws != rows->v[k].ws); j++)
			;
		if (j == n && n < MAX_CELLS)
			c[n++] = (struct cell){ rows->v[k].mem, rows->v[k].ws };
	}
	return n;
}

/* The cell the work table shows: the largest memory, then the largest
 * working set in it (where the strategies differ most). */
static struct cell main_cell(const struct cell *c, size_t n)
{
	struct cell m = c[0];

	for (size_t i = 1; i < n; i++)
		if (c[i].mem > m.mem || (c[i].mem == m.mem && c[i].ws > m.ws))
			m = c[i];
	return m;
}

/* The first row of strategy, cache (NULL: any) and cell c. */
static const struct rrow *find_row(const struct rrows *rows,
				   const char *strategy, const char *cache,
				   const struct cell *c)
{
	json_int_t k = index_at(rows->found, row_key(strategy, cache, c->mem,
						     c->ws), -1);

	return k >= 0 ? &rows->v[k] : NULL;
}

static const char *const caches[] = { "warm", "cold", "-" };

/* restore -> DONE medians: a row per strategy, a column per cache state
 * and size, so every cell shows at a glance. */
static void md_overview(FILE *md, const struct rrows *rows,
			const struct cell *c, size_t nc)
{
	bool any_ws = false;
	char sz[48];

	for (size_t i = 0; i < nc; i++)
		any_ws |= c[i].ws != 0;
	fprintf(md, "\nrestore -> DONE, median ms (never stopped: its request "
		"phase), per page-cache state and %s:\n\n| strategy |",
		any_ws ? "size (mem/ws MiB)" : "memory size");
	for (size_t h = 0; h < 2; h++)
		for (size_t i = 0; i < nc; i++)
			if (find_row(rows, "mmap", caches[h], &c[i]) ||
			    find_row(rows, "prefetch", caches[h], &c[i]))
				fprintf(md, " %s %s |", caches[h],
					cell_text(sz, sizeof(sz), c[i].mem,
						  c[i].ws));
	fputs("\n|---|", md);
	for (size_t h = 0; h < 2; h++)
		for (size_t i = 0; i < nc; i++)
			if (find_row(rows, "mmap", caches[h], &c[i]) ||
			    find_row(rows, "prefetch", caches[h], &c[i]))
				fputs("--:|", md);
	for (size_t k = 0; k < rows->n; k++) {
		const char *s = rows->v[k].strategy;
		bool never = !strcmp(s, "never-stopped");

		if (k && !strcmp(rows->v[k - 1].strategy, s))
			continue;
		fprintf(md, "\n| %s |", never ? "never stopped" : s);
		for (size_t h = 0; h < 2; h++)
			for (size_t i = 0; i < nc; i++) {
				const struct rrow *w = find_row(
					rows, s, never ? NULL : caches[h], &c[i]);

				if (!find_row(rows, "mmap", caches[h], &c[i]) &&
				    !find_row(rows, "prefetch", caches[h], &c[i]))
					continue;
				if (w)
					fprintf(md, " %.2f |", w->med[RP_DONE]);
				else
					fputs(" - |", md);
			}
	}
	fputc('\n', md);
}

static void md_restore(struct report *r, const struct input *in)
{
	struct rrows rows = { 0 };
	struct cell cells[MAX_CELLS], m;
	const json_t *x;
	char sz[64];
	size_t i, nc;

	restore_rows(in, &rows);
	nc = cells_of(&rows, cells);
	if (nc)
		md_overview(r->md, &rows, cells, nc);
	m = nc ? main_cell(cells, nc) : (struct cell){ 0 };
	fprintf(r->md, "\nWork per restore at %s (the largest cell; every cell "
		"is in restore.csv), means: uffd faults and MiB read are what "
		"the strategy did itself (userfaults served, bytes it read); "
		"host faults (minor + major), major faults and disk MiB are "
		"what the host did for the whole process (getrusage, "
		"/proc/self/io read_bytes: storage reads, 0 when the page cache "
		"served them).\n\n| strategy | cache | mem MiB | ws MiB | "
		"first KVM_RUN ms | DONE ms | DONE p90 ms | request ms | uffd "
		"faults | MiB read | host faults | major faults | disk MiB |\n"
		"|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
		size_text(sz, sizeof(sz), m.mem, m.ws));
	for (size_t k = 0; k < rows.n; k++)
		if (rows.v[k].mem == m.mem && rows.v[k].ws == m.ws)
			md_restore_row(r->md, &rows.v[k]);
	rrows_free(&rows);
	if (json_array_size(get(in->root, "ratios")))
		fputs("\nprefetch and prefetch-thp against the baselines (restore -> DONE "
		      "medians; targets: at most 1.2x the never-stopped request "
		      "phase, at least 3x faster than mmap):\n\n", r->md);
	json_array_foreach(get(in->root, "ratios"), i, x) {
		const json_t *vs = get(x, "prefetch_vs_never_stopped");
		const json_t *sp = get(x, "prefetch_speedup_over_mmap");

		const char *name = str_or(x, "strategy", "prefetch");

		fprintf(r->md, "- %s, %s cache: %s %.3f ms",
			size_text(sz, sizeof(sz),
				  json_integer_value(get(x, "mem_bytes")),
				  json_integer_value(get(x, "ws_bytes"))),
			str_or(x, "cache", "?"), name,
			json_number_value(get(x, "prefetch_done_ns")) / 1e6);
		if (json_is_number(vs))
			fprintf(r->md, " = %.2fx never-stopped (%.3f ms)",
				json_number_value(vs),
				json_number_value(get(x, "never_stopped_request_ns")) / 1e6);
		if (json_is_number(sp))
			fprintf(r->md, "; mmap %.3f ms = %.2fx %s",
				json_number_value(get(x, "mmap_done_ns")) / 1e6,
				json_number_value(sp), name);
		fputc('\n', r->md);
	}
	/* one row per strategy, size, cache and phase: too many */
	fprintf(r->md, "\nAll %zu restore series (strategy/mem/ws/cache/"
		"phase) with n, percentiles and the 95 %% interval of the "
		"median are in series.csv; the tables above hold their "
		"medians.\n", in->doc.nr_series);
}

/* Per size and cache state, of its rows with samples: the first, the
 * one with the lowest restore -> DONE median (the first of equals) and
 * the last of mmap. */
struct sum_cell {
	const struct rrow *first, *best, *mmap;
};

/* cell_of[k]: row k's sum_cell in cells (-1: none, no samples); one
 * pass, where a pass over every row per row was quadratic. */
static int sum_cells(const struct rrows *rows, struct sum_cell *cells,
		     json_int_t *cell_of)
{
	json_t *ids = json_object();
	json_int_t nc = 0;

	if (!ids)
		return -ENOMEM;
	for (size_t k = 0; k < rows->n; k++) {
		const struct rrow *x = &rows->v[k];
		struct sum_cell *c;
		json_int_t id;

		cell_of[k] = -1;
		if (x->n == 0)
			continue;
		id = index_at(ids, row_key("", x->cache, x->mem, x->ws), nc);
		if (id < 0) {
			id = nc++;
			cells[id] = (struct sum_cell){ .first = x, .best = x };
		}
		c = &cells[id];
		cell_of[k] = id;
		if (x->med[RP_DONE] < c->best->med[RP_DONE])
			c->best = x;
		if (!strcmp(x->strategy, "mmap"))
			c->mmap = x;
	}
	json_decref(ids);
	return 0;
}

/* Per size and cache state: the strategy with the lowest restore -> DONE
 * median, and mmap's restore -> first KVM_RUN. */
static void sum_restore_cell(FILE *md, const struct sum_cell *c)
{
	const struct rrow *w = c->first;
	char t[48], sz[64];

	report__time_text(t, sizeof(t), c->best->med[RP_DONE] * 1e6);
	fprintf(md, "  - %s, %s: fastest %s, %s to DONE",
		size_text(sz, sizeof(sz), w->mem, w->ws), w->cache,
		c->best->strategy, t);
	if (c->mmap) {
		report__time_text(t, sizeof(t),
				  c->mmap->med[RP_FIRST_RUN] * 1e6);
		fprintf(md, "; mmap first KVM_RUN %s", t);
	}
	fputc('\n', md);
}

static void sum_restore(FILE *md, const struct input *in)
{
	struct rrows rows = { 0 };
	char name[REPORT_NAME_LEN];
	struct sum_cell *cells;
	json_int_t *cell_of;

	restore_rows(in, &rows);
	cells = calloc(rows.n + 1, sizeof(*cells));
	cell_of = calloc(rows.n + 1, sizeof(*cell_of));
	fprintf(md, "- %s, medians from restore start:\n",
		report__summary_name(name, sizeof(name), in));
	if (!cells || !cell_of || sum_cells(&rows, cells, cell_of) < 0)
		rows.n = 0; /* no memory: no lines */
	/* a cell is shown at its first row, unless that is never-stopped */
	for (size_t k = 0; k < rows.n; k++)
		if (strcmp(rows.v[k].strategy, "never-stopped") &&
		    cell_of[k] >= 0 && cells[cell_of[k]].first == &rows.v[k])
			sum_restore_cell(md, &cells[cell_of[k]]);
	free(cells);
	free(cell_of);
	rrows_free(&rows);
}

static int cell_cmp(const void *a, const void *b)
{
	const struct cell *x = a, *y = b;

	if (x->mem != y->mem)
		return x->mem < y->mem ? -1 : 1;
	return (x->ws > y->ws) - (x->ws < y->ws);
}

/* The restore document's sizes as "MEM:WS" words in MiB, by memory then
 * working set ("64:16 256:16 256:64"; WS empty where it is not known,
 * "32:" for a Linux guest's snapshot, as restore.csv's ws_mib), and
 * whether any has a working set; NULL when none. Free it. */
static char *restore_cells(const struct report *r, bool *any_ws)
{
	int i = report__find_input(r, "restore");
	struct rrows rows = { 0 };
	struct cell cells[MAX_CELLS];
	char *text = NULL;
	size_t len = 0, nc;
	FILE *f;

	*any_ws = false;
	if (i < 0)
		return NULL;
	restore_rows(&r->in[i], &rows);
	nc = cells_of(&rows, cells);
	rrows_free(&rows);
	qsort(cells, nc, sizeof(cells[0]), cell_cmp);
	f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	for (size_t k = 0; k < nc; k++) {
		char ws[32];

		fprintf(f, "%s%" JSON_INTEGER_FORMAT ":%s", k ? " " : "",
			cells[k].mem >> 20,
			ws_text(ws, sizeof(ws), cells[k].ws, ""));
		*any_ws |= cells[k].ws != 0;
	}
	fclose(f);
	return text;
}

/* Removes the word `word` from a " a b c " list; whether it was there. */
static bool drop_word(char *list, const char *word)
{
	char key[64];
	char *p;

	snprintf(key, sizeof(key), " %s ", word);
	p = list ? strstr(list, key) : NULL;
	if (p)
		memmove(p, p + strlen(key) - 1, strlen(p + strlen(key) - 1) + 1);
	return p != NULL;
}

static void plot_restore(struct report *r)
{
	char *strategies = report__csv_column(r, restore_csv, 0);
	char *cache_words = report__csv_column(r, restore_csv, 1);
	bool any_ws, baseline;
	char *cells = restore_cells(r, &any_ws), *vars = NULL;

	/* drawn as the baseline, where there is one (a user's snapshot,
	 * `bench restore --snapshot`, has none) */
	baseline = drop_word(strategies, "never-stopped");
	drop_word(cache_words, "-");
	if (strategies && cache_words && cells && cells[0] &&
	    asprintf(&vars, "in='restore.csv'; strategies='%s'; cells='%s'; "
		     "caches='%s'; baseline=%d", strategies, cells,
		     cache_words, baseline) >= 0)
		report__plot_show(r, "restore", "restore", vars, any_ws ?
				  "restore strategies per memory and working-set "
				  "size" : "restore strategies per memory size");
	free(vars);
	free(strategies);
	free(cache_words);
	free(cells);
}

const struct report_driver report_driver_restore = {
	.name = "restore",
	.summary = sum_restore,
	.md = md_restore,
	.own_series = true,
	.csv_name = "restore.csv",
	.csv = restore_csv,
	.plot = plot_restore,
	.plot_what = "restore strategies against memory size",
};
