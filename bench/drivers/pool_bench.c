/* The pool benchmark: an open-loop load generator replaying an arrival
 * process against a real warm pool in this process. Requests arrive on
 * schedule whether or not earlier ones finished; each is timed from its
 * scheduled arrival (queueing included) to its guest's first instruction
 * and to DONE, as a hit or a miss. Over the run: what the pool held, made
 * and spent (idle VM-seconds, refill CPU), and its memory per VM held. */
#include "pool_bench.h"

#include "args.h"
#include "arrivals.h"
#include "cli.h"
#include "err.h"
#include "kvm.h"
#include "memstat.h"
#include "mem.h"
#include "pool.h"
#include "pool_cli.h"
#include "result.h"
#include "result_new.h"
#include "serve.h"
#include "snapshot.h"
#include "vm.h"
#include "timeline.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_RUNNERS 1024
#define MAX_SAMPLES 100000
#define MAKE_KEPT 4096 /* what the pool keeps of its making times */

enum { OPT_JSON = 0x100, OPT_OUT, OPT_ARRIVALS, OPT_DURATION, OPT_SCALE,
       OPT_SEED, OPT_CONCURRENCY, OPT_SAMPLE, OPT_BASELINE };

struct pb_opts {
	struct pool_cli pc;
	struct arrivals_spec spec;
	const char *arrivals_text;
	double duration_s, time_scale;
	uint64_t seed, concurrency, sample_ns, baseline;
	bool json;
	const char *out_dir;
};

/* One request's outcome. */
struct served {
	double first_ns, done_ns; /* from its scheduled arrival */
	bool hit, ok;
};

/* The occupancy over time, sampled. */
struct tick {
	double t;
	unsigned int held, making, target;
	uint64_t arrived;
};

struct run {
	const struct pb_opts *o;
	struct pool *pool;
	const struct arrivals *arr;
	uint64_t start_ns;
	struct served *served;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	size_t next_due; /* arrivals handed to runners */
	size_t released; /* arrivals whose time has come */
	bool stop;
	struct tick *ticks;
	size_t nticks;
	char first_error[256];
	uint64_t failed;
	double *fresh, *shell; /* the baselines, o->baseline each, or NULL */
	double make_ns[MAKE_KEPT]; /* the refills' making times at the end */
	size_t nmake;
};

static void usage(FILE *out)
{
	fputs("Usage: coldstart bench pool [OPTIONS]\n"
	      "Replays an arrival process against a warm pool on this host, "
	      "open loop\n(arrivals do not wait for completions): per "
	      "request, arrival -> the\nguest's first instruction and -> DONE "
	      "(queueing included), hit or miss;\nover time, the VMs held, "
	      "idle VM-seconds, refill CPU and memory per VM.\n\n"
	      "  --arrivals SPEC      poisson:RATE (per second), "
	      "mmpp:R0,R1,D0,D1 (bursty:\n"
	      "                       two rates and mean dwell times in s), or "
	      "trace:FILE\n"
	      "                       (CSV with a timestamp column, Azure "
	      "Functions 2019\n"
	      "                       per-minute counts, Azure Functions 2021 "
	      "invocations;\n"
	      "                       ',format=csv|azure2019|azure2021', "
	      "',column=NAME')\n"
	      "                       (default poisson:50)\n"
	      "  --duration DUR       the window replayed (default 10s; traces: "
	      "0 = all)\n"
	      "  --time-scale F       traces: multiply trace time by F (0.1: "
	      "10x faster)\n"
	      "  --seed N             every random choice (default 1)\n"
	      "  --concurrency N      requests in flight at most (default 64); "
	      "later ones\n"
	      "                       queue, and their wait counts\n"
	      "  --sample-every DUR   occupancy sampling period (default 100ms)\n"
	      "  --baseline N         with --snapshot: first, N restores of the "
	      "same snapshot\n"
	      "                       into a fresh VM and N into a shell made "
	      "before (after\n"
	      "                       one uncounted of each), timed to the "
	      "first instruction\n"
	      "                       (default 20; 0: none)\n"
	      "  --json               the result document on stdout\n"
	      "  --out DIR            write DIR/pool.json and DIR/pool.md\n",
	      out);
	pool_cli__usage(out);
	fputs("Exit: 0, 1 a request failed or the run did, 2 usage, 77 no "
	      "usable KVM.\n", out);
}

