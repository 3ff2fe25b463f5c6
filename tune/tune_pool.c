/* `coldstart tune pool`: a sweep of every pool policy's parameters through
 * the simulator, fed with a results directory's measured costs, and the
 * cheapest configuration that meets an SLO. */
#include "tune_pool.h"

#include "args.h"
#include "arrivals.h"
#include "child.h"
#include "cli.h"
#include "compare.h"
#include "err.h"
#include "kvm.h"
#include "output.h"
#include "plot.h"
#include "poolsim.h"
#include "report.h"
#include "result.h"
#include "result_new.h"
#include "sysinfo.h"

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

#define MiB_F (1024.0 * 1024.0)
#define MAX_CANDIDATES 512
#define MAX_VALIDATE 8

/* ---- the SLO ---- */

struct slo {
	bool hits;   /* hits=PCT%, else a latency percentile */
	double pct;  /* 50, 90, 99, 99.9 */
	double goal; /* seconds, or a hit percentage */
	char text[64];
};

/* "p99=50ms" (p50, p90, p99, p99.9; a time with its unit) or "hits=99%". */
static int slo_parse(const char *text, struct slo *s)
{
	static const struct { const char *key; double pct; } keys[] = {
		{ "p50", 50 }, { "p90", 90 }, { "p99", 99 }, { "p99.9", 99.9 },
	};
	const char *eq = strchr(text, '='), *v;
	size_t klen;

	memset(s, 0, sizeof(*s));
	if (!eq || strlen(text) >= sizeof(s->text))
		goto bad;
	snprintf(s->text, sizeof(s->text), "%s", text);
	klen = (size_t)(eq - text);
	v = eq + 1;
	if (klen == 4 && !strncmp(text, "hits", 4)) {
		char *end;

		s->hits = true;
		errno = 0;
		s->goal = strtod(v, &end);
		if (end == v || errno || strcmp(end, "%") || !isfinite(s->goal) ||
		    s->goal < 0 || s->goal > 100 || *v == ' ')
			goto bad;
		return 0;
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		uint64_t ns;
		size_t n = strlen(v);

		if (strlen(keys[i].key) != klen || strncmp(keys[i].key, text, klen))
			continue;
		/* a unit is required: a bare "50" would silently be seconds */
		if (!n || !(v[n - 1] == 's'))
			goto bad;
		if (args__duration("--slo", v, &ns) < 0 || ns == 0)
			goto bad;
		s->pct = keys[i].pct;
		s->goal = (double)ns / 1e9;
		return 0;
	}
bad:
	return err__set(EINVAL, "--slo: '%s' is not pXX=TIME (p50, p90, p99, "
			"p99.9; e.g. p99=50ms) or hits=PCT%% (e.g. hits=99%%)",
			text);
}

/* ---- options ---- */

struct tp_opts {
	const char *host, *arrivals_text, *out_dir;
	struct arrivals_spec spec;
	double duration_s, time_scale;
	bool duration_set, json, budget_set;
	uint64_t seed, budget;
	unsigned int workers; /* 0: pool.json's */
	struct slo slo;
	bool slo_set;
	bool policy_on[POOLSIM_POLICIES];
	bool validate;
	const char *kvm_path; /* --validate's KVM device, NULL: /dev/kvm */
	unsigned int nvsizes, vsizes[MAX_VALIDATE]; /* 0: around the rec. */
};

enum {
	OPT_HOST = 0x300, OPT_ARRIVALS, OPT_DURATION, OPT_SCALE, OPT_SEED,
	OPT_SLO, OPT_POLICIES, OPT_BUDGET, OPT_WORKERS, OPT_JSON, OPT_OUT,
	OPT_VALIDATE, OPT_VSIZES, OPT_KVM,
};

static void usage(FILE *out)
{
	fputs("Usage: coldstart tune pool --host RESULTS_DIR --arrivals SPEC "
	      "--slo SLO [OPTIONS]\n\n"
	      "Simulates a warm pool fed with the costs a `coldstart bench "
	      "suite` measured\n(RESULTS_DIR), sweeps every policy's "
	      "parameters, and recommends the\nconfiguration that meets the "
	      "SLO at the least idle VM-seconds. No KVM needed.\n\n"
	      "  --host DIR           results directory: pool.json (required),"
	      " restore.json,\n"
	      "                       density.json\n"
	      "  --arrivals SPEC      poisson:RATE, mmpp:R0,R1,D0,D1 or "
	      "trace:FILE[,format=..]\n"
	      "  --duration DUR       time line of poisson/mmpp (default 1h), "
	      "window of a trace\n"
	      "                       (default: the whole trace)\n"
	      "  --time-scale F       multiplies trace time (default 1)\n"
	      "  --seed N             arrivals and cost resampling (default 1)"
	      "\n"
	      "  --slo SLO            p50|p90|p99|p99.9=TIME of arrival -> "
	      "first instruction\n"
	      "                       (e.g. p99=50ms), or hits=PCT% "
	      "(e.g. hits=99%)\n"
	      "  --policies LIST      comma-separated, of fixed,ttl,hybrid,"
	      "follow,marginal\n"
	      "                       (default all)\n"
	      "  --memory-budget SIZE how many such pools and warm VMs fit in "
	      "SIZE\n"
	      "  --workers K          refill workers (default: pool.json's, "
	      "else 1)\n"
	      "  --json               the document on stdout instead of the "
	      "report\n"
	      "  --out DIR            write tune-pool.json, tune-pool.md, "
	      "pareto.csv, pareto.png\n"
	      "  --validate           then replay the arrivals through a real "
	      "fixed pool on this\n"
	      "                       host (`coldstart bench pool`, KVM) at "
	      "three sizes, and\n"
	      "                       compare measured with simulated hit "
	      "ratio and p99\n"
	      "  --validate-sizes L   those sizes, comma-separated (default: "
	      "the recommended\n"
	      "                       fixed size, one below and one above)\n"
	      "  --kvm PATH           --validate's KVM device (default "
	      "/dev/kvm)\n\n"
	      "Exit status: 0 a recommendation, 1 no configuration meets the "
	      "SLO, 2 bad\narguments or a missing or malformed input file, 77 "
	      "--validate on a host\nthat cannot run VMs. Validation results "
	      "do not change the status.\n",
	      out);
}

static int parse_policies(const char *text, struct tp_opts *o)
{
	char buf[256], *save = NULL;

	if (strlen(text) >= sizeof(buf))
		return err__set(EINVAL, "--policies: too long");
	snprintf(buf, sizeof(buf), "%s", text);
	memset(o->policy_on, 0, sizeof(o->policy_on));
	for (char *p = strtok_r(buf, ",", &save); p;
	     p = strtok_r(NULL, ",", &save)) {
		enum poolsim_policy pol;

		if (poolsim__policy_parse(p, &pol) < 0)
			return err__set(EINVAL, "--policies: unknown policy "
					"'%s' (fixed, ttl, hybrid, follow, "
					"marginal)", p);
		o->policy_on[pol] = true;
	}
	for (int i = 0; i < POOLSIM_POLICIES; i++)
		if (o->policy_on[i])
			return 0;
	return err__set(EINVAL, "--policies: no policy named");
}

