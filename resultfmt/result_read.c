/* Reading a result document back: its series parsed into arrays of
 * samples, checked (schema, names, numbers) and indexed by name. */
#include "result.h"

#include "err.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int parse_samples(const json_t *js, struct result_series *s,
			 bool allow_empty)
{
	const json_t *arr = json_object_get(js, "samples_ns"), *v;
	size_t i;

	if (!arr)
		arr = json_object_get(js, "samples");
	if (!json_is_array(arr))
		return err__set(EINVAL, "series '%s' has no samples_ns[] "
				"array", s->name);
	if (json_array_size(arr) == 0)
		return allow_empty ? 0 : err__set(EINVAL, "series '%s' has no "
						  "samples", s->name);
	s->samples = malloc(json_array_size(arr) * sizeof(double));
	if (!s->samples)
		return err__set(ENOMEM, "allocating samples");
	json_array_foreach(arr, i, v) {
		if (!json_is_number(v))
			return err__set(EINVAL, "sample %zu of series '%s' is "
					"not a number", i, s->name);
		s->samples[i] = json_number_value(v);
	}
	s->n = json_array_size(arr);
	return 0;
}

static int parse_series(const json_t *js, size_t i, struct result_series *s,
			bool allow_empty)
{
	const char *better;

	if (!json_is_object(js))
		return err__set(EINVAL, "series[%zu] is not an object", i);
	s->name = json_string_value(json_object_get(js, "name"));
	if (!s->name || !*s->name)
		return err__set(EINVAL, "series[%zu] has no name", i);
	s->unit = json_string_value(json_object_get(js, "unit"));
	if (!s->unit)
		s->unit = "ns";
	better = json_string_value(json_object_get(js, "better"));
	s->higher_is_better = better && !strcmp(better, "higher");
	return parse_samples(js, s, allow_empty);
}

static int check_header(const json_t *root)
{
	const json_t *schema = json_object_get(root, "schema");

	if (!json_is_object(root))
		return err__set(EINVAL, "not a coldstart result (the top level "
				"is not a JSON object)");
	if (!json_is_integer(schema))
		return err__set(EINVAL, "not a coldstart result (no \"schema\" "
				"version)");
	if (json_integer_value(schema) != RESULT_SCHEMA)
		return err__set(EINVAL, "result schema version %" JSON_INTEGER_FORMAT
				" is not supported (this coldstart reads %d)",
				json_integer_value(schema), RESULT_SCHEMA);
	if (!json_is_string(json_object_get(root, "bench")) ||
	    !*json_string_value(json_object_get(root, "bench")))
		return err__set(EINVAL, "not a coldstart result (no \"bench\" "
				"name)");
	if (!json_is_array(json_object_get(root, "series")) ||
	    !json_array_size(json_object_get(root, "series")))
		return err__set(EINVAL, "no \"series\" in the result");
	return 0;
}

static const json_t *object_or_null(const json_t *v)
{
	return json_is_object(v) ? v : json_null();
}

/* The series sorted by name, ties in document order, for
 * index_by_name's qsort (which has no context argument). */
static const struct result_series *sort_series;

static int cmp_by_name(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(sort_series[x].name, sort_series[y].name);

	return c ? c : (x > y) - (x < y);
}

/* doc->by_name over the first doc->nr_series series; the smallest index
 * of a series whose name an earlier one has in *twin (SIZE_MAX: none):
 * n log n, where checking each name against the ones before it was
 * quadratic in series. */
static int index_by_name(struct result_doc *doc, size_t *twin)
{
	size_t n = doc->nr_series;

	*twin = SIZE_MAX;
	doc->by_name = malloc((n ? n : 1) * sizeof(*doc->by_name));
	if (!doc->by_name)
		return err__set(ENOMEM, "indexing series");
	for (size_t i = 0; i < n; i++)
		doc->by_name[i] = i;
	sort_series = doc->series;
	qsort(doc->by_name, n, sizeof(*doc->by_name), cmp_by_name);
	sort_series = NULL;
	for (size_t i = 1; i < n; i++) {
		size_t k = doc->by_name[i];

		if (!strcmp(doc->series[doc->by_name[i - 1]].name,
			    doc->series[k].name) && k < *twin)
			*twin = doc->by_name[i];
	}
	return 0;
}

/* Parses every series up to the first bad one; a name used twice before
 * it is the error, as each series used to be checked in turn. */
static int parse_all_series(const json_t *series, struct result_doc *doc,
			    bool allow_empty)
{
	size_t twin, bad = json_array_size(series);
	int ret = 0, err = 0;

	for (size_t i = 0; i < json_array_size(series); i++) {
		struct result_series *s = &doc->series[doc->nr_series++];

		err = parse_series(json_array_get(series, i), i, s,
				   allow_empty);
		if (err < 0) { /* out of the index: its name may be NULL */
			free(s->samples);
			*s = (struct result_series){ 0 };
			bad = i;
			doc->nr_series--;
			break;
		}
	}
	ret = index_by_name(doc, &twin);
	if (ret == 0 && twin < bad)
		return err__set(EINVAL, "series '%s' appears twice",
				doc->series[twin].name);
	return ret < 0 ? ret : err;
}

static int parse_doc(json_t *root, struct result_doc *doc, bool allow_empty)
{
	const json_t *series;
	int ret = check_header(root);

	*doc = (struct result_doc){ 0 };
	if (ret < 0)
		return ret;
	series = json_object_get(root, "series");
	doc->root = json_incref(root);
	doc->bench = json_string_value(json_object_get(root, "bench"));
	doc->config = object_or_null(json_object_get(root, "config"));
	doc->sysinfo = object_or_null(json_object_get(root, "sysinfo"));
	doc->series = calloc(json_array_size(series), sizeof(*doc->series));
	if (!doc->series) {
		result__free(doc);
		return err__set(ENOMEM, "allocating series");
	}
	ret = parse_all_series(series, doc, allow_empty);
	if (ret < 0)
		result__free(doc);
	return ret;
}

int result__parse(json_t *root, struct result_doc *doc)
{
	return parse_doc(root, doc, false);
}

int result__parse_all(json_t *root, struct result_doc *doc)
{
	return parse_doc(root, doc, true);
}

void result__free(struct result_doc *doc)
{
	for (size_t i = 0; i < doc->nr_series; i++)
		free(doc->series[i].samples);
	free(doc->series);
	free(doc->by_name);
	json_decref(doc->root);
	*doc = (struct result_doc){ 0 };
}

const struct result_series *result__find(const struct result_doc *doc,
					 const char *name)
{
	size_t lo = 0, hi = doc->nr_series;

	if (!doc->by_name) {
		for (size_t i = 0; i < doc->nr_series; i++)
			if (doc->series[i].name &&
			    !strcmp(doc->series[i].name, name))
				return &doc->series[i];
		return NULL;
	}
	while (lo < hi) { /* the first whose name is not below `name` */
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(doc->series[doc->by_name[mid]].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < doc->nr_series &&
	    !strcmp(doc->series[doc->by_name[lo]].name, name))
		return &doc->series[doc->by_name[lo]];
	return NULL;
}

bool result__is_tune(const char *bench)
{
	return !strcmp(bench, "tune-pool") || !strcmp(bench, "tune-restore") ||
	       !strcmp(bench, "tune-host") || !strcmp(bench, "tune-session");
}

const char *result__sysinfo_emulated(const json_t *sysinfo)
{
	const char *label = json_string_value(json_object_get(
		json_object_get(sysinfo, "kvm"), "emulated"));

	return label && *label ? label : NULL;
}