static int parse(int argc, char **argv, struct pb_opts *o)
{
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "arrivals", required_argument, NULL, OPT_ARRIVALS },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "time-scale", required_argument, NULL, OPT_SCALE },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "concurrency", required_argument, NULL, OPT_CONCURRENCY },
		{ "sample-every", required_argument, NULL, OPT_SAMPLE },
		{ "baseline", required_argument, NULL, OPT_BASELINE },
		POOL_CLI_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	uint64_t ns;
	char *end;
	int c, ret = 0;

	memset(o, 0, sizeof(*o));
	pool_cli__defaults(&o->pc);
	o->arrivals_text = "poisson:50";
	o->duration_s = 10;
	o->time_scale = 1;
	o->seed = 1;
	o->concurrency = 64;
	o->sample_ns = 100000000ull;
	o->baseline = 20;
	optind = 0;
	opterr = 0;
	while (ret == 0 &&
	       (c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case 'h':
			return 1;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_OUT:
			o->out_dir = optarg;
			break;
		case OPT_ARRIVALS:
			o->arrivals_text = optarg;
			break;
		case OPT_DURATION:
			ret = args__duration("--duration", optarg, &ns);
			o->duration_s = (double)ns / 1e9;
			break;
		case OPT_SCALE:
			errno = 0;
			o->time_scale = strtod(optarg, &end);
			if (errno || end == optarg || *end ||
			    !(o->time_scale > 0 && o->time_scale <= 1e6))
				ret = err__set(EINVAL, "--time-scale: '%s' is not "
					       "a number above 0", optarg);
			break;
		case OPT_SEED:
			ret = args__u64("--seed", optarg, 0, UINT64_MAX,
					&o->seed);
			break;
		case OPT_CONCURRENCY:
			ret = args__u64("--concurrency", optarg, 1, MAX_RUNNERS,
					&o->concurrency);
			break;
		case OPT_SAMPLE:
			ret = args__duration("--sample-every", optarg,
					     &o->sample_ns);
			if (ret == 0 && o->sample_ns < 1000000)
				ret = err__set(EINVAL, "--sample-every: at "
					       "least 1ms");
			break;
		case OPT_BASELINE:
			ret = args__u64("--baseline", optarg, 0, 100000,
					&o->baseline);
			break;
		case '?':
			return args__bad_option(argv);
		default:
			ret = pool_cli__option(&o->pc, c, optarg);
			if (ret == 1)
				return args__bad_option(argv);
		}
	}
	if (ret == 0)
		ret = args__no_operands(argc, argv);
	if (ret == 0)
		ret = arrivals__parse_spec(o->arrivals_text, &o->spec);
	if (ret == 0 && o->spec.kind != ARRIVALS_TRACE && !o->duration_s)
		ret = err__set(EINVAL, "--duration: 0 keeps a whole trace; "
			       "%s needs a length", o->arrivals_text);
	if (ret == 0)
		ret = pool_cli__finish(&o->pc);
	return ret;
}

/* ---- the run ---- */

static void sleep_until(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000ull),
			       (long)(t % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR && !pool_cli__stop)
		;
}

static uint64_t due_ns(const struct run *r, size_t i)
{
	return r->start_ns + (uint64_t)(r->arr->t[i] * 1e9);
}

/* Runners take released arrivals in order and serve them. */
static void *runner(void *arg)
{
	struct run *r = arg;

	for (;;) {
		struct pool_request req = { 0 };
		struct served *s;
		size_t i;

		pthread_mutex_lock(&r->lock);
		while (r->next_due == r->released && !r->stop)
			pthread_cond_wait(&r->cond, &r->lock);
		if (r->next_due == r->released) {
			pthread_mutex_unlock(&r->lock);
			return NULL;
		}
		i = r->next_due++;
		pthread_mutex_unlock(&r->lock);

		req.arrival_ns = due_ns(r, i);
		s = &r->served[i];
		if (pool__serve(r->pool, &req) == 0) {
			s->ok = true;
			s->hit = req.hit;
			s->first_ns = (double)(req.first_run_ns - req.arrival_ns);
			s->done_ns = (double)(req.done_ns - req.arrival_ns);
			continue;
		}
		pthread_mutex_lock(&r->lock);
		if (!r->failed++)
			snprintf(r->first_error, sizeof(r->first_error), "%s",
				 err__last());
		pthread_mutex_unlock(&r->lock);
	}
}

