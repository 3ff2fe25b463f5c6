/* Result documents as metric families of the Prometheus text format. */
#include "openmetrics.h"

#include "err.h"
#include "output.h"
#include "stats.h"
#include "units.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The longest metric name we build: prefix, bench, unit. */
#define NAME_MAX_LEN 160
/* Label names one sample may carry; params beyond it are left out. */
#define MAX_LABELS 40

/* One metric family: its lines are gathered here, because the format
 * wants all samples of a family together under one HELP and TYPE while
 * the documents give them in any order. */
struct family {
	char name[NAME_MAX_LEN];
	const char *type; /* "summary" or "gauge" */
	char *help;
	struct output_text body;
};

/* A metric with its labels, to find one given twice. */
struct key {
	char *text;
	size_t doc;
};

struct exposition {
	struct family **fams; /* each on its own: its stream points into it */
	size_t nr_fams;
	struct key *keys;
	size_t nr_keys, cap_keys;
	size_t doc; /* the document being written */
};

/* The labels of one sample, built as text "a=\"x\",b=\"y\"". */
struct labels {
	struct output_text t;
	const char *names[MAX_LABELS];
	char own[MAX_LABELS][64];
	size_t n;
};

/* Names a scraper or the summary type gives meaning to. */
static const char *const reserved[] = { "quantile", "le", "job", "instance",
					NULL };

/* ---- text ---- */

void openmetrics__escape(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\\' || c == '"')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else
			fputc(c < 0x20 || c == 0x7f ? ' ' : c, out);
	}
}

void openmetrics__name(char *buf, size_t len, const char *text)
{
	size_t i = 0;

	if (len < 2)
		return;
	if (!*text || (*text >= '0' && *text <= '9'))
		buf[i++] = '_';
	for (; *text && i + 1 < len; text++) {
		char c = *text;

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		buf[i++] = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
				   ? c : '_';
	}
	buf[i] = '\0';
}

void openmetrics__value(char *buf, size_t len, double v)
{
	if (isnan(v)) {
		snprintf(buf, len, "NaN");
		return;
	}
	if (isinf(v)) {
		snprintf(buf, len, "%cInf", v > 0 ? '+' : '-');
		return;
	}
	double_text(buf, len, v);
}

/* ---- families ---- */

static struct family *family_find(struct exposition *x, const char *name)
{
	for (size_t i = 0; i < x->nr_fams; i++)
		if (!strcmp(x->fams[i]->name, name))
			return x->fams[i];
	return NULL;
}

/* The family `name`, made with `type` and `help` when new; NULL with
 * -errno in *ret. */
static struct family *family_get(struct exposition *x, const char *name,
				 const char *type, const char *help, int *ret)
{
	struct family *f = family_find(x, name), **grown;

	if (f && strcmp(f->type, type)) {
		*ret = err__set(EINVAL, "metric %s would be both a %s and a %s",
				name, f->type, type);
		return NULL;
	}
	if (f)
		return f;
	grown = realloc(x->fams, (x->nr_fams + 1) * sizeof(*x->fams));
	if (!grown) {
		*ret = err__set(ENOMEM, "allocating a metric family");
		return NULL;
	}
	x->fams = grown;
	f = calloc(1, sizeof(*f));
	if (f)
		f->help = strdup(help);
	if (!f || !f->help || output__text_open(&f->body) < 0) {
		if (f)
			free(f->help);
		free(f);
		*ret = err__set(ENOMEM, "allocating a metric family");
		return NULL;
	}
	f->type = type;
	snprintf(f->name, sizeof(f->name), "%s", name);
	x->fams[x->nr_fams++] = f;
	return f;
}

static void family_free(struct family *f)
{
	if (f->body.f)
		fclose(f->body.f);
	free(f->body.text);
	free(f->help);
	free(f);
}

