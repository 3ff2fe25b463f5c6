/* KVM tests of VM shells (a VM with its vCPUs, no memory yet) and of
 * restoring a snapshot into one: every memory strategy finishes with the
 * checksum of a fresh restore; shells that do not match are refused, a
 * shell is filled once, an unused shell leaks nothing, one open snapshot
 * restores into shells from several threads at once. Prints (never
 * asserts) fresh vs shell restore -> first KVM_RUN. Exits 77 without
 * /dev/kvm. */
#include "err.h"
#include "mem_restore.h"
#include "probe.h"
#include "snapshot.h"
#include "snaptest.h"
#include "units.h"
#include "vm.h"
#include "procfs.h"

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define SECOND 1000000000ull
#define NR_THREADS 4
#define TIMING_RUNS 20
#define MAX_TESTS 32

static struct probe_params workload(void)
{
	return (struct probe_params){ .init_bytes = 4 * MiB,
				      .ws_bytes = 6 * MiB,
				      .pattern = PROBE_PATTERN_RANDOM,
				      .op = PROBE_OP_WRITE, .seed = 23,
				      .compute_iters = 5000 };
}

/* Runs the probe guest to READY in a VM of `mem` bytes, saves it as
 * tmpdir/name and opens it into `snap`. */
static void take_open(const char *name, uint64_t mem, unsigned int vcpus,
		      bool irqchip, struct snapshot *snap)
{
	struct vm_config cfg = { .mem_size = mem, .nr_vcpus = vcpus,
				 .strict_io = true, .irqchip = irqchip };
	struct probe_params p = workload();
	struct snapshot_stats st;
	struct probe probe;
	struct vm *vm;
	char dir[256];

	snaptest__path(dir, sizeof(dir), name);
	snaptest__start_paused(&cfg, &p, &vm, &probe);
	if (snapshot__save(vm, &probe, dir, 0, &st) < 0)
		fail_msg("save: %s", err__last());
	vm__destroy(vm);
	if (snapshot__open(snap, dir) < 0)
		fail_msg("open: %s", err__last());
}

static struct vm *make_shell(const struct snapshot *snap,
			     struct timeline *tl)
{
	struct vm_config cfg;
	struct vm *vm;

	snapshot__shell_config(snap, &cfg);
	if (vm__create_shell(&kvm, &cfg, tl, &vm) < 0)
		fail_msg("shell: %s", err__last());
	assert_null(vm->mem.ops);
	return vm;
}

/* Runs a restored VM to DONE; its checksum, checked against the host's
 * prediction. */
static uint64_t finish(struct vm *vm, struct probe *probe,
		       const struct snapshot *snap, const char *what)
{
	uint64_t sum;

	assert_int_equal(vm__start(vm), 0);
	if (vm__wait(vm, 30 * SECOND) != VM_COMPLETED)
		fail_msg("%s: %s", what, vm->reason);
	assert_int_equal(probe->state.done, snap->cfg.nr_vcpus);
	sum = probe->state.checksum;
	assert_int_equal(sum, probe__expected_checksum(&snap->params,
						       snap->cfg.nr_vcpus));
	vm__destroy(vm);
	return sum;
}

/* One test per strategy (its index in mem_restore__strategies() as the
 * state): a fresh restore and a
 * restore into a shell both finish with the predicted checksum. A
 * strategy this host cannot do (-ENOTSUP: huge pages not reserved) is
 * skipped with the reason. */
static void test_strategy(void **state)
{
	const struct guest_mem_ops *ops =
		mem_restore__strategies()[(uintptr_t)*state];
	struct snapshot snap;
	struct probe probe;
	struct vm *vm;
	uint64_t fresh, shell;
	char name[64];
	int ret;

	snprintf(name, sizeof(name), "s-%s", ops->name);
	take_open(name, 8 * MiB, 2, false, &snap);
	ret = snapshot__restore(&kvm, &snap, ops, NULL, &vm, &probe);
	if (ret == -ENOTSUP) {
		fprintf(stderr, "skipped %s: %s\n", ops->name, err__last());
		snapshot__close(&snap);
		skip();
	}
	if (ret < 0)
		fail_msg("fresh restore (%s): %s", ops->name, err__last());
	fresh = finish(vm, &probe, &snap, "fresh restore");
	vm = make_shell(&snap, NULL);
	if (snapshot__restore_into(vm, &snap, ops, NULL, &probe) < 0)
		fail_msg("restore into a shell (%s): %s", ops->name,
			 err__last());
	assert_non_null(vm->mem.ops);
	shell = finish(vm, &probe, &snap, "restore into a shell");
	assert_int_equal(shell, fresh);
	snapshot__close(&snap);
}

