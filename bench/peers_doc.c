/* What both of peers' guests share: QEMU found, the samples kept, and the
 * document with its series, ratios and Markdown. */
#include "peers_int.h"

#include "err.h"
#include "result.h"
#include "result_new.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const peers_names[NR_PEERS] = { "coldstart", "qemu.microvm" };

int peers__find_qemu(struct peers *p)
{
	const char *path = getenv("PATH");
	char *dirs, *save = NULL;

	if (p->o.qemu) {
		if (access(p->o.qemu, X_OK) < 0)
			return err__set(ENOTSUP, "QEMU '%s' is not an "
					"executable file", p->o.qemu);
		snprintf(p->qemu_path, sizeof(p->qemu_path), "%s", p->o.qemu);
		return 0;
	}
	dirs = strdup(path ? path : "/usr/bin:/bin");
	if (!dirs)
		return err__set(ENOMEM, "copying PATH");
	for (char *d = strtok_r(dirs, ":", &save); d;
	     d = strtok_r(NULL, ":", &save)) {
		snprintf(p->qemu_path, sizeof(p->qemu_path),
			 "%s/qemu-system-x86_64", d);
		if (access(p->qemu_path, X_OK) == 0) {
			free(dirs);
			return 0;
		}
	}
	free(dirs);
	return err__set(ENOTSUP, "qemu-system-x86_64 is not installed (Debian: "
			"apt-get install qemu-system-x86)");
}

void peers__leave_out(struct peers *p, enum peer who, const char *why)
{
	snprintf(p->left_out[who], sizeof(p->left_out[who]), "%s", why);
	fprintf(stderr, "coldstart: bench peers: %s left out: %s\n",
		peers_names[who], why);
}

static json_t *peer_series(json_t *doc, const char *name, const char *unit,
			   enum result_better better, const char *impl,
			   const char *metric, const double *v, uint64_t n)
{
	return result__add_series(doc, name, unit, better, json_pack(
		"{s:s, s:s}", "impl", impl, "metric", metric), v, n);
}

/* A ratio of two medians, QEMU's over coldstart's. */
static void set_ratio(json_t *r, const char *key, const json_t *qemu,
		      const json_t *ours)
{
	json_object_set_new(r, key, json_real(result__stat(qemu, "p50") /
					      result__stat(ours, "p50")));
}

static int add_series(json_t *doc, const struct peers *p, const char *prefix)
{
	json_t *ratios = json_object(), *got[NR_PEERS][3] = { { NULL } };
	char name[96];

	for (int k = 0; k < NR_PEERS; k++) {
		const char *impl = peers_names[k];

		if (p->left_out[k][0]) {
			result__skip(doc, impl, "%s", p->left_out[k]);
			continue;
		}
		snprintf(name, sizeof(name), "%s%s", prefix, impl);
		got[k][0] = peer_series(doc, name, "ns", RESULT_LOWER, impl,
					"wall", p->wall[k], p->o.c.count);
		snprintf(name, sizeof(name), "rss.%s%s", prefix, impl);
		got[k][1] = peer_series(doc, name, "kib", RESULT_LOWER, impl,
					"peak_rss", p->rss[k], p->o.c.count);
		snprintf(name, sizeof(name), "read_mib_s.%s", impl);
		if (p->read[k])
			got[k][2] = peer_series(doc, name, "mib_per_s",
						RESULT_HIGHER, impl,
						"read_mib_s", p->read[k],
						p->o.c.count);
		if (!got[k][0] || !got[k][1] || (p->read[k] && !got[k][2])) {
			json_decref(ratios);
			return -ENOMEM;
		}
	}
	if (got[OURS][0] && got[QEMU][0]) {
		json_t *r = json_object();

		set_ratio(r, "wall_median", got[QEMU][0], got[OURS][0]);
		set_ratio(r, "peak_rss_median", got[QEMU][1], got[OURS][1]);
		if (p->read[QEMU])
			set_ratio(r, "read_mib_s_median", got[QEMU][2],
				  got[OURS][2]);
		snprintf(name, sizeof(name), "%s%s", prefix, peers_names[QEMU]);
		json_object_set_new(ratios, name, r);
	}
	json_object_set_new(doc, "ratios", ratios);
	return 0;
}