/* HELP text: only backslash and newline are escaped there. */
static void print_help(FILE *out, const char *help)
{
	for (; *help; help++)
		if (*help == '\\')
			fputs("\\\\", out);
		else if (*help == '\n')
			fputs("\\n", out);
		else
			fputc(*help, out);
}

static int family_print(FILE *out, struct family *f)
{
	int ret = output__text_close(&f->body, f->name);

	if (ret < 0)
		return ret;
	fprintf(out, "# HELP %s ", f->name);
	print_help(out, f->help);
	fprintf(out, "\n# TYPE %s %s\n", f->name, f->type);
	fwrite(f->body.text, 1, f->body.len, out);
	return 0;
}

/* ---- labels ---- */

static bool label_taken(const struct labels *l, const char *name)
{
	for (size_t i = 0; reserved[i]; i++)
		if (!strcmp(reserved[i], name))
			return true;
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->names[i], name))
			return true;
	return false;
}

/* Adds name="value" unless `value` is NULL or the name is taken (then
 * with `prefix` when given). */
static void label_add(struct labels *l, const char *name, const char *value,
		      const char *prefix)
{
	char buf[64];

	if (!value || l->n == MAX_LABELS)
		return;
	snprintf(buf, sizeof(buf), "%s", name);
	if (label_taken(l, buf) && prefix)
		snprintf(buf, sizeof(buf), "%s%s", prefix, name);
	if (label_taken(l, buf))
		return;
	snprintf(l->own[l->n], sizeof(l->own[0]), "%s", buf);
	l->names[l->n] = l->own[l->n];
	fprintf(l->t.f, "%s%s=\"", l->n ? "," : "", buf);
	openmetrics__escape(l->t.f, value);
	fputc('"', l->t.f);
	l->n++;
}

/* A param of a series as a label: its key made a label name, strings as
 * they are, other values as JSON text. */
static void label_param(struct labels *l, const char *key, const json_t *v)
{
	char name[64], *text = NULL;

	openmetrics__name(name, sizeof(name), key);
	/* names starting with "__" are Prometheus' own */
	if (!strncmp(name, "__", 2))
		name[0] = 'p';
	if (!json_is_string(v))
		text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	label_add(l, name, json_is_string(v) ? json_string_value(v) : text,
		  "param_");
	free(text);
}

static const char *text_at(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(o, a);

	return json_string_value(b ? json_object_get(v, b) : v);
}

/* The labels every metric of a document carries. */
static void labels_doc(struct labels *l, const struct result_doc *doc)
{
	const json_t *root = doc->root, *guest = json_object_get(root, "guest");
	const char *emulated = result__sysinfo_emulated(doc->sysinfo);
	const char *sha = text_at(guest, "sha256", NULL);

	label_add(l, "host", text_at(doc->sysinfo, "hostname", NULL), NULL);
	label_add(l, "kernel", text_at(doc->sysinfo, "kernel", "release"),
		  NULL);
	label_add(l, "kvm_flavour", text_at(doc->sysinfo, "kvm", "flavour"),
		  NULL);
	label_add(l, "kvm_mode", emulated ? "emulated" : "native", NULL);
	label_add(l, "emulation", emulated, NULL);
	label_add(l, "guest", text_at(guest, "name", NULL), NULL);
	label_add(l, "guest_sha256", sha ? sha : text_at(guest, "kernel",
							 "sha256"), NULL);
}

static int labels_open(struct labels *l, const struct result_doc *doc)
{
	int ret;

	*l = (struct labels){ 0 };
	ret = output__text_open(&l->t);
	if (ret == 0)
		labels_doc(l, doc);
	return ret;
}

static int labels_close(struct labels *l)
{
	return output__text_close(&l->t, "labels");
}

/* ---- samples ---- */

