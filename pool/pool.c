/* The warm pool (pool.h): a FIFO of VMs held, refill threads that keep it
 * at its target, and requests that take from it. One mutex guards the
 * pool's counters; VMs are made, run and destroyed outside it. Making
 * and running one VM: pool_vm.c; the rate and the target: pool_target.c. */
#include "pool.h"
#include "pool_int.h"

#include "blk_overlay.h"
#include "err.h"
#include "guest_devices.h"
#include "jail.h"
#include "kvm.h"
#include "mem_source.h"
#include "policy.h"
#include "seccomp.h"
#include "snapshot.h"
#include "timeline.h"
#include "vm.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Weight of the newest making time in its moving average. */
#define MAKE_AVG_WEIGHT 0.2
/* How often refill threads look at a following target between events. */
#define RETARGET_NS (100 * 1000000ull)
/* Failures in a row after which making backs off and filling gives up. */
#define FAILURES_TO_GIVE_UP 3

const char *pool__hold_name(enum pool_hold h)
{
	return h == POOL_HOLD_SHELL ? "shell" : "warm";
}

const char *pool__exec(const struct pool *p)
{
	return p->agent ? p->cfg.exec : NULL;
}

static int check_config(const struct pool_config *c)
{
	int ret;

	if (!c->kvm)
		return err__set(EINVAL, "pool: no KVM handle");
	if (c->workers < 1 || c->workers > 64)
		return err__set(EINVAL, "pool: %u refill workers (1 to 64)",
				c->workers);
	if (c->max < 1 || c->max > 4096)
		return err__set(EINVAL, "pool: maximum %u (1 to 4096)", c->max);
	if (c->min > c->max)
		return err__set(EINVAL, "pool: minimum %u above maximum %u",
				c->min, c->max);
	if (c->size < c->min || c->size > c->max)
		return err__set(EINVAL, "pool: size %u outside [%u, %u]",
				c->size, c->min, c->max);
	ret = pool_config__check_policy(c);
	if (ret < 0)
		return ret;
	if (!c->timeout_ns)
		return err__set(EINVAL, "pool: no request timeout");
	if (c->abort_every && c->source != POOL_FROM_PROBE)
		return err__set(EINVAL, "pool: injected aborts need the probe "
				"guest booted fresh");
	if (c->exec && c->source != POOL_FROM_SNAPSHOT)
		return err__set(EINVAL, "pool: a command (exec) needs a "
				"snapshot of a guest with an agent");
	if (c->exec && strlen(c->exec) > POOL_EXEC_MAX)
		return err__set(EINVAL, "pool: a command of %zu bytes (at "
				"most %u)", strlen(c->exec), POOL_EXEC_MAX);
	if (c->source == POOL_FROM_SNAPSHOT) {
		if (!c->snapshot_dir || !c->strategy)
			return err__set(EINVAL, "pool: a snapshot source needs "
					"a directory and a restore strategy");
		return 0;
	}
	if (c->hold == POOL_HOLD_SHELL)
		return err__set(EINVAL, "pool: shells hold snapshots only (a "
				"guest booted fresh is held warm)");
	if (c->source == POOL_FROM_LINUX) {
		if (!c->linux_boot)
			return err__set(EINVAL, "pool: a Linux source needs "
					"its boot plan");
		return 0;
	}
	return probe__validate(&c->probe, c->mem_size, c->nr_vcpus);
}

/* ---- the pool's state, under p->lock ---- */

static void account(struct pool *p, uint64_t now)
{
	if (now > p->idle_since)
		p->idle_ns += (double)p->nheld * (double)(now - p->idle_since);
	p->idle_since = now;
}

static void push(struct pool *p, struct held *h)
{
	account(p, timeline__now());
	p->held[p->nheld++] = h;
}

/* The oldest VM held, or NULL. */
static struct held *take_oldest(struct pool *p)
{
	struct held *h;

	if (!p->nheld)
		return NULL;
	account(p, timeline__now());
	h = p->held[0];
	memmove(p->held, p->held + 1, --p->nheld * sizeof(*p->held));
	return h;
}

static struct held *take_newest(struct pool *p)
{
	if (!p->nheld)
		return NULL;
	account(p, timeline__now());
	return p->held[--p->nheld];
}

/* The moving average of one VM's making, refills' and requests' alike. */
static void note_make_time(struct pool *p, double took)
{
	p->st.make_s = p->st.make_s ? (1 - MAKE_AVG_WEIGHT) * p->st.make_s +
					      MAKE_AVG_WEIGHT * took
				    : took;
}

static void note_error(struct pool *p)
{
	snprintf(p->st.last_error, sizeof(p->st.last_error), "%s", err__last());
}

/* ---- refill threads ---- */

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / NS;
}

