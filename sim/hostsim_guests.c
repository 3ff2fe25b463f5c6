/* `tune host`'s guests: the types of a --guests JSON document (each its
 * memory, latencies and functions), and which one runs each function of
 * a trace. */
#include "hostsim.h"

#include "err.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void hostsim__guests_free(struct hostsim_guests *gs)
{
	free(gs->type);
	free(gs->fn_type);
	free(gs->fn);
	memset(gs, 0, sizeof(*gs));
}

static int alloc_fns(const struct fn_trace *t, struct hostsim_guests *gs)
{
	gs->fn_type = calloc(t->nfn ? t->nfn : 1, sizeof(*gs->fn_type));
	gs->fn = calloc(t->nfn ? t->nfn : 1, sizeof(*gs->fn));
	if (!gs->fn_type || !gs->fn)
		return err__set(ENOMEM, "guests: out of memory");
	for (size_t i = 0; i < t->nfn; i++)
		gs->fn_type[i] = SIZE_MAX;
	return 0;
}

int hostsim__guests_one(const struct hostsim_guest *g,
			const struct fn_trace *t, struct hostsim_guests *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	out->type = calloc(1, sizeof(*out->type));
	err = out->type ? alloc_fns(t, out)
			: err__set(ENOMEM, "guests: out of memory");
	if (err < 0) {
		hostsim__guests_free(out);
		return err;
	}
	out->ntype = 1;
	snprintf(out->type[0].name, sizeof(out->type[0].name), "default");
	out->type[0].g = *g;
	out->type[0].nfn = t->nfn;
	for (size_t i = 0; i < t->nfn; i++) {
		out->fn_type[i] = 0;
		out->fn[i] = *g;
	}
	return 0;
}

/* The guest's number at `key`, from lo to hi. */
static int number(const json_t *o, const char *what, size_t k,
		  const char *key, double lo, double hi, bool need, double *v)
{
	const json_t *n = json_object_get(o, key);

	if (!n && !need)
		return 0;
	if (!n || !json_is_number(n))
		return err__set(EINVAL, "%s: guests[%zu] needs a number "
				"\"%s\"", what, k, key);
	*v = json_number_value(n);
	if (!(*v >= lo && *v <= hi))
		return err__set(EINVAL, "%s: guests[%zu].%s is %g, not from "
				"%g to %g", what, k, key, *v, lo, hi);
	return 0;
}

static int check_keys(const json_t *o, const char *what, size_t k)
{
	static const char *const keys[] = { "name", "mem_mib", "cold_ms",
					     "hit_ms", "idle_weight",
					     "functions" };
	const char *key;
	const json_t *v;

	json_object_foreach((json_t *)o, key, v) {
		size_t i = 0;

		while (i < sizeof(keys) / sizeof(*keys) && strcmp(key, keys[i]))
			i++;
		if (i == sizeof(keys) / sizeof(*keys))
			return err__set(EINVAL, "%s: guests[%zu] has an unknown "
					"key \"%.64s\" (name, mem_mib, cold_ms, "
					"hit_ms, idle_weight, functions)",
					what, k, key);
	}
	return 0;
}

static int one_type(const json_t *o, const char *what, size_t k,
		    struct hostsim_guests *gs)
{
	struct hostsim_type *ty = &gs->type[k];
	const json_t *name = json_object_get(o, "name");
	double cold = 0, hit = 0, w = 1;
	int err;

	if (!json_is_object(o))
		return err__set(EINVAL, "%s: guests[%zu] is not an object",
				what, k);
	err = check_keys(o, what, k);
	if (err == 0 && (!json_is_string(name) ||
			 json_string_length(name) == 0 ||
			 json_string_length(name) >= sizeof(ty->name) ||
			 strlen(json_string_value(name)) !=
				 json_string_length(name)))
		err = err__set(EINVAL, "%s: guests[%zu] needs a \"name\" of "
			       "1 to %zu bytes", what, k, sizeof(ty->name) - 1);
	if (err == 0)
		err = number(o, what, k, "mem_mib", 1.0 / 1024, 1 << 30, true,
			     &ty->g.mem_mib);
	if (err == 0)
		err = number(o, what, k, "cold_ms", 0, 1e8, true, &cold);
	if (err == 0)
		err = number(o, what, k, "hit_ms", 0, cold, true, &hit);
	if (err == 0)
		err = number(o, what, k, "idle_weight", 1e-6, 1e5, false, &w);
	if (err < 0)
		return err;
	snprintf(ty->name, sizeof(ty->name), "%s", json_string_value(name));
	for (size_t j = 0; j < k; j++)
		if (!strcmp(gs->type[j].name, ty->name))
			return err__set(EINVAL, "%s: two guests are named "
					"\"%s\"", what, ty->name);
	ty->g.cold_s = cold / 1e3;
	ty->g.hit_s = hit / 1e3;
	ty->g.idle_weight = w;
	return 0;
}