static int key_add(struct exposition *x, const char *name,
		   const char *labels)
{
	struct key *k;

	if (x->nr_keys == x->cap_keys) {
		size_t cap = x->cap_keys ? 2 * x->cap_keys : 64;
		struct key *grown = realloc(x->keys, cap * sizeof(*grown));

		if (!grown)
			return err__set(ENOMEM, "allocating metric keys");
		x->keys = grown;
		x->cap_keys = cap;
	}
	k = &x->keys[x->nr_keys];
	if (asprintf(&k->text, "%s{%s}", name, labels) < 0)
		return err__set(ENOMEM, "allocating a metric key");
	k->doc = x->doc;
	x->nr_keys++;
	return 0;
}

static void line(struct family *f, const char *suffix, const char *labels,
		 const char *extra, double v)
{
	char value[40];

	openmetrics__value(value, sizeof(value), v);
	fprintf(f->body.f, "%s%s{%s%s%s} %s\n", f->name, suffix, labels,
		*labels && extra ? "," : "", extra ? extra : "", value);
}

static int gauge(struct exposition *x, const char *name, const char *help,
		 const char *labels, double v)
{
	int ret = 0;
	struct family *f = family_get(x, name, "gauge", help, &ret);

	if (!f)
		return ret;
	line(f, "", labels, NULL, v);
	return key_add(x, name, labels);
}

/* From a series' unit to base units: times mul, divided by div (a
 * division, so 1295749.5 ns is exactly the double 0.0012957495 s). */
struct scale {
	double mul, div;
};

static double scaled(double v, struct scale sc)
{
	return v * sc.mul / sc.div;
}

/* The quantiles a summary gives, with the document's summary keys. */
static const struct {
	const char *label, *key;
	double q;
} quantiles[] = {
	{ "quantile=\"0.5\"", "p50", 0.5 },
	{ "quantile=\"0.9\"", "p90", 0.9 },
	{ "quantile=\"0.99\"", "p99", 0.99 },
	{ "quantile=\"0.999\"", "p99_9", 0.999 },
};

/* The document's own summary value, or the samples' when it has none
 * (a hand-made document). */
static double quantile_of(const json_t *summary, const struct summary *sm,
			  size_t i)
{
	const json_t *v = json_object_get(summary, quantiles[i].key);
	const double own[] = { sm->p50, sm->p90, sm->p99, sm->p999 };

	return json_is_number(v) ? json_number_value(v) : own[i];
}

static int summary(struct exposition *x, const char *name, const char *help,
		   const char *labels, const struct result_series *s,
		   const json_t *js, struct scale sc)
{
	const json_t *sum = json_object_get(js, "summary");
	struct summary sm = { 0 };
	double total = 0;
	int ret = 0;
	struct family *f = family_get(x, name, "summary", help, &ret);

	if (!f)
		return ret;
	if (s->n && stats__summarize(s->samples, s->n, &sm) < 0)
		return err__set(ENOMEM, "summarizing %s", s->name);
	for (size_t i = 0; s->n && i < sizeof(quantiles) / sizeof(quantiles[0]);
	     i++)
		line(f, "", labels, quantiles[i].label,
		     scaled(quantile_of(sum, &sm, i), sc));
	for (size_t i = 0; i < s->n; i++)
		total += s->samples[i];
	line(f, "_sum", labels, NULL, scaled(total, sc));
	line(f, "_count", labels, NULL, (double)s->n);
	return key_add(x, name, labels);
}

/* ---- what each document gives ---- */

/* A series' unit as a metric name suffix in base units, and the factor
 * that takes its values there. */
static const char *unit_suffix(const char *unit, struct scale *sc)
{
	static const struct {
		const char *unit, *suffix;
		struct scale sc;
	} units[] = {
		{ "ns", "seconds", { 1, 1e9 } }, { "us", "seconds", { 1, 1e6 } },
		{ "ms", "seconds", { 1, 1e3 } }, { "s", "seconds", { 1, 1 } },
		{ "kib", "bytes", { 1024, 1 } }, { "bytes", "bytes", { 1, 1 } },
		/* one sample per block of completions or burst round: not
		 * the series' own vms_per_s, which is a gauge of that name */
		{ "vms_per_s", "block_vms_per_second", { 1, 1 } },
		{ "mib_per_s", "bytes_per_second", { 1048576, 1 } },
	};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(unit, units[i].unit)) {
			*sc = units[i].sc;
			return units[i].suffix;
		}
	*sc = (struct scale){ 1, 1 };
	return NULL;
}

