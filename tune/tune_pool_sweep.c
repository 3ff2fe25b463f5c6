/* `coldstart tune pool`: the sweep of every policy's parameters through
 * the simulator, the choice against the SLO, and the validation of the
 * recommendation through a real pool. */
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
#include "stats.h"
#include "units.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* ---- the sweep ---- */

double tune_pool__mean_of(const struct cost *c)
{
	double s = 0;

	for (size_t i = 0; i < c->n; i++)
		s += c->s[i];
	return s / (double)c->n;
}

/* The bound of every target: twice the VMs a refill's mean making time
 * holds at the busiest rate seen (over a window of the making time, at
 * least 1 s), plus 4. */
unsigned int tune_pool__pool_max(const struct arrivals *a, double make_s)
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

struct cand *tune_pool__add(struct sweep *sw, int pol,
			const struct costs *c, uint64_t seed)
{
	struct cand *x;

	if (sw->cap && sw->n == sw->cap) {
		struct cand *more = realloc(sw->c, 2 * sw->cap * sizeof(*more));

		if (!more)
			return NULL;
		sw->c = more;
		sw->cap *= 2;
	}
	if (!sw->cap && sw->n >= MAX_CANDIDATES)
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

/* A candidate of an adaptive policy: the simulated pool holds nothing
 * before the first arrival. NULL when the sweep is full. */
static struct cand *add_adaptive(struct sweep *sw, enum pool_policy policy,
				 const struct costs *c, uint64_t seed)
{
	struct cand *x = tune_pool__add(sw, policy, c, seed);

	if (x) {
		x->cfg.params.pool.size = 0;
		x->cfg.params.pool.min = 0;
	}
	return x;
}

static void add_marginal(struct sweep *sw, const struct costs *c,
			 uint64_t seed, double cost_s, double half_s,
			 double peak_s)
{
	struct cand *x = add_adaptive(sw, POOL_MARGINAL, c, seed);
	struct policy_params *m;

	if (!x)
		return;
	m = &x->cfg.params.pool.params;
	m->miss_cost_s = cost_s;
	m->halflife_s = half_s;
	/* A burst is told by a count faster than the slow one; at the
	 * same half-life the two never part and bursts go unseen. */
	m->burst_halflife_s = fmin(m->burst_halflife_s, half_s / 3);
	m->peak_halflife_s = peak_s;
	snprintf(x->label, sizeof(x->label), "miss_cost=%gs halflife=%gs "
		 "burst=%.3gs peak=%gs", cost_s, half_s, m->burst_halflife_s,
		 peak_s);
}

static void add_cover(struct sweep *sw, const struct costs *c, uint64_t seed,
		      double q, double half_s)
{
	struct cand *x = add_adaptive(sw, POOL_COVER, c, seed);
	struct policy_params *m;

	if (!x)
		return;
	m = &x->cfg.params.pool.params;
	m->cover_q = q;
	m->cover_halflife_s = half_s;
	snprintf(x->label, sizeof(x->label), "q=%g halflife=%gs", q, half_s);
}

/* About 350 configurations: the grids of the header comment of each
 * policy's parameters that matter most. */
void tune_pool__build_grid(struct sweep *sw, const struct tp_opts *o,
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
	static const double mhalves[] = { 1, 3, 10, 30, 100 };
	/* 0: no peak; then the spells between clustered bursts it bridges */
	static const double peaks[] = { 0, 3, 10, 30 };
	static const unsigned int ns[] = { 1, 2, 4, 8 };
	static const double qs[] = { 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999 };
	static const double chalves[] = { 60, 300, 1800, 7200 };
	unsigned int steps = sw->max < 40 ? sw->max : 40;
	struct cand *x;

	for (unsigned int i = 0; o->policy_on[POOL_FIXED] && i <= steps;
	     i++) {
		unsigned int n = (unsigned int)lround((double)i * sw->max / steps);

		if ((x = tune_pool__add(sw, POOL_FIXED, c, o->seed))) {
			x->cfg.params.fixed.n = n;
			snprintf(x->label, sizeof(x->label), "n=%u", n);
		}
	}
	for (size_t i = 0; o->policy_on[POOLSIM_TTL] && i < 4; i++)
		for (size_t j = 0; ns[i] <= sw->max && j < 10; j++)
			if ((x = tune_pool__add(sw, POOLSIM_TTL, c, o->seed))) {
				x->cfg.params.ttl.n = ns[i];
				x->cfg.params.ttl.ttl_s = ttls[j];
				snprintf(x->label, sizeof(x->label),
					 "n=%u ttl=%gs", ns[i], ttls[j]);
			}
	for (size_t i = 0; o->policy_on[POOLSIM_HYBRID] && i < 3; i++)
		for (size_t j = 0; j < 3; j++)
			for (size_t k = 0; ns[k] <= sw->max && k < 3; k++) {
				struct poolsim_hybrid *h;

				if (!(x = tune_pool__add(sw, POOLSIM_HYBRID, c, o->seed)))
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
	for (size_t i = 0; o->policy_on[POOL_FOLLOW] && i < 5; i++)
		for (size_t j = 0; j < 8; j++)
			if ((x = tune_pool__add(sw, POOL_FOLLOW, c, o->seed))) {
				struct poolsim_pool *f = &x->cfg.params.pool;

				f->size = sw->max < 4 ? sw->max : 4;
				f->min = 0;
				f->params.halflife_s = halves[i];
				f->params.headroom = rooms[j];
				snprintf(x->label, sizeof(x->label),
					 "halflife=%gs headroom=%g",
					 halves[i], rooms[j]);
			}
	for (size_t i = 0; o->policy_on[POOL_MARGINAL] && i < 10; i++)
		for (size_t j = 0; j < 5; j++)
			for (size_t k = 0; k < 4; k++)
				add_marginal(sw, c, o->seed, costs_s[i],
					     mhalves[j], peaks[k]);
	for (size_t i = 0; o->policy_on[POOL_COVER] && i < 7; i++)
		for (size_t j = 0; j < 4; j++)
			add_cover(sw, c, o->seed, qs[i], chalves[j]);
}

/* The SLO's metric of x: its hit percentage, or its latencies' (r's,
 * sorted here) percentile. */
static void judge(struct cand *x, struct poolsim_result *r,
		  const struct slo *slo)
{
	if (slo->hits) {
		x->metric = 100 * x->hit_ratio;
		x->meets = x->metric >= slo->goal - 1e-9;
		return;
	}
	qsort(r->latency_s, r->requests, sizeof(double), cmp_double);
	x->metric = stats__percentile_sorted(r->latency_s, r->requests,
					     slo->pct);
	x->meets = x->metric <= slo->goal * (1 + 1e-12);
}

int tune_pool__simulate(struct sweep *sw, const struct arrivals *a,
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
		judge(x, &r, slo);
		poolsim__result_free(&r);
	}
	return 0;
}

/* a cheaper than b: idle VM-seconds, then peak memory. */
bool tune_pool__cheaper(const struct cand *a, const struct cand *b)
{
	if (a->idle_vm_s != b->idle_vm_s)
		return a->idle_vm_s < b->idle_vm_s;
	return a->peak_mib < b->peak_mib;
}

static bool better_metric(const struct slo *slo, double a, double b)
{
	return slo->hits ? a > b : a < b;
}

void tune_pool__choose(struct sweep *sw, const struct slo *slo)
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
		if (*b < 0 || tune_pool__cheaper(x, &sw->c[*b]))
			*b = (ssize_t)i;
		if (sw->rec < 0 || tune_pool__cheaper(x, &sw->c[sw->rec]))
			sw->rec = (ssize_t)i;
	}
	if (!order)
		return;
	/* the frontier: by idle VM-seconds, each point better in the SLO's
	 * metric than every cheaper one (insertion sort: n is ~200) */
	for (size_t i = 0; i < sw->n; i++) {
		size_t j = i;

		while (j > 0 && tune_pool__cheaper(&sw->c[i], &sw->c[order[j - 1]])) {
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
	if (sw->rec >= 0 && sw->c[sw->rec].cfg.policy == POOL_FIXED)
		n = sw->c[sw->rec].cfg.params.fixed.n;
	else if (sw->best[POOL_FIXED] >= 0)
		n = sw->c[sw->best[POOL_FIXED]].cfg.params.fixed.n;
	if (n == 0)
		n = 1;
	for (unsigned int i = 0; i < 3; i++)
		v->r[v->n++].size = n - 1 + i;
}

/* `coldstart bench pool --json --config FILE` with the tune run's
 * arrivals: FILE holds r->sim's fixed pool on the results directory's
 * stored configuration (bufs: the option values' text). */
static void bench_argv(const struct tp_opts *o, const struct costs *c,
		       const char *exe, const char *config, char **a,
		       char bufs[][64])
{
	json_int_t conc = json_integer_value(json_object_get(c->pool.config,
							     "concurrency"));
	size_t k = 0, b = 0;

	a[k++] = (char *)exe;
	a[k++] = "bench";
	a[k++] = "pool";
	a[k++] = "--json";
	a[k++] = "--baseline";
	a[k++] = "0";
	a[k++] = "--config";
	a[k++] = (char *)config;
	a[k++] = "--arrivals";
	a[k++] = (char *)o->arrivals_text;
#define ADD(opt, ...) (a[k++] = opt, snprintf(bufs[b], 64, __VA_ARGS__), \
		       a[k++] = bufs[b++])
	ADD("--duration", "%.0fns", o->duration_s * 1e9);
	ADD("--time-scale", "%.17g", o->time_scale);
	ADD("--seed", "%llu", (unsigned long long)o->seed);
	if (conc > 0)
		ADD("--concurrency", "%lld", (long long)conc);
#undef ADD
	if (o->kvm_path) {
		a[k++] = "--kvm";
		a[k++] = (char *)o->kvm_path;
	}
	a[k] = NULL;
}

