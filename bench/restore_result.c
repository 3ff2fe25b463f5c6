/* The restore benchmark's result document, its text and its Markdown. */
#include "restore.h"
#include "restore_int.h"

#include "err.h"
#include "result.h"
#include "result_new.h"
#include "stats.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static const char *const phase_names[RESTORE_NR_PHASES] = {
	[RESTORE_FIRST_RUN] = "first_run",
	[RESTORE_FIRST_PROGRESS] = "first_progress",
	[RESTORE_DONE] = "done",
	[RESTORE_REQUEST] = "request",
};

/* ---- the result ---- */

static json_t *sizes_json(const uint64_t *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_integer((json_int_t)v[i]));
	return a;
}

static json_t *strategies_json(const struct restore_opts *o)
{
	json_t *strategies = json_array();

	for (size_t i = 0; i < o->nr_strategies; i++)
		json_array_append_new(strategies,
				      json_string(o->strategies[i]->name));
	return strategies;
}

static json_t *cache_json(const struct restore_opts *o)
{
	json_t *cache = json_array();

	if (o->warm)
		json_array_append_new(cache, json_string("warm"));
	if (o->cold)
		json_array_append_new(cache, json_string("cold"));
	return cache;
}

static const char *cold_method(const struct restore_opts *o)
{
	return o->drop_caches ? "drop_caches" : "fsync+posix_fadvise(DONTNEED)";
}

/* --snapshot: the user's snapshot and the guest it holds. A Linux
 * guest's kernel and initrd are named by the paths it was booted from,
 * which result__new hashes into the document's guest; the probe guest's
 * shape is its parameters. */
static json_t *user_config_json(const struct restore_opts *o, const char *fs)
{
	const struct restore_snap *sn = &o->snap;
	json_t *c = json_pack(
		"{s:s, s:s, s:i, s:I, s:I, s:b, s:b, s:o, s:o, s:s, s:s, s:I, "
		"s:I, s:s, s:s, s:s*, s:s}",
		"snapshot", o->snapshot, "guest",
		sn->linux_guest ? "linux" : "probe", "vcpus", (int)sn->vcpus,
		"mem_bytes", (json_int_t)sn->mem_size, "mem_data_bytes",
		(json_int_t)sn->data_bytes, "compressed", sn->compressed,
		"diff", sn->diff, "strategies", strategies_json(o), "cache",
		cache_json(o), "cold_method", cold_method(o), "warm_method",
		"read every snapshot file", "count", (json_int_t)o->c.count,
		"warmup", (json_int_t)o->c.warmup, "snapshot_fs", fs, "wset",
		sn->had_wset ? "existing"
		: restore__has_file(o->snapshot, SNAPSHOT_WSET_FILE)
			? "recorded by this run" : "none",
		"exec", o->exec, "done_is",
		o->exec ? "the command's first output byte"
		: sn->linux_guest ? "the guest's done signal"
				  : "the request phase's DONE");

	if (c && sn->linux_guest)
		json_object_update_new(c, json_pack(
			"{s:s, s:o, s:s}", "kernel", sn->guest.kernel,
			"initrd", *sn->guest.initrd
				? json_string(sn->guest.initrd) : json_null(),
			"cmdline", sn->guest.cmdline));
	else if (c)
		json_object_update_new(c, json_pack(
			"{s:I, s:I, s:s, s:s}", "init_bytes",
			(json_int_t)sn->params.init_bytes, "ws_bytes",
			(json_int_t)sn->params.ws_bytes, "pattern",
			sn->params.pattern ? "random" : "seq", "op",
			sn->params.op ? "write" : "read"));
	return c;
}

static json_t *config_json(const struct restore_opts *o, const char *fs)
{
	if (o->snapshot)
		return user_config_json(o, fs);
	return json_pack("{s:s, s:i, s:o, s:o, s:o, s:o, s:s, s:s, s:s, s:s, "
			 "s:I, s:I, s:s}",
			 "guest", "probe", "vcpus", 1, "mem_bytes",
			 sizes_json(o->mems, o->nr_mems), "ws_bytes",
			 sizes_json(o->wss, o->nr_wss), "strategies",
			 strategies_json(o), "cache", cache_json(o),
			 "cold_method", cold_method(o),
			 "warm_method", "read every snapshot file",
			 "pattern", o->pattern ? "random" : "seq", "op",
			 o->op ? "write" : "read", "count",
			 (json_int_t)o->c.count, "warmup", (json_int_t)o->c.warmup,
			 "snapshot_fs", fs);
}