/* The in-kernel irqchip is made with the shell and restored into. */
static void test_irqchip_shell(void **state)
{
	struct snapshot snap;
	struct probe probe;
	struct vm *vm;

	(void)state;
	take_open("irqchip", 8 * MiB, 1, true, &snap);
	vm = make_shell(&snap, NULL);
	assert_true(vm->irqchip);
	if (snapshot__restore_into(vm, &snap, mem_restore__strategy("mmap"),
				   NULL, &probe) < 0)
		fail_msg("restore into a shell: %s", err__last());
	finish(vm, &probe, &snap, "irqchip shell");
	snapshot__close(&snap);
}

/* A shell made with `cfg` is refused with -EINVAL and a message holding
 * `why`; the caller still owns it. */
static void refused(struct snapshot *snap, const struct vm_config *cfg,
		    const char *why)
{
	struct probe probe;
	struct vm *vm;

	if (vm__create_shell(&kvm, cfg, NULL, &vm) < 0)
		fail_msg("shell: %s", err__last());
	assert_int_equal(snapshot__restore_into(vm, snap,
						mem_restore__strategy("eager"),
						NULL, &probe), -EINVAL);
	if (!strstr(err__last(), why))
		fail_msg("wanted '%s' in: %s", why, err__last());
	assert_null(vm->mem.ops);
	vm__destroy(vm);
}

static void test_mismatch_refused(void **state)
{
	struct snapshot snap;
	struct vm_config good, cfg;
	struct probe probe;
	struct vm *vm;

	(void)state;
	take_open("mismatch", 8 * MiB, 1, false, &snap);
	snapshot__shell_config(&snap, &good);
	assert_int_equal(good.mem_size, 8 * MiB);
	assert_int_equal(good.nr_vcpus, 1);
	assert_true(good.strict_io);
	assert_false(good.irqchip);
	assert_int_equal(good.cpuid, VM_CPUID_NONE);
	cfg = good;
	cfg.mem_size = 16 * MiB;
	refused(&snap, &cfg, "bytes of memory");
	cfg = good;
	cfg.nr_vcpus = 2;
	refused(&snap, &cfg, "vCPUs");
	cfg = good;
	cfg.irqchip = true;
	refused(&snap, &cfg, "irqchip");
	cfg = good;
	cfg.strict_io = false;
	refused(&snap, &cfg, "strict_io");
	cfg = good;
	cfg.cpuid = VM_CPUID_HOST;
	refused(&snap, &cfg, "CPUID");
	/* The matching one still restores. */
	vm = make_shell(&snap, NULL);
	assert_int_equal(snapshot__restore_into(vm, &snap,
						mem_restore__strategy("eager"),
						NULL, &probe), 0);
	finish(vm, &probe, &snap, "matching shell");
	snapshot__close(&snap);
}

static void test_fill_twice_busy(void **state)
{
	struct vm_config cfg = { .mem_size = 8 * MiB, .nr_vcpus = 2,
				 .strict_io = true };
	struct snapshot snap;
	struct probe probe;
	struct vm *vm;

	(void)state;
	assert_int_equal(vm__create_shell(&kvm, &cfg, NULL, &vm), 0);
	assert_int_equal(vm->nr_vcpus, 2);
	/* Nothing to run yet. */
	assert_int_equal(vm__start(vm), -EINVAL);
	/* A failed fill leaves no memory behind; the shell fills again. */
	assert_int_equal(vm__fill_shell(vm, mem_restore__strategy("eager"),
					NULL), -EINVAL);
	assert_null(vm->mem.ops);
	assert_int_equal(vm__fill_shell(vm, NULL, NULL), 0);
	assert_non_null(vm->mem.ops);
	assert_int_equal(vm->mem.size, 8 * MiB);
	assert_int_equal(vm__fill_shell(vm, mem__backend("memfd"), NULL),
			 -EBUSY);
	assert_non_null(strstr(err__last(), "already has guest memory"));
	vm__destroy(vm);
	/* A VM from vm__create has its memory: not a shell. */
	assert_int_equal(vm__create(&kvm, &cfg, NULL, &vm), 0);
	assert_int_equal(vm__fill_shell(vm, NULL, NULL), -EBUSY);
	vm__destroy(vm);
	/* Restoring into a filled shell is refused the same way. */
	take_open("busy", 8 * MiB, 2, false, &snap);
	vm = make_shell(&snap, NULL);
	assert_int_equal(vm__fill_shell(vm, NULL, NULL), 0);
	assert_int_equal(snapshot__restore_into(vm, &snap,
						mem_restore__strategy("mmap"),
						NULL, &probe), -EBUSY);
	vm__destroy(vm);
	snapshot__close(&snap);
}

