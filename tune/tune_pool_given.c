/* `coldstart tune pool --costs FILE` or `--cost hit=..,make=..,mem=..`:
 * what-if costs, for a host not at hand or a guest not yet measured,
 * instead of a results directory's measured ones; the report says they
 * were given. */
#include "tune_pool.h"
#include "tune_pool_int.h"

#include "args.h"
#include "err.h"
#include "output.h"
#include "pool_config.h"
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char file_keys[] =
	"hit_s, make_s (seconds: a number or an array of samples), vm_mib; "
	"optional miss_s (default make_s), workers, on_empty (make|wait)";

/* One value v (seconds) as the samples of c. */
static int one_sample(struct cost *c, double v, const char *from)
{
	c->s = malloc(sizeof(*c->s));
	if (!c->s)
		return err__set(ENOMEM, "allocating samples");
	c->s[0] = v;
	c->n = 1;
	snprintf(c->from, sizeof(c->from), "given: %s", from);
	return 0;
}

/* FILE's `key`: a number of seconds or an array of them; making times
 * above 0. -ENOENT when absent, -EINVAL naming file and key. */
static int file_samples(const char *path, const json_t *root, const char *key,
			bool positive, struct cost *c)
{
	const json_t *v = json_object_get(root, key), *e;
	size_t n = json_is_array(v) ? json_array_size(v) : 1, i;

	if (!v)
		return -ENOENT;
	if (!json_is_number(v) && !(json_is_array(v) && n))
		goto bad;
	c->s = malloc(n * sizeof(*c->s));
	if (!c->s)
		return err__set(ENOMEM, "allocating samples");
	for (i = 0; i < n; i++) {
		e = json_is_array(v) ? json_array_get(v, i) : v;
		c->s[i] = json_number_value(e);
		if (!json_is_number(e) || !isfinite(c->s[i]) || c->s[i] < 0 ||
		    (positive && c->s[i] == 0) || c->s[i] > 86400)
			goto bad;
	}
	c->n = n;
	snprintf(c->from, sizeof(c->from), "given: %.180s: %s (%zu sample%s)",
		 strrchr(path, '/') ? strrchr(path, '/') + 1 : path, key, n,
		 n == 1 ? "" : "s");
	return 0;
bad:
	return err__set(EINVAL, "%s: %s is not a time in seconds%s (0 to a "
			"day) or an array of them; keys: %s", path, key,
			positive ? " above 0" : "", file_keys);
}

static int vm_mib_of(struct costs *c, double mib, const char *what)
{
	if (!(mib * MiB >= 1 && mib * MiB <= (double)TP_MAX_BYTES))
		return err__set(EINVAL, "%s: %g MiB is not a memory per VM from "
				"1 byte to 2^50 bytes", what, mib);
	c->vm_mib = mib;
	snprintf(c->mem_from, sizeof(c->mem_from), "given: %.200s", what);
	return 0;
}

