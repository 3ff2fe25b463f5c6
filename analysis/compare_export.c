/* Result documents for other tools: github-action-benchmark's JSON and
 * Go's benchmark text format (benchstat). */
#include "compare.h"

#include "err.h"
#include "stats.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *github_entry(const struct result_doc *doc,
			    const struct result_series *s)
{
	bool ns = !strcmp(s->unit, "ns");
	double median, spread = 0;
	char *name = NULL, range[32];
	json_t *e = NULL;

	if (stats__median(s->samples, s->n, &median) < 0 ||
	    compare__median_spread(s->samples, s->n, median, &spread) < 0 ||
	    asprintf(&name, "%s/%s", doc->bench, s->name) < 0)
		return NULL;
	snprintf(range, sizeof(range), "± %.1f%%", 100 * spread);
	e = json_pack("{s:s, s:s, s:f, s:s}", "name", name, "unit",
		      ns ? "ms" : s->unit, "value", ns ? median / 1e6 : median,
		      "range", range);
	free(name);
	return e;
}

json_t *compare__github_json(const struct result_doc *doc, bool bigger)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < doc->nr_series; i++) {
		json_t *e;

		if (doc->series[i].higher_is_better != bigger)
			continue; /* the other direction's file */
		e = github_entry(doc, &doc->series[i]);
		if (!e || json_array_append_new(arr, e) < 0) {
			json_decref(arr);
			err__set(ENOMEM, "building the github JSON");
			return NULL;
		}
	}
	return arr;
}

/* Go benchmark names hold no white space. */
static void put_token(FILE *out, const char *s)
{
	for (; *s; s++)
		fputc(isspace((unsigned char)*s) ? '_' : *s, out);
}

void compare__write_gobench(const struct result_doc *doc, FILE *out)
{
	const char *cpu = json_string_value(
		json_object_get(json_object_get(doc->sysinfo, "cpu"), "model"));

	fprintf(out, "goos: linux\ngoarch: amd64\npkg: coldstart/%s\n",
		doc->bench);
	fputs("cpu: ", out);
	put_token(out, cpu ? cpu : "(unknown)");
	fputc('\n', out);
	for (size_t i = 0; i < doc->nr_series; i++) {
		const struct result_series *s = &doc->series[i];

		for (size_t k = 0; k < s->n; k++) {
			fprintf(out, "Benchmark%c", toupper((unsigned char)
							   doc->bench[0]));
			put_token(out, doc->bench + 1);
			fputc('/', out);
			put_token(out, s->name);
			fprintf(out, " 1 %.15g ", s->samples[k]);
			put_token(out, s->unit);
			fputs("/op\n", out);
		}
	}
}