static int parse_sizes(const char *text, struct tp_opts *o)
{
	char buf[256], *save = NULL;

	if (strlen(text) >= sizeof(buf))
		return err__set(EINVAL, "--validate-sizes: too long");
	snprintf(buf, sizeof(buf), "%s", text);
	o->nvsizes = 0;
	for (char *p = strtok_r(buf, ",", &save); p;
	     p = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (o->nvsizes == MAX_VALIDATE)
			return err__set(EINVAL, "--validate-sizes: at most %d "
					"sizes", MAX_VALIDATE);
		if (args__u64("--validate-sizes", p, 0, 4096, &v) < 0)
			return -EINVAL;
		o->vsizes[o->nvsizes++] = (unsigned int)v;
	}
	return o->nvsizes ? 0 : err__set(EINVAL, "--validate-sizes: no size");
}

static int parse_double(const char *opt, const char *text, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(text, &end);
	if (end == text || *end || errno || !isfinite(*out) || *out <= 0)
		return err__set(EINVAL, "%s: '%s' is not a number above 0", opt,
				text);
	return 0;
}

static int parse_one(int c, const char *arg, struct tp_opts *o)
{
	uint64_t v;
	int ret;

	switch (c) {
	case OPT_HOST: o->host = arg; return 0;
	case OPT_ARRIVALS:
		o->arrivals_text = arg;
		return arrivals__parse_spec(arg, &o->spec);
	case OPT_DURATION:
		o->duration_set = true;
		ret = args__duration("--duration", arg, &v);
		o->duration_s = (double)v / 1e9;
		return ret;
	case OPT_SCALE: return parse_double("--time-scale", arg, &o->time_scale);
	case OPT_SEED: return args__u64("--seed", arg, 0, UINT64_MAX, &o->seed);
	case OPT_SLO:
		o->slo_set = true;
		return slo_parse(arg, &o->slo);
	case OPT_POLICIES: return parse_policies(arg, o);
	case OPT_BUDGET:
		o->budget_set = true;
		ret = args__size("--memory-budget", arg, &o->budget);
		return ret == 0 && !o->budget ? err__set(EINVAL, "--memory-"
						 "budget: must be above 0")
					      : ret;
	case OPT_WORKERS:
		ret = args__u64("--workers", arg, 1, POOLSIM_MAX_WORKERS, &v);
		o->workers = (unsigned int)v;
		return ret;
	case OPT_JSON: o->json = true; return 0;
	case OPT_OUT: o->out_dir = arg; return 0;
	case OPT_VALIDATE: o->validate = true; return 0;
	case OPT_VSIZES:
		o->validate = true;
		return parse_sizes(arg, o);
	case OPT_KVM: o->kvm_path = arg; return 0;
	default: return err__set(EINVAL, "unhandled option");
	}
}

/* 0, 1 for --help, or -EINVAL with a message. */
static int parse(int argc, char **argv, struct tp_opts *o)
{
	static const struct option opts[] = {
		{ "host", required_argument, NULL, OPT_HOST },
		{ "arrivals", required_argument, NULL, OPT_ARRIVALS },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "time-scale", required_argument, NULL, OPT_SCALE },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "slo", required_argument, NULL, OPT_SLO },
		{ "policies", required_argument, NULL, OPT_POLICIES },
		{ "memory-budget", required_argument, NULL, OPT_BUDGET },
		{ "workers", required_argument, NULL, OPT_WORKERS },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "validate", no_argument, NULL, OPT_VALIDATE },
		{ "validate-sizes", required_argument, NULL, OPT_VSIZES },
		{ "kvm", required_argument, NULL, OPT_KVM },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, ret = 0;

	memset(o, 0, sizeof(*o));
	o->time_scale = 1;
	o->seed = 1;
	for (int i = 0; i < POOLSIM_POLICIES; i++)
		o->policy_on[i] = true;
	optind = 0;
	opterr = 0;
	while (ret == 0 && (c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h')
			return 1;
		ret = c == '?' || c == ':' ? args__bad_option(argv)
					   : parse_one(c, optarg, o);
	}
	if (ret == 0)
		ret = args__no_operands(argc, argv);
	if (ret == 0 && !o->host)
		ret = err__set(EINVAL, "--host RESULTS_DIR missing");
	if (ret == 0 && !o->arrivals_text)
		ret = err__set(EINVAL, "--arrivals SPEC missing");
	if (ret == 0 && !o->slo_set)
		ret = err__set(EINVAL, "--slo missing (e.g. p99=50ms or "
			       "hits=99%%)");
	if (ret == 0 && !o->duration_set && o->spec.kind != ARRIVALS_TRACE)
		o->duration_s = 3600;
	return ret;
}

/* ---- the costs ---- */

/* Samples in seconds, and where they came from. */
struct cost {
	double *s;
	size_t n;
	char from[256];
};

struct costs {
	struct cost hit, miss, make;
	double vm_mib;
	double refill_mean_s; /* pool.stats.make_s, 0 if absent */
	char mem_from[256];
	const char *emulated; /* the label, borrowed from the pool document */
	unsigned int workers;
	bool wait_on_empty;
	char source_args[PATH_MAX + 64]; /* `coldstart pool` source options */
	struct result_doc pool, restore;
	bool have_restore;
	char pool_path[PATH_MAX], restore_path[PATH_MAX];
};

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
		return err__set(EINVAL, "%s: %s", path, strerror(errno));
	}
	root = output__json_load(path, &je);
	if (!root)
		return err__set(EINVAL, "%s: line %d: %s", path, je.line,
				je.text);
	result__drop_empty_series(root);
	ret = compare__parse(root, doc);
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

	s = compare__find(&c->pool, "arrival_to_first_run.miss");
	if (s)
		return take_series(c->pool_path, s, false, &c->miss);
	s = compare__find(&c->pool, "baseline.fresh_restore_to_first_run");
	if (s)
		return take_series(c->pool_path, s, false, &c->miss);
	s = restore_first_run(c, strategy);
	if (!s)
		s = restore_first_run(c, NULL);
	if (s)
		return take_series(c->restore_path, s, false,
				   &c->miss);
	return err__set(EINVAL, "%s: no miss latency samples (series "
			"arrival_to_first_run.miss or baseline.fresh_restore_"
			"to_first_run), and no restore.json with a warm "
			"first_run series", c->pool_path);
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
	s = compare__find(&d, "inproc.coldstart");
	ret = s ? take_series(path, s, true, &c->make) : -ENOENT;
	compare__free(&d);
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

	s = compare__find(&c->pool, "refill.make");
	if (!s)
		s = compare__find(&c->pool,
				  "baseline.fresh_restore_to_first_run");
	if (s)
		return take_series(c->pool_path, s, true, &c->make);
	s = snapshot ? restore_first_run(c, strategy) : NULL;
	if (s)
		return take_series(c->restore_path, s, true,
				   &c->make);
	s = compare__find(&c->pool, "arrival_to_first_run.miss");
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

	if ((kib = positive(mem, "pss_kib_per_vm")) > 0 ||
	    (kib = positive(mem, "rss_kib_per_vm")) > 0) {
		c->vm_mib = kib / 1024;
		snprintf(c->mem_from, sizeof(c->mem_from), "pool.json: "
			 "pool.memory.%s_kib_per_vm = %.0f KiB",
			 positive(mem, "pss_kib_per_vm") > 0 ? "pss" : "rss",
			 kib);
		return 0;
	}
	ret = load_doc(host, "density.json", false, path, sizeof(path), &d);
	if (ret == -ENOENT)
		return err__set(EINVAL, "%s: no pool.memory.pss_kib_per_vm or "
				"rss_kib_per_vm, and no density.json",
				c->pool_path);
	if (ret < 0)
		return ret;
	kib = positive(json_object_get(json_object_get(d.root, "density"),
				       "fresh"), "marginal_kib_per_vm");
	compare__free(&d);
	if (kib <= 0)
		return err__set(EINVAL, "%s: no density.fresh.marginal_kib_per_"
				"vm above 0 (and pool.json has no memory per "
				"VM)", path);
	c->vm_mib = kib / 1024;
	snprintf(c->mem_from, sizeof(c->mem_from), "density.json: density."
		 "fresh.marginal_kib_per_vm = %.0f KiB", kib);
	return 0;
}