static int from_file(const char *path, struct costs *c)
{
	json_error_t je;
	json_t *root = output__json_load(path, &je);
	const json_t *w, *e;
	char what[PATH_MAX + 16];
	int ret;

	if (!root)
		return err__set(EINVAL, "--costs %s: line %d: %s", path,
				je.line, je.text);
	ret = json_is_object(root) ? file_samples(path, root, "hit_s", false,
						  &c->hit)
				   : -ENOENT;
	if (ret == 0)
		ret = file_samples(path, root, "make_s", true, &c->make);
	if (ret == 0) {
		ret = file_samples(path, root, "miss_s", false, &c->miss);
		if (ret == -ENOENT && (c->miss.s = malloc(c->make.n *
							  sizeof(double)))) {
			memcpy(c->miss.s, c->make.s, c->make.n * sizeof(double));
			c->miss.n = c->make.n;
			snprintf(c->miss.from, sizeof(c->miss.from), "%.200s "
				 "(miss_s absent: a miss makes its VM)",
				 c->make.from);
			ret = 0;
		}
	}
	snprintf(what, sizeof(what), "%s: vm_mib", path);
	if (ret == 0)
		ret = json_is_number(json_object_get(root, "vm_mib"))
			      ? vm_mib_of(c, json_number_value(json_object_get(
						     root, "vm_mib")), what)
			      : -ENOENT;
	w = json_object_get(root, "workers");
	if (ret == 0 && w) {
		if (!json_is_integer(w) || json_integer_value(w) < 1 ||
		    json_integer_value(w) > POOLSIM_MAX_WORKERS)
			ret = err__set(EINVAL, "%s: workers is not a whole "
				       "number from 1 to %d", path,
				       POOLSIM_MAX_WORKERS);
		else
			c->workers = (unsigned int)json_integer_value(w);
	}
	e = json_object_get(root, "on_empty");
	if (ret == 0 && e) {
		if (!json_is_string(e) || (strcmp(json_string_value(e), "make") &&
					   strcmp(json_string_value(e), "wait")))
			ret = err__set(EINVAL, "%s: on_empty is not \"make\" "
				       "or \"wait\"", path);
		else
			c->wait_on_empty = !strcmp(json_string_value(e), "wait");
	}
	json_decref(root);
	if (ret == -ENOENT)
		return err__set(EINVAL, "--costs %s: a JSON object with %s",
				path, file_keys);
	return ret;
}

/* "hit=1ms,make=150ms,mem=256M[,miss=DUR][,workers=K]" */
static int from_text(const char *text, struct costs *c)
{
	char buf[256], *save = NULL, what[300];
	double hit = -1, make = -1, miss = -1;
	uint64_t ns, bytes = 0, k;
	int ret = 0;

	if (strlen(text) >= sizeof(buf))
		goto bad;
	snprintf(buf, sizeof(buf), "%s", text);
	for (char *p = strtok_r(buf, ",", &save); p && ret == 0;
	     p = strtok_r(NULL, ",", &save)) {
		char *v = strchr(p, '=');

		if (!v)
			goto bad;
		*v++ = '\0';
		if (!strcmp(p, "hit") || !strcmp(p, "make") || !strcmp(p, "miss")) {
			if (args__duration("--cost", v, &ns) < 0 ||
			    (ns == 0 && strcmp(p, "hit")) || ns > 86400 * 1e9)
				goto bad;
			*(!strcmp(p, "hit") ? &hit : !strcmp(p, "make") ? &make
									: &miss) =
				(double)ns / 1e9;
		} else if (!strcmp(p, "mem")) {
			if (args__size("--cost", v, &bytes) < 0 || !bytes)
				goto bad;
		} else if (!strcmp(p, "workers")) {
			if (args__u64("--cost", v, 1, POOLSIM_MAX_WORKERS, &k) < 0)
				goto bad;
			c->workers = (unsigned int)k;
		} else {
			goto bad;
		}
	}
	if (hit < 0 || make <= 0 || !bytes)
		goto bad;
	snprintf(what, sizeof(what), "--cost mem=%.0f MiB",
		 (double)bytes / MiB);
	if ((ret = one_sample(&c->hit, hit, "--cost hit")) ||
	    (ret = one_sample(&c->make, make, "--cost make")) ||
	    (ret = one_sample(&c->miss, miss >= 0 ? miss : make,
			      miss >= 0 ? "--cost miss"
					: "--cost make (a miss makes its VM)")))
		return ret;
	return vm_mib_of(c, (double)bytes / MiB, what);
bad:
	return err__set(EINVAL, "--cost: '%s' is not hit=DUR,make=DUR,mem=SIZE"
			"[,miss=DUR][,workers=K] (e.g. hit=1ms,make=150ms,"
			"mem=256M; make above 0)", text);
}

int tune_pool__given_costs(const struct tp_opts *o, struct costs *c)
{
	int ret;

	memset(c, 0, sizeof(*c));
	c->given = true;
	c->workers = 1;
	pool_config__defaults(&c->stored);
	ret = o->costs_file ? from_file(o->costs_file, c)
			    : from_text(o->cost_text, c);
	if (o->workers)
		c->workers = o->workers;
	return ret;
}
