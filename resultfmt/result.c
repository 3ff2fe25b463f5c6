/* The shared result document: series with summaries and warnings, JSON
 * and Markdown output (result_make.c makes its skeleton). */
#include "result.h"

#include "err.h"
#include "output.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

/* Bootstrap of the median: enough resamples for a stable 95 % interval,
 * few enough to stay well under a millisecond per 1,000 samples. The
 * fuzz build takes the same paths with fewer (CMakeLists.txt). */
#ifdef RESULT_CI_RESAMPLES
#define CI_RESAMPLES RESULT_CI_RESAMPLES
#else
#define CI_RESAMPLES 1000
#endif
#define CI_SEED 1

void result__warn(json_t *doc, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_array_append_new(json_object_get(doc, "warnings"),
			      json_string(buf));
}

/* o.key as a string, `def` when it is not one. */
static const char *text_or(const json_t *o, const char *key, const char *def)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : def;
}

void result__skip(json_t *doc, const char *what, const char *fmt, ...)
{
	json_t *list = json_object_get(doc, "skipped"), *entry;
	char why[512];
	va_list ap;
	size_t i;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (!list) {
		list = json_array();
		if (json_object_set_new(doc, "skipped", list) < 0)
			return;
	}
	/* one entry per part and reason, however often the run met it */
	json_array_foreach(list, i, entry)
		if (!strcmp(text_or(entry, "what", ""), what) &&
		    !strcmp(text_or(entry, "why", ""), why))
			return;
	json_array_append_new(list, json_pack("{s:s, s:s}", "what", what,
					      "why", why));
}

json_t *result__summary_json(const double *samples, size_t n)
{
	struct summary s;
	double lo, hi;

	if (n == 0 || stats__summarize(samples, n, &s) < 0)
		return NULL;
	if (stats__bootstrap_median_ci(samples, n, CI_RESAMPLES, 0.95, CI_SEED,
				       &lo, &hi) < 0)
		lo = hi = s.p50;
	return json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, "
			 "s:[f, f]}", "n", (json_int_t)s.n, "min", s.min, "max",
			 s.max, "mean", s.mean, "stddev", s.stddev, "cv", s.cv,
			 "p50", s.p50, "p90", s.p90, "p99", s.p99, "p99_9",
			 s.p999, "ci95_median", lo, hi);
}

static json_t *samples_json(const double *samples, size_t n, bool integer)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++)
		json_array_append_new(arr, integer ?
			json_integer((json_int_t)llround(samples[i])) :
			json_real(samples[i]));
	return arr;
}

/* A first sample only counts as a first-run effect when it is a MAD
 * outlier and also practically slower: with a MAD near 0 (e.g. 48.4 ns
 * every time) any difference at all is an outlier. */
#define FIRST_SLOW_RATIO 1.10

/* The tail of an outlier warning, which the Markdown lists collapse. */
static const char outlier_tail[] = " samples are outliers (more than ";

const char *result__ns_unit(double ns, double *div)
{
	if (ns < 1e3) {
		*div = 1;
		return "ns";
	}
	*div = ns < 1e6 ? 1e3 : 1e6;
	return ns < 1e6 ? "us" : "ms";
}

/* Decimals for about four significant digits at `ref`, 0 to 3. */
static int decimals_for(double ref)
{
	double a = fabs(ref);

	return a >= 1000 ? 0 : a >= 100 ? 1 : a >= 10 ? 2 : 3;
}

const char *result__unit_for(const char *unit, double ref, double *div,
			     int *prec)
{
	static const struct {
		const char *unit, *shown;
	} plain[] = { { "vms_per_s", "VMs/s" }, { "vms_per_gib", "VMs/GiB" },
		      { "mib_per_s", "MiB/s" } };
	const char *u;

	if (!strcmp(unit, "ns")) {
		u = result__ns_unit(ref, div);
		*prec = *div == 1 ? 1 : *div == 1e3 ? 2 : 3;
		return u;
	}
	*div = 1;
	if (!strcmp(unit, "kib")) {
		/* KiB up to 10 MiB, so a few MiB read as whole KiB */
		*div = fabs(ref) < 10240 ? 1 : fabs(ref) < 10485760 ? 1024
								   : 1048576;
		/* whole KiB; MiB and GiB with two decimals at most */
		*prec = *div == 1 ? 0 : decimals_for(ref / *div) > 2
						? 2 : decimals_for(ref / *div);
		return *div == 1 ? "KiB" : *div == 1024 ? "MiB" : "GiB";
	}
	*prec = decimals_for(ref);
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		if (!strcmp(unit, plain[i].unit))
			return plain[i].shown;
	return unit;
}

void result__value_text(char *buf, size_t size, const char *unit, double v,
			double scale)
{
	double div;
	int prec;
	const char *u = result__unit_for(unit, scale, &div, &prec);

	snprintf(buf, size, "%.*f %s", prec, v / div, u);
}

/* MAD outliers and a slow first sample: what a reader should look at
 * before trusting a median. */