/* The measured hit ratio and p99 of one bench pool document. */
static void take_measured(const json_t *doc, struct vrow *r,
			  struct validation *v)
{
	const json_t *s;
	const char *emu =
		result__sysinfo_emulated(json_object_get(doc, "sysinfo"));
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

/* The name of size's document under --out (VALIDATION_DIR/size-N.json). */
static void doc_name(char *buf, size_t len, unsigned int size)
{
	snprintf(buf, len, VALIDATION_DIR "/size-%u.json", size);
}

/* Simulates r's size again with the costs of its own measured run: r's
 * hits, misses and refills where the run has samples, else c's. */
static int simulate_own(const struct tp_opts *o, const struct costs *c,
			const struct arrivals *a, struct vrow *r)
{
	struct sweep one = { .c = &r->own, .n = 1 };
	struct poolsim_costs pc;
	struct costs own;
	char path[PATH_MAX], name[48];
	int ret;

	doc_name(name, sizeof(name), r->size);
	snprintf(path, sizeof(path), "%s/%s", o->out_dir ? o->out_dir : ".",
		 name);
	ret = tune_pool__run_costs(r->doc, path, c, &own);
	if (ret == 0) {
		pc = tune_pool__sim_costs(&own);
		r->own = (struct cand){ .cfg = r->sim.cfg };
		snprintf(r->own.label, sizeof(r->own.label), "%s",
			 r->sim.label);
		ret = tune_pool__simulate(&one, a, &pc, &o->slo);
		r->own_make_mean_s = tune_pool__mean_of(&own.make);
		r->have_own = ret == 0;
	}
	tune_pool__costs_free(&own);
	if (ret == -EINVAL) { /* a document it cannot take costs from */
		size_t len = strlen(r->note); /* after bench pool's, if any */

		snprintf(r->note + len, sizeof(r->note) - len, "%snot "
			 "simulated with its own costs: %s", len ? "; " : "",
			 err__last());
		ret = 0;
	}
	return ret;
}

/* Runs one size; a child that fails leaves a note, not an error, except
 * exit 77 (-ENOTSUP): this host cannot run VMs. */
static int measure(const struct tp_opts *o, const struct costs *c,
		   const struct arrivals *a, const char *exe, struct vrow *r,
		   struct validation *v)
{
	char bufs[4][64], *argv[24], st[32], config[PATH_MAX];
	json_t *doc = NULL;
	int status, ret;