static double mean_of(uint64_t sum, size_t n)
{
	return n ? (double)sum / (double)n : 0;
}

/* What the strategy did itself (userfaults it served, bytes it read) and
 * what the host did for the process (page faults, storage reads). */
static void add_work(json_t *s, const struct cell *c)
{
	json_object_set_new(s, "faults_mean", json_real(mean_of(c->faults,
								c->n)));
	json_object_set_new(s, "bytes_read_mean",
			    json_real(mean_of(c->bytes_read, c->n)));
	json_object_set_new(s, "host_faults_mean",
			    json_real(mean_of(c->host.faults, c->n)));
	json_object_set_new(s, "major_faults_mean",
			    json_real(mean_of(c->host.major, c->n)));
	json_object_set_new(s, "disk_read_bytes_mean",
			    c->host.disk_read == RESTORE_NO_IO
				    ? json_null()
				    : json_real(mean_of(c->host.disk_read,
							c->n)));
}

/* "mem 64 MiB ws 16 MiB"; a Linux guest's working set is unknown. */
static void group_text(char *buf, size_t len, const struct group *g)
{
	if (g->ws)
		snprintf(buf, len, "mem %" PRIu64 " MiB ws %" PRIu64 " MiB",
			 g->mem / MiB, g->ws / MiB);
	else
		snprintf(buf, len, "mem %" PRIu64 " MiB", g->mem / MiB);
}

/* STRATEGY/memM/wsW/CACHE/PHASE for the probe snapshots this driver
 * makes; STRATEGY/snapshot-GUEST/memM/CACHE/PHASE for a user's snapshot:
 * nothing of its path or the host, so compare matches runs of the same
 * kind of snapshot (what it holds exactly is in config and guest). */
static void series_name(char *buf, size_t len, const struct restore_opts *o,
			const struct group *g, const char *strategy,
			const char *cache, const char *phase)
{
	if (o->snapshot)
		snprintf(buf, len, "%s/snapshot-%s/mem%" PRIu64 "M/%s/%s",
			 strategy, o->snap.linux_guest ? "linux" : "probe",
			 g->mem / MiB, cache, phase);
	else
		snprintf(buf, len, "%s/mem%" PRIu64 "M/ws%" PRIu64 "M/%s/%s",
			 strategy, g->mem / MiB, g->ws / MiB, cache, phase);
}

static int add_cell(json_t *doc, const struct restore_opts *o,
		    const struct group *g, const struct cell *c,
		    const char *cache)
{
	char text[64];

	for (int p = 0; p < RESTORE_NR_PHASES; p++) {
		char name[160];
		json_t *s, *params = json_pack(
			"{s:s, s:I, s:s, s:s}", "strategy", c->ops->name,
			"mem_bytes", (json_int_t)g->mem, "cache", cache,
			"phase", phase_names[p]);

		/* a Linux guest's working set is unknown: no ws_bytes */
		if (g->ws)
			json_object_set_new(params, "ws_bytes",
					    json_integer((json_int_t)g->ws));
		series_name(name, sizeof(name), o, g, c->ops->name, cache,
			    phase_names[p]);
		s = result__add_series(doc, name, "ns", RESULT_LOWER, params,
				       c->ns[p], c->n);
		if (!s)
			return -ENOMEM;
		add_work(s, c);
		if (!strcmp(cache, "cold"))
			json_object_set_new(s, "resident_before_max",
					    json_real(c->resident_max));
	}
	group_text(text, sizeof(text), g);
	if (!strcmp(cache, "cold") && c->resident_max > 0.01)
		result__warn(doc, "%s %s cold: up to %.0f %% of the memory file "
			     "was still cached before a restore", c->ops->name,
			     text, 100 * c->resident_max);
	return 0;
}

static double median_of(const double *v, size_t n)
{
	double m = 0;

	return n && stats__median(v, n, &m) == 0 ? m : 0;
}

