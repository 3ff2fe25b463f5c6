/* KVM tests of snapshots: run the probe guest to READY, save, destroy,
 * restore with every memory strategy and finish with exactly the checksum
 * of an uninterrupted run; restored registers equal the saved ones; pause
 * and resume alone do not disturb the guest. Exits 77 without /dev/kvm. */
#include "err.h"
#include "mem_restore.h"
#include "mem_source.h"
#include "mem_uffd.h"
#include "probe.h"
#include "runner.h"
#include "snapshot.h"
#include "snaptest.h"
#include "units.h"
#include "vm.h"

#include <fcntl.h>
#include <linux/kvm.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#define SECOND 1000000000ull

static struct probe_params workload(void)
{
	return (struct probe_params){ .init_bytes = 4 * MiB,
				      .ws_bytes = 6 * MiB,
				      .pattern = PROBE_PATTERN_RANDOM,
				      .op = PROBE_OP_READ, .seed = 11,
				      .compute_iters = 5000 };
}

/* Runs to READY, pauses and saves into tmpdir/name with `flags`. */
static void take_flags(const char *name, unsigned int vcpus,
		       const struct probe_params *wp, unsigned int flags)
{
	struct vm_config cfg = { .mem_size = 8 * MiB, .nr_vcpus = vcpus,
				 .strict_io = true };
	struct probe_params p = *wp;
	struct snapshot_stats st;
	char dir[256];
	struct probe probe;
	struct vm *vm;

	snaptest__path(dir, sizeof(dir), name);
	snaptest__start_paused(&cfg, &p, &vm, &probe);
	assert_int_equal(probe.state.ready, vcpus);
	if (snapshot__save(vm, &probe, dir, flags, &st) < 0)
		fail_msg("save: %s", err__last());
	assert_int_equal(st.mem_size, 8 * MiB);
	/* Only the init region and the system pages are non-zero. */
	assert_true(st.mem_data_bytes >= wp->init_bytes);
	assert_true(st.mem_data_bytes < wp->init_bytes + MiB);
	vm__destroy(vm);
}

static void take(const char *name, unsigned int vcpus,
		 const struct probe_params *wp)
{
	take_flags(name, vcpus, wp, 0);
}

/* Restores tmpdir/name with `strategy` and runs it to DONE. */
static void restore_and_check(const char *name, const char *strategy)
{
	struct snapshot snap;
	struct probe probe;
	struct vm *vm;
	char dir[256];
	uint64_t want;
	int ret;

	snaptest__path(dir, sizeof(dir), name);
	if (snapshot__open(&snap, dir) < 0)
		fail_msg("open: %s", err__last());
	ret = snapshot__restore(&kvm, &snap, mem_restore__strategy(strategy),
				NULL, &vm, &probe);
	if (ret == -ENOTSUP) {
		/* Huge-page variants on a host without huge pages (their own
		 * tests reserve some; see test_snapdiff.c). */
		fprintf(stderr, "skipped %s: %s\n", strategy, err__last());
		snapshot__close(&snap);
		return;
	}
	if (ret < 0)
		fail_msg("restore: %s", err__last());
	assert_int_equal(vm__start(vm), 0);
	if (vm__wait(vm, 30 * SECOND) != VM_COMPLETED)
		fail_msg("%s: %s", strategy, vm->reason);
	want = probe__expected_checksum(&snap.params, snap.cfg.nr_vcpus);
	assert_int_equal(probe.state.done, snap.cfg.nr_vcpus);
	assert_int_equal(probe.state.checksum, want);
	assert_int_equal(probe.state.pages, snap.params.ws_bytes / 4096);
	vm__destroy(vm);
	snapshot__close(&snap);
}

static void test_every_strategy_one_vcpu(void **state)
{
	struct probe_params p = workload();

	(void)state;
	take("one", 1, &p);
	for (const struct guest_mem_ops *const *s = mem_restore__strategies();
	     *s; s++)
		restore_and_check("one", (*s)->name);
	/* The same snapshot restores any number of times. */
	restore_and_check("one", "mmap");
}