static void sample(struct run *r, uint64_t now)
{
	struct pool_stats st;

	if (r->nticks == MAX_SAMPLES)
		return;
	pool__stats(r->pool, &st);
	r->ticks[r->nticks++] = (struct tick){
		.t = (double)(now - r->start_ns) / 1e9,
		.held = st.held, .making = st.making, .target = st.target,
		.arrived = st.requests,
	};
}

/* Releases each arrival at its time, sampling occupancy in between. */
static void dispatch(struct run *r)
{
	uint64_t next_tick = r->start_ns;

	for (size_t i = 0; i < r->arr->n && !pool_cli__stop;) {
		uint64_t due = due_ns(r, i), now = timeline__now();

		if (now >= next_tick) {
			sample(r, now);
			next_tick += r->o->sample_ns;
			continue;
		}
		if (now < due) {
			sleep_until(due < next_tick ? due : next_tick);
			continue;
		}
		pthread_mutex_lock(&r->lock);
		while (i < r->arr->n && due_ns(r, i) <= now)
			i++;
		/* one runner per arrival: no herd woken for each */
		for (size_t k = r->released; k < i; k++)
			pthread_cond_signal(&r->cond);
		r->released = i;
		pthread_mutex_unlock(&r->lock);
	}
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

/* Memory of the whole process and of its guest mappings (every VM's). */
static int memory_now(struct memstat *m)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[512];
	bool guest = false;

	memset(m, 0, sizeof(*m));
	if (!f)
		return err__set(errno, "/proc/self/smaps: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, ' ') &&
		    strchr(line, '-') < strchr(line, ' '))
			guest = strstr(line, MEM_VMA_NAME) != NULL;
		memstat__add_line(m, line, false);
		if (guest)
			memstat__add_line(m, line, true);
	}
	fclose(f);
	return 0;
}

/* ---- the baselines: restores without a pool, in the same run ---- */

/* One restore of the pool's snapshot into a fresh VM (shell false) or a
 * shell made beforehand, run to DONE: restore start -> first KVM_RUN. */
static int restore_once(struct kvm_host *kvm, struct snapshot *snap,
			const struct guest_mem_ops *ops, bool shell,
			double *ns)
{
	struct timeline tl = { 0 };
	struct vm_config vc;
	struct probe probe;
	struct vm *vm = NULL;
	int ret = 0;

	/* a shell as the pool holds it: vCPU threads parked, no memory */
	if (shell) {
		snapshot__shell_config(snap, &vc);
		ret = vm__create_shell(kvm, &vc, NULL, &vm);
		if (ret == 0) {
			vm__request_pause(vm);
			ret = vm__start(vm);
		}
		if (ret == 0)
			ret = vm__wait_paused(vm, 10000000000ull);
	}
	timeline__mark(&tl, TL_RESTORE_START);
	if (ret == 0 && shell)
		ret = snapshot__restore_into(vm, snap, ops, &tl, &probe);
	else if (ret == 0)
		ret = snapshot__restore(kvm, snap, ops, &tl, &vm, &probe);
	if (ret == 0 && shell)
		vm__resume(vm);
	else if (ret == 0)
		ret = vm__start(vm);
	if (ret == 0 && vm__wait(vm, 10000000000ull) != VM_COMPLETED)
		ret = err__set(EIO, "a baseline restore did not complete: %s",
			       vm->reason);
	vm__destroy(vm);
	*ns = tl.t[TL_FIRST_RUN] ? (double)(tl.t[TL_FIRST_RUN] -
					    tl.t[TL_RESTORE_START]) : 0;
	return ret;
}

/* --baseline N restores into fresh VMs and into shells, alternating. */
static int baselines(const struct pb_opts *o, struct kvm_host *kvm,
		     double *fresh, double *shell)
{
	struct snapshot snap;
	int ret = snapshot__open(&snap, o->pc.cfg.snapshot_dir);

	double warm;

	if (ret < 0)
		return ret;
	/* one of each uncounted: the first restores pay for cold caches */
	ret = restore_once(kvm, &snap, o->pc.cfg.strategy, false, &warm);
	if (ret == 0)
		ret = restore_once(kvm, &snap, o->pc.cfg.strategy, true, &warm);
	for (uint64_t i = 0; ret == 0 && i < o->baseline && !pool_cli__stop;
	     i++) {
		ret = restore_once(kvm, &snap, o->pc.cfg.strategy, false,
				   &fresh[i]);
		if (ret == 0)
			ret = restore_once(kvm, &snap, o->pc.cfg.strategy, true,
					   &shell[i]);
	}
	snapshot__close(&snap);
	return ret;
}

