/* Capacity figures: VMs per GiB and VMs per second as sample series, and
 * VMs per host by memory. */
#include "capacity.h"

#include "err.h"
#include "result.h"
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KiB_PER_GiB ((double)(GiB / KiB))

size_t capacity__vms_per_gib(const double *cost_kib, size_t n, double *out)
{
	size_t k = 0;

	if (n == 1 && cost_kib[0] > 0)
		out[k++] = KiB_PER_GiB / cost_kib[0];
	for (size_t i = 1; i < n; i++) {
		double added = cost_kib[i] - cost_kib[i - 1];

		if (added > 0)
			out[k++] = KiB_PER_GiB / added;
	}
	return k;
}

size_t capacity__block_rates(double *ends_ns, size_t n, size_t blocks,
			     double *out)
{
	double prev = 0;
	size_t nb = blocks < n ? blocks : n;

	qsort(ends_ns, n, sizeof(double), cmp_double);
	for (size_t b = 0; b < nb; b++) {
		/* block b holds completions [n*b/nb, n*(b+1)/nb) */
		size_t from = n * b / nb, to = n * (b + 1) / nb;
		double span = ends_ns[to - 1] - prev;

		if (span <= 0)
			return 0;
		out[b] = 1e9 * (double)(to - from) / span;
		prev = ends_ns[to - 1];
	}
	return nb;
}

double capacity__reserve_kib(double total_kib)
{
	double tenth = total_kib / 10;

	return tenth > KiB_PER_GiB ? tenth : KiB_PER_GiB;
}

double capacity__vms_by_memory(double total_kib, double fixed_kib,
			       double marginal_kib)
{
	double usable = total_kib - capacity__reserve_kib(total_kib) -
			(fixed_kib > 0 ? fixed_kib : 0);

	if (!(marginal_kib > 0))
		return -1;
	return usable > 0 ? floor(usable / marginal_kib) : 0;
}

/* s.name, "?" when it has none. */
static const char *name_of(const json_t *s)
{
	const char *name = json_string_value(json_object_get(s, "name"));

	return name ? name : "?";
}

/* Whether doc has a series `name`: a look-up in `names` (the set of its
 * series' names, which capacity__derive_series keeps, as a scan of
 * every series per series added was quadratic), else a scan. */
static bool has_series(const json_t *doc, const json_t *names,
		       const char *name)
{
	const json_t *s;
	size_t i;

	if (names)
		return json_object_get(names, name) != NULL;
	json_array_foreach(json_object_get(doc, "series"), i, s)
		if (!strcmp(name_of(s), name))
			return true;
	return false;
}

/* Adds `name` to the set (NULL: none kept). */
static int name_added(json_t *names, const char *name)
{
	if (names && json_object_set_new_nocheck(names, name, json_true()) < 0)
		return err__set(ENOMEM, "adding %s", name);
	return 0;
}

/* The set of doc's series' names; NULL without memory. */
static json_t *series_names(const json_t *doc)
{
	json_t *names = json_object();
	const json_t *s;
	size_t i;

	json_array_foreach(json_object_get(doc, "series"), i, s)
		if (names && name_added(names, name_of(s)) < 0) {
			json_decref(names);
			names = NULL;
		}
	return names;
}

static int add_density_series(json_t *doc, json_t *names, const char *mode)
{
	const json_t *curve = json_object_get(json_object_get(
		json_object_get(doc, "density"), mode), "curve"), *p;
	size_t n = json_array_size(curve), i, k;
	double *cost, *v;
	char name[96];
	int ret = 0;

	snprintf(name, sizeof(name), "%s.vms_per_gib", mode);
	if (!n || has_series(doc, names, name))
		return 0;
	cost = calloc(n, sizeof(double));
	v = calloc(n, sizeof(double));
	if (!cost || !v)
		ret = err__set(ENOMEM, "adding %s", name);
	json_array_foreach(curve, i, p)
		if (cost)
			cost[i] = json_number_value(json_object_get(p,
								    "cost_kib"));
	k = ret == 0 ? capacity__vms_per_gib(cost, n, v) : 0;
	if (k && !result__add_series(doc, name, "vms_per_gib", RESULT_HIGHER,
				     json_pack("{s:s, s:s}", "mode", mode,
					       "metric", "vms_per_gib"),
				     v, k))
		ret = -ENOMEM;
	free(cost);
	free(v);
	return ret == 0 && k ? name_added(names, name) : ret;
}

int capacity__add_density_series(json_t *doc, const char *mode)
{
	return add_density_series(doc, NULL, mode);
}

int capacity__add_rate_series(json_t *doc, const json_t *lat,
			      const double *samples, size_t n)
{
	json_t *params = json_deep_copy(json_object_get(lat, "params"));
	char name[128];

	snprintf(name, sizeof(name), "%s.vms_per_s",
		 name_of(lat));
	if (!params)
		params = json_object();
	json_object_set_new(params, "metric", json_string("vms_per_s"));
	return result__add_series(doc, name, "vms_per_s", RESULT_HIGHER,
				  params, samples, n) ? 0 : -ENOMEM;
}

/* A rate level of an old document: one sample per burst round (its K
 * VMs over the round's makespan), else the level's overall rate. */
static int derive_rate(json_t *doc, const json_t *s)
{
	const json_t *spans = json_object_get(s, "makespan_ns"), *v;
	double k = json_number_value(json_object_get(
		json_object_get(s, "params"), "workers"));
	size_t n = json_array_size(spans), i, m = 0;
	double *rates = calloc(n ? n : 1, sizeof(double));
	int ret;

	if (!rates)
		return err__set(ENOMEM, "deriving VMs/s");
	json_array_foreach(spans, i, v)
		if (json_number_value(v) > 0 && k > 0)
			rates[m++] = 1e9 * k / json_number_value(v);
	if (!m)
		rates[m++] = json_number_value(json_object_get(s, "vms_per_s"));
	ret = capacity__add_rate_series(doc, s, rates, m);
	free(rates);
	return ret;
}

int capacity__derive_series(json_t *doc)
{
	const char *bench = json_string_value(json_object_get(doc, "bench"));
	json_t *series = json_object_get(doc, "series"), *m, *names;
	size_t n = json_array_size(series);
	const char *mode;
	int ret = 0;

	if (!bench || (strcmp(bench, "density") && strcmp(bench, "rate")))
		return 0;
	names = series_names(doc);
	if (!names)
		return err__set(ENOMEM, "deriving series");
	if (!strcmp(bench, "density"))
		json_object_foreach(json_object_get(doc, "density"), mode, m)
			if (ret == 0)
				ret = add_density_series(doc, names, mode);
	/* rate: only the latency series there were before any was added */
	for (size_t i = 0; !strcmp(bench, "rate") && ret == 0 && i < n; i++) {
		const json_t *s = json_array_get(series, i);
		char name[160];

		if (!json_is_number(json_object_get(s, "vms_per_s")))
			continue;
		snprintf(name, sizeof(name), "%s.vms_per_s",
			 name_of(s));
		if (has_series(doc, names, name))
			continue;
		ret = derive_rate(doc, s);
		if (ret == 0)
			ret = name_added(names, name);
	}
	json_decref(names);
	return ret;
}