static void outlier_warnings(json_t *doc, const char *name,
			     const char *unit, const double *samples, size_t n)
{
	char first[48], median[48];
	struct outliers o;

	if (n < 3 || stats__outliers(samples, n, STATS_OUTLIER_K, &o) < 0)
		return;
	if (o.count)
		result__warn(doc, "%s: %zu of %zu%s%.0f robust standard "
			     "deviations from the median)", name, o.count, n,
			     outlier_tail, STATS_OUTLIER_K);
	if (!o.first_slow || samples[0] <= FIRST_SLOW_RATIO * o.median)
		return;
	result__value_text(first, sizeof(first), unit, samples[0], o.median);
	result__value_text(median, sizeof(median), unit, o.median, o.median);
	result__warn(doc, "%s: the first counted sample is slow (%s vs median "
		     "%s): a first-run effect; consider more warmup", name,
		     first, median);
}

json_t *result__add_series(json_t *doc, const char *name, const char *unit,
			   enum result_better better, json_t *params,
			   const double *samples, size_t n)
{
	bool ns = !strcmp(unit, "ns");
	json_t *s = json_pack("{s:s, s:s, s:s, s:o}", "name", name, "unit", unit,
			      "better", better == RESULT_HIGHER ? "higher"
								: "lower",
			      "params", params ? params : json_object());
	json_t *sum = result__summary_json(samples, n);

	if (!s || json_object_set_new(s, ns ? "samples_ns" : "samples",
				      samples_json(samples, n, ns)) ||
	    json_object_set_new(s, "summary", sum ? sum : json_null()) ||
	    json_array_append_new(json_object_get(doc, "series"), s)) {
		err__set(ENOMEM, "adding series %s", name);
		return NULL;
	}
	outlier_warnings(doc, name, unit, samples, n);
	return s;
}

void result__print_json(FILE *out, const json_t *doc)
{
	json_dumpf(doc, out, JSON_INDENT(2));
	fputc('\n', out);
}

const char *result__emulated_note(const json_t *doc)
{
	if (!result__sysinfo_emulated(json_object_get(doc, "sysinfo")))
		return NULL;
	return "Measured inside an emulated SVM host (QEMU TCG): timings are "
	       "functional; compare only ratios within this run.";
}

/* md with the emulated-host note after its first line (its title), so
 * every driver's Markdown says so without each driver knowing; a copy
 * of md when there is no note. NULL when out of memory. */
static char *with_note(const json_t *doc, const char *md)
{
	const char *note = result__emulated_note(doc);
	size_t head = strcspn(md, "\n");
	char *text;

	if (!note)
		return strdup(md);
	if (asprintf(&text, "%.*s\n\n> **%s**%s", (int)head, md, note,
		     md + head) < 0)
		return NULL;
	return text;
}

int result__write(const json_t *doc, const char *dir, const char *md)
{
	const char *bench = json_string_value(json_object_get(doc, "bench"));
	char name[256], *text = NULL;
	int ret = output__mkdirs(dir);

	if (ret == 0) {
		snprintf(name, sizeof(name), "%s.json", bench);
		ret = output__write_json(dir, name, doc);
	}
	if (ret == 0 && md) {
		text = with_note(doc, md);
		snprintf(name, sizeof(name), "%s.md", bench);
		ret = text ? output__write_file(dir, name, text, strlen(text))
			   : err__set(ENOMEM, "writing %s", name);
	}
	free(text);
	return ret;
}

int result__emit(const json_t *doc, bool json, const char *dir,
		 result_report_fn *report)
{
	struct output_text md;
	int ret;

	if (json) {
		result__print_json(stdout, doc);
	} else {
		if (result__emulated_note(doc))
			printf("%s\n\n", result__emulated_note(doc));
		report(stdout, doc);
	}
	if (!dir)
		return 0;
	ret = output__text_open(&md);
	if (ret < 0)
		return ret;
	report(md.f, doc);
	ret = output__text_close(&md, "the Markdown report");
	if (ret == 0)
		ret = result__save(doc, json, dir, md.text);
	free(md.text);
	return ret;
}

int result__save(const json_t *doc, bool json, const char *dir,
		 const char *md)
{
	int ret;

	if (!dir)
		return 0;
	ret = result__write(doc, dir, md);
	if (ret == 0 && !json)
		printf("results written to %s/\n", dir);
	return ret;
}

double result__stat(const json_t *series, const char *key)
{
	return json_number_value(json_object_get(
		json_object_get(series, "summary"), key));
}

const char *result__rate_text(char *buf, size_t size, double per_s)
{
	snprintf(buf, size, per_s >= 100 || per_s == 0 ? "%.0f" : "%.3g",
		 per_s);
	return buf;
}

/* "k=v, k=v" of a params object. */
static void print_params(FILE *out, const json_t *params)
{
	const char *key, *sep = "";
	json_t *v;

	json_object_foreach((json_t *)params, key, v) {
		char *text = json_dumps(v, JSON_ENCODE_ANY);

		if (json_is_string(v))
			fprintf(out, "%s%s=%s", sep, key, json_string_value(v));
		else
			fprintf(out, "%s%s=%s", sep, key, text ? text : "?");
		free(text);
		sep = ", ";
	}
}