	ret = tune_pool__config_file(c, &r->sim, config, sizeof(config));
	if (ret < 0)
		return ret;
	bench_argv(o, c, exe, config, argv, bufs);
	fprintf(stderr, "coldstart tune pool: validating a fixed pool of %u "
		"VMs on this host\n", r->size);
	ret = child__capture(argv, &doc, &status);
	unlink(config);
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
	if (!r->measured) {
		json_decref(doc);
		return 0;
	}
	r->doc = doc;
	return simulate_own(o, c, a, r);
}

int tune_pool__write_validation(const char *dir, const struct validation *v)
{
	char sub[PATH_MAX], name[48];
	int ret = 0;

	if ((size_t)snprintf(sub, sizeof(sub), "%s/" VALIDATION_DIR, dir) >=
	    sizeof(sub))
		return err__set(ENAMETOOLONG, "%s/" VALIDATION_DIR, dir);
	for (size_t i = 0; ret == 0 && i < v->n; i++) {
		if (!v->r[i].doc)
			continue;
		ret = output__mkdirs(sub);
		if (ret < 0)
			return err__sys(-ret, "%s", sub);
		doc_name(name, sizeof(name), v->r[i].size);
		/* the temporary file goes beside it: write in sub */
		ret = output__write_json(sub, strrchr(name, '/') + 1,
					 v->r[i].doc);
	}
	return ret;
}

void tune_pool__validation_free(struct validation *v)
{
	for (size_t i = 0; v && i < v->n; i++)
		json_decref(v->r[i].doc);
	free(v);
}

int tune_pool__validate(const struct tp_opts *o, const struct costs *c,
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
		tune_pool__add(&one, POOL_FIXED, c, o->seed);
		r->sim.cfg.params.fixed.n = r->size;
		if (r->size > r->sim.cfg.max)
			r->sim.cfg.max = r->size;
		snprintf(r->sim.label, sizeof(r->sim.label), "n=%u", r->size);
		ret = tune_pool__simulate(&one, a, pc, &o->slo);
		if (ret == 0)
			ret = measure(o, c, a, exe, r, v);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Whether this host can open KVM, checked before the sweep so that a
 * host without it fails fast: 0, or -errno with a message. */
int tune_pool__kvm_usable(const char *path)
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

/* Measured against simulated (`sim`: r->sim, or r->own). */
static double hit_diff_points(const struct vrow *r, const struct cand *sim)
{
	return 100 * (r->hit_ratio - sim->hit_ratio);
}

static double p99_diff_pct(const struct vrow *r, const struct cand *sim)
{
	return sim->p[2] > 0 ? 100 * (r->p99_s - sim->p[2]) / sim->p[2] : 0;
}

/* The table of rows with their own costs simulated: the run's refills'
 * mean making time beside the results directory's, and measured against
 * simulated with the run's costs. */
static void md_own(FILE *f, const struct validation *v, double make_mean_s)
{
	bool any = false;

	for (size_t i = 0; i < v->n; i++)
		any |= v->r[i].have_own;
	if (!any)
		return;
	fprintf(f, "The same sizes simulated with each run's own costs (its "
		"hits, misses and refills, where it had samples; else those "
		"above): a difference left here is the model's; one that "
		"shrinks here came from this host's costs changing since the "
		"results directory was measured (mean making time there: "
		"%.3f ms).\n\n"
		"| size | the run's mean making time | simulated hit ratio | "
		"measured hit ratio | difference (points) | simulated p99 | "
		"measured p99 | difference (%%) |\n"
		"|---|---|---|---|---|---|---|---|\n", make_mean_s * 1e3);
	for (size_t i = 0; i < v->n; i++) {
		const struct vrow *r = &v->r[i];

		if (r->have_own)
			fprintf(f, "| %u | %.3f ms | %.2f %% | %.2f %% | %+.2f "
				"| %.3f ms | %.3f ms | %+.1f |\n", r->size,
				r->own_make_mean_s * 1e3,
				100 * r->own.hit_ratio, 100 * r->hit_ratio,
				hit_diff_points(r, &r->own),
				r->own.p[2] * 1e3, r->p99_s * 1e3,
				p99_diff_pct(r, &r->own));
	}
	fputs("\n", f);
}

void tune_pool__md_validation(FILE *f, const struct validation *v,
			      double make_mean_s)
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
				hit_diff_points(r, &r->sim), r->sim.p[2] * 1e3,
				r->p99_s * 1e3, p99_diff_pct(r, &r->sim));
		else
			fprintf(f, "not measured | | %.3f ms | | |\n",
				r->sim.p[2] * 1e3);
	}
	fputs("\n", f);
	md_own(f, v, make_mean_s);
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

