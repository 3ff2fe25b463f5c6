/* KVM tests of the warm pool (pool.h): draining 50 held VMs leaves no fd,
 * thread or mapping behind, for fresh probe guests and restored
 * snapshots; requests from many threads are each served once with the
 * right checksum; a following target rises with the arrival rate and
 * falls back once arrivals stop. Exits 77 without a usable /dev/kvm. */
#include "err.h"
#include "kvm.h"
#include "mem.h"
#include "mem_restore.h"
#include "pool.h"
#include "snapshot.h"
#include "units.h"
#include "vm.h"
#include "procfs.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#define SECOND 1000000000ull

static struct kvm_host kvm;
static char dir[] = "/tmp/coldstart-pool-XXXXXX";
static char snap_dir[64];

static struct pool_config probe_config(unsigned int size)
{
	return (struct pool_config){
		.kvm = &kvm,
		.source = POOL_FROM_PROBE,
		.mem_size = 4 * MiB,
		.nr_vcpus = 1,
		.probe = { .init_bytes = 1 * MiB, .ws_bytes = 1 * MiB,
			   .seed = 1, .stride = 1 },
		.hold = POOL_HOLD_WARM,
		.size = size,
		.max = size > 8 ? size : 8,
		.workers = 2,
		.params = { .halflife_s = 10 },
		.timeout_ns = 10 * SECOND,
	};
}

static struct pool_config snapshot_config(unsigned int size)
{
	struct pool_config c = probe_config(size);

	c.source = POOL_FROM_SNAPSHOT;
	c.snapshot_dir = snap_dir;
	c.strategy = mem_restore__strategy("mmap");
	return c;
}

static void serve_ok(struct pool *p, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		struct pool_request r = { 0 };

		if (pool__serve(p, &r) < 0)
			fail_msg("request %u: %s", i, err__last());
		assert_true(r.first_run_ns >= r.arrival_ns);
		assert_true(r.done_ns > r.first_run_ns);
		assert_int_not_equal(r.checksum, 0);
	}
}

/* Fills a pool of 50, serves some, drains: the process's fds, threads,
 * vCPU mappings and guest mappings are back where they were. */
static void drain_leaves_nothing(struct pool_config cfg)
{
	unsigned int fds, tasks, vcpus;
	struct pool_stats st;
	struct pool *p;

	fds = procfs__count_entries("/proc/self/fd");
	tasks = procfs__count_entries("/proc/self/task");
	vcpus = procfs__count_maps("kvm-vcpu");
	if (pool__start(&cfg, &p) < 0)
		fail_msg("pool: %s", err__last());
	if (pool__wait_filled(p, 60 * SECOND) < 0)
		fail_msg("fill: %s", err__last());
	pool__stats(p, &st);
	assert_int_equal(st.held, 50);
	assert_true(procfs__count_maps("kvm-vcpu") >= vcpus + 50);
	serve_ok(p, 10);
	pool__drain(p);
	assert_int_equal(procfs__count_entries("/proc/self/fd"), fds);
	assert_int_equal(procfs__count_entries("/proc/self/task"), tasks);
	assert_int_equal(procfs__count_maps("kvm-vcpu"), vcpus);
}

static void test_drain_probe(void **state)
{
	(void)state;
	drain_leaves_nothing(probe_config(50));
}

static void test_drain_snapshot(void **state)
{
	(void)state;
	drain_leaves_nothing(snapshot_config(50));
}

struct client {
	struct pool *p;
	unsigned int n, ok;
};

static void *client(void *arg)
{
	struct client *c = arg;

	for (unsigned int i = 0; i < c->n; i++) {
		struct pool_request r = { 0 };

		c->ok += pool__serve(c->p, &r) == 0;
	}
	return NULL;
}

/* Four threads at once against a pool of 3 (a burst larger than the
 * pool): every request served once, hits and misses adding up. */
