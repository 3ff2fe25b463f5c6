/* The soak benchmark: create -> DONE -> destroy of the probe guest, over
 * and over in one process, with what leaks read at every checkpoint and
 * fitted into a growth per 1,000 cycles. */
#include "soak.h"

#include "args.h"
#include "cli.h"
#include "density.h"
#include "err.h"
#include "memstat.h"
#include "output.h"
#include "result.h"
#include "result_new.h"
#include "runner.h"
#include "stats.h"

#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The growth a VMM that runs for weeks may show: none in descriptors
 * (a count, exact), under 64 KiB of RSS per 1,000 VMs. */
#define TARGET_RSS_KIB_PER_1000 64.0
#define PER 1000.0

enum metric { M_FDS, M_RSS, M_SLAB, M_SUNRECLAIM, M_KVM_SLAB, NR_METRICS };

static const struct {
	const char *key, *label, *unit;
} metrics[NR_METRICS] = {
	[M_FDS] = { "fds", "fds", "" },
	[M_RSS] = { "rss_kib", "RSS", " KiB" },
	[M_SLAB] = { "slab_kib", "Slab", " KiB" },
	[M_SUNRECLAIM] = { "sunreclaim_kib", "SUnreclaim", " KiB" },
	[M_KVM_SLAB] = { "kvm_slab_kib", "KVM slab", " KiB" },
};

struct soak_opts {
	struct bench_common c;
	uint64_t every; /* cycles between checkpoints */
};

/* What one checkpoint read; -1 where unreadable. */
struct checkpoint {
	uint64_t cycle;
	double elapsed_s;
	long long v[NR_METRICS];
	json_t *kvm_by_cache; /* name -> KiB, or NULL */
	double interval_p50_ns; /* cycles since the last checkpoint; NAN at 0 */
};

struct soak {
	struct soak_opts o;
	double *ns; /* every counted cycle, in order */
	uint64_t n;
	struct checkpoint *cp;
	size_t nr_cp;
	uint64_t failed; /* counted cycles whose guest did not finish right */
	char first_failure[512];
	char slab_error[256]; /* why /proc/slabinfo is unreadable, or "" */
};

/* ---- what a checkpoint reads ---- */

int soak__kvm_slab(FILE *f, long page_size, long long *total_kib,
		   json_t *by_cache)
{
	char line[512], name[128];
	long long pages_per_slab, slabs;

	*total_kib = 0;
	if (!fgets(line, sizeof(line), f) ||
	    strncmp(line, "slabinfo - version: 2.", 22))
		return -EINVAL;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		/* name active_objs num_objs objsize objperslab pagesperslab
		 * : tunables l b s : slabdata active_slabs num_slabs shared */
		if (sscanf(line, "%127s %*d %*d %*d %*d %lld : tunables %*d %*d "
			   "%*d : slabdata %*d %lld", name, &pages_per_slab,
			   &slabs) != 3)
			return -EINVAL;
		if (!strstr(name, "kvm"))
			continue;
		*total_kib += slabs * pages_per_slab * page_size / 1024;
		if (by_cache)
			json_object_set_new(by_cache, name, json_integer(
				slabs * pages_per_slab * page_size / 1024));
	}
	return 0;
}

/* This process's open descriptors, without the one reading them. */
static long long count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;
}

/* KVM's slab caches, or -1 with the reason kept for the document (an
 * unprivileged reader cannot open /proc/slabinfo). */
static long long kvm_slab(struct soak *s, json_t **by_cache)
{
	FILE *f = fopen("/proc/slabinfo", "re");
	long long total = -1;

	*by_cache = NULL;
	if (!f) {
		snprintf(s->slab_error, sizeof(s->slab_error), "/proc/slabinfo "
			 "cannot be read: %s", strerror(errno));
		return -1;
	}
	*by_cache = json_object();
	if (soak__kvm_slab(f, sysconf(_SC_PAGESIZE), &total, *by_cache) < 0) {
		snprintf(s->slab_error, sizeof(s->slab_error), "/proc/slabinfo "
			 "is not in the format 2.x this reads");
		json_decref(*by_cache);
		*by_cache = NULL;
		total = -1;
	}
	fclose(f);
	return total;
}