/* ---- the document ---- */

static int add_latency(json_t *doc, const struct run *r, const char *what,
		       bool first, int hit)
{
	size_t n = 0;
	double *v = malloc((r->arr->n ? r->arr->n : 1) * sizeof(double));
	char name[64];
	json_t *s;

	if (!v)
		return err__set(ENOMEM, "allocating samples");
	for (size_t i = 0; i < r->arr->n; i++) {
		const struct served *x = &r->served[i];

		if (x->ok && (hit < 0 || x->hit == (bool)hit))
			v[n++] = first ? x->first_ns : x->done_ns;
	}
	snprintf(name, sizeof(name), "%s.%s", what,
		 hit < 0 ? "all" : hit ? "hit" : "miss");
	s = result__add_series(doc, name, "ns", RESULT_LOWER,
			       json_pack("{s:s, s:s}", "to",
					 first ? "first_run" : "done", "requests",
					 hit < 0 ? "all" : hit ? "hit" : "miss"),
			       v, n);
	free(v);
	return s ? 0 : -ENOMEM;
}

static double median(const double *v, size_t n)
{
	struct summary sm;

	return n && stats__summarize(v, n, &sm) == 0 ? sm.p50 : 0;
}

/* The baselines' series, and the ratios the pool is judged by: a hit's
 * arrival -> first instruction against a fresh restore's restore start ->
 * first instruction, and a fresh restore against one into a shell. */
static int add_baselines(json_t *doc, const struct pb_opts *o,
			 const struct run *r)
{
	double *hit = malloc((r->arr->n ? r->arr->n : 1) * sizeof(double));
	double f = median(r->fresh, o->baseline);
	double sh = median(r->shell, o->baseline), h;
	size_t n = 0;
	int ret = 0;

	if (!hit)
		return err__set(ENOMEM, "allocating samples");
	for (size_t i = 0; i < r->arr->n; i++)
		if (r->served[i].ok && r->served[i].hit)
			hit[n++] = r->served[i].first_ns;
	h = median(hit, n);
	free(hit);
	if (!result__add_series(doc, "baseline.fresh_restore_to_first_run",
				"ns", RESULT_LOWER,
				json_pack("{s:s}", "restore", "fresh VM"),
				r->fresh, o->baseline) ||
	    !result__add_series(doc, "baseline.shell_restore_to_first_run",
				"ns", RESULT_LOWER,
				json_pack("{s:s}", "restore", "into a shell"),
				r->shell, o->baseline))
		ret = -ENOMEM;
	if (ret == 0 && json_object_set_new(doc, "ratios", json_pack(
			"{s:o, s:o}", "hit_first_run_vs_fresh_restore",
			n && f > 0 ? json_real(h / f) : json_null(),
			"fresh_restore_vs_shell_restore",
			sh > 0 ? json_real(f / sh) : json_null())) < 0)
		ret = -ENOMEM;
	return ret;
}

/* The refills' making times, raw (what `tune pool` resamples), taken
 * with the final counters. */
static int add_make_times(json_t *doc, const struct run *r)
{
	return result__add_series(doc, "refill.make", "ns", RESULT_LOWER,
				  json_pack("{s:s}", "what", "one VM made by "
					    "a refill thread"),
				  r->make_ns, r->nmake) ? 0 : -ENOMEM;
}

static json_t *memory_json(const struct memstat *before,
			   const struct memstat *after, unsigned int held,
			   const struct pool_cli *pc)
{
	double k = held ? 1.0 / held : 0;
	long long rss = (long long)after->rss_kib - (long long)before->rss_kib;
	long long pss = (long long)after->pss_kib - (long long)before->pss_kib;
	long long uss = (long long)after->uss_kib - (long long)before->uss_kib;
	long long grss = (long long)after->guest_rss_kib -
			 (long long)before->guest_rss_kib;

	/* guest mappings are found by name, which only kernels built with
	 * CONFIG_ANON_VMA_NAME (5.17+) give anonymous memory: elsewhere
	 * only the totals are known */
	bool named = after->guest_rss_kib > 0;

	return json_pack("{s:I, s:f, s:f, s:f, s:o, s:o, s:I}", "held",
			 (json_int_t)held, "rss_kib_per_vm", rss * k,
			 "pss_kib_per_vm", pss * k, "uss_kib_per_vm", uss * k,
			 "guest_rss_kib_per_vm",
			 named ? json_real(grss * k) : json_null(),
			 "beyond_guest_rss_kib_per_vm",
			 named ? json_real((rss - grss) * k) : json_null(),
			 "guest_mem_kib",
			 (json_int_t)(pc->cfg.source == POOL_FROM_PROBE
					      ? pc->cfg.mem_size / 1024
					      : 0));
}