/* The labels of series `s`: the document's, its name, its params and
 * the config's strategy when the params do not name one. */
static char *series_labels(const struct result_doc *doc, const json_t *js)
{
	const json_t *params = json_object_get(js, "params"), *v;
	struct labels l;
	const char *key;

	if (labels_open(&l, doc) < 0)
		return NULL;
	label_add(&l, "series", json_string_value(json_object_get(js, "name")),
		  NULL);
	json_object_foreach((json_t *)params, key, v)
		label_param(&l, key, v);
	label_add(&l, "strategy", text_at(doc->config, "strategy", NULL),
		  NULL);
	return labels_close(&l) == 0 ? l.t.text : NULL;
}

static int write_series(struct exposition *x, const struct result_doc *doc,
			const char *bench, size_t i)
{
	const struct result_series *s = &doc->series[i];
	const json_t *js = json_array_get(json_object_get(doc->root, "series"),
					  i);
	const json_t *rate = json_object_get(js, "vms_per_s");
	char name[NAME_MAX_LEN], unit[64], help[256], *labels;
	const char *suffix;
	struct scale sc;
	int ret;

	suffix = unit_suffix(s->unit, &sc);
	openmetrics__name(unit, sizeof(unit), suffix ? suffix : s->unit);
	snprintf(name, sizeof(name), "coldstart_%s_%s", bench, unit);
	snprintf(help, sizeof(help), "coldstart bench %s: the samples of each "
		 "series in %s (label series)", bench, unit);
	labels = series_labels(doc, js);
	if (!labels)
		return err__set(ENOMEM, "building labels");
	ret = summary(x, name, help, labels, s, js, sc);
	if (ret == 0 && json_is_number(rate)) {
		snprintf(name, sizeof(name), "coldstart_%s_vms_per_second",
			 bench);
		snprintf(help, sizeof(help), "coldstart bench %s: VMs finished "
			 "per second in each series", bench);
		ret = gauge(x, name, help, labels, json_number_value(rate));
	}
	free(labels);
	return ret;
}

/* The document's labels and one more, as text; NULL when out of memory. */
static char *labels_with(const struct result_doc *doc, const char *name,
			 const char *value)
{
	struct labels l;

	if (labels_open(&l, doc) < 0)
		return NULL;
	label_add(&l, name, value, "param_");
	label_add(&l, "strategy", text_at(doc->config, "strategy", NULL),
		  NULL);
	return labels_close(&l) == 0 ? l.t.text : NULL;
}

/* A gauge from a number in the document; nothing when it is not one. */
static int gauge_at(struct exposition *x, const struct result_doc *doc,
		    const char *name, const char *help, const char *label,
		    const char *value, const json_t *number, double scale)
{
	char *labels;
	int ret;

	if (!json_is_number(number))
		return 0;
	labels = labels_with(doc, label, value);
	if (!labels)
		return err__set(ENOMEM, "building labels");
	ret = gauge(x, name, help, labels, scale * json_number_value(number));
	free(labels);
	return ret;
}

/* density.json: {"density": {MODE: {vms_per_gib, marginal_kib_per_vm}}}. */
static int write_density(struct exposition *x, const struct result_doc *doc)
{
	const json_t *modes = json_object_get(doc->root, "density"), *m;
	const char *mode;
	int ret = 0;

	json_object_foreach((json_t *)modes, mode, m) {
		if (ret == 0)
			ret = gauge_at(x, doc, "coldstart_density_vms_per_gibibyte",
				       "coldstart bench density: VMs that fit in "
				       "one GiB at the marginal cost per VM",
				       "mode", mode,
				       json_object_get(m, "vms_per_gib"), 1);
		if (ret == 0)
			ret = gauge_at(x, doc, "coldstart_density_marginal_bytes",
				       "coldstart bench density: the memory one "
				       "more VM costs (least-squares slope)",
				       "mode", mode, json_object_get(
					       m, "marginal_kib_per_vm"), 1024);
	}
	return ret;
}