static void test_every_strategy_three_vcpus(void **state)
{
	struct probe_params p = workload();

	(void)state;
	p.op = PROBE_OP_WRITE;
	p.pattern = PROBE_PATTERN_STRIDE;
	p.stride = 7;
	take("three", 3, &p);
	for (const struct guest_mem_ops *const *s = mem_restore__strategies();
	     *s; s++)
		restore_and_check("three", (*s)->name);
}

static void test_matches_uninterrupted_run(void **state)
{
	/* The restored guest's checksum equals a run that never stopped. */
	struct probe_params p = workload();
	struct run_config cfg = { .mem_size = 8 * MiB, .nr_vcpus = 1,
				  .probe = p, .timeout_ns = 30 * SECOND,
				  .verify = true };
	struct run_result res = { 0 };

	(void)state;
	assert_int_equal(runner__probe(&kvm, &cfg, &res), 0);
	assert_int_equal(res.outcome, VM_COMPLETED);
	assert_int_equal(res.probe.checksum,
			 probe__expected_checksum(&p, 1));
	take("same", 1, &p);
	restore_and_check("same", "eager");
}

static void test_registers_round_trip(void **state)
{
	/* Save, destroy, recreate, restore, compare (KVM selftests' shape). */
	struct probe_params p = workload();
	struct snapshot snap;
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	const void *saved;
	struct probe probe;
	struct vm *vm;
	char dir[256];
	size_t len;

	(void)state;
	take("regs", 2, &p);
	snaptest__path(dir, sizeof(dir), "regs");
	assert_int_equal(snapshot__open(&snap, dir), 0);
	assert_int_equal(snapshot__restore(&kvm, &snap,
					   mem_restore__strategy("mmap"), NULL,
					   &vm, &probe), 0);
	for (unsigned int i = 0; i < 2; i++) {
		assert_int_equal(ioctl(vm->vcpus[i].fd, KVM_GET_REGS, &regs), 0);
		saved = snap__find(&snap.r, SNAP_VCPU_REGS, i, &len);
		assert_non_null(saved);
		assert_int_equal(len, sizeof(regs));
		assert_memory_equal(&regs, saved, sizeof(regs));
		assert_int_equal(ioctl(vm->vcpus[i].fd, KVM_GET_SREGS, &sregs),
				 0);
		saved = snap__find(&snap.r, SNAP_VCPU_SREGS, i, &len);
		assert_int_equal(sregs.cr3, ((const struct kvm_sregs *)saved)->cr3);
		assert_int_equal(sregs.efer,
				 ((const struct kvm_sregs *)saved)->efer);
		assert_int_equal(sregs.cs.selector, PROBE_SEL_CODE);
	}
	vm__destroy(vm);
	snapshot__close(&snap);
}

static void test_pause_resume_in_place(void **state)
{
	/* Pausing at READY and resuming without a snapshot changes nothing. */
	struct vm_config cfg = { .mem_size = 8 * MiB, .nr_vcpus = 2,
				 .strict_io = true };
	struct probe_params p = workload();
	struct probe probe;
	struct vm *vm;

	(void)state;
	snaptest__start_paused(&cfg, &p, &vm, &probe);
	assert_int_equal(vm->parked, 2);
	assert_int_equal(probe.state.done, 0);
	vm__resume(vm);
	assert_int_equal(vm__wait(vm, 30 * SECOND), VM_COMPLETED);
	assert_int_equal(probe.state.checksum, probe__expected_checksum(&p, 2));
	vm__destroy(vm);
}