static json_t *occupancy_json(const struct run *r)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < r->nticks; i++) {
		const struct tick *t = &r->ticks[i];

		if (json_array_append_new(a, json_pack(
			    "[f, I, I, I, I]", t->t, (json_int_t)t->held,
			    (json_int_t)t->making, (json_int_t)t->target,
			    (json_int_t)t->arrived)) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *config_json(const struct pb_opts *o, const struct arrivals *a)
{
	json_t *c = pool_cli__config_json(&o->pc);

	if (c && json_object_update_new(c, json_pack(
			 "{s:s, s:s, s:f, s:f, s:I, s:I, s:I}", "arrivals",
			 o->arrivals_text, "arrivals_desc", a->desc,
			 "duration_s", o->duration_s, "time_scale",
			 o->time_scale, "seed", (json_int_t)o->seed,
			 "concurrency", (json_int_t)o->concurrency, "count",
			 (json_int_t)a->n)) < 0) {
		json_decref(c);
		return NULL;
	}
	return c;
}

static json_t *document(const struct pb_opts *o, const struct run *r,
			const struct pool_stats *st, const struct memstat *m0,
			const struct memstat *m1, unsigned int held_full,
			double wall_s)
{
	json_t *doc = result__new("pool", config_json(o, r->arr));
	uint64_t served = st->hits + st->misses + st->waits;
	int ret = 0;

	if (!doc)
		return NULL;
	for (int first = 1; first >= 0 && ret == 0; first--)
		for (int hit = -1; hit <= 1 && ret == 0; hit++)
			ret = add_latency(doc, r, first ? "arrival_to_first_run"
							: "arrival_to_done",
					  first, hit);
	if (ret == 0 && r->fresh)
		ret = add_baselines(doc, o, r);
	if (ret == 0)
		ret = add_make_times(doc, r);
	if (ret == 0 && json_object_set_new(doc, "pool", json_pack(
			"{s:o*, s:f, s:I, s:f, s:f, s:f, s:o*, s:o*}", "stats",
			pool_serve__stats_json(st), "hit_ratio",
			served ? (double)st->hits / (double)served : 0.0,
			"failed", (json_int_t)r->failed, "wall_s", wall_s,
			"offered_rate", arrivals__mean_rate(r->arr),
			"refill_vms_per_s",
			st->make_s > 0 ? o->pc.cfg.workers / st->make_s : 0.0,
			"memory", memory_json(m0, m1, held_full, &o->pc),
			"occupancy", occupancy_json(r))) < 0)
		ret = -ENOMEM;
	if (ret == 0 && r->failed)
		result__warn(doc, "%" PRIu64 " requests failed; the first: %s",
			     r->failed, r->first_error);
	if (ret < 0) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

static void report(FILE *out, const json_t *doc)
{
	const json_t *pool = json_object_get(doc, "pool");
	const json_t *st = json_object_get(pool, "stats");
	const json_t *mem = json_object_get(pool, "memory");
	const json_t *cfg = json_object_get(doc, "config");
	const json_t *series = json_object_get(doc, "series");
	char a[64], b[64];
	size_t i;
	json_t *s;

	fprintf(out, "# coldstart pool benchmark\n\n%s against a pool of %s "
		"VMs (%s, %s policy, size %" JSON_INTEGER_FORMAT ", %"
		JSON_INTEGER_FORMAT " refill thread(s), on empty: %s).\n\n",
		json_string_value(json_object_get(cfg, "arrivals_desc")),
		json_string_value(json_object_get(cfg, "hold")),
		json_string_value(json_object_get(cfg, "source")),
		json_string_value(json_object_get(cfg, "policy")),
		json_integer_value(json_object_get(cfg, "size")),
		json_integer_value(json_object_get(cfg, "workers")),
		json_string_value(json_object_get(cfg, "on_empty")));
	fprintf(out, "- hits %.1f %% (%" JSON_INTEGER_FORMAT " hits, %"
		JSON_INTEGER_FORMAT " misses, %" JSON_INTEGER_FORMAT
		" waited; %" JSON_INTEGER_FORMAT " failed)\n",
		100 * json_number_value(json_object_get(pool, "hit_ratio")),
		json_integer_value(json_object_get(st, "hits")),
		json_integer_value(json_object_get(st, "misses")),
		json_integer_value(json_object_get(st, "waits")),
		json_integer_value(json_object_get(pool, "failed")));
	json_array_foreach(series, i, s) {
		const char *name = json_string_value(json_object_get(s, "name"));
		double p50 = result__stat(s, "p50");

		if (!json_is_object(json_object_get(s, "summary")))
			continue;
		result__value_text(a, sizeof(a), "ns", p50, p50);
		result__value_text(b, sizeof(b), "ns", result__stat(s, "p99"),
				   p50);
		fprintf(out, "- %s: median %s, p99 %s (n %" JSON_INTEGER_FORMAT
			")\n", name, a, b,
			json_integer_value(json_object_get(
				json_object_get(s, "summary"), "n")));
	}
	fprintf(out, "- offered %.1f requests/s; refill capacity %.1f VMs/s "
		"(%.3f ms to make one)\n",
		json_number_value(json_object_get(pool, "offered_rate")),
		json_number_value(json_object_get(pool, "refill_vms_per_s")),
		1e3 * json_number_value(json_object_get(st, "make_s")));
	fprintf(out, "- idle VM-seconds %.2f, refill CPU %.3f s, VMs made by "
		"refills %" JSON_INTEGER_FORMAT ", by requests %"
		JSON_INTEGER_FORMAT "\n",
		json_number_value(json_object_get(st, "idle_vm_s")),
		json_number_value(json_object_get(st, "refill_cpu_s")),
		json_integer_value(json_object_get(st, "made")),
		json_integer_value(json_object_get(st, "made_on_demand")));
	fprintf(out, "- memory per VM held (%" JSON_INTEGER_FORMAT " held): "
		"RSS %.0f KiB, PSS %.0f KiB, USS %.0f KiB",
		json_integer_value(json_object_get(mem, "held")),
		json_number_value(json_object_get(mem, "rss_kib_per_vm")),
		json_number_value(json_object_get(mem, "pss_kib_per_vm")),
		json_number_value(json_object_get(mem, "uss_kib_per_vm")));
	if (json_is_number(json_object_get(mem, "beyond_guest_rss_kib_per_vm")))
		fprintf(out, "; beyond its guest memory: RSS %.0f KiB",
			json_number_value(json_object_get(mem,
				"beyond_guest_rss_kib_per_vm")));
	fputs("\n", out);
	if (json_object_get(doc, "ratios")) {
		const json_t *ra = json_object_get(doc, "ratios");

		fprintf(out, "- a hit's arrival -> first instruction is %.2fx a "
			"fresh restore's restore -> first instruction; a fresh "
			"restore takes %.2fx one into a shell (medians, "
			"this run)\n",
			json_number_value(json_object_get(ra,
				"hit_first_run_vs_fresh_restore")),
			json_number_value(json_object_get(ra,
				"fresh_restore_vs_shell_restore")));
	}
	fputs("\n## Series\n\n", out);
	result__md_series(out, doc);
	result__print_skipped(out, doc, true);
	result__md_warnings(out, doc);
	fputs("\nRaw samples, occupancy over time ([t_s, held, making, "
	      "target, arrived]) and host metadata: pool.json.\n", out);
}

static int bench(struct pb_opts *o)
{
	struct arrivals arr = { 0 };
	struct memstat m0, m1;
	struct pool_stats st;
	struct kvm_host kvm;
	struct run r = { .o = o };
	pthread_t *threads = NULL;
	unsigned int nthreads = 0, held_full = 0;
	uint64_t t0;
	json_t *doc;
	int ret;

	ret = arrivals__make(&o->spec, o->duration_s, o->time_scale, o->seed,
			     &arr);
	if (ret < 0)
		return ret;
	ret = kvm__open(&kvm, o->pc.kvm_path);
	if (ret < 0) {
		arrivals__free(&arr);
		return ret;
	}
	o->pc.cfg.kvm = &kvm;
	r.arr = &arr;
	r.served = calloc(arr.n, sizeof(*r.served));
	r.ticks = calloc(MAX_SAMPLES, sizeof(*r.ticks));
	threads = calloc(o->concurrency, sizeof(*threads));
	pthread_mutex_init(&r.lock, NULL);
	pthread_cond_init(&r.cond, NULL);
	if (!r.served || !r.ticks || !threads)
		ret = err__set(ENOMEM, "allocating %zu requests", arr.n);
	if (ret == 0 && o->baseline &&
	    o->pc.cfg.source == POOL_FROM_SNAPSHOT) {
		r.fresh = calloc(o->baseline, sizeof(double));
		r.shell = calloc(o->baseline, sizeof(double));
		ret = r.fresh && r.shell ? 0 : err__set(ENOMEM, "allocating "
							"samples");
		if (ret == 0) {
			fprintf(stderr, "coldstart bench pool: %" PRIu64
				" baseline restores into fresh VMs and shells\n",
				o->baseline);
			ret = baselines(o, &kvm, r.fresh, r.shell);
		}
	}
	if (ret == 0)
		ret = memory_now(&m0);
	if (ret == 0)
		ret = pool__start(&o->pc.cfg, &r.pool);
	if (ret == 0) {
		fprintf(stderr, "coldstart bench pool: filling the pool (%u "
			"VMs)\n", o->pc.cfg.size);
		ret = pool__wait_filled(r.pool, 120000000000ull);
	}
	if (ret == 0) {
		pool__stats(r.pool, &st);
		held_full = st.held;
		ret = memory_now(&m1);
	}
	for (; ret == 0 && nthreads < o->concurrency; nthreads++)
		ret = -pthread_create(&threads[nthreads], NULL, runner, &r);
	if (ret < 0 && ret != -ENOMEM)
		err__set(-ret, "starting request threads");
	t0 = timeline__now();
	if (ret == 0) {
		fprintf(stderr, "coldstart bench pool: %s\n", arr.desc);
		/* arrivals released on time, not 50 us late */
		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
		r.start_ns = timeline__now() + 1000000;
		dispatch(&r);
	} else {
		pthread_mutex_lock(&r.lock);
		r.stop = true;
		pthread_cond_broadcast(&r.cond);
		pthread_mutex_unlock(&r.lock);
	}
	for (unsigned int i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);
	if (r.pool) {
		/* one instant: the making times are as many as st.made */
		r.nmake = pool__make_times(r.pool, r.make_ns, MAKE_KEPT, &st);
		for (size_t i = 0; i < r.nmake; i++)
			r.make_ns[i] *= 1e9;
		sample(&r, timeline__now());
	}
	if (ret == 0 && pool_cli__stop)
		ret = err__set(EINTR, "interrupted");
	if (ret == 0) {
		doc = document(o, &r, &st, &m0, &m1, held_full,
			       (double)(timeline__now() - t0) / 1e9);
		ret = doc ? 0 : -ENOMEM;
		if (ret == 0)
			ret = result__emit(doc, o->json, o->out_dir, report);
		json_decref(doc);
		if (ret == 0 && r.failed)
			ret = err__set(EIO, "%" PRIu64 " of %zu requests "
				       "failed; the first: %s", r.failed, arr.n,
				       r.first_error);
	}
	pool__drain(r.pool);
	kvm__close(&kvm);
	free(threads);
	free(r.served);
	free(r.ticks);
	free(r.fresh);
	free(r.shell);
	arrivals__free(&arr);
	return ret;
}

int cmd_bench_pool(int argc, char **argv)
{
	struct pb_opts o;
	int ret = parse(argc, argv, &o);

	if (ret)
		return cli__parsed(ret, "bench pool", usage);
	/* in-process: the driver's own thread stays unfiltered, the VMs'
	 * threads (refill, vCPU, uffd) load theirs; results say so */
	ret = cli__seccomp_start("bench pool", o.pc.seccomp, false);
	if (ret)
		return ret;
	pool_cli__catch_signals();
	ret = bench(&o);
	if (ret == -EINTR)
		return cli__error(130, "bench pool: pool_cli__stop");
	if (ret < 0)
		return cli__error(ret == -EINVAL || ret == -ENOENT ||
					  ret == -E2BIG
				  ? CLI_USAGE : cli__exit_for(ret),
				  "bench pool: %s", err__last());
	return CLI_OK;
}