static int write_pool_stats(struct exposition *x, const struct result_doc *doc,
			    const json_t *pool)
{
	static const char *const outcomes[][2] = {
		{ "hit", "hits" }, { "miss", "misses" }, { "wait", "waits" },
	};
	static const char *const kinds[] = { "rss", "pss", "uss" };
	const json_t *st = json_object_get(pool, "stats");
	const json_t *mem = json_object_get(pool, "memory");
	char key[32];
	int ret = 0;

	for (size_t i = 0; ret == 0 && i < 3; i++)
		ret = gauge_at(x, doc, "coldstart_pool_requests",
			       "coldstart bench pool: requests served, by "
			       "outcome", "outcome", outcomes[i][0],
			       json_object_get(st, outcomes[i][1]), 1);
	for (size_t i = 0; ret == 0 && i < 3; i++) {
		snprintf(key, sizeof(key), "%s_kib_per_vm", kinds[i]);
		ret = gauge_at(x, doc, "coldstart_pool_vm_memory_bytes",
			       "coldstart bench pool: memory per held VM",
			       "memory", kinds[i], json_object_get(mem, key),
			       1024);
	}
	return ret;
}

/* pool.json's "pool": hit ratio, rates, failures, memory. */
static int write_pool(struct exposition *x, const struct result_doc *doc)
{
	const json_t *pool = json_object_get(doc->root, "pool");
	int ret;

	if (!json_is_object(pool))
		return 0;
	ret = gauge_at(x, doc, "coldstart_pool_hit_ratio", "coldstart bench "
		       "pool: requests served by a held VM, of all served",
		       NULL, NULL, json_object_get(pool, "hit_ratio"), 1);
	if (ret == 0)
		ret = gauge_at(x, doc, "coldstart_pool_refill_vms_per_second",
			       "coldstart bench pool: VMs the refill threads "
			       "can make per second", NULL, NULL,
			       json_object_get(pool, "refill_vms_per_s"), 1);
	if (ret == 0)
		ret = gauge_at(x, doc,
			       "coldstart_pool_offered_requests_per_second",
			       "coldstart bench pool: the arrival process' "
			       "mean rate", NULL, NULL,
			       json_object_get(pool, "offered_rate"), 1);
	if (ret == 0)
		ret = gauge_at(x, doc, "coldstart_pool_failed_requests",
			       "coldstart bench pool: requests that failed",
			       NULL, NULL, json_object_get(pool, "failed"), 1);
	return ret ? ret : write_pool_stats(x, doc, pool);
}

/* When the run's host data was taken (sysinfo's time_utc). */
static int write_time(struct exposition *x, const struct result_doc *doc,
		      const char *bench)
{
	const char *t = text_at(doc->sysinfo, "time_utc", NULL), *end;
	struct tm tm = { 0 };
	json_t *when;
	int ret;

	if (!t || !(end = strptime(t, "%Y-%m-%dT%H:%M:%SZ", &tm)) || *end)
		return 0;
	when = json_real((double)timegm(&tm));
	ret = gauge_at(x, doc, "coldstart_run_timestamp_seconds",
		       "coldstart: when a bench ran (its host data was taken), "
		       "in seconds since the epoch", "bench", bench, when, 1);
	json_decref(when);
	return ret;
}