/* Shells destroyed without ever being filled, and shells refused at
 * creation, leave no file descriptor and no kvm_run mapping behind. */
static void test_unfilled_shell_leaks_nothing(void **state)
{
	struct vm_config cfg = { .mem_size = 8 * MiB, .nr_vcpus = 2,
				 .strict_io = true };
	unsigned int fds, vcpu_maps;
	struct vm *vm = NULL;

	(void)state;
	fds = procfs__count_entries("/proc/self/fd");
	vcpu_maps = procfs__count_maps("kvm-vcpu");
	for (int i = 0; i < 20; i++) {
		cfg.irqchip = i % 2;
		cfg.nr_vcpus = 1 + (unsigned int)i % 3;
		if (vm__create_shell(&kvm, &cfg, NULL, &vm) < 0)
			fail_msg("shell %d: %s", i, err__last());
		assert_int_equal(vm->nr_vcpus, cfg.nr_vcpus);
		vm__destroy(vm);
	}
	cfg.mem_size = 3 * MiB;
	assert_int_equal(vm__create_shell(&kvm, &cfg, NULL, &vm), -EINVAL);
	cfg.mem_size = 8 * MiB;
	cfg.nr_vcpus = 0;
	assert_int_equal(vm__create_shell(&kvm, &cfg, NULL, &vm), -EINVAL);
	assert_int_equal(procfs__count_entries("/proc/self/fd"), fds);
	assert_int_equal(procfs__count_maps("kvm-vcpu"), vcpu_maps);
}

/* One thread's restore into its own shell, reported to the main thread
 * (cmocka's asserts belong to the main thread only). */
struct job {
	struct kvm_host *kvm;
	struct snapshot *snap;
	const struct guest_mem_ops *ops;
	pthread_barrier_t *go;
	int ret;
	enum vm_outcome outcome;
	uint64_t checksum;
	char why[512];
};

static void *restore_job(void *arg)
{
	struct job *j = arg;
	struct vm_config cfg;
	struct probe probe;
	struct vm *vm = NULL;

	snapshot__shell_config(j->snap, &cfg);
	j->ret = vm__create_shell(j->kvm, &cfg, NULL, &vm);
	pthread_barrier_wait(j->go); /* every restore starts together */
	if (j->ret == 0)
		j->ret = snapshot__restore_into(vm, j->snap, j->ops, NULL,
						&probe);
	if (j->ret == 0)
		j->ret = vm__start(vm);
	if (j->ret == 0) {
		j->outcome = vm__wait(vm, 30 * SECOND);
		j->checksum = probe.state.checksum;
		snprintf(j->why, sizeof(j->why), "%s", vm->reason);
	} else {
		snprintf(j->why, sizeof(j->why), "%s", err__last());
	}
	vm__destroy(vm);
	return NULL;
}

/* NR_THREADS threads restore `snap` with `names[i]` at once. */
static void restore_concurrently(struct kvm_host *k, struct snapshot *snap,
				 const char *const names[NR_THREADS])
{
	uint64_t want = probe__expected_checksum(&snap->params,
						 snap->cfg.nr_vcpus);
	struct job jobs[NR_THREADS];
	pthread_t threads[NR_THREADS];
	pthread_barrier_t go;

	pthread_barrier_init(&go, NULL, NR_THREADS);
	for (int i = 0; i < NR_THREADS; i++) {
		jobs[i] = (struct job){ .kvm = k, .snap = snap, .go = &go,
					.ops = mem_restore__strategy(names[i]) };
		assert_int_equal(pthread_create(&threads[i], NULL, restore_job,
						&jobs[i]), 0);
	}
	for (int i = 0; i < NR_THREADS; i++)
		pthread_join(threads[i], NULL);
	pthread_barrier_destroy(&go);
	for (int i = 0; i < NR_THREADS; i++) {
		if (jobs[i].ret < 0 || jobs[i].outcome != VM_COMPLETED)
			fail_msg("thread %d (%s): %s", i, names[i], jobs[i].why);
		assert_int_equal(jobs[i].checksum, want);
	}
}