static void checkpoint(struct soak *s, uint64_t cycle, uint64_t t0)
{
	struct checkpoint *c = &s->cp[s->nr_cp];
	uint64_t from = s->nr_cp ? s->cp[s->nr_cp - 1].cycle : 0;
	struct summary sum;

	c->cycle = cycle;
	c->elapsed_s = (double)(timeline__now() - t0) / 1e9;
	c->v[M_FDS] = count_fds();
	c->v[M_RSS] = memstat__file_number("/proc/self/status", "VmRSS:");
	c->v[M_SLAB] = memstat__file_number("/proc/meminfo", "Slab:");
	c->v[M_SUNRECLAIM] = memstat__file_number("/proc/meminfo",
						  "SUnreclaim:");
	c->v[M_KVM_SLAB] = kvm_slab(s, &c->kvm_by_cache);
	c->interval_p50_ns = NAN;
	if (cycle > from && stats__summarize(s->ns + from, cycle - from, &sum) == 0)
		c->interval_p50_ns = sum.p50;
	s->nr_cp++;
}

/* ---- the cycles ---- */

static struct run_config soak_guest(void)
{
	return (struct run_config){
		.mem_size = 2ull << 20,
		.nr_vcpus = 1,
		.probe = { .seed = 1 },
		.timeout_ns = 10ull * 1000000000ull,
		.verify = true,
	};
}

/* One cycle, timed into *ns; a guest that did not reach DONE with its
 * checksum is counted (when `counted`) and the soak goes on: only a VM
 * that cannot be made at all (a leak running out of something, say)
 * stops it. */
static int cycle(struct soak *s, struct kvm_host *kvm, bool counted,
		 double *ns)
{
	struct run_config cfg = soak_guest();
	struct run_result res = { 0 };
	uint64_t t0 = timeline__now();
	int ret = runner__probe(kvm, &cfg, &res);

	*ns = (double)(timeline__now() - t0);
	if (ret == 0 && counted && !runner__succeeded(&cfg, &res) &&
	    s->failed++ == 0)
		snprintf(s->first_failure, sizeof(s->first_failure), "%s: %.400s",
			 vm__outcome_name(res.outcome), res.outcome ==
			 VM_COMPLETED ? "wrong checksum" : res.reason);
	return ret;
}

/* -errno from the cycle that could not run, named. */
static int cycle_error(int ret, uint64_t number, bool counted)
{
	char why[512];

	snprintf(why, sizeof(why), "%s", err__last());
	return err__set(-ret, "cycle %" PRIu64 "%s: %s", number,
			counted ? "" : " (warmup)", why);
}

static int cycles(struct soak *s, struct kvm_host *kvm)
{
	uint64_t total = s->o.c.warmup + s->o.c.count, t0 = 0;
	double ns;

	for (uint64_t i = 0; i < total; i++) {
		bool counted = i >= s->o.c.warmup;
		int ret;

		if (i == s->o.c.warmup) {
			t0 = timeline__now();
			checkpoint(s, 0, t0);
		}
		ret = cycle(s, kvm, counted, counted ? &s->ns[s->n] : &ns);
		if (ret < 0)
			return cycle_error(ret, counted ? s->n + 1 : i + 1,
					   counted);
		if (counted && (++s->n % s->o.every == 0 || s->n == s->o.c.count))
			checkpoint(s, s->n, t0);
		if (i % 64 == 0 || i + 1 == total)
			output__progress("soak", (unsigned long)(i + 1),
					 (unsigned long)total);
	}
	output__progress_done();
	return 0;
}