static void test_pause_from_outside(void **state)
{
	/* A guest busy in ring 3 is paused from another thread, parks every
	 * vCPU outside KVM_RUN, and runs again after resume. */
	struct vm_config cfg = { .mem_size = 8 * MiB, .nr_vcpus = 2,
				 .strict_io = true };
	struct probe_params p = { .misbehave = PROBE_MISBEHAVE_HANG };
	struct probe probe;
	struct vm *vm;

	(void)state;
	assert_int_equal(vm__create(&kvm, &cfg, NULL, &vm), 0);
	assert_int_equal(probe__setup(&probe, vm, &p), 0);
	assert_int_equal(vm__start(vm), 0);
	usleep(20000);
	/* A pause takes microseconds; the limit is for the emulated host,
	 * where a kick once took longer than 10 s to land (CPUs emulated
	 * under load). */
	assert_int_equal(vm__pause(vm, 60 * SECOND), 0);
	assert_int_equal(vm->parked, 2);
	vm__resume(vm);
	/* The pause state is reusable: a second cycle works too. */
	assert_int_equal(vm__pause(vm, 60 * SECOND), 0);
	assert_int_equal(vm->parked, 2);
	vm__resume(vm);
	assert_int_equal(vm->outcome, VM_RUNNING);
	vm__end(vm, VM_STOPPED, "test over");
	assert_int_equal(vm__wait(vm, 0), VM_STOPPED);
	vm__destroy(vm);
}

static void test_existing_dir_refused(void **state)
{
	struct probe_params p = workload();
	struct vm_config cfg = { .mem_size = 8 * MiB, .nr_vcpus = 1,
				 .strict_io = true };
	struct snapshot_stats st;
	struct probe probe;
	struct vm *vm;
	char dir[256];

	(void)state;
	take("exists", 1, &p);
	snaptest__path(dir, sizeof(dir), "exists");
	p.init_bytes = 2 * MiB;
	snaptest__start_paused(&cfg, &p, &vm, &probe);
	assert_int_equal(snapshot__save(vm, &probe, dir, 0, &st), -EEXIST);
	assert_non_null(strstr(err__last(), "exists"));
	/* Replacing swaps in the new one whole. */
	assert_int_equal(snapshot__save(vm, &probe, dir, SNAPSHOT_REPLACE, &st),
			 0);
	vm__destroy(vm);
	restore_and_check("exists", "eager");
}

/* The uffd handler thread dies while the guest runs: the VM fails with a
 * reason naming it within bounded time instead of hanging. A long compute
 * phase keeps the guest running until the kill. */
static void test_uffd_handler_killed(void **state)
{
	struct probe_params p = workload();
	struct timeline tl = { 0 };
	struct snapshot snap;
	struct probe probe;
	struct vm *vm;
	char dir[256];
	uint64_t t0;

	(void)state;
	p.compute_iters = 2000000000ull;
	take("killed", 1, &p);
	snaptest__path(dir, sizeof(dir), "killed");
	assert_int_equal(snapshot__open(&snap, dir), 0);
	assert_int_equal(snapshot__restore(&kvm, &snap,
					   mem_restore__strategy("uffd"), &tl,
					   &vm, &probe), 0);
	assert_int_equal(vm__start(vm), 0);
	t0 = timeline__now();
	while (!__atomic_load_n(&tl.t[TL_FIRST_PROGRESS], __ATOMIC_ACQUIRE) &&
	       timeline__now() - t0 < 10 * SECOND)
		usleep(100);
	assert_true(tl.t[TL_FIRST_PROGRESS] != 0);
	assert_int_equal(mem_uffd__kill_handler(&vm->mem), 0);
	assert_int_equal(vm__wait(vm, 20 * SECOND), VM_FAILED);
	if (!strstr(vm->reason, "uffd handler thread ended"))
		fail_msg("reason: %s", vm->reason);
	vm__destroy(vm);
	snapshot__close(&snap);
}

/* Snapshots `p` as tmpdir/name, restores it with `strategy`, truncates
 * the memory file to 0 before the guest runs (so no fault can beat it),
 * and wants the VM to fail within bounded time for a reason holding
 * `reason`. */