static void costs_free(struct costs *c)
{
	free(c->hit.s);
	free(c->miss.s);
	free(c->make.s);
	compare__free(&c->pool);
	if (c->have_restore)
		compare__free(&c->restore);
}

static int load_costs(const struct tp_opts *o, struct costs *c)
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
	c->emulated = sysinfo__emulated(c->pool.sysinfo);
	cfg = c->pool.config;
	stats = json_object_get(json_object_get(c->pool.root, "pool"), "stats");
	c->refill_mean_s = positive(stats, "make_s");
	source = json_string_value(json_object_get(cfg, "source")) ?: "probe";
	strategy = json_string_value(json_object_get(cfg, "mem_restore"));
	c->workers = o->workers ? o->workers
				: (unsigned int)json_integer_value(
					  json_object_get(cfg, "workers"));
	if (c->workers < 1 || c->workers > POOLSIM_MAX_WORKERS)
		c->workers = 1;
	c->wait_on_empty = !strcmp(json_string_value(json_object_get(
					   cfg, "on_empty")) ?: "", "wait");
	if (!strcmp(source, "snapshot"))
		snprintf(c->source_args, sizeof(c->source_args),
			 " --snapshot %s --mem-restore %s",
			 json_string_value(json_object_get(cfg, "snapshot"))
				 ?: "DIR", strategy ?: "mmap");
	s = compare__find(&c->pool, "arrival_to_first_run.hit");
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

/* ---- the sweep ---- */

struct cand {
	struct poolsim_config cfg;
	char label[128];
	uint64_t hits, misses, waits;
	double hit_ratio, p[4], idle_vm_s, peak_mib;
	unsigned int peak_pool;
	double metric; /* the SLO's: seconds, or a hit percentage */
	bool meets, frontier;
};

struct sweep {
	struct cand *c;
	size_t n;
	unsigned int max;
	ssize_t best[POOLSIM_POLICIES]; /* -1: none meets */
	ssize_t rec;
};

static double mean_of(const struct cost *c)
{
	double s = 0;

	for (size_t i = 0; i < c->n; i++)
		s += c->s[i];
	return s / (double)c->n;
}

/* The bound of every target: twice the VMs a refill's mean making time
 * holds at the busiest rate seen (over a window of the making time, at
 * least 1 s), plus 4. */
static unsigned int pool_max(const struct arrivals *a, double make_s)
{
	double w = make_s > 1 ? make_s : 1, peak = 0;

	for (size_t i = 0, j = 0; i < a->n; i++) {
		while (j < a->n && a->t[j] < a->t[i] + w)
			j++;
		if ((double)(j - i) > peak)
			peak = (double)(j - i);
	}
	peak = ceil(2 * peak / w * make_s + 4);
	return peak > 4096 ? 4096 : (unsigned int)peak;
}

static struct cand *add(struct sweep *sw, enum poolsim_policy pol,
			const struct costs *c, uint64_t seed)
{
	struct cand *x;

	if (sw->n >= MAX_CANDIDATES)
		return NULL;
	x = &sw->c[sw->n++];
	memset(x, 0, sizeof(*x));
	x->cfg.policy = pol;
	poolsim__default_params(&x->cfg.params);
	x->cfg.workers = c->workers;
	x->cfg.max = sw->max;
	x->cfg.wait_on_empty = c->wait_on_empty;
	x->cfg.seed = seed;
	return x;
}

/* About 200 configurations: the grids of the header comment of each
 * policy's parameters that matter most. */
static void build_grid(struct sweep *sw, const struct tp_opts *o,
		       const struct costs *c)
{
	static const double ttls[] = { 1, 3, 10, 30, 60, 120, 300, 600,
				       1200, 3600 };
	static const double bins[] = { 1, 10, 60 };
	static const double pcts[][2] = { { 5, 99 }, { 1, 99.9 }, { 10, 90 } };
	static const double halves[] = { 1, 3, 10, 30, 100 };
	static const double rooms[] = { 0, 0.25, 0.5, 1, 2, 4, 8, 16 };
	static const double costs_s[] = { 0.1, 0.3, 1, 3, 10, 30, 100, 300,
					  1000, 3000 };
	static const double mhalves[] = { 3, 10, 30, 100 };
	static const unsigned int ns[] = { 1, 2, 4, 8 };
	unsigned int steps = sw->max < 40 ? sw->max : 40;
	struct cand *x;

	for (unsigned int i = 0; o->policy_on[POOLSIM_FIXED] && i <= steps;
	     i++) {
		unsigned int n = (unsigned int)lround((double)i * sw->max / steps);

		if ((x = add(sw, POOLSIM_FIXED, c, o->seed))) {
			x->cfg.params.fixed.n = n;
			snprintf(x->label, sizeof(x->label), "n=%u", n);
		}
	}
	for (size_t i = 0; o->policy_on[POOLSIM_TTL] && i < 4; i++)
		for (size_t j = 0; ns[i] <= sw->max && j < 10; j++)
			if ((x = add(sw, POOLSIM_TTL, c, o->seed))) {
				x->cfg.params.ttl.n = ns[i];
				x->cfg.params.ttl.ttl_s = ttls[j];
				snprintf(x->label, sizeof(x->label),
					 "n=%u ttl=%gs", ns[i], ttls[j]);
			}
	for (size_t i = 0; o->policy_on[POOLSIM_HYBRID] && i < 3; i++)
		for (size_t j = 0; j < 3; j++)
			for (size_t k = 0; ns[k] <= sw->max && k < 3; k++) {
				struct poolsim_hybrid *h;

				if (!(x = add(sw, POOLSIM_HYBRID, c, o->seed)))
					continue;
				h = &x->cfg.params.hybrid;
				h->n = ns[k];
				h->bin_s = bins[i];
				h->range_s = 240 * bins[i];
				h->head_pct = pcts[j][0];
				h->tail_pct = pcts[j][1];
				snprintf(x->label, sizeof(x->label), "n=%u bin="
					 "%gs head=p%g tail=p%g", h->n, h->bin_s,
					 h->head_pct, h->tail_pct);
			}
	for (size_t i = 0; o->policy_on[POOLSIM_FOLLOW] && i < 5; i++)
		for (size_t j = 0; j < 8; j++)
			if ((x = add(sw, POOLSIM_FOLLOW, c, o->seed))) {
				struct poolsim_follow *f = &x->cfg.params.follow;

				f->size = sw->max < 4 ? sw->max : 4;
				f->min = 0;
				f->halflife_s = halves[i];
				f->headroom = rooms[j];
				snprintf(x->label, sizeof(x->label),
					 "halflife=%gs headroom=%g",
					 halves[i], rooms[j]);
			}
	for (size_t i = 0; o->policy_on[POOLSIM_MARGINAL] && i < 10; i++)
		for (size_t j = 0; j < 4; j++)
			if ((x = add(sw, POOLSIM_MARGINAL, c, o->seed))) {
				x->cfg.params.marginal.miss_cost_s = costs_s[i];
				x->cfg.params.marginal.halflife_s = mhalves[j];
				snprintf(x->label, sizeof(x->label),
					 "miss_cost=%gs halflife=%gs",
					 costs_s[i], mhalves[j]);
			}
}