static const json_t *series_named(const json_t *series, const char *name)
{
	size_t i;
	json_t *s;

	json_array_foreach(series, i, s)
		if (!strcmp(json_string_value(json_object_get(s, "name")),
			    name))
			return s;
	return NULL;
}

static void report_row(FILE *out, const json_t *series, const json_t *w)
{
	const char *name = json_string_value(json_object_get(w, "name"));
	const char *impl = json_string_value(json_object_get(
		json_object_get(w, "params"), "impl"));
	const json_t *m, *rd;
	char other[128];

	snprintf(other, sizeof(other), "rss.%s", name);
	m = series_named(series, other);
	snprintf(other, sizeof(other), "read_mib_s.%s", impl ? impl : "");
	rd = series_named(series, other);
	fprintf(out, "| %s | %.3f | %.3f | %.3f | %.1f |", name,
		result__stat(w, "p50") / 1e6, result__stat(w, "p90") / 1e6,
		result__stat(w, "min") / 1e6,
		m ? result__stat(m, "p50") / 1024 : 0.0);
	if (rd)
		fprintf(out, " %.1f |", result__stat(rd, "p50"));
	fputc('\n', out);
}

static void report(FILE *out, const json_t *doc)
{
	const json_t *series = json_object_get(doc, "series");
	const json_t *ratios = json_object_get(doc, "ratios"), *r, *s;
	const json_t *cfg = json_object_get(doc, "config");
	bool reads = json_object_get(cfg, "read_cmd") != NULL;
	const char *key;
	size_t i;

	fprintf(out, "# coldstart peers benchmark\n\nGuest: %s; whole process "
		"from spawn to exit, %" JSON_INTEGER_FORMAT " interleaved runs "
		"each.\n\n| implementation | median ms | p90 ms | min ms | "
		"peak RSS MiB (median) |%s\n|---|--:|--:|--:|--:|%s\n",
		json_string_value(json_object_get(cfg, "guest")),
		json_integer_value(json_object_get(cfg, "count")),
		reads ? " read MiB/s (median) |" : "", reads ? "--:|" : "");
	json_array_foreach(series, i, s) {
		const char *metric = json_string_value(json_object_get(
			json_object_get(s, "params"), "metric"));

		if (metric && !strcmp(metric, "wall"))
			report_row(out, series, s);
	}
	fputc('\n', out);
	json_object_foreach((json_t *)ratios, key, r) {
		fprintf(out, "%s / coldstart: %.1fx the median wall time, "
			"%.1fx the peak RSS", key,
			json_number_value(json_object_get(r, "wall_median")),
			json_number_value(json_object_get(r, "peak_rss_median")));
		if (json_object_get(r, "read_mib_s_median"))
			fprintf(out, ", %.2fx the read throughput",
				json_number_value(json_object_get(
					r, "read_mib_s_median")));
		fputc('\n', out);
	}
	result__print_skipped(out, doc, true);
	result__md_warnings(out, doc);
}

int peers__emit(struct peers *p, json_t *config, const char *prefix)
{
	json_t *doc = result__new("peers", config);
	int ret;

	if (!doc)
		return -ENOMEM;
	ret = add_series(doc, p, prefix);
	if (ret == 0)
		ret = result__emit(doc, p->o.c.json, p->o.c.out_dir, report);
	json_decref(doc);
	return ret < 0 ? -EIO : 0;
}

static int alloc_samples(struct peers *p, bool reads)
{
	for (int k = 0; k < NR_PEERS; k++) {
		p->wall[k] = calloc(p->o.c.count, sizeof(double));
		p->rss[k] = calloc(p->o.c.count, sizeof(double));
		if (reads)
			p->read[k] = calloc(p->o.c.count, sizeof(double));
		if (!p->wall[k] || !p->rss[k] || (reads && !p->read[k]))
			return err__set(ENOMEM, "allocating samples");
	}
	return 0;
}

int peers__prepare(struct peers *p, bool reads)
{
	int ret = peers__find_qemu(p);

	/* QEMU named with --qemu must be there; one looked up may not be */
	if (ret == -ENOTSUP && !p->o.qemu) {
		peers__leave_out(p, QEMU, err__last());
		ret = 0;
	}
	if (ret == 0)
		ret = alloc_samples(p, reads);
	return ret;
}