static void lost_memory_file(const char *name, const char *strategy,
			     const struct probe_params *p, const char *reason)
{
	struct snapshot snap;
	struct probe probe;
	struct vm *vm;
	char dir[256], path[300];

	take(name, 1, p);
	snaptest__path(dir, sizeof(dir), name);
	snprintf(path, sizeof(path), "%s/memory", dir);
	assert_int_equal(snapshot__open(&snap, dir), 0);
	assert_int_equal(snapshot__restore(&kvm, &snap,
					   mem_restore__strategy(strategy), NULL,
					   &vm, &probe), 0);
	assert_int_equal(truncate(path, 0), 0);
	assert_int_equal(vm__start(vm), 0);
	assert_int_equal(vm__wait(vm, 20 * SECOND), VM_FAILED);
	if (!strstr(vm->reason, reason))
		fail_msg("reason: %s", vm->reason);
	vm__destroy(vm);
	snapshot__close(&snap);
}

/* The memory file shrinks while uffd still serves faults from it: the
 * VM fails with a reason naming the file. */
static void test_uffd_lost_memory_file(void **state)
{
	struct probe_params p = workload();

	(void)state;
	p.init_bytes = 6 * MiB;
	p.ws_bytes = 6 * MiB;
	p.compute_iters = 0;
	lost_memory_file("lost", "uffd", &p, "memory file");
}

/* The memory file of a lazy mapping is truncated under the guest: the
 * guest's access to a lost page fails the VM with the file named. */
static void test_mmap_lost_memory_file(void **state)
{
	struct probe_params p = workload();

	(void)state;
	p.init_bytes = 6 * MiB;
	lost_memory_file("mmaplost", "mmap", &p,
			 "memory file shrank from 8388608 to 0 bytes");
}

/* The memory file is truncated between opening the snapshot and an
 * eager restore's read: the restore fails naming the cause. */
static void test_eager_lost_memory_file(void **state)
{
	struct probe_params p = workload();
	struct snapshot snap;
	struct probe probe;
	struct vm *vm = NULL;
	char dir[256], path[300];

	(void)state;
	take("eagerlost", 1, &p);
	snaptest__path(dir, sizeof(dir), "eagerlost");
	snprintf(path, sizeof(path), "%s/memory", dir);
	assert_int_equal(snapshot__open(&snap, dir), 0);
	assert_int_equal(truncate(path, 1 * MiB), 0);
	assert_int_equal(snapshot__restore(&kvm, &snap,
					   mem_restore__strategy("eager"), NULL,
					   &vm, &probe), -EIO);
	assert_null(vm);
	if (!strstr(err__last(), "memory file shrank"))
		fail_msg("error: %s", err__last());
	snapshot__close(&snap);
}

/* Restores with `strategy`; returns faults the uffd handler served. */
static uint64_t prefetch_once(const char *dir, const char *strategy,
			      enum vm_outcome want)
{
	struct snapshot snap;
	struct probe probe;
	struct vm *vm;
	uint64_t faults;

	assert_int_equal(snapshot__open(&snap, dir), 0);
	if (snapshot__restore(&kvm, &snap, mem_restore__strategy(strategy),
			      NULL, &vm, &probe) < 0) {
		snapshot__close(&snap);
		return UINT64_MAX;
	}
	assert_int_equal(vm__start(vm), 0);
	assert_int_equal(vm__wait(vm, 30 * SECOND), want);
	assert_int_equal(probe.state.checksum,
			 probe__expected_checksum(&snap.params, 1));
	mem__settle(&vm->mem);
	faults = vm->mem.stats.faults;
	vm__destroy(vm);
	snapshot__close(&snap);
	return faults;
}

/* `strategy` records a working set on its first restore, then installs
 * it so that the request phase takes no userfault; `other` replays the
 * same file. */