static void judge(struct cand *x, const struct slo *slo)
{
	if (slo->hits) {
		x->metric = 100 * x->hit_ratio;
		x->meets = x->metric >= slo->goal - 1e-9;
		return;
	}
	x->metric = slo->pct == 50 ? x->p[0] : slo->pct == 90 ? x->p[1]
		  : slo->pct == 99 ? x->p[2] : x->p[3];
	x->meets = x->metric <= slo->goal * (1 + 1e-12);
}

static int simulate(struct sweep *sw, const struct arrivals *a,
		    const struct poolsim_costs *pc, const struct slo *slo)
{
	for (size_t i = 0; i < sw->n; i++) {
		struct cand *x = &sw->c[i];
		struct poolsim_result r;
		int ret = poolsim__run(a, pc, &x->cfg, &r);

		if (ret < 0)
			return ret;
		x->hits = r.hits;
		x->misses = r.misses;
		x->waits = r.waits;
		x->hit_ratio = r.hit_ratio;
		x->p[0] = r.latency.p50;
		x->p[1] = r.latency.p90;
		x->p[2] = r.latency.p99;
		x->p[3] = r.latency.p999;
		x->idle_vm_s = r.idle_vm_s;
		x->peak_mib = r.peak_mib;
		x->peak_pool = r.peak_pool;
		poolsim__result_free(&r);
		judge(x, slo);
	}
	return 0;
}

/* a cheaper than b: idle VM-seconds, then peak memory. */
static bool cheaper(const struct cand *a, const struct cand *b)
{
	if (a->idle_vm_s != b->idle_vm_s)
		return a->idle_vm_s < b->idle_vm_s;
	return a->peak_mib < b->peak_mib;
}

static bool better_metric(const struct slo *slo, double a, double b)
{
	return slo->hits ? a > b : a < b;
}