static void wait_ns(pthread_cond_t *c, pthread_mutex_t *m, uint64_t ns)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(ns / 1000000000ull);
	ts.tv_nsec += (long)(ns % 1000000000ull);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(c, m, &ts);
}

static void *refill(void *arg)
{
	struct worker *w = arg;
	struct pool *p = w->pool;

	/* a worker that cannot confine itself makes nothing */
	if (seccomp__install(SECCOMP_REFILL) < 0) {
		pthread_mutex_lock(&p->lock);
		snprintf(p->st.last_error, sizeof(p->st.last_error), "%s",
			 err__last());
		p->st.make_failures++;
		p->failures_in_row = FAILURES_TO_GIVE_UP;
		pthread_cond_broadcast(&p->ready);
		pthread_mutex_unlock(&p->lock);
		return NULL;
	}
	pthread_mutex_lock(&p->lock);
	while (!p->draining) {
		struct held *h;
		uint64_t t0;
		int64_t seq;
		double took;

		pool__retarget(p, timeline__now());
		if (p->nheld > p->target) {
			h = take_newest(p);
			p->st.reaped++;
			pthread_mutex_unlock(&p->lock);
			held__destroy(h);
			pthread_mutex_lock(&p->lock);
			continue;
		}
		if (p->nheld + p->making >= p->target) {
			if (p->cfg.policy != POOL_FIXED)
				wait_ns(&p->wake, &p->lock, RETARGET_NS);
			else
				pthread_cond_wait(&p->wake, &p->lock);
			continue;
		}
		p->making++;
		seq = (int64_t)p->seq++;
		pthread_mutex_unlock(&p->lock);

		t0 = timeline__now();
		h = pool__make(p, seq);
		took = (double)(timeline__now() - t0) / NS;

		pthread_mutex_lock(&p->lock);
		p->making--;
		w->cpu_s = thread_cpu_s();
		if (!h) {
			p->st.make_failures++;
			p->failures_in_row++;
			note_error(p);
			pthread_cond_broadcast(&p->ready);
			/* a host that cannot make VMs now: do not spin */
			if (p->failures_in_row >= FAILURES_TO_GIVE_UP)
				wait_ns(&p->wake, &p->lock, 200 * 1000000ull);
			continue;
		}
		p->failures_in_row = 0;
		p->st.made++;
		note_make_time(p, took);
		p->make_times[p->make_times_n++ % MAKE_TIMES_KEPT] = took;
		if (p->draining || p->nheld == p->cfg.max) {
			pthread_mutex_unlock(&p->lock);
			held__destroy(h);
			pthread_mutex_lock(&p->lock);
			continue;
		}
		push(p, h);
		/* waiting requests and wait_filled */
		pthread_cond_broadcast(&p->ready);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* ---- the interface ---- */

/* A snapshot's guest with drives or vsock: its images checked once. */
static int open_devices(struct pool *p)
{
	const struct snapshot *s = &p->snap;
	int ret;

	p->devices = s->virtio.nr_drives || s->virtio.vsock;
	p->agent = guestdev__has_agent(s);
	if (!p->devices)
		return p->cfg.exec ? err__set(EINVAL, "pool: a command (exec) "
					      "needs a guest with an agent")
				   : 0;
	ret = guestdev__check(s);
	/* refill workers may not create named files: the overlays must
	 * be O_TMPFILE ones (before any worker dies of SIGSYS trying);
	 * jailed, they are in memory (memfd) and TMPDIR plays no part */
	for (uint32_t i = 0; ret == 0 && !jail__pending() &&
			     i < s->virtio.nr_drives; i++)
		if (s->virtio.drive[i].mode == SNAP_DRIVE_OVERLAY)
			ret = blk_overlay__check_unnamed();
	if (ret < 0 || !p->agent)
		return ret;
	if (!p->cfg.exec)
		return err__set(EINVAL, "pool: the snapshot's guest runs "
				"commands through its agent: no command "
				"(exec) given");
	p->agent_port = guestdev__agent_port(s);
	return 0;
}

static void free_pool(struct pool *p)
{
	for (unsigned int i = 0; i < p->nheld; i++)
		held__destroy(p->held[i]);
	if (p->snap_open)
		snapshot__close(&p->snap);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->wake);
	pthread_cond_destroy(&p->ready);
	pthread_cond_destroy(&p->idle);
	free(p->held);
	free(p->workers);
	free(p);
}

int pool__start(const struct pool_config *cfg, struct pool **out)
{
	struct pool *p;
	int ret = check_config(cfg);

	if (ret < 0)
		return ret;
	p = calloc(1, sizeof(*p));
	if (!p)
		return err__set(ENOMEM, "allocating a pool");
	p->cfg = *cfg;
	p->target = cfg->size;
	policy__start(cfg->policy, &cfg->params, &p->view);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	pthread_cond_init(&p->ready, NULL);
	pthread_cond_init(&p->idle, NULL);
	p->held = calloc(cfg->max, sizeof(*p->held));
	p->workers = calloc(cfg->workers, sizeof(*p->workers));
	if (!p->held || !p->workers) {
		free_pool(p);
		return err__set(ENOMEM, "allocating a pool of %u", cfg->max);
	}
	if (cfg->source == POOL_FROM_SNAPSHOT) {
		ret = snapshot__open(&p->snap, cfg->snapshot_dir);
		p->snap_open = ret == 0;
		if (ret < 0) {
			free_pool(p);
			return ret;
		}
		p->linux_guest = p->snap.cfg.guest != SNAP_GUEST_PROBE;
		p->expected = probe__expected_checksum(&p->snap.params,
						       p->snap.cfg.nr_vcpus);
		ret = open_devices(p);
		if (ret < 0) {
			free_pool(p);
			return ret;
		}
	} else if (cfg->source == POOL_FROM_LINUX) {
		p->linux_guest = true;
	} else {
		p->expected = probe__expected_checksum(&cfg->probe,
						       cfg->nr_vcpus);
	}
	p->idle_since = timeline__now();
	/* what the THP strategies ask of /sys, read before a jail hides it
	 * (their refusal, where THP is off, comes with the first VM) */
	mem_source__thp_available();
	/* the snapshot is open: a jail comes before the refill workers,
	 * whose restores find its drives' files kept open from before */
	ret = p->devices && jail__pending() ? guestdev__keep_files(&p->snap)
					    : 0;
	if (ret == 0)
		ret = jail__enter_pending();
	if (ret < 0) {
		free_pool(p);
		return ret;
	}
	for (unsigned int i = 0; i < cfg->workers; i++) {
		p->workers[i].pool = p;
		ret = -pthread_create(&p->workers[i].thread, NULL, refill,
				      &p->workers[i]);
		if (ret < 0) {
			err__set(-ret, "starting refill thread %u", i);
			pool__drain(p);
			return ret;
		}
		p->workers[i].started = true;
	}
	*out = p;
	return 0;
}

int pool__wait_filled(struct pool *p, uint64_t timeout_ns)
{
	uint64_t end = timeline__now() + timeout_ns;
	int ret = 0;

	pthread_mutex_lock(&p->lock);
	while (p->nheld < p->target) {
		uint64_t now = timeline__now();

		if (p->failures_in_row >= FAILURES_TO_GIVE_UP) {
			ret = err__set(EIO, "the pool could not make a VM: %s",
				       p->st.last_error);
			break;
		}
		if (now >= end) {
			ret = err__set(ETIMEDOUT, "the pool held %u of %u VMs "
				       "after %.1f s", p->nheld, p->target,
				       (double)timeout_ns / NS);
			break;
		}
		wait_ns(&p->ready, &p->lock,
			end - now < RETARGET_NS ? end - now : RETARGET_NS);
	}
	pthread_mutex_unlock(&p->lock);
	return ret;
}

/* The request's VM into *out: one held, one refilled while it waited, or
 * NULL for a miss (the request makes its own). -ECANCELED when draining. */
static int acquire(struct pool *p, struct pool_request *req, struct held **out)
{
	struct held *h;

	pthread_mutex_lock(&p->lock);
	if (p->draining) {
		pthread_mutex_unlock(&p->lock);
		return err__set(ECANCELED, "the pool is draining");
	}
	/* counted from here, waiting included: drain waits for it */
	p->serving++;
	p->st.requests++;
	pool__note_arrival(p, req->arrival_ns);
	pool__retarget(p, timeline__now());
	h = take_oldest(p);
	if (!h && p->cfg.on_empty == POOL_WAIT) {
		uint64_t end = timeline__now() + p->cfg.timeout_ns;

		req->waited = true;
		/* a refill is coming only while the target is above zero
		 * and making has not failed in a row; at most timeout_ns */
		while (!(h = take_oldest(p)) && !p->draining &&
		       (p->target || p->making) &&
		       p->failures_in_row < FAILURES_TO_GIVE_UP &&
		       timeline__now() < end) {
			pthread_cond_broadcast(&p->wake);
			wait_ns(&p->ready, &p->lock, RETARGET_NS);
		}
	}
	if (h && req->waited) {
		p->st.waits++;
	} else if (h) {
		req->hit = true;
		p->st.hits++;
	} else if (!p->draining) {
		/* nothing held, or no refill in time: make its own */
		req->waited = false;
		p->st.misses++;
	} else {
		if (--p->serving == 0)
			pthread_cond_broadcast(&p->idle);
		pthread_mutex_unlock(&p->lock);
		return err__set(ECANCELED, "the pool drained while the "
				"request waited");
	}
	/* one fewer held: a refill is due, but woken only once this
	 * request's guest runs (refill_due), so that a refill thread woken
	 * onto this CPU does not delay it; a miss wakes them now */
	if (!h)
		pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	*out = h;
	return 0;
}

/* A request's end: the VMs it made for itself or failed to make or
 * run, its error, and one request fewer being served. */
static void count_served(struct pool *p, unsigned int made, double made_s,
			 unsigned int unmade, unsigned int failed,
			 const char *why)
{
	pthread_mutex_lock(&p->lock);
	if (made)
		note_make_time(p, made_s / made);
	p->st.made_on_demand += made;
	p->st.make_failures += unmade;
	p->st.guest_failures += failed;
	if (*why)
		snprintf(p->st.last_error, sizeof(p->st.last_error), "%s",
			 why);
	if (--p->serving == 0 && p->draining)
		pthread_cond_broadcast(&p->idle);
	pthread_mutex_unlock(&p->lock);
}

int pool__serve(struct pool *p, struct pool_request *req)
{
	uint64_t arrival = req->arrival_ns;
	const char *exec = req->exec;
	unsigned int made = 0, unmade = 0, failed = 0;
	char why[256] = "";
	struct held *h = NULL;
	double made_s = 0;
	int ret;

	*req = (struct pool_request){
		.arrival_ns = arrival ? arrival : timeline__now(),
		.exec = exec,
	};
	ret = acquire(p, req, &h);
	if (ret < 0)
		return ret;
	/* A VM that failed is destroyed, never handed out again; the
	 * request gets one more VM, made for it (also when making one
	 * failed). */
	for (int attempt = 0; attempt < 2; attempt++) {
		if (!h) {
			uint64_t t0 = timeline__now();

			h = pool__make(p, -1);
			made_s += (double)(timeline__now() - t0) / NS;
			if (!h) {
				snprintf(why, sizeof(why), "%s", err__last());
				/* a guest that failed to boot (the emulated
				 * host's L2 triple faults) gets one more go */
				unmade++;
				ret = -EIO;
				continue;
			}
			made++;
		}
		if (!req->acquired_ns)
			req->acquired_ns = timeline__now();
		ret = pool__run(p, h, req);
		held__destroy(h);
		h = NULL;
		if (ret == 0)
			break;
		snprintf(why, sizeof(why), "%s", err__last());
		failed++;
		req->failures++;
	}
	count_served(p, made, made_s, unmade, failed, why);
	if (ret < 0)
		err__set(-ret, "%s", why);
	return ret;
}

static void stats_locked(struct pool *p, struct pool_stats *out);

size_t pool__make_times(struct pool *p, double *out, size_t max,
			struct pool_stats *st)
{
	size_t n, first;

	pthread_mutex_lock(&p->lock);
	if (st)
		stats_locked(p, st);
	n = p->make_times_n < MAKE_TIMES_KEPT ? (size_t)p->make_times_n
					      : MAKE_TIMES_KEPT;
	if (n > max)
		n = max;
	first = (size_t)(p->make_times_n - n); /* the newest n, oldest first */
	for (size_t i = 0; i < n; i++)
		out[i] = p->make_times[(first + i) % MAKE_TIMES_KEPT];
	pthread_mutex_unlock(&p->lock);
	return n;
}

void pool__resize(struct pool *p, unsigned int target)
{
	pthread_mutex_lock(&p->lock);
	p->target = target < p->cfg.min ? p->cfg.min
		    : target > p->cfg.max ? p->cfg.max : target;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
}

static void stats_locked(struct pool *p, struct pool_stats *out)
{
	uint64_t now = timeline__now();

	account(p, now);
	*out = p->st;
	out->held = p->nheld;
	out->making = p->making;
	out->target = p->target;
	out->idle_vm_s = p->idle_ns / NS;
	out->rate = pool__rate_at(p, now);
	out->refill_cpu_s = 0;
	for (unsigned int i = 0; i < p->cfg.workers; i++)
		out->refill_cpu_s += p->workers[i].cpu_s;
}

void pool__stats(struct pool *p, struct pool_stats *out)
{
	pthread_mutex_lock(&p->lock);
	stats_locked(p, out);
	pthread_mutex_unlock(&p->lock);
}

void pool__drain(struct pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->draining = true;
	pthread_cond_broadcast(&p->wake);
	pthread_cond_broadcast(&p->ready);
	while (p->serving)
		pthread_cond_wait(&p->idle, &p->lock);
	pthread_mutex_unlock(&p->lock);
	for (unsigned int i = 0; i < p->cfg.workers; i++)
		if (p->workers[i].started)
			pthread_join(p->workers[i].thread, NULL);
	account(p, timeline__now());
	free_pool(p);
}