static const struct cell *find_cell(const struct restore_opts *o,
				    const struct group *g, const char *name,
				    bool cold)
{
	const struct cell *cells = g->cells + (cold ? o->nr_strategies : 0);

	for (size_t i = 0; i < o->nr_strategies; i++)
		if (!strcmp(cells[i].ops->name, name) && cells[i].n)
			return &cells[i];
	return NULL;
}

/* The working-set strategies that the REAP targets apply to. */
static const char *const prefetchers[] = { "prefetch", "prefetch-thp" };

/* The last entry of arr gets `key` null: no measurement, no ratio. */
static void null_last(json_t *arr, const char *key)
{
	json_object_set_new(json_array_get(arr, json_array_size(arr) - 1), key,
			    json_null());
}

/* Working-set strategy `name` against the never-stopped VM and mmap, per
 * cache state where it was measured (keys keep their prefetch_ prefix
 * for every prefetcher; "strategy" names it). */
static void add_ratios(json_t *arr, const struct restore_opts *o,
		       const struct group *g, const char *name)
{
	double never = median_of(g->never, g->nr_never);

	for (int cold = 0; cold < 2; cold++) {
		const struct cell *pf = find_cell(o, g, name, cold);
		const struct cell *mm = find_cell(o, g, "mmap", cold);
		double p = pf ? median_of(pf->ns[RESTORE_DONE], pf->n) : 0;
		double m = mm ? median_of(mm->ns[RESTORE_DONE], mm->n) : 0;

		if (!pf)
			continue;
		json_array_append_new(arr, json_pack(
			"{s:s, s:I, s:I, s:s, s:f, s:f, s:f, s:f, s:f, s:f}",
			"strategy", name, "mem_bytes", (json_int_t)g->mem,
			"ws_bytes", (json_int_t)g->ws, "cache",
			cold ? "cold" : "warm", "prefetch_done_ns", p,
			"prefetch_request_ns",
			median_of(pf->ns[RESTORE_REQUEST], pf->n), "mmap_done_ns", m,
			"never_stopped_request_ns", never,
			"prefetch_vs_never_stopped", never > 0 ? p / never : 0,
			"prefetch_speedup_over_mmap", p > 0 ? m / p : 0));
		if (!g->ws) /* a Linux snapshot's: unknown */
			json_object_del(json_array_get(arr,
						       json_array_size(arr) - 1),
					"ws_bytes");
		if (never <= 0)
			null_last(arr, "prefetch_vs_never_stopped");
		if (!mm)
			null_last(arr, "prefetch_speedup_over_mmap");
	}
}

/* Each prefetcher against the never-stopped VM and against mmap, per
 * group and cache state, from medians of restore -> DONE. */
static json_t *ratios_json(const struct restore_opts *o,
			   const struct group *groups, size_t ng)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < ng; i++)
		for (size_t k = 0; k < 2; k++)
			add_ratios(arr, o, &groups[i], prefetchers[k]);
	return arr;
}

/* What the run left out: cold caches (cold_why, "" when measured) and
 * strategies the host cannot do, once per strategy and reason. */
static void add_skipped(json_t *doc, const struct restore_opts *o,
			const struct group *groups, size_t ng,
			const char *cold_why)
{
	char what[64];

	if (*cold_why)
		result__skip(doc, "cold cache", "%s", cold_why);
	for (size_t i = 0; i < ng; i++)
		for (size_t k = 0; k < o->nr_strategies; k++) {
			if (!groups[i].skip[k])
				continue;
			snprintf(what, sizeof(what), "strategy %s",
				 o->strategies[k]->name);
			result__skip(doc, what, "%s", groups[i].why[k]);
		}
}

static json_t *result_json(const struct restore_opts *o,
			   const struct group *groups, size_t ng,
			   const char *fs, const char *cold_why)
{
	json_t *doc = result__new("restore", config_json(o, fs));

	if (doc)
		add_skipped(doc, o, groups, ng, cold_why);

	for (size_t i = 0; doc && i < ng; i++) {
		const struct group *g = &groups[i];
		char name[96];

		for (size_t k = 0; k < 2 * o->nr_strategies; k++)
			if (g->cells[k].n)
				add_cell(doc, o, g, &g->cells[k],
					 k < o->nr_strategies ? "warm" : "cold");
		if (!g->nr_never)
			continue;
		snprintf(name, sizeof(name), "never-stopped/mem%" PRIu64
			 "M/ws%" PRIu64 "M/request", g->mem / MiB, g->ws / MiB);
		result__add_series(doc, name, "ns", RESULT_LOWER, json_pack(
			"{s:s, s:I, s:I, s:s}", "strategy", "never-stopped",
			"mem_bytes", (json_int_t)g->mem, "ws_bytes",
			(json_int_t)g->ws, "phase", "request"),
			g->never, g->nr_never);
	}
	if (doc)
		json_object_set_new(doc, "ratios", ratios_json(o, groups, ng));
	return doc;
}