/* One open snapshot, shared with its KVM handle (whose CPUID table is
 * first loaded by the threads racing) by four threads restoring at once:
 * all with the same lazy strategy, then each with another. */
static void test_four_threads_one_snapshot(void **state)
{
	static const char *const same[NR_THREADS] = { "uffd", "uffd", "uffd",
						      "uffd" };
	static const char *const mixed[NR_THREADS] = { "eager", "mmap",
						       "prefetch", "uffd" };
	struct kvm_host k;
	struct snapshot snap;

	(void)state;
	take_open("threads", 8 * MiB, 2, false, &snap);
	assert_int_equal(kvm__open(&k, NULL), 0);
	restore_concurrently(&k, &snap, same);
	/* prefetch records a working set with no file yet: run it twice so
	 * the second round replays what the first wrote. */
	restore_concurrently(&k, &snap, mixed);
	restore_concurrently(&k, &snap, mixed);
	kvm__close(&k);
	snapshot__close(&snap);
}

struct cpuid_job {
	struct kvm_host *kvm;
	pthread_barrier_t *go;
	int ret;
	char why[512];
};

static void *cpuid_shell_job(void *arg)
{
	struct cpuid_job *j = arg;
	struct vm_config cfg = { .mem_size = 8 * MiB, .nr_vcpus = 2,
				 .cpuid = VM_CPUID_HOST };
	struct vm *vm = NULL;

	pthread_barrier_wait(j->go);
	j->ret = vm__create_shell(j->kvm, &cfg, NULL, &vm);
	snprintf(j->why, sizeof(j->why), "%s", j->ret < 0 ? err__last() : "");
	vm__destroy(vm);
	return NULL;
}

/* Shells with the host's CPUID made from several threads at once on a
 * KVM handle that has not loaded its CPUID table yet: all first uses
 * race to load it (kvm__supported_cpuid), all succeed. */
static void test_cpuid_shells_from_threads(void **state)
{
	struct cpuid_job jobs[NR_THREADS];
	pthread_t threads[NR_THREADS];
	pthread_barrier_t go;
	struct kvm_host k;

	(void)state;
	assert_int_equal(kvm__open(&k, NULL), 0);
	assert_null(k.cpuid);
	pthread_barrier_init(&go, NULL, NR_THREADS);
	for (int i = 0; i < NR_THREADS; i++) {
		jobs[i] = (struct cpuid_job){ .kvm = &k, .go = &go };
		assert_int_equal(pthread_create(&threads[i], NULL,
						cpuid_shell_job, &jobs[i]), 0);
	}
	for (int i = 0; i < NR_THREADS; i++)
		pthread_join(threads[i], NULL);
	pthread_barrier_destroy(&go);
	for (int i = 0; i < NR_THREADS; i++)
		if (jobs[i].ret < 0)
			fail_msg("thread %d: %s", i, jobs[i].why);
	assert_non_null(k.cpuid);
	kvm__close(&k);
}

/* The request's timeline gets memory and the first KVM_RUN, not the VM's
 * creation again; the shell's own timeline has its creation only. A
 * fresh restore has all, and vm__create keeps its order. */
