/* `coldstart tune pool`: the measured costs a results directory gives
 * the simulator (hits, misses, VM creation, memory). */
#include "tune_pool.h"
#include "tune_pool_int.h"

#include "args.h"
#include "arrivals.h"
#include "child.h"
#include "cli.h"
#include "err.h"
#include "kvm.h"
#include "output.h"
#include "plot.h"
#include "poolsim.h"
#include "report.h"
#include "result.h"
#include "result_new.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* ---- the costs ---- */

/* Loads and parses dir/name; -ENOENT (no message) when it is absent and
 * optional, else -EINVAL naming the file (and line). */
static int load_doc(const char *dir, const char *name, bool required,
		    char *path, size_t size, struct result_doc *doc)
{
	json_error_t je;
	json_t *root;
	struct stat st;
	int ret;

	memset(doc, 0, sizeof(*doc));
	snprintf(path, size, "%s/%s", dir, name);
	if (stat(path, &st) < 0) {
		if (!required && errno == ENOENT)
			return -ENOENT;
		if (errno == ENOENT)
			return err__set(EINVAL, "%s: no such file: --host takes "
					"a results directory holding this "
					"host's %s (made by 'coldstart bench "
					"%.*s --out %s' or 'coldstart bench "
					"suite --out %s')", path, name,
					(int)(strchr(name, '.') - name), name,
					dir, dir);
		return err__set(EINVAL, "%s: %s", path, strerror(errno));
	}
	root = output__json_load(path, &je);
	if (!root)
		return err__set(EINVAL, "%s: line %d: %s", path, je.line,
				je.text);
	result__drop_empty_series(root);
	ret = result__parse(root, doc);
	json_decref(root);
	if (ret < 0) {
		char why[512];

		snprintf(why, sizeof(why), "%s", err__last());
		return err__set(EINVAL, "%s: %s", path, why);
	}
	return 0;
}

/* The series `name` of doc as seconds into c; 0, -ENOENT when absent,
 * -EINVAL naming file and series for a negative or non-finite sample. */
static int take_series(const char *path, const struct result_series *s,
		       bool positive, struct cost *c)
{
	double div;

	if (!s)
		return -ENOENT;
	div = !strcmp(s->unit, "ns") ? 1e9 : 1;
	c->s = malloc(s->n * sizeof(double));
	if (!c->s)
		return err__set(ENOMEM, "allocating samples");
	for (size_t i = 0; i < s->n; i++) {
		c->s[i] = s->samples[i] / div;
		if (!isfinite(c->s[i]) || c->s[i] < 0 ||
		    (positive && c->s[i] <= 0))
			return err__set(EINVAL, "%s: series '%s' sample %zu: "
					"%g is not a time", path, s->name, i,
					s->samples[i]);
	}
	c->n = s->n;
	snprintf(c->from, sizeof(c->from), "%s: %s (%zu samples)",
		 strrchr(path, '/') + 1, s->name, s->n);
	return 0;
}

/* restore.json's series of restore start -> first instruction with a
 * warm page cache, for the strategy `strategy` (NULL: the first). */
static const struct result_series *restore_first_run(const struct costs *c,
						     const char *strategy)
{
	const json_t *series = json_object_get(c->restore.root, "series");

	for (size_t i = 0; c->have_restore && i < c->restore.nr_series; i++) {
		const json_t *p = NULL, *js;
		size_t j;

		json_array_foreach(series, j, js)
			if (!strcmp(json_string_value(json_object_get(js, "name"))
					    ?: "", c->restore.series[i].name))
				p = json_object_get(js, "params");
		if (!p || strcmp(json_string_value(json_object_get(p, "phase"))
					 ?: "", "first_run") ||
		    strcmp(json_string_value(json_object_get(p, "cache")) ?: "",
			   "warm"))
			continue;
		if (!strategy || !strcmp(json_string_value(json_object_get(
						 p, "strategy")) ?: "",
					 strategy))
			return &c->restore.series[i];
	}
	return NULL;
}

static int miss_costs(struct costs *c, const char *strategy)
{
	const struct result_series *s;

	s = result__find(&c->pool, "arrival_to_first_run.miss");
	if (s)
		return take_series(c->pool_path, s, false, &c->miss);
	s = result__find(&c->pool, "baseline.fresh_restore_to_first_run");
	if (s)
		return take_series(c->pool_path, s, false, &c->miss);
	s = restore_first_run(c, strategy);
	if (!s)
		s = restore_first_run(c, NULL);
	if (s)
		return take_series(c->restore_path, s, false,
				   &c->miss);
	/* a pool that never missed: a miss makes its VM as a refill does */
	s = result__find(&c->pool, "refill.make");
	if (s)
		return take_series(c->pool_path, s, false, &c->miss);
	return err__set(EINVAL, "%s: no miss latency samples (series "
			"arrival_to_first_run.miss, baseline.fresh_restore_"
			"to_first_run or refill.make), and no restore.json "
			"with a warm first_run series", c->pool_path);
}

