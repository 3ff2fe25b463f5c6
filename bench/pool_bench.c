/* The pool benchmark: an open-loop load generator replaying an arrival
 * process against a real warm pool in this process. Requests arrive on
 * schedule whether or not earlier ones finished; each is timed from its
 * scheduled arrival (queueing included) to its guest's first instruction
 * and to DONE, as a hit or a miss. Over the run: what the pool held, made
 * and spent (idle VM-seconds, refill CPU), and its memory per VM held.
 * The result document and its report: pool_bench_doc.c. */
#include "pool_bench.h"
#include "pool_bench_int.h"

#include "args.h"
#include "arrivals.h"
#include "cli.h"
#include "err.h"
#include "kvm.h"
#include "memstat.h"
#include "mem.h"
#include "pool.h"
#include "pool_config.h"
#include "pool_load.h"
#include "run_opts.h"
#include "result.h"
#include "result_new.h"
#include "run_linux.h"
#include "snapshot.h"
#include "vm.h"
#include "timeline.h"

#include <errno.h>
#include <stddef.h>
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

/* ---- the options ---- */

static int set_arrivals(void *opts, const char *arg)
{
	((struct pb_opts *)opts)->arrivals_text = arg;
	return 0;
}

static int set_duration(void *opts, const char *arg)
{
	uint64_t ns;
	int ret = args__duration("--duration", arg, &ns);

	((struct pb_opts *)opts)->duration_s = (double)ns / 1e9;
	return ret;
}

static int set_time_scale(void *opts, const char *arg)
{
	struct pb_opts *o = opts;
	char *end;

	errno = 0;
	o->time_scale = strtod(arg, &end);
	if (errno || end == arg || *end ||
	    !(o->time_scale >= ARRIVALS_SCALE_MIN &&
	      o->time_scale <= ARRIVALS_SCALE_MAX))
		return err__set(EINVAL, "--time-scale: '%s' is not a number "
				"from %g to %g", arg, ARRIVALS_SCALE_MIN,
				ARRIVALS_SCALE_MAX);
	return 0;
}

static int set_seed(void *opts, const char *arg)
{
	return args__u64("--seed", arg, 0, UINT64_MAX,
			 &((struct pb_opts *)opts)->seed);
}

static int set_concurrency(void *opts, const char *arg)
{
	return args__u64("--concurrency", arg, 1, MAX_RUNNERS,
			 &((struct pb_opts *)opts)->concurrency);
}

static int set_sample_every(void *opts, const char *arg)
{
	struct pb_opts *o = opts;
	int ret = args__duration("--sample-every", arg, &o->sample_ns);

	if (ret == 0 && o->sample_ns < 1000000)
		ret = err__set(EINVAL, "--sample-every: at least 1ms");
	return ret;
}

static int set_baseline(void *opts, const char *arg)
{
	return args__u64("--baseline", arg, 0, 100000,
			 &((struct pb_opts *)opts)->baseline);
}

/* Its own; then the pool's (pool_config.c). */
static const struct opt table[] = {
	{ "arrivals", 0, "SPEC", false, "poisson:RATE (per second), "
	  "mmpp:R0,R1,D0,D1 (bursty:\ntwo rates, mean dwell times: 5, 500ms, "
	  "2m), or trace:FILE\n(CSV with a timestamp column, Azure Functions "
	  "2019\nper-minute counts, Azure Functions 2021 invocations;\n"
	  "',format=csv|azure2019|azure2021', ',column=NAME')\n(default "
	  "poisson:50)", set_arrivals, NULL },
	{ "duration", 0, "DUR", false, "the window replayed (default 10s; "
	  "traces: 0 = all)", set_duration, NULL },
	{ "time-scale", 0, "F", false, "traces: multiply trace time by F "
	  "(0.1: 10x faster;\n1e-6 to 1e6)", set_time_scale, NULL },
	{ "seed", 0, "N", false, "every random choice (default 1)", set_seed,
	  NULL },
	{ "concurrency", 0, "N", false, "requests in flight at most (default "
	  "64); later ones\nqueue, and their wait counts", set_concurrency,
	  NULL },
	{ "sample-every", 0, "DUR", false, "occupancy sampling period "
	  "(default 100ms)", set_sample_every, NULL },
	{ "baseline", 0, "N", false, "with --snapshot: first, N restores of "
	  "the same snapshot\ninto a fresh VM and N into a shell made before "
	  "(after\none uncounted of each), timed to the first instruction\n"
	  "(default 20; 0: none)", set_baseline, NULL },
	OPT_END,
};