/* ---- text and Markdown ---- */

/* The host's storage reads per restore as text: "-" without I/O
 * accounting. */
static void disk_text(char *buf, size_t len, const struct cell *c)
{
	if (c->host.disk_read == RESTORE_NO_IO)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f", mean_of(c->host.disk_read, c->n) /
					     (double)MiB);
}

static void print_cell(FILE *out, const struct cell *c, const char *cache,
		       bool md)
{
	struct summary d = { 0 };
	char disk[32];

	stats__summarize(c->ns[RESTORE_DONE], c->n, &d);
	disk_text(disk, sizeof(disk), c);
	fprintf(out, md ? "| %s | %s | %.3f | %.3f | %.3f | %.3f | %.0f | %.1f "
			  "| %.0f | %.0f | %s |\n"
			: "%-10s %-5s %10.3f %10.3f %10.3f %10.3f %8.0f %8.1f "
			  "%8.0f %6.0f %8s\n", c->ops->name, cache,
		median_of(c->ns[RESTORE_FIRST_RUN], c->n) / 1e6, d.p50 / 1e6,
		d.p90 / 1e6, median_of(c->ns[RESTORE_REQUEST], c->n) / 1e6,
		mean_of(c->faults, c->n),
		mean_of(c->bytes_read, c->n) / (double)MiB,
		mean_of(c->host.faults, c->n), mean_of(c->host.major, c->n),
		disk);
}

/* One table per group; the work columns are means per restore: uffd
 * faults and MiB read by the strategy itself, then the host's page
 * faults (all, major) and storage reads for the whole process. */
static void print_group(FILE *out, const struct restore_opts *o,
			const struct group *g, bool md)
{
	double never = median_of(g->never, g->nr_never);
	char text[64];

	group_text(text, sizeof(text), g);
	if (o->snapshot)
		fprintf(out, md ? "\n### snapshot %s (%s guest, %s)\n"
				: "\nsnapshot %s: %s guest, %s\n", o->snapshot,
			o->snap.linux_guest ? "Linux" : "probe", text);
	else if (md)
		fprintf(out, "\n### mem %" PRIu64 " MiB, working set %" PRIu64
			" MiB\n", g->mem / MiB, g->ws / MiB);
	else
		fprintf(out, "\n%s\n", text);
	fprintf(out, md ? "\n| strategy | cache | first KVM_RUN ms | "
			  "DONE ms (median) | DONE p90 ms | request ms | "
			  "uffd faults | MiB read | host faults | major faults "
			  "| disk MiB |\n|---|---|--:|--:|--:|--:|--:|--:|--:|"
			  "--:|--:|\n"
			: "%-10s %-5s %10s %10s %10s %10s %8s %8s %8s %6s "
			  "%8s\n",
		"strategy", "cache", "first_run", "DONE", "DONE p90", "request",
		"uffd_flt", "MiB read", "host_flt", "major", "disk MiB");
	for (size_t k = 0; k < 2 * o->nr_strategies; k++)
		if (g->cells[k].n)
			print_cell(out, &g->cells[k],
				   k < o->nr_strategies ? "warm" : "cold", md);
	if (g->nr_never)
		fprintf(out, md ? "\nNever stopped (same request phase, READY -> "
				  "DONE): %.3f ms median.\n"
				: "never stopped: request phase %.3f ms median\n",
			never / 1e6);
}