json_t *tune_pool__validation_json(const struct validation *v, bool written)
{
	json_t *rows = json_array();
	char name[48];

	for (size_t i = 0; rows && i < v->n; i++) {
		const struct vrow *r = &v->r[i];
		json_t *m = r->measured ? json_pack("{s:f, s:f}", "hit_ratio",
						    r->hit_ratio, "p99_s",
						    r->p99_s)
					: json_null();
		json_t *own = r->have_own
			? json_pack("{s:f, s:f, s:f, s:f, s:f}", "hit_ratio",
				    r->own.hit_ratio, "p99_s", r->own.p[2],
				    "make_mean_s", r->own_make_mean_s,
				    "hit_diff_points",
				    hit_diff_points(r, &r->own),
				    "p99_diff_pct", p99_diff_pct(r, &r->own))
			: json_null();

		doc_name(name, sizeof(name), r->size);
		if (json_array_append_new(rows, json_pack(
			    "{s:I, s:{s:f, s:f}, s:o, s:o, s:o, s:o, s:s?, "
			    "s:s?}", "size",
			    (json_int_t)r->size, "simulated", "hit_ratio",
			    r->sim.hit_ratio, "p99_s", r->sim.p[2], "measured",
			    m, "hit_diff_points", r->measured
				? json_real(hit_diff_points(r, &r->sim))
				: json_null(),
			    "p99_diff_pct", r->measured
				? json_real(p99_diff_pct(r, &r->sim))
				: json_null(),
			    "simulated_own_costs", own,
			    "document", r->doc && written ? name : NULL,
			    "note", *r->note ? r->note : NULL)) < 0) {
			json_decref(rows);
			return NULL;
		}
	}
	return json_pack("{s:o*, s:s?}", "rows", rows, "emulated",
			 *v->emulated ? v->emulated : NULL);
}