static void init(void *opts)
{
	struct pb_opts *o = opts;

	pool_config__defaults(&o->pc);
	o->arrivals_text = "poisson:50";
	o->duration_s = 10;
	o->time_scale = 1;
	o->seed = 1;
	o->concurrency = 64;
	o->sample_ns = 100000000ull;
	o->baseline = 20;
}

/* --config's files, before the options: they override them. */
static int prepare(void *opts, int argc, char **argv)
{
	return pool_config__load_args(&((struct pb_opts *)opts)->pc, argc,
				      argv);
}

static int check(void *opts)
{
	struct pb_opts *o = opts;
	int ret = arrivals__parse_spec(o->arrivals_text, &o->spec);

	if (ret == 0 && o->spec.kind != ARRIVALS_TRACE && !o->duration_s)
		ret = err__set(EINVAL, "--duration: 0 keeps a whole trace; "
			       "%s needs a length", o->arrivals_text);
	if (ret == 0)
		ret = pool_config__finish(&o->pc);
	return ret;
}

static void release(void *opts)
{
	pool_config__release(&((struct pb_opts *)opts)->pc);
}

/* ---- the run ---- */

static void sleep_until(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000ull),
			       (long)(t % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR && !pool_load__stop)
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
		pool_load__serve(&r->load, i, due_ns(r, i));
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

	for (size_t i = 0; i < r->arr->n && !pool_load__stop;) {
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
 * shell made beforehand, run as a request: restore start -> first
 * KVM_RUN. */
static int baseline_once(const struct pb_opts *o, struct kvm_host *kvm,
			 struct snapshot *snap, bool shell, double *ns)
{
	int ret = pool__restore_once(kvm, snap, o->pc.strategy, shell,
				     o->pc.timeout_ns, ns);
	char why[512];

	if (ret < 0) {
		snprintf(why, sizeof(why), "%s", err__last());
		ret = err__set(-ret, "a baseline restore failed: %s", why);
	}
	return ret;
}

/* --baseline N restores into fresh VMs and into shells, alternating. */
static int baselines(const struct pb_opts *o, struct kvm_host *kvm,
		     double *fresh, double *shell)
{
	struct snapshot snap;
	double warm;
	int ret = snapshot__open(&snap, o->pc.snapshot_dir);

	if (ret < 0)
		return ret;
	/* one of each uncounted: the first restores pay for cold caches */
	ret = baseline_once(o, kvm, &snap, false, &warm);
	if (ret == 0)
		ret = baseline_once(o, kvm, &snap, true, &warm);
	for (uint64_t i = 0; ret == 0 && i < o->baseline && !pool_load__stop;
	     i++) {
		ret = baseline_once(o, kvm, &snap, false, &fresh[i]);
		if (ret == 0)
			ret = baseline_once(o, kvm, &snap, true, &shell[i]);
	}
	snapshot__close(&snap);
	return ret;
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
	o->pc.kvm = &kvm;
	r.arr = &arr;
	ret = pool_load__init(&r.load, NULL, arr.n);
	r.ticks = calloc(MAX_SAMPLES, sizeof(*r.ticks));
	threads = calloc(o->concurrency, sizeof(*threads));
	pthread_mutex_init(&r.lock, NULL);
	pthread_cond_init(&r.cond, NULL);
	if (ret == 0 && (!r.ticks || !threads))
		ret = err__set(ENOMEM, "allocating %zu requests", arr.n);
	/* a restore to its command's first output is `bench restore`'s */
	if (ret == 0 && o->baseline && o->pc.snap_agent)
		fprintf(stderr, "coldstart bench pool: no baseline restores "
			"for a guest with an agent (bench restore --snapshot "
			"times them to the first output)\n");
	else if (ret == 0 && o->baseline &&
		 o->pc.source == POOL_FROM_SNAPSHOT) {
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
		ret = pool__start(&o->pc, &r.pool);
	r.load.pool = r.pool;
	if (ret == 0) {
		fprintf(stderr, "coldstart bench pool: filling the pool (%u "
			"VMs)\n", o->pc.size);
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
	if (ret == 0 && pool_load__stop)
		ret = err__set(EINTR, "interrupted");
	if (ret == 0) {
		doc = pool_bench__document(
			o, &r, &st, &m0, &m1, held_full,
			(double)(timeline__now() - t0) / 1e9);
		ret = doc ? 0 : -ENOMEM;
		if (ret == 0)
			ret = result__emit(doc, o->c.json, o->c.out_dir,
					   pool_bench__report);
		json_decref(doc);
		if (ret == 0 && r.load.failed)
			ret = err__set(EIO, "%" PRIu64 " of %zu requests "
				       "failed; the first: %s", r.load.failed, arr.n,
				       r.load.first_error);
	}
	pool__drain(r.pool);
	kvm__close(&kvm);
	free(threads);
	pool_load__free(&r.load);
	free(r.ticks);
	free(r.fresh);
	free(r.shell);
	arrivals__free(&arr);
	return ret;
}

int pool_bench__prepare_guest(struct pool_config *c, const char *cmd)
{
	int ret;

	if (c->source == POOL_FROM_LINUX) {
		if (!c->cmdline)
			c->cmdline = LINUX_DEFAULT_CMDLINE;
		if (!c->linux_mem)
			c->linux_mem = LINUX_DEFAULT_MEM;
	}
	/* a kernel that is not one is the user's error, on any host */
	if (pool_config__open_guest(c) < 0)
		ret = cli__error(CLI_FAIL, "%s: %s", cmd, err__last());
	else if (!pool_config__pvm_refused(c))
		return CLI_OK;
	else if (c->source == POOL_FROM_SNAPSHOT)
		ret = cli__error(CLI_SKIP, "%s of %s (a Linux snapshot): %s",
				 cmd, c->snapshot_dir,
				 run_linux__pvm_refusal());
	else
		ret = cli__error(CLI_SKIP, "%s --kernel: %s", cmd,
				 run_linux__pvm_refusal());
	pool_config__release(c);
	return ret;
}

/* The parsed options run: an exit code, its message printed (the
 * config is released by the caller, through the descriptor). */
static int run(void *opts)
{
	struct pb_opts *o = opts;
	int ret = pool_bench__prepare_guest(&o->pc, "bench pool");

	if (ret != CLI_OK)
		return ret;
	/* in-process: the driver's own thread stays unfiltered, the VMs'
	 * threads (refill, vCPU, uffd) load theirs; results say so */
	ret = run_opts__seccomp_start("bench pool", o->pc.seccomp, false);
	if (ret)
		return ret;
	pool_load__catch_signals();
	ret = bench(o);
	if (ret == -EINTR)
		return cli__error(130, "bench pool: %s", err__last());
	if (ret < 0)
		return cli__error(ret == -EINVAL || ret == -ENOENT ||
					  ret == -E2BIG
				  ? CLI_USAGE : cli__exit_for(ret),
				  "bench pool: %s", err__last());
	return CLI_OK;
}

const struct bench_driver pool_driver = {
	.name = "pool",
	.summary = "arrivals replayed open loop against a warm pool: hits, "
		   "latency, idle VMs",
	.usage = "Usage: coldstart bench pool [OPTIONS]\n"
		 "Replays an arrival process against a warm pool on this "
		 "host, open loop\n(arrivals do not wait for completions): "
		 "per request, arrival -> the\nguest's first instruction and "
		 "-> DONE (queueing included), hit or miss;\nover time, the "
		 "VMs held, idle VM-seconds, refill CPU and memory per VM.\n",
	.epilog = "Exit: 0, 1 a request failed or the run did, 2 usage, 77 "
		  "no usable KVM.\n",
	.common = BENCH_JSON | BENCH_OUT,
	.opts = table,
	.more_opts = pool_config__table,
	.more_at = offsetof(struct pb_opts, pc),
	.size = sizeof(struct pb_opts),
	.common_at = offsetof(struct pb_opts, c),
	.init = init,
	.prepare = prepare,
	.check = check,
	.run = run,
	.release = release,
	.suite = { .quick = "--arrivals poisson:50 --duration 10s --size 4",
		   .smoke = "--arrivals poisson:20 --duration 1s --size 2",
		   .linux_full = "--arrivals poisson:5 --duration 30s --size 4",
		   .linux_quick = "--arrivals poisson:2 --duration 10s "
				  "--size 2 --baseline 5",
		   .linux_smoke = "--arrivals poisson:2 --duration 2s "
				  "--size 1 --baseline 2" },
};