/* lifecycle.json's in-process create -> READY -> destroy samples into
 * c->make: 0, -ENOENT when it or the series is absent, -EINVAL. */
static int lifecycle_costs(struct costs *c, const char *host)
{
	const struct result_series *s;
	struct result_doc d;
	char path[PATH_MAX];
	int ret = load_doc(host, "lifecycle.json", false, path, sizeof(path),
			   &d);

	if (ret < 0)
		return ret;
	s = result__find(&d, "inproc.coldstart");
	ret = s ? take_series(path, s, true, &c->make) : -ENOENT;
	result__free(&d);
	return ret;
}

/* Making times: raw samples of a VM made from nothing to READY or its
 * first instruction, most direct first (the pool's own refills,
 * refill.make); stats.make_s (one mean) last. */
static int make_costs(struct costs *c, const char *host, const char *strategy,
		      bool snapshot, const json_t *stats)
{
	int ret;

	const struct result_series *s;
	const json_t *mean = json_object_get(stats, "make_s");

	s = result__find(&c->pool, "refill.make");
	if (!s)
		s = result__find(&c->pool,
				  "baseline.fresh_restore_to_first_run");
	if (s)
		return take_series(c->pool_path, s, true, &c->make);
	s = snapshot ? restore_first_run(c, strategy) : NULL;
	if (s)
		return take_series(c->restore_path, s, true,
				   &c->make);
	s = result__find(&c->pool, "arrival_to_first_run.miss");
	if (s)
		return take_series(c->pool_path, s, true, &c->make);
	ret = snapshot ? -ENOENT : lifecycle_costs(c, host);
	if (ret != -ENOENT)
		return ret;
	if (json_is_number(mean) && json_number_value(mean) > 0) {
		c->make.s = malloc(sizeof(double));
		if (!c->make.s)
			return err__set(ENOMEM, "allocating samples");
		c->make.s[0] = json_number_value(mean);
		c->make.n = 1;
		snprintf(c->make.from, sizeof(c->make.from), "pool.json: "
			 "pool.stats.make_s (one mean, no raw samples)");
		return 0;
	}
	return err__set(EINVAL, "%s: no making time: no series refill.make, "
			"baseline.fresh_restore_to_first_run or "
			"arrival_to_first_run.miss, no "
			"restore.json first_run or lifecycle.json "
			"inproc.coldstart series, and pool.stats.make_s is not "
			"a number above 0", c->pool_path);
}

static double positive(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) && json_number_value(v) > 0
		       ? json_number_value(v)
		       : 0;
}

/* kib, the document path's `key`, as c's memory per VM; -EINVAL outside
 * 1 byte to TP_MAX_BYTES. */
static int vm_memory(struct costs *c, double kib, const char *path,
		     const char *key)
{
	if (!(kib * 1024 >= 1 && kib * 1024 <= (double)TP_MAX_BYTES))
		return err__set(EINVAL, "%s: %s = %g KiB is not a memory per "
				"VM from 1 byte to 2^50 bytes (1 PiB, more "
				"than any host has)", path, key, kib);
	c->vm_mib = kib / 1024;
	snprintf(c->mem_from, sizeof(c->mem_from), "%.40s: %s = %.0f KiB",
		 strrchr(path, '/') + 1, key, kib);
	return 0;
}

/* pool.json's memory per VM held (PSS, else RSS), else density.json's
 * marginal KiB per fresh VM. */
static int memory_cost(struct costs *c, const char *host)
{
	const json_t *mem = json_object_get(json_object_get(c->pool.root,
							    "pool"), "memory");
	struct result_doc d;
	char path[PATH_MAX];
	double kib;
	int ret;

	if ((kib = positive(mem, "pss_kib_per_vm")) > 0)
		return vm_memory(c, kib, c->pool_path,
				 "pool.memory.pss_kib_per_vm");
	if ((kib = positive(mem, "rss_kib_per_vm")) > 0)
		return vm_memory(c, kib, c->pool_path,
				 "pool.memory.rss_kib_per_vm");
	ret = load_doc(host, "density.json", false, path, sizeof(path), &d);
	if (ret == -ENOENT)
		return err__set(EINVAL, "%s: no pool.memory.pss_kib_per_vm or "
				"rss_kib_per_vm, and no density.json",
				c->pool_path);
	if (ret < 0)
		return ret;
	kib = positive(json_object_get(json_object_get(d.root, "density"),
				       "fresh"), "marginal_kib_per_vm");
	result__free(&d);
	if (kib <= 0)
		return err__set(EINVAL, "%s: no density.fresh.marginal_kib_per_"
				"vm above 0 (and pool.json has no memory per "
				"VM)", path);
	return vm_memory(c, kib, path, "density.fresh.marginal_kib_per_vm");
}