static int measure(struct soak *s)
{
	struct kvm_host kvm;
	int ret;

	s->ns = calloc(s->o.c.count, sizeof(double));
	s->cp = calloc(s->o.c.count / s->o.every + 2, sizeof(*s->cp));
	if (!s->ns || !s->cp)
		return err__set(ENOMEM, "allocating %" PRIu64 " samples",
				s->o.c.count);
	ret = kvm__open(&kvm, s->o.c.kvm_path);
	if (ret < 0)
		return ret;
	ret = cycles(s, &kvm);
	kvm__close(&kvm);
	return ret;
}

static void free_soak(struct soak *s)
{
	for (size_t i = 0; s->cp && i < s->nr_cp; i++)
		json_decref(s->cp[i].kvm_by_cache);
	free(s->cp);
	free(s->ns);
}

/* ---- the document ---- */

/* Least-squares growth of metric m per 1,000 cycles; false when some
 * checkpoint could not read it. */
static bool growth(const struct soak *s, enum metric m, double *per)
{
	double *x = calloc(2 * s->nr_cp + 1, sizeof(double)), *y, b;
	bool ok = x != NULL;

	y = x + s->nr_cp;
	for (size_t i = 0; ok && i < s->nr_cp; i++) {
		ok = s->cp[i].v[m] >= 0;
		x[i] = (double)s->cp[i].cycle;
		y[i] = (double)s->cp[i].v[m];
	}
	ok = ok && density__fit(x, y, s->nr_cp, per, &b) == 0;
	free(x);
	if (ok)
		*per *= PER;
	return ok;
}

static json_t *checkpoint_json(const struct checkpoint *c)
{
	json_t *o = json_pack("{s:I, s:f}", "cycle", (json_int_t)c->cycle,
			      "elapsed_s", c->elapsed_s);

	for (int m = 0; o && m < NR_METRICS; m++)
		json_object_set_new(o, metrics[m].key, c->v[m] >= 0 ?
				    json_integer(c->v[m]) : json_null());
	json_object_set_new(o, "kvm_slab_kib_by_cache", c->kvm_by_cache ?
			    json_incref(c->kvm_by_cache) : json_null());
	json_object_set_new(o, "cycle_ns_p50", isnan(c->interval_p50_ns) ?
			    json_null() : json_real(c->interval_p50_ns));
	return o;
}

/* Whether every checkpoint saw the same number of descriptors. */
static bool fds_constant(const struct soak *s)
{
	for (size_t i = 1; i < s->nr_cp; i++)
		if (s->cp[i].v[M_FDS] != s->cp[0].v[M_FDS])
			return false;
	return s->nr_cp > 0 && s->cp[0].v[M_FDS] >= 0;
}

static json_t *soak_json(const struct soak *s)
{
	json_t *cps = json_array(), *g = json_object(), *o;
	double per, rss = NAN;

	for (size_t i = 0; i < s->nr_cp; i++)
		json_array_append_new(cps, checkpoint_json(&s->cp[i]));
	for (int m = 0; m < NR_METRICS; m++)
		json_object_set_new(g, metrics[m].key, growth(s, m, &per) ?
				    json_real(per) : json_null());
	if (growth(s, M_RSS, &per))
		rss = per;
	o = json_pack("{s:o, s:o, s:I, s:s?}", "checkpoints", cps,
		      "growth_per_1000", g, "failed_cycles",
		      (json_int_t)s->failed, "first_failure",
		      s->failed ? s->first_failure : NULL);
	json_object_set_new(o, "targets", json_pack(
		"{s:{s:s, s:b}, s:{s:f, s:b}}",
		"fds", "rule", "the same count at every checkpoint", "met",
		fds_constant(s), "rss_kib", "max_growth_per_1000",
		TARGET_RSS_KIB_PER_1000, "met",
		!isnan(rss) && rss < TARGET_RSS_KIB_PER_1000));
	return o;
}