static void test_timeline(void **state)
{
	struct timeline made = { 0 }, req = { 0 }, fresh = { 0 };
	struct vm_config cfg = { .mem_size = 8 * MiB, .nr_vcpus = 1 };
	struct snapshot snap;
	struct probe probe;
	struct vm *vm;

	(void)state;
	take_open("timeline", 8 * MiB, 1, false, &snap);
	vm = make_shell(&snap, &made);
	assert_true(made.t[TL_VM_CREATED] && made.t[TL_VCPU_READY]);
	assert_true(made.t[TL_VM_CREATED] <= made.t[TL_VCPU_READY]);
	timeline__mark(&req, TL_RESTORE_START);
	assert_int_equal(snapshot__restore_into(vm, &snap,
						mem_restore__strategy("mmap"),
						&req, &probe), 0);
	assert_ptr_equal(vm->tl, &req);
	finish(vm, &probe, &snap, "shell");
	assert_int_equal(made.t[TL_MEM_READY], 0);
	assert_int_equal(made.t[TL_FIRST_RUN], 0);
	assert_int_equal(req.t[TL_VM_CREATED], 0);
	assert_int_equal(req.t[TL_VCPU_READY], 0);
	assert_true(req.t[TL_RESTORE_START] <= req.t[TL_MEM_READY]);
	assert_true(req.t[TL_MEM_READY] <= req.t[TL_FIRST_RUN]);
	assert_true(req.t[TL_GUEST_DONE] >= req.t[TL_FIRST_RUN]);

	assert_int_equal(snapshot__restore(&kvm, &snap,
					   mem_restore__strategy("mmap"),
					   &fresh, &vm, &probe), 0);
	finish(vm, &probe, &snap, "fresh");
	assert_true(fresh.t[TL_VM_CREATED] <= fresh.t[TL_VCPU_READY]);
	assert_true(fresh.t[TL_VCPU_READY] <= fresh.t[TL_MEM_READY]);
	assert_true(fresh.t[TL_MEM_READY] <= fresh.t[TL_FIRST_RUN]);
	snapshot__close(&snap);

	memset(&fresh, 0, sizeof(fresh));
	assert_int_equal(vm__create(&kvm, &cfg, &fresh, &vm), 0);
	assert_true(fresh.t[TL_VM_CREATED] <= fresh.t[TL_MEM_READY]);
	assert_true(fresh.t[TL_MEM_READY] <= fresh.t[TL_VCPU_READY]);
	vm__destroy(vm);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static double median_ms(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return (double)(n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) /
	       1e6;
}

/* Restore start -> first KVM_RUN of one restore, fresh or into a shell
 * made beforehand (not timed); the guest runs to DONE and is checked. */
static uint64_t timed_restore(struct snapshot *snap, bool shell)
{
	const struct guest_mem_ops *ops = mem_restore__strategy("mmap");
	struct timeline tl = { 0 };
	struct probe probe;
	struct vm *vm = shell ? make_shell(snap, NULL) : NULL;

	timeline__mark(&tl, TL_RESTORE_START);
	if (shell)
		assert_int_equal(snapshot__restore_into(vm, snap, ops, &tl,
							&probe), 0);
	else
		assert_int_equal(snapshot__restore(&kvm, snap, ops, &tl, &vm,
						   &probe), 0);
	finish(vm, &probe, snap, shell ? "timed shell" : "timed fresh");
	assert_true(tl.t[TL_FIRST_RUN] >= tl.t[TL_RESTORE_START]);
	return tl.t[TL_FIRST_RUN] - tl.t[TL_RESTORE_START];
}

/* Printed for the reader, never asserted: timings are no pass/fail
 * matter. The snapshot stays open for both, so only VM, vCPU, memory and
 * state setup are compared; runs alternate so drift hits both alike. */
static void test_timing_fresh_vs_shell(void **state)
{
	uint64_t fresh[TIMING_RUNS], shell[TIMING_RUNS];
	struct snapshot snap;
	double f, s;

	(void)state;
	take_open("timing", 256 * MiB, 1, false, &snap);
	timed_restore(&snap, false); /* warm-up: page cache, first VM */
	timed_restore(&snap, true);
	for (int i = 0; i < TIMING_RUNS; i++) {
		fresh[i] = timed_restore(&snap, false);
		shell[i] = timed_restore(&snap, true);
	}
	f = median_ms(fresh, TIMING_RUNS);
	s = median_ms(shell, TIMING_RUNS);
	printf("restore -> first KVM_RUN, 256 MiB snapshot, mmap, median of "
	       "%d: fresh %.3f ms, into a pre-made shell %.3f ms, ratio "
	       "fresh/shell %.2fx\n", TIMING_RUNS, f, s, s > 0 ? f / s : 0);
	snapshot__close(&snap);
}

int main(void)
{
	static char names[MAX_TESTS][64];
	struct CMUnitTest tests[MAX_TESTS];
	const struct guest_mem_ops *const *s = mem_restore__strategies();
	size_t n = 0;

	for (; *s && n < MAX_TESTS - 8; s++, n++) {
		snprintf(names[n], sizeof(names[n]), "test_strategy_%s",
			 (*s)->name);
		tests[n] = (struct CMUnitTest){ .name = names[n],
						.test_func = test_strategy,
						.initial_state = (void *)n };
	}
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_irqchip_shell);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_mismatch_refused);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_fill_twice_busy);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(
		test_unfilled_shell_leaks_nothing);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(
		test_four_threads_one_snapshot);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(
		test_cpuid_shells_from_threads);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_timeline);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(
		test_timing_fresh_vs_shell);
	return snaptest__run("shell", tests, n, NULL);
}