static void choose(struct sweep *sw, const struct slo *slo)
{
	size_t *order = malloc(sw->n * sizeof(size_t));
	bool have = false;
	double best = 0;

	sw->rec = -1;
	for (int p = 0; p < POOLSIM_POLICIES; p++)
		sw->best[p] = -1;
	for (size_t i = 0; i < sw->n; i++) {
		struct cand *x = &sw->c[i];
		ssize_t *b = &sw->best[x->cfg.policy];

		if (!x->meets)
			continue;
		if (*b < 0 || cheaper(x, &sw->c[*b]))
			*b = (ssize_t)i;
		if (sw->rec < 0 || cheaper(x, &sw->c[sw->rec]))
			sw->rec = (ssize_t)i;
	}
	if (!order)
		return;
	/* the frontier: by idle VM-seconds, each point better in the SLO's
	 * metric than every cheaper one (insertion sort: n is ~200) */
	for (size_t i = 0; i < sw->n; i++) {
		size_t j = i;

		while (j > 0 && cheaper(&sw->c[i], &sw->c[order[j - 1]])) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
	for (size_t k = 0; k < sw->n; k++) {
		struct cand *x = &sw->c[order[k]];

		if (!have || better_metric(slo, x->metric, best)) {
			x->frontier = true;
			best = x->metric;
			have = true;
		}
	}
	free(order);
}

/* ---- validation: the same arrivals through a real pool ---- */

struct vrow {
	unsigned int size;
	struct cand sim;
	bool measured;
	double hit_ratio, p99_s; /* measured */
	char note[192];          /* why there is no measurement, or a warning */
};

struct validation {
	size_t n;
	struct vrow r[MAX_VALIDATE];
	char emulated[64]; /* this host's emulated label, "" when native */
};

/* The sizes to validate: the given ones, else the recommended fixed size
 * (the cheapest fixed one meeting the SLO, else the largest simulated)
 * and its neighbours, kept >= 0 and distinct. */
static void validation_sizes(const struct tp_opts *o, const struct sweep *sw,
			     struct validation *v)
{
	unsigned int n = sw->max;

	if (o->nvsizes) {
		for (unsigned int i = 0; i < o->nvsizes; i++)
			v->r[v->n++].size = o->vsizes[i];
		return;
	}
	if (sw->rec >= 0 && sw->c[sw->rec].cfg.policy == POOLSIM_FIXED)
		n = sw->c[sw->rec].cfg.params.fixed.n;
	else if (sw->best[POOLSIM_FIXED] >= 0)
		n = sw->c[sw->best[POOLSIM_FIXED]].cfg.params.fixed.n;
	if (n == 0)
		n = 1;
	for (unsigned int i = 0; i < 3; i++)
		v->r[v->n++].size = n - 1 + i;
}

/* Appends "--opt value" to the argument list at a[*k] (text in buf). */
static void arg_add(char **a, size_t *k, char *buf, size_t size,
		    const char *opt, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
static void arg_add(char **a, size_t *k, char *buf, size_t size,
		    const char *opt, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	a[(*k)++] = (char *)opt;
	a[(*k)++] = buf;
}

/* `coldstart bench pool --json` for a fixed pool of `size` VMs, with the
 * results directory's pool source and the tune run's arrivals. */
static void bench_argv(const struct tp_opts *o, const struct costs *c,
		       unsigned int size, const char *exe, char **a,
		       char bufs[][PATH_MAX])
{
	const json_t *cfg = c->pool.config, *probe = json_object_get(cfg,
								     "probe");
	const char *hold = json_string_value(json_object_get(cfg, "hold"));
	json_int_t conc = json_integer_value(json_object_get(cfg,
							     "concurrency"));
	size_t k = 0, b = 0;

	a[k++] = (char *)exe;
	a[k++] = "bench";
	a[k++] = "pool";
	a[k++] = "--json";
	a[k++] = "--baseline";
	a[k++] = "0";
	a[k++] = "--policy";
	a[k++] = "fixed";
#define ADD(opt, ...) arg_add(a, &k, bufs[b++], PATH_MAX, opt, __VA_ARGS__)
	ADD("--arrivals", "%s", o->arrivals_text);
	ADD("--duration", "%.0fns", o->duration_s * 1e9);
	ADD("--time-scale", "%.17g", o->time_scale);
	ADD("--seed", "%llu", (unsigned long long)o->seed);
	ADD("--size", "%u", size);
	ADD("--max", "%u", size > 64 ? size : 64);
	ADD("--workers", "%u", c->workers);
	if (c->wait_on_empty)
		ADD("--on-empty", "wait");
	if (hold)
		ADD("--hold", "%s", hold);
	if (conc > 0)
		ADD("--concurrency", "%lld", (long long)conc);
	if (o->kvm_path)
		ADD("--kvm", "%s", o->kvm_path);
	if (!strcmp(json_string_value(json_object_get(cfg, "source")) ?: "",
		    "snapshot")) {
		ADD("--snapshot", "%s", json_string_value(json_object_get(
						cfg, "snapshot")) ?: "");
		ADD("--mem-restore", "%s", json_string_value(json_object_get(
						   cfg, "mem_restore")) ?: "mmap");
	} else if (probe) {
		ADD("--init", "%lld", (long long)json_integer_value(
					      json_object_get(probe, "init_bytes")));
		ADD("--ws", "%lld", (long long)json_integer_value(
					    json_object_get(probe, "ws_bytes")));
		ADD("--vcpus", "%lld", (long long)json_integer_value(
					       json_object_get(probe, "vcpus")));
	}
#undef ADD
	a[k] = NULL;
}

/* The measured hit ratio and p99 of one bench pool document. */
static void take_measured(const json_t *doc, struct vrow *r,
			  struct validation *v)
{
	const json_t *s;
	const char *emu = sysinfo__emulated(json_object_get(doc, "sysinfo"));
	size_t i;

	r->hit_ratio = json_number_value(json_object_get(
		json_object_get(doc, "pool"), "hit_ratio"));
	json_array_foreach(json_object_get(doc, "series"), i, s)
		if (!strcmp(json_string_value(json_object_get(s, "name")) ?: "",
			    "arrival_to_first_run.all"))
			r->p99_s = result__stat(s, "p99") / 1e9;
	r->measured = true;
	if (emu)
		snprintf(v->emulated, sizeof(v->emulated), "%s", emu);
}

/* Runs one size; a child that fails leaves a note, not an error, except
 * exit 77 (-ENOTSUP): this host cannot run VMs. */
static int measure(const struct tp_opts *o, const struct costs *c,
		   const char *exe, struct vrow *r, struct validation *v)
{
	char bufs[16][PATH_MAX], *argv[48], st[32];
	json_t *doc = NULL;
	int status, ret;

	bench_argv(o, c, r->size, exe, argv, bufs);
	fprintf(stderr, "coldstart tune pool: validating a fixed pool of %u "
		"VMs on this host\n", r->size);
	ret = child__capture(argv, &doc, &status);
	if (ret < 0) {
		snprintf(r->note, sizeof(r->note), "%s", err__last());
		return 0;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == CLI_SKIP) {
		json_decref(doc);
		return err__set(ENOTSUP, "'coldstart bench pool' says this "
				"host cannot run VMs (exit 77)");
	}
	if (doc && json_is_object(json_object_get(doc, "pool")))
		take_measured(doc, r, v);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		snprintf(r->note, sizeof(r->note), "bench pool %s%s",
			 child__status_text(status, st, sizeof(st)),
			 r->measured ? " (a request failed)" : "");
	json_decref(doc);
	return 0;
}

static int validate(const struct tp_opts *o, const struct costs *c,
		    const struct arrivals *a, const struct poolsim_costs *pc,
		    const struct sweep *sw, struct validation *v)
{
	const char *exe = cli__self_exe();
	struct sweep one = { .max = sw->max };

	if (!exe)
		return err__set(ENOENT, "cannot find the coldstart binary");
	validation_sizes(o, sw, v);
	for (size_t i = 0; i < v->n; i++) {
		struct vrow *r = &v->r[i];
		int ret;

		one.c = &r->sim;
		one.n = 0;
		add(&one, POOLSIM_FIXED, c, o->seed);
		r->sim.cfg.params.fixed.n = r->size;
		if (r->size > r->sim.cfg.max)
			r->sim.cfg.max = r->size;
		snprintf(r->sim.label, sizeof(r->sim.label), "n=%u", r->size);
		ret = simulate(&one, a, pc, &o->slo);
		if (ret == 0)
			ret = measure(o, c, exe, r, v);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Whether this host can open KVM, checked before the sweep so that a
 * host without it fails fast: 0, or -errno with a message. */
static int kvm_usable(const char *path)
{
	struct kvm_host kvm;
	char why[256];
	int ret = kvm__open(&kvm, path);

	if (ret == 0) {
		kvm__close(&kvm);
		return 0;
	}
	snprintf(why, sizeof(why), "%s", err__last());
	return err__set(-ret, "--validate runs VMs on this host, and it "
			"cannot: %s", why);
}

static double hit_diff_points(const struct vrow *r)
{
	return 100 * (r->hit_ratio - r->sim.hit_ratio);
}

static double p99_diff_pct(const struct vrow *r)
{
	return r->sim.p[2] > 0 ? 100 * (r->p99_s - r->sim.p[2]) / r->sim.p[2]
			       : 0;
}

static void md_validation(FILE *f, const struct validation *v)
{
	fputs("## Validation\n\n"
	      "The same arrivals replayed through a real fixed pool on this "
	      "host (`coldstart bench pool`), beside the simulation of the "
	      "same size (measured - simulated; target: hit ratio within 2 "
	      "points, p99 within 15 %):\n\n"
	      "| size | simulated hit ratio | measured hit ratio | difference "
	      "(points) | simulated p99 | measured p99 | difference (%) |\n"
	      "|---|---|---|---|---|---|---|\n", f);
	for (size_t i = 0; i < v->n; i++) {
		const struct vrow *r = &v->r[i];

		fprintf(f, "| %u | %.2f %% | ", r->size, 100 * r->sim.hit_ratio);
		if (r->measured)
			fprintf(f, "%.2f %% | %+.2f | %.3f ms | %.3f ms | "
				"%+.1f |\n", 100 * r->hit_ratio,
				hit_diff_points(r), r->sim.p[2] * 1e3,
				r->p99_s * 1e3, p99_diff_pct(r));
		else
			fprintf(f, "not measured | | %.3f ms | | |\n",
				r->sim.p[2] * 1e3);
	}
	fputs("\n", f);
	for (size_t i = 0; i < v->n; i++)
		if (*v->r[i].note)
			fprintf(f, "- size %u: %s\n%s", v->r[i].size,
				v->r[i].note, i + 1 == v->n ? "\n" : "");
	if (*v->emulated)
		fprintf(f, "**This host is emulated (%s): its measured "
			"latencies and refill times differ from real "
			"hardware's, and from a simulation fed with another "
			"host's costs.**\n\n", v->emulated);
}

static json_t *validation_json(const struct validation *v)
{
	json_t *rows = json_array();

	for (size_t i = 0; rows && i < v->n; i++) {
		const struct vrow *r = &v->r[i];
		json_t *m = r->measured ? json_pack("{s:f, s:f}", "hit_ratio",
						    r->hit_ratio, "p99_s",
						    r->p99_s)
					: json_null();

		if (json_array_append_new(rows, json_pack(
			    "{s:I, s:{s:f, s:f}, s:o, s:o, s:o, s:s?}", "size",
			    (json_int_t)r->size, "simulated", "hit_ratio",
			    r->sim.hit_ratio, "p99_s", r->sim.p[2], "measured",
			    m, "hit_diff_points", r->measured
				? json_real(hit_diff_points(r)) : json_null(),
			    "p99_diff_pct", r->measured
				? json_real(p99_diff_pct(r)) : json_null(),
			    "note", *r->note ? r->note : NULL)) < 0) {
			json_decref(rows);
			return NULL;
		}
	}
	return json_pack("{s:o*, s:s?}", "rows", rows, "emulated",
			 *v->emulated ? v->emulated : NULL);
}

/* ---- output ---- */

static void metric_text(char *buf, size_t size, const struct slo *slo,
			double v)
{
	if (slo->hits)
		snprintf(buf, size, "%.2f %%", v);
	else
		snprintf(buf, size, "%.3f ms", v * 1e3);
}

/* A duration as `coldstart pool` reads it: whole seconds, else whole ms
 * or us ("0.1" -> "100ms"). */
static const char *dur_text(char *buf, size_t len, double s)
{
	if (s == floor(s))
		snprintf(buf, len, "%.0fs", s);
	else if (s * 1e3 == floor(s * 1e3))
		snprintf(buf, len, "%.0fms", s * 1e3);
	else
		snprintf(buf, len, "%.0fus", s * 1e6);
	return buf;
}

/* The `coldstart pool` command that applies x, or "" when its policy is
 * not one `coldstart pool` has. */
static void pool_command(char *buf, size_t size, const struct cand *x,
			 const struct costs *c)
{
	const char *wait = c->wait_on_empty ? " --on-empty wait" : "";

	if (x->cfg.policy == POOLSIM_FIXED) {
		unsigned int n = x->cfg.params.fixed.n;
		char max[32] = "";

		if (n > 64)
			snprintf(max, sizeof(max), " --max %u", n);
		snprintf(buf, size, "coldstart pool%s --policy fixed --size %u"
			 "%s --workers %u%s", c->source_args, n, max, c->workers,
			 wait);
	} else if (x->cfg.policy == POOLSIM_FOLLOW) {
		const struct poolsim_follow *f = &x->cfg.params.follow;

		snprintf(buf, size, "coldstart pool%s --policy follow --size %u "
			 "--min %u --max %u --halflife %gs --headroom %g "
			 "--workers %u%s", c->source_args, f->size, f->min,
			 x->cfg.max, f->halflife_s, f->headroom, c->workers,
			 wait);
	} else if (x->cfg.policy == POOLSIM_MARGINAL) {
		const struct policy_marginal *m = &x->cfg.params.marginal;
		char cost[32], half[32], burst[32];

		/* the simulated pool holds nothing before the first arrival */
		snprintf(buf, size, "coldstart pool%s --policy marginal --size 0 "
			 "--min 0 --max %u --miss-cost %s --halflife %s "
			 "--burst-halflife %s --burst-z %g --workers %u%s",
			 c->source_args, x->cfg.max,
			 dur_text(cost, sizeof(cost), m->miss_cost_s),
			 dur_text(half, sizeof(half), m->halflife_s),
			 dur_text(burst, sizeof(burst), m->burst_halflife_s),
			 m->burst_z, c->workers, wait);
	} else {
		buf[0] = '\0';
	}
}

/* Whether `coldstart pool` has x's policy. */
static bool applies(const struct cand *x)
{
	return x->cfg.policy == POOLSIM_FIXED ||
	       x->cfg.policy == POOLSIM_FOLLOW ||
	       x->cfg.policy == POOLSIM_MARGINAL;
}

/* The cheapest configuration meeting the SLO that `coldstart pool` can
 * apply (fixed, follow or marginal), or NULL. */
static const struct cand *best_applicable(const struct sweep *sw)
{
	static const enum poolsim_policy runs[] = {
		POOLSIM_FIXED, POOLSIM_FOLLOW, POOLSIM_MARGINAL };
	const struct cand *best = NULL;

	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		ssize_t k = sw->best[runs[i]];

		if (k >= 0 && (!best || cheaper(&sw->c[k], best)))
			best = &sw->c[k];
	}
	return best;
}

/* Whether the making-time samples' mean is more than twice off the
 * pool's own refills' mean making time. */
static bool far_from_refills(const struct costs *c)
{
	double m = mean_of(&c->make), r = c->refill_mean_s;

	return r > 0 && (m > 2 * r || 2 * m < r);
}

static void md_costs(FILE *f, const struct costs *c)
{
	fprintf(f, "## Costs\n\n"
		"From the raw samples, resampled uniformly with the seed:\n\n"
		"- hit latency (arrival -> first instruction, VM held): %s, "
		"mean %.3f ms\n"
		"- miss latency (the request makes its VM): %s, mean %.3f ms\n"
		"- making time of one refill: %s, mean %.3f ms\n"
		"- memory per VM held or being made: %s (%.2f MiB)\n"
		"- refill workers: %u; on empty: %s\n\n",
		c->hit.from, mean_of(&c->hit) * 1e3, c->miss.from,
		mean_of(&c->miss) * 1e3, c->make.from, mean_of(&c->make) * 1e3,
		c->mem_from, c->vm_mib, c->workers,
		c->wait_on_empty ? "wait for a refill" : "make (a miss)");
	if (c->make.n == 1)
		fputs("Warning: the making time is one mean, not samples: "
		      "refills are simulated as deterministic.\n\n", f);
	else if (far_from_refills(c))
		fprintf(f, "Warning: the making-time samples average %.3f ms, "
			"the pool's own refills %.3f ms (pool.stats.make_s): "
			"they were measured under other load, so refills are "
			"simulated %s than the pool measured.\n\n",
			mean_of(&c->make) * 1e3, c->refill_mean_s * 1e3,
			mean_of(&c->make) > c->refill_mean_s ? "slower"
							      : "faster");
}

static void md_table(FILE *f, const struct sweep *sw, const struct slo *slo)
{
	char m[32];

	fprintf(f, "## Cheapest configuration per policy meeting %s\n\n"
		"| policy | configurations | best configuration | hit ratio | "
		"p99 | %s | idle VM-s | peak MiB |\n"
		"|---|---|---|---|---|---|---|---|\n", slo->text,
		slo->hits ? "hits" : "SLO metric");
	for (int p = 0; p < POOLSIM_POLICIES; p++) {
		size_t n = 0;
		const struct cand *x;

		for (size_t i = 0; i < sw->n; i++)
			n += sw->c[i].cfg.policy == (enum poolsim_policy)p;
		if (!n)
			continue;
		if (sw->best[p] < 0) {
			fprintf(f, "| %s | %zu | none meets the SLO | | | | | |"
				"\n", poolsim__policy_name(p), n);
			continue;
		}
		x = &sw->c[sw->best[p]];
		metric_text(m, sizeof(m), slo, x->metric);
		fprintf(f, "| %s | %zu | %s | %.2f %% | %.3f ms | %s | %.1f | "
			"%.1f |\n", poolsim__policy_name(p), n, x->label,
			100 * x->hit_ratio, x->p[2] * 1e3, m, x->idle_vm_s,
			x->peak_mib);
	}
	fputs("\n", f);
}

static void md_recommendation(FILE *f, const struct sweep *sw,
			      const struct costs *c, const struct slo *slo)
{
	const struct cand *x, *alt;
	char cmd[PATH_MAX + 512];

	fputs("## Recommendation\n\n", f);
	if (sw->rec < 0) {
		fprintf(f, "No configuration meets %s among the %zu simulated. "
			"Relax the SLO, add refill workers (--workers), or see "
			"pareto.csv for what each configuration reaches.\n\n",
			slo->text, sw->n);
		return;
	}
	x = &sw->c[sw->rec];
	fprintf(f, "**%s %s**: %.1f idle VM-seconds, peak %.1f MiB (%u VMs), "
		"hit ratio %.2f %%, p99 %.3f ms.\n\n", poolsim__policy_name(
			x->cfg.policy), x->label, x->idle_vm_s, x->peak_mib,
		x->peak_pool, 100 * x->hit_ratio, x->p[2] * 1e3);
	pool_command(cmd, sizeof(cmd), x, c);
	if (*cmd) {
		fprintf(f, "Apply it with:\n\n    %s\n\n", cmd);
		return;
	}
	fprintf(f, "The %s policy is simulated only: `coldstart pool` has "
		"fixed, follow and marginal. ",
		poolsim__policy_name(x->cfg.policy));
	alt = best_applicable(sw);
	if (!alt) {
		fputs("No fixed, follow or marginal configuration meets the SLO, so no "
		      "pool command applies.\n\n", f);
		return;
	}
	pool_command(cmd, sizeof(cmd), alt, c);
	fprintf(f, "The closest that `coldstart pool` applies (%s %s, %.1f "
		"idle VM-seconds):\n\n    %s\n\n", poolsim__policy_name(
			alt->cfg.policy), alt->label, alt->idle_vm_s, cmd);
}

static void md_budget(FILE *f, const struct sweep *sw, const struct costs *c,
		      uint64_t budget)
{
	double mib = (double)budget / MiB_F;

	fprintf(f, "## Memory budget %.0f MiB\n\n", mib);
	fprintf(f, "- warm VMs that fit: %.0f (%.2f MiB each)\n",
		floor(mib / c->vm_mib), c->vm_mib);
	if (sw->rec >= 0 && sw->c[sw->rec].peak_mib > 0)
		fprintf(f, "- pools of the recommendation that fit at their "
			"peak (%.1f MiB): %.0f\n\n", sw->c[sw->rec].peak_mib,
			floor(mib / sw->c[sw->rec].peak_mib));
	else if (sw->rec >= 0)
		fputs("- the recommendation holds no VM at its peak: any "
		      "number of such pools fit\n\n", f);
	else
		fputs("- pools: no recommendation to size\n\n", f);
}

static char *markdown(const struct tp_opts *o, const struct costs *c,
		      const struct arrivals *a, const struct sweep *sw,
		      const struct validation *v)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	fputs("# coldstart tune pool\n\n", f);
	if (c->emulated)
		fprintf(f, "**Warning: the costs were measured inside an "
			"emulated host (%s); its latencies and making times "
			"are not those of real hardware, and neither is this "
			"recommendation.**\n\n", c->emulated);
	fprintf(f, "Results: %s; arrivals: %s (%zu over %.1f s, %.3f/s); "
		"SLO: %s; seed %llu; %zu configurations, target bound %u.\n\n",
		o->host, a->desc, a->n, a->span_s, arrivals__mean_rate(a),
		o->slo.text, (unsigned long long)o->seed, sw->n, sw->max);
	md_costs(f, c);
	md_table(f, sw, &o->slo);
	md_recommendation(f, sw, c, &o->slo);
	if (o->budget_set)
		md_budget(f, sw, c, o->budget);
	if (v)
		md_validation(f, v);
	fputs("Every configuration's outcome: tune-pool.json; the Pareto "
	      "frontier (SLO metric against idle VM-seconds): pareto.csv, "
	      "pareto.png.\n", f);
	fclose(f);
	return text;
}

static json_t *cand_json(const struct cand *x, const struct costs *c)
{
	char cmd[PATH_MAX + 512];

	pool_command(cmd, sizeof(cmd), x, c);
	return json_pack("{s:s, s:s, s:I, s:I, s:I, s:f, s:{s:f, s:f, s:f, "
			 "s:f}, s:f, s:f, s:I, s:f, s:b, s:b, s:s?}",
			 "policy", poolsim__policy_name(x->cfg.policy),
			 "params", x->label, "hits", (json_int_t)x->hits,
			 "misses", (json_int_t)x->misses, "waits",
			 (json_int_t)x->waits, "hit_ratio", x->hit_ratio,
			 "latency_s", "p50", x->p[0], "p90", x->p[1], "p99",
			 x->p[2], "p99_9", x->p[3], "idle_vm_s", x->idle_vm_s,
			 "peak_mib", x->peak_mib, "peak_vms",
			 (json_int_t)x->peak_pool, "slo_metric", x->metric,
			 "meets_slo", x->meets, "pareto", x->frontier,
			 "pool_command", *cmd ? cmd : NULL);
}

static json_t *document(const struct tp_opts *o, const struct costs *c,
			const struct arrivals *a, const struct sweep *sw,
			const struct validation *v)
{
	json_t *doc = result__new("tune-pool", json_pack(
		"{s:s, s:s, s:s, s:f, s:f, s:I, s:s, s:I, s:b, s:I, s:I}",
		"host", o->host, "arrivals", o->arrivals_text, "arrivals_desc",
		a->desc, "duration_s", a->span_s, "time_scale", o->time_scale,
		"seed", (json_int_t)o->seed, "slo", o->slo.text, "workers",
		(json_int_t)c->workers, "wait_on_empty", c->wait_on_empty,
		"max", (json_int_t)sw->max, "count", (json_int_t)a->n));
	json_t *all = json_array();

	if (!doc || !all)
		goto fail;
	for (size_t i = 0; i < sw->n; i++)
		if (json_array_append_new(all, cand_json(&sw->c[i], c)) < 0)
			goto fail;
	if (json_object_set_new(doc, "costs", json_pack(
		    "{s:s, s:s, s:s, s:s, s:f, s:s?}", "hit", c->hit.from,
		    "miss", c->miss.from, "make", c->make.from, "memory",
		    c->mem_from, "vm_mib", c->vm_mib, "emulated",
		    c->emulated)) < 0 ||
	    json_object_set_new(doc, "configurations", all) < 0)
		goto fail;
	all = NULL;
	json_object_set_new(doc, "recommendation",
			    sw->rec < 0 ? json_null()
					: cand_json(&sw->c[sw->rec], c));
	if (sw->rec >= 0 && !applies(&sw->c[sw->rec]) && best_applicable(sw))
		json_object_set_new(doc, "applicable",
				    cand_json(best_applicable(sw), c));
	if (o->budget_set && sw->rec >= 0)
		json_object_set_new(doc, "memory_budget", json_pack(
			"{s:I, s:f, s:f}", "bytes", (json_int_t)o->budget,
			"warm_vms", floor((double)o->budget / MiB_F / c->vm_mib),
			"pools", sw->c[sw->rec].peak_mib > 0
				? floor((double)o->budget / MiB_F /
					sw->c[sw->rec].peak_mib)
				: -1.0));
	if (v)
		json_object_set_new(doc, "validation", validation_json(v));
	if (v && *v->emulated)
		result__warn(doc, "validation measured on an emulated host "
			     "(%s): its latencies differ from real hardware's",
			     v->emulated);
	if (c->emulated)
		result__warn(doc, "the costs come from an emulated host (%s): "
			     "the recommendation does not hold for real "
			     "hardware", c->emulated);
	if (c->make.n == 1)
		result__warn(doc, "the making time is one mean "
			     "(pool.stats.make_s), not samples");
	else if (far_from_refills(c))
		result__warn(doc, "the making-time samples average %.3f ms, "
			     "the pool's own refills %.3f ms (pool.stats."
			     "make_s)", mean_of(&c->make) * 1e3,
			     c->refill_mean_s * 1e3);
	return doc;
fail:
	json_decref(all);
	json_decref(doc);
	return NULL;
}

static void csv_row(FILE *f, const struct cand *x)
{
	fprintf(f, "%s,%s,%.6f,%.9g,%.4f,%.6f,%.3f,%d,%d\n",
		poolsim__policy_name(x->cfg.policy), x->label, x->idle_vm_s,
		x->metric, 100 * x->hit_ratio, x->p[2] * 1e3, x->peak_mib,
		x->meets, x->frontier);
}

/* pareto.csv: every configuration, "pareto" 1 on the frontier; the
 * frontier's rows first, by idle VM-seconds, so that a plot draws them
 * as one line (n is ~200: a selection sort will do). */
static int write_csv(const char *dir, const struct sweep *sw)
{
	bool *done = calloc(sw->n ? sw->n : 1, sizeof(bool));
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/pareto.csv", dir);
	f = done ? fopen(path, "w") : NULL;
	if (!f) {
		free(done);
		return err__sys(done ? errno : ENOMEM, "creating %s", path);
	}
	fputs("policy,params,idle_vm_s,slo_metric,hit_pct,p99_ms,peak_mib,"
	      "meets_slo,pareto\n", f);
	for (;;) {
		ssize_t next = -1;

		for (size_t i = 0; i < sw->n; i++)
			if (sw->c[i].frontier && !done[i] &&
			    (next < 0 || cheaper(&sw->c[i], &sw->c[next])))
				next = (ssize_t)i;
		if (next < 0)
			break;
		done[next] = true;
		csv_row(f, &sw->c[next]);
	}
	for (size_t i = 0; i < sw->n; i++)
		if (!done[i])
			csv_row(f, &sw->c[i]);
	free(done);
	return fclose(f) == 0 ? 0 : err__sys(errno, "writing %s", path);
}

static void draw(const char *dir, const struct slo *slo)
{
	char vars[512];

	if (!plot__available())
		return;
	snprintf(vars, sizeof(vars), "in='pareto.csv'; fmt='png'; "
		 "hits=%d; goal=%.9g; slo='%s'", slo->hits,
		 slo->hits ? slo->goal : slo->goal * 1e3, slo->text);
	if (plot__run(dir, "pareto", vars, "pareto.png") < 0)
		fprintf(stderr, "coldstart: warning: %s\n", err__last());
}

static int outputs(const struct tp_opts *o, const struct costs *c,
		   const struct arrivals *a, const struct sweep *sw,
		   const struct validation *v)
{
	json_t *doc = document(o, c, a, sw, v);
	char *md = markdown(o, c, a, sw, v);
	int ret = doc && md ? 0 : -ENOMEM;

	if (ret == 0 && o->json)
		result__print_json(stdout, doc);
	else if (ret == 0)
		fputs(md, stdout);
	if (v && *v->emulated)
		fprintf(stderr, "coldstart: warning: validation measured on "
			"an emulated host (%s): its results differ from real "
			"hardware's\n", v->emulated);
	if (c->emulated)
		fprintf(stderr, "coldstart: warning: costs from an emulated "
			"host (%s): the recommendation does not hold for real "
			"hardware\n", c->emulated);
	if (ret == 0 && o->out_dir)
		ret = result__write(doc, o->out_dir, md);
	if (ret == 0 && o->out_dir)
		ret = write_csv(o->out_dir, sw);
	if (ret == 0 && o->out_dir) {
		draw(o->out_dir, &o->slo);
		if (!o->json)
			printf("results written to %s/\n", o->out_dir);
		report__join("tune pool", o->out_dir, o->json);
	}
	free(md);
	json_decref(doc);
	return ret;
}

static int run(const struct tp_opts *o)
{
	struct costs c;
	struct arrivals a = { 0 };
	struct sweep sw = { 0 };
	struct poolsim_costs pc;
	struct validation *v = NULL;
	int ret = load_costs(o, &c), code = CLI_USAGE;

	if (ret == 0 && o->validate) {
		ret = kvm_usable(o->kvm_path);
		code = ret < 0 ? cli__exit_for(ret) : code;
		v = ret == 0 ? calloc(1, sizeof(*v)) : NULL;
		if (ret == 0 && !v)
			ret = err__set(ENOMEM, "allocating the validation");
	}
	if (ret == 0)
		ret = arrivals__make(&o->spec, o->duration_s, o->time_scale,
				     o->seed, &a);
	if (ret < 0)
		goto out;
	code = CLI_FAIL;
	pc = (struct poolsim_costs){
		.hit_s = c.hit.s, .n_hit = c.hit.n, .miss_s = c.miss.s,
		.n_miss = c.miss.n, .make_s = c.make.s, .n_make = c.make.n,
		.vm_mib = c.vm_mib,
	};
	sw.max = pool_max(&a, mean_of(&c.make));
	sw.c = calloc(MAX_CANDIDATES, sizeof(*sw.c));
	if (!sw.c) {
		ret = err__set(ENOMEM, "allocating the sweep");
		goto out;
	}
	build_grid(&sw, o, &c);
	ret = simulate(&sw, &a, &pc, &o->slo);
	if (ret == 0) {
		choose(&sw, &o->slo);
		if (v)
			ret = validate(o, &c, &a, &pc, &sw, v);
		if (ret == -ENOTSUP)
			code = CLI_SKIP;
	}
	if (ret == 0)
		ret = outputs(o, &c, &a, &sw, v);
	if (ret == 0)
		code = sw.rec >= 0 ? CLI_OK : CLI_FAIL;
	if (ret == 0 && sw.rec < 0)
		fprintf(stderr, "coldstart: no configuration meets %s\n",
			o->slo.text);
out:
	if (ret < 0)
		cli__error(code, "tune pool: %s", err__last());
	free(v);
	free(sw.c);
	arrivals__free(&a);
	costs_free(&c);
	return ret < 0 ? code : sw.rec >= 0 ? CLI_OK : CLI_FAIL;
}

int cmd_tune_pool(int argc, char **argv)
{
	struct tp_opts o;
	int ret = parse(argc, argv, &o);

	return ret != 0 ? cli__parsed(ret, "tune pool", usage) : run(&o);
}