static int cmp_name(const void *a, const void *b, void *names)
{
	char **n = names;

	return strcmp(n[*(const size_t *)a], n[*(const size_t *)b]);
}

struct by_name {
	const struct fn_trace *t;
	size_t *order; /* the trace's functions sorted by name */
};

static size_t find_fn(const struct by_name *bn, const char *s)
{
	size_t lo = 0, hi = bn->t->nfn;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(bn->t->name[bn->order[mid]], s);

		if (c == 0)
			return bn->order[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SIZE_MAX;
}

static int assign_list(const json_t *list, const char *what, size_t k,
		       const struct by_name *bn, struct hostsim_guests *gs)
{
	size_t j;
	const json_t *v;

	if (!json_is_array(list))
		return err__set(EINVAL, "%s: guests[%zu].functions is not a "
				"list of names", what, k);
	json_array_foreach(list, j, v) {
		size_t f;

		if (!json_is_string(v) ||
		    strlen(json_string_value(v)) != json_string_length(v))
			return err__set(EINVAL, "%s: guests[%zu].functions[%zu]"
					" is not a string without NUL bytes",
					what, k, j);
		f = find_fn(bn, json_string_value(v));
		if (f == SIZE_MAX) {
			gs->absent++;
			continue;
		}
		if (gs->fn_type[f] != SIZE_MAX)
			return err__set(EINVAL, "%s: function %.80s is in two "
					"guests' lists (%s and %s)", what,
					json_string_value(v),
					gs->type[gs->fn_type[f]].name,
					gs->type[k].name);
		gs->fn_type[f] = k;
	}
	return 0;
}

static int assign(const json_t *arr, const char *what,
		  const struct fn_trace *t, struct hostsim_guests *gs)
{
	struct by_name bn = { .t = t };
	size_t def = SIZE_MAX, k;
	const json_t *o;
	int err = 0;

	bn.order = malloc((t->nfn ? t->nfn : 1) * sizeof(*bn.order));
	if (!bn.order)
		return err__set(ENOMEM, "guests: out of memory");
	for (size_t i = 0; i < t->nfn; i++)
		bn.order[i] = i;
	qsort_r(bn.order, t->nfn, sizeof(*bn.order), cmp_name, t->name);
	json_array_foreach(arr, k, o) {
		const json_t *list = json_object_get(o, "functions");

		if (list)
			err = assign_list(list, what, k, &bn, gs);
		else if (def != SIZE_MAX)
			err = err__set(EINVAL, "%s: guests %s and %s both lack "
				       "\"functions\" (only one guest may be "
				       "the default)", what,
				       gs->type[def].name, gs->type[k].name);
		else
			def = k;
		if (err < 0)
			break;
	}
	free(bn.order);
	for (size_t i = 0; err == 0 && i < t->nfn; i++) {
		if (gs->fn_type[i] == SIZE_MAX && def == SIZE_MAX)
			return err__set(EINVAL, "%s: function %.80s is in no "
					"guest's \"functions\" and no guest is "
					"the default (one without "
					"\"functions\")", what, t->name[i]);
		if (gs->fn_type[i] == SIZE_MAX)
			gs->fn_type[i] = def;
		gs->fn[i] = gs->type[gs->fn_type[i]].g;
		gs->type[gs->fn_type[i]].nfn++;
	}
	return err;
}

int hostsim__guests_from_json(const json_t *root, const char *what,
			      const struct fn_trace *t,
			      struct hostsim_guests *out)
{
	const json_t *arr = json_object_get(root, "guests");
	size_t n = json_array_size(arr);
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(root) || json_object_size(root) != 1 ||
	    !json_is_array(arr) || n == 0 || n > HOSTSIM_MAX_TYPES)
		return err__set(EINVAL, "%s: expected {\"guests\": [...]} with "
				"1 to %d guests", what, HOSTSIM_MAX_TYPES);
	out->type = calloc(n, sizeof(*out->type));
	err = out->type ? alloc_fns(t, out)
			: err__set(ENOMEM, "guests: out of memory");
	for (size_t k = 0; err == 0 && k < n; k++)
		err = one_type(json_array_get(arr, k), what, k, out);
	out->ntype = n;
	if (err == 0)
		err = assign(arr, what, t, out);
	if (err < 0)
		hostsim__guests_free(out);
	return err;
}