static json_t *result_json(const struct soak *s)
{
	struct run_config g = soak_guest();
	json_t *doc = result__new("soak", json_pack(
		"{s:I, s:I, s:I, s:s, s:I, s:i, s:s}", "count",
		(json_int_t)s->o.c.count, "every", (json_int_t)s->o.every,
		"warmup", (json_int_t)s->o.c.warmup, "guest", "probe",
		"mem_bytes", (json_int_t)g.mem_size, "vcpus",
		(int)g.nr_vcpus, "until", "DONE"));

	if (!doc)
		return NULL;
	if (!result__add_series(doc, "cycle", "ns", RESULT_LOWER, NULL, s->ns,
				s->n)) {
		json_decref(doc);
		return NULL;
	}
	json_object_set_new(doc, "soak", soak_json(s));
	if (s->slab_error[0])
		result__skip(doc, "KVM's slab caches (kvm_slab_kib: null)",
			     "%s", s->slab_error);
	if (s->failed)
		result__warn(doc, "%" PRIu64 " of %" PRIu64 " cycles did not "
			     "reach DONE with the right checksum; the first: %s",
			     s->failed, s->n, s->first_failure);
	return doc;
}

/* ---- the report, from the document ---- */

static const json_t *get(const json_t *o, const char *key)
{
	return json_object_get(o, key);
}

static void cell(FILE *out, const json_t *v)
{
	if (json_is_number(v))
		fprintf(out, " | %.0f", json_number_value(v));
	else
		fputs(" | n/a", out);
}

static void report_table(FILE *out, const json_t *cps)
{
	const json_t *c;
	size_t i;

	fputs("| cycle | elapsed s | fds | RSS KiB | Slab KiB | SUnreclaim KiB "
	      "| KVM slab KiB | cycle median |\n"
	      "|--:|--:|--:|--:|--:|--:|--:|--:|\n", out);
	json_array_foreach(cps, i, c) {
		double p50 = json_number_value(get(c, "cycle_ns_p50"));
		char t[48] = "-";

		if (json_is_number(get(c, "cycle_ns_p50")))
			result__value_text(t, sizeof(t), "ns", p50, p50);
		fprintf(out, "| %" JSON_INTEGER_FORMAT " | %.1f",
			json_integer_value(get(c, "cycle")),
			json_number_value(get(c, "elapsed_s")));
		for (int m = 0; m < NR_METRICS; m++)
			cell(out, get(c, metrics[m].key));
		fprintf(out, " | %s |\n", t);
	}
}

static void report_growth(FILE *out, const json_t *soak)
{
	const json_t *g = get(soak, "growth_per_1000");
	const json_t *t = get(soak, "targets");
	double rss = json_number_value(get(g, "rss_kib"));

	fputs("\nGrowth per 1,000 cycles (least squares over the "
	      "checkpoints):", out);
	for (int m = 0; m < NR_METRICS; m++) {
		const json_t *v = get(g, metrics[m].key);

		fprintf(out, "%s %s ", m ? "," : "", metrics[m].label);
		if (json_is_number(v))
			fprintf(out, "%+.1f%s", json_number_value(v),
				metrics[m].unit);
		else
			fputs("n/a", out);
	}
	fprintf(out, ".\n\n- target: no descriptor growth: %s\n"
		"- target: RSS growth under %.0f KiB per 1,000 cycles: %s "
		"(%+.1f KiB)\n",
		json_is_true(get(get(t, "fds"), "met")) ? "met" : "NOT MET",
		TARGET_RSS_KIB_PER_1000,
		json_is_true(get(get(t, "rss_kib"), "met")) ? "met" : "NOT MET",
		rss);
}