static void records_then_replays(const char *name, const char *strategy,
				 const char *other)
{
	struct probe_params p = workload();
	char dir[256], wset[300];
	uint64_t recorded;
	FILE *f;

	take(name, 1, &p);
	snaptest__path(dir, sizeof(dir), name);
	snprintf(wset, sizeof(wset), "%s/wset", dir);
	assert_int_not_equal(access(wset, F_OK), 0);
	/* First restore: served lazily, the touched pages recorded. */
	recorded = prefetch_once(dir, strategy, VM_COMPLETED);
	assert_true(recorded >= p.ws_bytes / 4096);
	assert_int_equal(access(wset, F_OK), 0);
	/* Replay: the working set is installed up front, so the request
	 * phase takes no userfaults at all. */
	assert_int_equal(prefetch_once(dir, strategy, VM_COMPLETED), 0);
	assert_int_equal(prefetch_once(dir, other, VM_COMPLETED), 0);
	/* A corrupt working set is refused with a message, not trusted. */
	f = fopen(wset, "r+");
	assert_non_null(f);
	fputs("garbage!", f);
	fclose(f);
	assert_int_equal(prefetch_once(dir, strategy, VM_COMPLETED),
			 UINT64_MAX);
	if (!strstr(err__last(), "not a valid working-set file"))
		fail_msg("message: %s", err__last());
	/* A FIFO in its place is an error, not a wait for a writer. */
	assert_int_equal(unlink(wset), 0);
	assert_int_equal(mkfifo(wset, 0644), 0);
	assert_int_equal(prefetch_once(dir, strategy, VM_COMPLETED),
			 UINT64_MAX);
	if (!strstr(err__last(), "wset is not a regular file"))
		fail_msg("message: %s", err__last());
	unlink(wset);
}

static void test_prefetch_records_then_replays(void **state)
{
	(void)state;
	records_then_replays("wset", "prefetch", "prefetch-thp");
}

static void test_prefetch_thp_records_then_replays(void **state)
{
	(void)state;
	if (mem_source__thp_available() < 0) {
		fprintf(stderr, "skipped: %s\n", err__last());
		skip();
	}
	records_then_replays("wsetthp", "prefetch-thp", "prefetch");
}

static void test_compressed(void **state)
{
	/* zstd chunks: eager and uffd restore them exactly; strategies that
	 * map the file refuse with a reason. */
	struct probe_params p = workload();
	struct snapshot snap;
	struct probe probe;
	struct vm *vm;
	char dir[256];

	(void)state;
	take_flags("zstd", 2, &p, SNAPSHOT_COMPRESS);
	restore_and_check("zstd", "eager");
	restore_and_check("zstd", "uffd");
	snaptest__path(dir, sizeof(dir), "zstd");
	assert_int_equal(snapshot__open(&snap, dir), 0);
	assert_true(snap.compressed);
	for (const char *const *s = (const char *const[]){ "mmap", "populate",
							  "prefetch",
							  "prefetch-thp", NULL };
	     *s; s++) {
		assert_int_equal(snapshot__restore(&kvm, &snap,
						   mem_restore__strategy(*s),
						   NULL, &vm, &probe), -EINVAL);
		assert_non_null(strstr(err__last(), "compressed"));
	}
	snapshot__close(&snap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_strategy_one_vcpu),
		cmocka_unit_test(test_every_strategy_three_vcpus),
		cmocka_unit_test(test_matches_uninterrupted_run),
		cmocka_unit_test(test_registers_round_trip),
		cmocka_unit_test(test_pause_resume_in_place),
		cmocka_unit_test(test_pause_from_outside),
		cmocka_unit_test(test_existing_dir_refused),
		cmocka_unit_test(test_uffd_lost_memory_file),
		cmocka_unit_test(test_uffd_handler_killed),
		cmocka_unit_test(test_mmap_lost_memory_file),
		cmocka_unit_test(test_eager_lost_memory_file),
		cmocka_unit_test(test_prefetch_records_then_replays),
		cmocka_unit_test(test_prefetch_thp_records_then_replays),
		cmocka_unit_test(test_compressed),
	};

	return snaptest__main("snaptest", tests, NULL);
}