void tune_pool__costs_free(struct costs *c)
{
	free(c->hit.s);
	free(c->miss.s);
	free(c->make.s);
	result__free(&c->pool);
	if (c->have_restore)
		result__free(&c->restore);
}

int tune_pool__load_costs(const struct tp_opts *o, struct costs *c)
{
	const json_t *cfg, *stats;
	const struct result_series *s;
	const char *strategy, *source;
	struct stat st;
	int ret;

	memset(c, 0, sizeof(*c));
	if (stat(o->host, &st) < 0 || !S_ISDIR(st.st_mode))
		return err__set(EINVAL, "%s: not a results directory (%s)",
				o->host, errno ? strerror(errno) : "not a "
				"directory");
	ret = load_doc(o->host, "pool.json", true, c->pool_path,
		       sizeof(c->pool_path), &c->pool);
	if (ret < 0)
		return ret;
	if (!c->pool.bench || strcmp(c->pool.bench, "pool"))
		return err__set(EINVAL, "%s: field bench: '%s', not 'pool'",
				c->pool_path, c->pool.bench ?: "");
	ret = load_doc(o->host, "restore.json", false, c->restore_path,
		       sizeof(c->restore_path), &c->restore);
	if (ret < 0 && ret != -ENOENT)
		return ret;
	c->have_restore = ret == 0;
	c->emulated = result__sysinfo_emulated(c->pool.sysinfo);
	cfg = c->pool.config;
	stats = json_object_get(json_object_get(c->pool.root, "pool"), "stats");
	c->refill_mean_s = positive(stats, "make_s");
	c->measured_rate = positive(json_object_get(c->pool.root, "pool"),
				    "offered_rate");
	source = json_string_value(json_object_get(cfg, "source")) ?: "probe";
	strategy = json_string_value(json_object_get(cfg, "mem_restore"));
	c->workers = o->workers ? o->workers
				: (unsigned int)json_integer_value(
					  json_object_get(cfg, "workers"));
	if (c->workers < 1 || c->workers > POOLSIM_MAX_WORKERS)
		c->workers = 1;
	c->wait_on_empty = !strcmp(json_string_value(json_object_get(
					   cfg, "on_empty")) ?: "", "wait");
	ret = tune_pool__stored_config(c);
	if (ret < 0)
		return ret;
	s = result__find(&c->pool, "arrival_to_first_run.hit");
	if (!s)
		return err__set(EINVAL, "%s: no samples in series "
				"arrival_to_first_run.hit (hit latency)",
				c->pool_path);
	ret = take_series(c->pool_path, s, false, &c->hit);
	if (ret == 0)
		ret = miss_costs(c, strategy);
	if (ret == 0)
		ret = make_costs(c, o->host, strategy,
				 !strcmp(source, "snapshot"), stats);
	return ret == 0 ? memory_cost(c, o->host) : ret;
}

/* A copy of `from`'s samples into `to` (its source text too). */
static int cost_dup(const struct cost *from, struct cost *to)
{
	to->s = malloc((from->n ? from->n : 1) * sizeof(double));
	if (!to->s)
		return err__set(ENOMEM, "allocating samples");
	memcpy(to->s, from->s, from->n * sizeof(double));
	to->n = from->n;
	snprintf(to->from, sizeof(to->from), "%s", from->from);
	return 0;
}

/* The series `name` of `own`'s document into *c, else base's samples. */
static int own_or_base(struct costs *own, const char *path, const char *name,
		       bool positive, const struct cost *base, struct cost *c)
{
	const struct result_series *s = result__find(&own->pool, name);

	return s && s->n ? take_series(path, s, positive, c)
			 : cost_dup(base, c);
}

struct poolsim_costs tune_pool__sim_costs(const struct costs *c)
{
	return (struct poolsim_costs){
		.hit_s = c->hit.s, .n_hit = c->hit.n, .miss_s = c->miss.s,
		.n_miss = c->miss.n, .make_s = c->make.s, .n_make = c->make.n,
		.vm_mib = c->vm_mib,
	};
}

int tune_pool__run_costs(json_t *doc, const char *path,
			 const struct costs *base, struct costs *own)
{
	int ret;

	memset(own, 0, sizeof(*own));
	ret = result__parse_all(doc, &own->pool);
	if (ret < 0)
		return ret;
	snprintf(own->pool_path, sizeof(own->pool_path), "%s", path);
	ret = own_or_base(own, path, "arrival_to_first_run.hit", false,
			  &base->hit, &own->hit);
	if (ret == 0)
		ret = own_or_base(own, path, "arrival_to_first_run.miss",
				  false, &base->miss, &own->miss);
	if (ret == 0)
		ret = own_or_base(own, path, "refill.make", true, &base->make,
				  &own->make);
	own->vm_mib = base->vm_mib;
	own->workers = base->workers;
	own->wait_on_empty = base->wait_on_empty;
	return ret;
}