void result__md_series(FILE *out, const json_t *doc)
{
	const json_t *s;
	size_t i;

	fputs("| series | params | unit | n | median | p90 | p99 | min | max | "
	      "95% CI of median |\n|---|---|---|--:|--:|--:|--:|--:|--:|---|\n",
	      out);
	json_array_foreach(json_object_get(doc, "series"), i, s) {
		const char *unit = json_string_value(json_object_get(s, "unit"));
		const json_t *ci = json_object_get(json_object_get(s, "summary"),
						   "ci95_median");
		double k = !strcmp(unit, "ns") ? 1e6 : 1;

		fprintf(out, "| %s | ", json_string_value(json_object_get(s, "name")));
		print_params(out, json_object_get(s, "params"));
		fprintf(out, " | %s | %.0f | %.3f | %.3f | %.3f | %.3f | %.3f | "
			"%.3f..%.3f |\n", k > 1 ? "ms" : unit,
			result__stat(s, "n"), result__stat(s, "p50") / k,
			result__stat(s, "p90") / k, result__stat(s, "p99") / k,
			result__stat(s, "min") / k, result__stat(s, "max") / k,
			json_number_value(json_array_get(ci, 0)) / k,
			json_number_value(json_array_get(ci, 1)) / k);
	}
}

/* The series an outlier warning names and its sample count, or false
 * for other warnings. */
static bool outlier_series(const char *w, char *name, size_t len,
			   size_t *n)
{
	const char *tail = strstr(w, outlier_tail), *colon = NULL;
	size_t k;

	for (const char *p = w; tail && (p = strstr(p, ": ")) && p < tail; p++)
		colon = p;
	if (!colon)
		return false;
	snprintf(name, len, "%.*s", (int)(colon - w), w);
	if (sscanf(colon + 2, "%zu of %zu", &k, n) != 2)
		*n = 0;
	return true;
}

/* At most this many series named in the collapsed outlier line. */
#define OUTLIER_NAMES 5

void result__md_warning_list(FILE *out, const json_t *doc)
{
	result__md_warning_list_judged(out, doc, 0);
}

void result__md_warning_list_judged(FILE *out, const json_t *doc,
				    size_t min_n)
{
	const json_t *v;
	size_t i, count = 0, unjudged = 0;
	char names[OUTLIER_NAMES][96];

	json_array_foreach(json_object_get(doc, "warnings"), i, v) {
		const char *w = json_string_value(v);
		char name[96];
		size_t n;

		if (!w || !outlier_series(w, name, sizeof(name), &n))
			fprintf(out, "- %s\n", w ? w : "?");
		else if (n < min_n)
			unjudged++;
		else if (count++ < OUTLIER_NAMES)
			snprintf(names[count - 1], sizeof(names[0]), "%s", name);
	}
	if (count) {
		fprintf(out, "- %zu series %s MAD outliers (samples more than "
			"%.0f robust standard deviations from the median): ",
			count, count == 1 ? "has" : "have", STATS_OUTLIER_K);
		for (size_t k = 0; k < count && k < OUTLIER_NAMES; k++)
			fprintf(out, "%s%s", k ? ", " : "", names[k]);
		fprintf(out, "%s; each is a warning in the JSON document\n",
			count > OUTLIER_NAMES ? ", ..." : "");
	}
	if (unjudged)
		fprintf(out, "- MAD outliers not judged in %zu series with "
			"fewer than %zu samples, too few to tell an outlier "
			"from the spread (the JSON document lists them)\n",
			unjudged, min_n);
}

void result__print_skipped(FILE *out, const json_t *doc, bool md)
{
	const json_t *entry;
	size_t i;

	if (!json_array_size(json_object_get(doc, "skipped")))
		return;
	if (md)
		fputs("\n## Left out\n\nParts of the work this host could not "
		      "do; the rest ran.\n\n", out);
	json_array_foreach(json_object_get(doc, "skipped"), i, entry)
		fprintf(out, "%s%s: %s\n", md ? "- " : "left out: ",
			text_or(entry, "what", "?"), text_or(entry, "why", "?"));
}

void result__md_warnings(FILE *out, const json_t *doc)
{
	if (!json_array_size(json_object_get(doc, "warnings")))
		return;
	fputs("\n## Warnings\n\n", out);
	result__md_warning_list(out, doc);
}

/* Whether series s has a samples array and it is empty. */
static bool empty_series(const json_t *s)
{
	const json_t *a = json_object_get(s, "samples_ns");

	if (!a)
		a = json_object_get(s, "samples");
	return json_is_array(a) && !json_array_size(a);
}

void result__drop_empty_series(json_t *doc)
{
	json_t *series = json_object_get(doc, "series");
	size_t n = json_array_size(series), kept = 0;

	/* the kept ones moved up, then the tail cut from its end: removing
	 * each from the middle moved every later one, quadratic in series */
	for (size_t i = 0; i < n; i++) {
		json_t *s = json_array_get(series, i);

		if (empty_series(s))
			continue;
		if (kept != i)
			json_array_set(series, kept, s);
		kept++;
	}
	while (n-- > kept)
		json_array_remove(series, n);
}