static void print_ratios(FILE *out, const json_t *ratios, bool md)
{
	const json_t *r;
	size_t i;

	json_array_foreach(ratios, i, r) {
		const json_t *vs = json_object_get(r, "prefetch_vs_never_stopped");
		const json_t *sp = json_object_get(r, "prefetch_speedup_over_mmap");
		struct group g = {
			.mem = (uint64_t)json_integer_value(
				json_object_get(r, "mem_bytes")),
			.ws = (uint64_t)json_integer_value(
				json_object_get(r, "ws_bytes")),
		};
		char text[64];

		group_text(text, sizeof(text), &g);
		fprintf(out, "%s%s, %s %s: restore -> DONE %.3f ms",
			md ? "- " : "",
			json_string_value(json_object_get(r, "strategy")), text,
			json_string_value(json_object_get(r, "cache")),
			json_number_value(json_object_get(r, "prefetch_done_ns")) / 1e6);
		if (json_is_number(vs))
			fprintf(out, " = %.2fx the never-stopped request phase "
				"(target <= 1.2x)", json_number_value(vs));
		if (json_is_number(sp))
			fprintf(out, ", speedup over mmap %.2fx (target >= 3x)",
				json_number_value(sp));
		fputc('\n', out);
	}
}

static char *markdown(const struct restore_opts *o, const struct group *g,
		      size_t ng, const json_t *doc)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	fputs("# coldstart restore benchmark\n\n", f);
	if (o->snapshot && o->exec)
		fprintf(f, "The snapshot %s (a Linux guest with an agent, %u "
			"vCPU), restored as it was saved with each strategy; "
			"its agent runs `%s`, and DONE is the command's first "
			"output byte (first progress: the agent's answer). ",
			o->snapshot, o->snap.vcpus, o->exec);
	else if (o->snapshot)
		fprintf(f, "The snapshot %s (a %s guest, %u vCPU), restored "
			"as it was saved with each strategy, to DONE (for "
			"Linux the guest's done signal). ", o->snapshot,
			o->snap.linux_guest ? "Linux" : "probe", o->snap.vcpus);
	else
		fprintf(f, "Snapshots of the probe guest (1 vCPU) with every "
			"page of guest memory written, restored with each "
			"strategy; the request phase touches the working set "
			"(%s %s). ", o->pattern ? "random" : "seq",
			o->op ? "write" : "read");
	fprintf(f, "Restore -> first KVM_RUN and -> DONE; "
		"cold = snapshot files evicted from the page cache (%s), warm = "
		"read once before. %" PRIu64 " counted restores per series "
		"after %" PRIu64 " warmup, strategies interleaved. Work per "
		"restore (means, restore start -> DONE): uffd faults and MiB "
		"read are what the strategy did itself (userfaults served, "
		"bytes it read from the memory file); host faults (minor + "
		"major) and major faults are every page fault of the process "
		"(getrusage), disk MiB what the process fetched from storage "
		"(/proc/self/io read_bytes: 0 when the page cache served "
		"it).\n",
		o->drop_caches ? "drop_caches" : "fsync + posix_fadvise DONTNEED",
		o->c.count, o->c.warmup);
	for (size_t i = 0; i < ng; i++)
		print_group(f, o, &g[i], true);
	fprintf(f, "\n## prefetch and prefetch-thp against the baselines%s\n\n",
		o->snapshot ? " (mmap; no never-stopped VM for a user's "
			      "snapshot)" : "");
	print_ratios(f, json_object_get(doc, "ratios"), true);
	result__print_skipped(f, doc, true);
	result__md_warnings(f, doc);
	fputs("\nRaw samples and host metadata: restore.json.\n", f);
	fclose(f);
	return text;
}

int restore__emit(const struct restore_opts *o, const struct group *g,
		  size_t ng, const char *fs, const char *cold_why)
{
	json_t *doc = result_json(o, g, ng, fs, cold_why);
	char *md = NULL;
	int ret = 0;

	if (!doc)
		return -ENOMEM;
	if (o->c.json) {
		result__print_json(stdout, doc);
	} else {
		for (size_t i = 0; i < ng; i++)
			print_group(stdout, o, &g[i], false);
		print_ratios(stdout, json_object_get(doc, "ratios"), false);
		result__print_skipped(stdout, doc, false);
	}
	if (o->c.out_dir) {
		md = markdown(o, g, ng, doc);
		ret = md ? result__save(doc, o->c.json, o->c.out_dir, md)
			 : err__set(ENOMEM, "building restore.md");
	}
	free(md);
	json_decref(doc);
	return ret;
}