static void test_concurrent_requests(void **state)
{
	struct pool_config cfg = snapshot_config(3);
	struct client c[4];
	pthread_t t[4];
	struct pool_stats st;
	struct pool *p;

	(void)state;
	assert_int_equal(pool__start(&cfg, &p), 0);
	assert_int_equal(pool__wait_filled(p, 30 * SECOND), 0);
	for (int i = 0; i < 4; i++) {
		c[i] = (struct client){ p, 25, 0 };
		assert_int_equal(pthread_create(&t[i], NULL, client, &c[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(c[i].ok, 25);
	}
	pool__stats(p, &st);
	assert_int_equal(st.requests, 100);
	assert_int_equal(st.hits + st.misses + st.waits, 100);
	assert_int_equal(st.made_on_demand, st.misses);
	assert_int_equal(st.guest_failures, 0);
	pool__drain(p);
}

/* Serves n requests one after another and returns the highest target
 * seen right after each (a rate-driven target moves as they arrive). */
static unsigned int serve_watching(struct pool *p, unsigned int n)
{
	unsigned int top = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct pool_stats st;

		serve_ok(p, 1);
		pool__stats(p, &st);
		if (st.target > top)
			top = st.target;
	}
	return top;
}

/* Waits up to 60 s (the emulated host is slow) for a target of 0 with
 * nothing held; fails otherwise. */
static void wait_emptied(struct pool *p)
{
	struct pool_stats st;

	for (int i = 0; i < 600; i++) {
		pool__stats(p, &st);
		if (st.target == 0 && st.held == 0)
			return;
		nanosleep(&(struct timespec){ .tv_nsec = 100000000 }, NULL);
	}
	fail_msg("target %u, %u held 60 s after the last arrival",
		 st.target, st.held);
}

/* A following target: arrivals raise the rate estimate and the target
 * above the minimum; once arrivals stop for many half-lives the target
 * falls back and the VMs above it are destroyed. The half-life (2 s)
 * outlasts one request even in the emulated host. */
static void test_follow(void **state)
{
	struct pool_config cfg = probe_config(0);
	struct pool_stats st;
	struct pool *p;

	(void)state;
	cfg.policy = POOL_FOLLOW;
	cfg.params.halflife_s = 2;
	cfg.params.headroom = 1;
	cfg.max = 16;
	assert_int_equal(pool__start(&cfg, &p), 0);
	assert_true(serve_watching(p, 20) >= 1);
	pool__stats(p, &st);
	assert_true(st.rate > 0);
	assert_true(st.make_s > 0);
	wait_emptied(p);
	pool__stats(p, &st);
	assert_true(st.reaped + st.made > 0);
	pool__drain(p);
}

/* The marginal policy (policy.h): starting from nothing, a stream of
 * requests whose misses are worth much idle time raises the target; once
 * arrivals stop for many half-lives no VM is worth holding. */
static void test_marginal(void **state)
{
	struct pool_config cfg = probe_config(0);
	struct pool_stats st;
	struct pool *p;

	(void)state;
	cfg.policy = POOL_MARGINAL;
	cfg.params.halflife_s = 2;
	cfg.params.miss_cost_s = 60;
	cfg.params.burst_halflife_s = 0;
	cfg.max = 16;
	assert_int_equal(pool__start(&cfg, &p), 0);
	assert_true(serve_watching(p, 20) >= 1);
	pool__stats(p, &st);
	assert_true(st.make_s > 0);
	assert_true(st.made + st.making + st.held >= 1);
	wait_emptied(p);
	pool__drain(p);
}

/* Bad configurations are refused with a message, nothing started. */
static void test_config_refused(void **state)
{
	struct pool_config cfg = probe_config(4);
	struct pool *p;

	(void)state;
	cfg.min = 5;
	assert_int_equal(pool__start(&cfg, &p), -EINVAL);
	cfg = probe_config(4);
	cfg.params.halflife_s = 0;
	assert_int_equal(pool__start(&cfg, &p), -EINVAL);
	cfg = probe_config(4);
	cfg.policy = POOL_MARGINAL;
	cfg.params.miss_cost_s = 0;
	assert_int_equal(pool__start(&cfg, &p), -EINVAL);
	cfg.params.miss_cost_s = 1;
	cfg.params.burst_halflife_s = cfg.params.halflife_s * 2;
	assert_int_equal(pool__start(&cfg, &p), -EINVAL);
	assert_non_null(strstr(err__last(), "burst half-life"));
	cfg = probe_config(4);
	cfg.hold = POOL_HOLD_SHELL;
	assert_int_equal(pool__start(&cfg, &p), -EINVAL);
	cfg = snapshot_config(4);
	cfg.snapshot_dir = "/nonexistent/snapshot";
	assert_true(pool__start(&cfg, &p) < 0);
}

/* A probe-guest snapshot to restore, paused at READY. */
static int make_snapshot(void)
{
	struct vm_config vc = { .mem_size = 4 * MiB, .nr_vcpus = 1,
				.strict_io = true };
	struct probe_params pp = { .init_bytes = 1 * MiB, .ws_bytes = 1 * MiB,
				   .seed = 1, .stride = 1,
				   .pause_at_ready = true };
	struct snapshot_stats st;
	struct probe probe;
	struct vm *vm;
	int ret = vm__create(&kvm, &vc, NULL, &vm);

	if (ret < 0)
		return ret;
	ret = probe__setup(&probe, vm, &pp);
	if (ret == 0)
		ret = vm__start(vm);
	if (ret == 0)
		ret = vm__wait_paused(vm, 10 * SECOND);
	if (ret == 0)
		ret = snapshot__save(vm, &probe, snap_dir, 0, &st);
	vm__end(vm, VM_STOPPED, "snapshot taken");
	vm__destroy(vm);
	return ret;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drain_probe),
		cmocka_unit_test(test_drain_snapshot),
		cmocka_unit_test(test_concurrent_requests),
		cmocka_unit_test(test_follow),
		cmocka_unit_test(test_marginal),
		cmocka_unit_test(test_config_refused),
	};
	char cmd[128];
	int ret = kvm__open(&kvm, NULL);

	if (ret == -ENODEV || ret == -EACCES || ret == -ENOTSUP) {
		fprintf(stderr, "skipped: %s\n", err__last());
		return 77;
	}
	if (ret < 0 || !mkdtemp(dir)) {
		fprintf(stderr, "setup: %s\n", err__last());
		return 1;
	}
	snprintf(snap_dir, sizeof(snap_dir), "%s/snap", dir);
	if (make_snapshot() < 0) {
		fprintf(stderr, "snapshot: %s\n", err__last());
		return 1;
	}
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		ret = 1;
	kvm__close(&kvm);
	return ret;
}