static void report(FILE *out, const json_t *doc)
{
	const json_t *cfg = get(doc, "config"), *soak = get(doc, "soak");
	const json_t *cycle = json_array_get(get(doc, "series"), 0);
	char p50[48], p99[48];
	double m = result__stat(cycle, "p50");

	fprintf(out, "# coldstart soak benchmark\n\n%" JSON_INTEGER_FORMAT
		" create -> DONE -> destroy cycles of the probe guest (1 vCPU, "
		"2 MiB) in one process, after %" JSON_INTEGER_FORMAT " warmup "
		"cycles; a checkpoint every %" JSON_INTEGER_FORMAT " cycles. "
		"Slab and SUnreclaim are the whole host's (/proc/meminfo): "
		"other work moves them too.\n\n",
		json_integer_value(get(cfg, "count")),
		json_integer_value(get(cfg, "warmup")),
		json_integer_value(get(cfg, "every")));
	report_table(out, get(soak, "checkpoints"));
	report_growth(out, soak);
	result__value_text(p50, sizeof(p50), "ns", m, m);
	result__value_text(p99, sizeof(p99), "ns", result__stat(cycle, "p99"), m);
	fprintf(out, "\nA cycle took %s (median), %s (p99); %"
		JSON_INTEGER_FORMAT " cycles failed.\n", p50, p99,
		json_integer_value(get(soak, "failed_cycles")));
	result__print_skipped(out, doc, true);
	result__md_warnings(out, doc);
}

static int run(void *opts)
{
	struct soak *s = opts;
	json_t *doc = NULL;
	int ret = measure(s);

	if (ret == 0) {
		doc = result_json(s);
		ret = doc ? result__emit(doc, s->o.c.json, s->o.c.out_dir,
					 report)
			  : -ENOMEM;
	}
	json_decref(doc);
	free_soak(s);
	return ret;
}

/* ---- options ---- */

static void init(void *opts)
{
	struct soak *s = opts;

	s->o = (struct soak_opts){
		.c = { .count = 10000, .warmup = 100, .count_max = 100000000,
		       .warmup_max = 100000000 },
		.every = 1000 };
}

static int set_every(void *opts, const char *arg)
{
	return args__u64("--every", arg, 1, 100000000,
			 &((struct soak *)opts)->o.every);
}

static void show_every(const void *opts, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRIu64, ((const struct soak *)opts)->o.every);
}

static int check(void *opts)
{
	const struct soak_opts *o = &((struct soak *)opts)->o;

	if (o->every > o->c.count)
		return err__set(EINVAL, "--every %" PRIu64 " is more than the "
				"%" PRIu64 " cycles (-n)", o->every, o->c.count);
	return 0;
}

static const struct opt table[] = {
	{ "every", 0, "N", false, "cycles between checkpoints", set_every,
	  show_every },
	OPT_END,
};

const struct bench_driver soak_driver = {
	.name = "soak",
	.summary = "10,000 cycles in one process: descriptor, RSS and slab "
		   "growth (not in suite)",
	.usage = "Usage: coldstart bench soak [-n CYCLES] [--every N] "
		 "[OPTIONS]\n"
		 "Runs CYCLES create -> DONE -> destroy cycles of the probe "
		 "guest (1 vCPU,\n2 MiB, checksum verified) in this one "
		 "process and, at a checkpoint every N\ncycles, reads the "
		 "process's open descriptors and RSS and the kernel's slab\n"
		 "memory (Slab and SUnreclaim of /proc/meminfo, and the caches "
		 "of /proc/slabinfo\nwhose name has \"kvm\", when readable: "
		 "root). Prints each checkpoint and the\ngrowth per 1,000 "
		 "cycles (least squares over the checkpoints) against the\n"
		 "targets: no descriptor growth, RSS growth under 64 KiB per "
		 "1,000 cycles.\nLong: not part of `bench suite`. A sample is "
		 "a cycle; the uncounted ones run\nbefore the first "
		 "checkpoint: one-off growth (allocator arenas, caches KVM\n"
		 "creates on first use) is not growth per cycle. --json "
		 "prints the document\n(checkpoints, growth, every cycle's "
		 "time).\n",
	.common = BENCH_COUNT | BENCH_WARMUP | BENCH_JSON | BENCH_OUT |
		  BENCH_KVM,
	.opts = table,
	.size = sizeof(struct soak),
	.common_at = offsetof(struct soak, o.c),
	.init = init,
	.check = check,
	.run = run,
};