static bool key_known(const struct exposition *x, const char *name,
		      const char *labels)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < x->nr_keys; i++)
		if (!strncmp(x->keys[i].text, name, len) &&
		    x->keys[i].text[len] == '{' &&
		    !strncmp(x->keys[i].text + len + 1, labels,
			     strlen(labels)) &&
		    !strcmp(x->keys[i].text + len + 1 + strlen(labels), "}"))
			return true;
	return false;
}

/* Which coldstart measured, once per host and build rather than as two
 * labels on every sample (a join: `* on(host) group_left(version,
 * commit) coldstart_build_info`). */
static int write_build_info(struct exposition *x,
			    const struct result_doc *doc)
{
	static const char name[] = "coldstart_build_info";
	const char *version = text_at(doc->root, "coldstart", "version");
	const char *commit = text_at(doc->root, "coldstart", "commit");
	struct labels l = { 0 };
	int ret;

	if (!version && !commit)
		return 0;
	ret = output__text_open(&l.t);
	if (ret < 0)
		return ret;
	label_add(&l, "host", text_at(doc->sysinfo, "hostname", NULL), NULL);
	label_add(&l, "version", version, NULL);
	label_add(&l, "commit", commit, NULL);
	ret = labels_close(&l);
	if (ret < 0)
		return ret;
	if (!key_known(x, name, l.t.text))
		ret = gauge(x, name, "coldstart: the version and commit that "
			    "measured a host's results (always 1)", l.t.text,
			    1);
	free(l.t.text);
	return ret;
}

static int write_doc(struct exposition *x, const struct result_doc *doc)
{
	char bench[64];
	int ret = 0;

	openmetrics__name(bench, sizeof(bench), doc->bench);
	for (size_t i = 0; ret == 0 && i < doc->nr_series; i++)
		ret = write_series(x, doc, bench, i);
	if (ret == 0 && !strcmp(doc->bench, "density"))
		ret = write_density(x, doc);
	if (ret == 0 && !strcmp(doc->bench, "pool"))
		ret = write_pool(x, doc);
	if (ret == 0)
		ret = write_time(x, doc, bench);
	return ret ? ret : write_build_info(x, doc);
}

/* ---- the exposition ---- */

const char *openmetrics__host(const struct result_doc *doc)
{
	const char *host = text_at(doc->sysinfo, "hostname", NULL);

	return host ? host : "";
}

static int key_cmp(const void *a, const void *b)
{
	return strcmp(((const struct key *)a)->text,
		      ((const struct key *)b)->text);
}

/* -EINVAL naming both documents when a metric is there twice. */
static int check_twice(struct exposition *x, const char *const *paths)
{
	qsort(x->keys, x->nr_keys, sizeof(*x->keys), key_cmp);
	for (size_t i = 1; i < x->nr_keys; i++)
		if (!strcmp(x->keys[i - 1].text, x->keys[i].text))
			return err__set(EINVAL, "%s and %s give the same metric "
					"%.200s: the same run twice? export them "
					"one at a time", paths[x->keys[i - 1].doc],
					paths[x->keys[i].doc], x->keys[i].text);
	return 0;
}

static void exposition_free(struct exposition *x)
{
	for (size_t i = 0; i < x->nr_fams; i++)
		family_free(x->fams[i]);
	for (size_t i = 0; i < x->nr_keys; i++)
		free(x->keys[i].text);
	free(x->fams);
	free(x->keys);
}

int openmetrics__write(FILE *out, const struct result_doc *docs,
		       const char *const *paths, size_t n, const char *host)
{
	struct exposition x = { 0 };
	int ret = 0;

	for (size_t i = 0; ret == 0 && i < n; i++) {
		x.doc = i;
		if (!host || !strcmp(host, openmetrics__host(&docs[i])))
			ret = write_doc(&x, &docs[i]);
	}
	if (ret == 0)
		ret = check_twice(&x, paths);
	for (size_t i = 0; ret == 0 && i < x.nr_fams; i++)
		ret = family_print(out, x.fams[i]);
	exposition_free(&x);
	return ret;
}
