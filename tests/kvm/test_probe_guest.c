/* KVM tests of the VMM core with the probe guest: correct results across
 * workloads and shapes, clear failures for guest misbehaviour, and no
 * leaked descriptors or mappings. Exits 77 where /dev/kvm is missing. */
#include "err.h"
#include "probe.h"
#include "runner.h"
#include "units.h"
#include "vm.h"
#include "procfs.h"

#include <linux/kvm.h>
#include <sys/ioctl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define SECOND 1000000000ull

static struct kvm_host kvm;

static struct run_config config(unsigned int vcpus, uint64_t init,
				uint64_t ws, enum probe_pattern pattern,
				enum probe_op op)
{
	struct run_config cfg = {
		.nr_vcpus = vcpus,
		.probe = { .init_bytes = init, .ws_bytes = ws,
			   .pattern = pattern, .op = op, .seed = 7,
			   .stride = 5, .compute_iters = 1000 },
		.timeout_ns = 30 * SECOND,
		.verify = true,
	};

	cfg.mem_size = runner__min_mem(&cfg.probe);
	return cfg;
}

static void run_ok(const struct run_config *cfg)
{
	struct run_result res = { 0 };

	assert_int_equal(runner__probe(&kvm, cfg, &res), 0);
	if (res.outcome != VM_COMPLETED)
		fail_msg("outcome %s: %s", vm__outcome_name(res.outcome),
			 res.reason);
	assert_int_equal(res.probe.done, cfg->nr_vcpus);
	assert_int_equal(res.probe.checksum, res.expected_checksum);
	assert_int_equal(res.probe.pages, cfg->probe.ws_bytes / 4096);
	/* PHASE x3, READY and DONE per vCPU, all through port I/O. */
	assert_int_equal(res.probe.ucalls, 5ull * cfg->nr_vcpus);
	assert_true(res.exits >= res.probe.ucalls);
	assert_true(runner__succeeded(cfg, &res));
}

static void test_minimal(void **state)
{
	(void)state;
	run_ok(&(struct run_config){ .mem_size = 2 * MiB, .nr_vcpus = 1,
				     .verify = true, .timeout_ns = 30 * SECOND });
}

/* Workloads that must reach DONE with the predicted checksum. */
struct workload {
	unsigned int vcpus;
	uint64_t init, ws, mem;
	enum probe_pattern pattern;
	enum probe_op op;
	const char *backend;
};

static const struct workload workloads[] = {
	/* Reads over initialised memory. */
	{ 1, 8 * MiB, 8 * MiB, 0, PROBE_PATTERN_SEQ, PROBE_OP_READ, "anon" },
	{ 1, 0, 16 * MiB, 0, PROBE_PATTERN_RANDOM, PROBE_OP_WRITE, "anon" },
	/* Half initialised: reads see both values and zero pages. */
	{ 1, 4 * MiB, 8 * MiB, 0, PROBE_PATTERN_STRIDE, PROBE_OP_READ, "anon" },
	{ 2, 8 * MiB, 8 * MiB, 0, PROBE_PATTERN_RANDOM, PROBE_OP_READ, "anon" },
	{ 4, 4 * MiB, 12 * MiB, 64 * MiB, PROBE_PATTERN_SEQ, PROBE_OP_WRITE,
	  "anon" },
	{ 1, 2 * MiB, 4 * MiB, 0, PROBE_PATTERN_RANDOM, PROBE_OP_READ,
	  "memfd" },
	/* One page, one vCPU per page. */
	{ 1, 0, 4096, 0, PROBE_PATTERN_RANDOM, PROBE_OP_WRITE, "anon" },
	{ 3, 12288, 12288, 0, PROBE_PATTERN_STRIDE, PROBE_OP_READ, "memfd" },
};

static void test_workload(void **state)
{
	const struct workload *w = *state;
	struct run_config cfg = config(w->vcpus, w->init, w->ws, w->pattern,
				       w->op);

	if (w->mem)
		cfg.mem_size = w->mem;
	cfg.mem_ops = mem__backend(w->backend);
	run_ok(&cfg);
}

static void test_host_cpuid(void **state)
{
	/* An OS guest's CPUID: the host-supported table, each vCPU with its
	 * own initial APIC ID in leaf 1. */
	struct vm_config vcfg = { .mem_size = 2 * MiB, .nr_vcpus = 2,
				  .cpuid = VM_CPUID_HOST };
	struct {
		struct kvm_cpuid2 head;
		struct kvm_cpuid_entry2 e[256];
	} c;
	struct run_config cfg = config(2, 2 * MiB, 2 * MiB, PROBE_PATTERN_SEQ,
				       PROBE_OP_READ);
	struct vm *vm;
	int leaf1 = 0;

	(void)state;
	assert_int_equal(vm__create(&kvm, &vcfg, NULL, &vm), 0);
	memset(&c, 0, sizeof(c));
	c.head.nent = 256;
	assert_int_equal(ioctl(vm->vcpus[1].fd, KVM_GET_CPUID2, &c), 0);
	assert_true(c.head.nent > 1);
	for (unsigned int i = 0; i < c.head.nent; i++)
		if (c.e[i].function == 1) {
			assert_int_equal(c.e[i].ebx >> 24, 1);
			leaf1 = 1;
		}
	assert_true(leaf1);
	vm__destroy(vm);
	cfg.cpuid = VM_CPUID_HOST;
	run_ok(&cfg);
}

static void test_checksum_depends_on_work(void **state)
{
	/* The prediction is not a constant: seeds and patterns change it. */
	struct run_config a = config(1, 0, 4 * MiB, PROBE_PATTERN_RANDOM,
				     PROBE_OP_WRITE);
	struct run_config b = a;

	(void)state;
	b.probe.seed = 8;
	assert_int_not_equal(probe__expected_checksum(&a.probe, 1),
			     probe__expected_checksum(&b.probe, 1));
	b = a;
	b.probe.pattern = PROBE_PATTERN_SEQ;
	assert_int_not_equal(probe__expected_checksum(&a.probe, 1),
			     probe__expected_checksum(&b.probe, 1));
}

static void run_fails(enum probe_misbehave what, enum vm_outcome want,
		      const char *reason, uint64_t timeout_ns)
{
	struct run_config cfg = config(1, 0, 0, PROBE_PATTERN_SEQ,
				       PROBE_OP_READ);
	struct run_result res = { 0 };

	cfg.probe.misbehave = what;
	cfg.timeout_ns = timeout_ns;
	assert_int_equal(runner__probe(&kvm, &cfg, &res), 0);
	assert_int_equal(res.outcome, want);
	if (!strstr(res.reason, reason))
		fail_msg("reason '%s' lacks '%s'", res.reason, reason);
	assert_false(runner__succeeded(&cfg, &res));
}

static void test_abort(void **state)
{
	(void)state;
	run_fails(PROBE_MISBEHAVE_ABORT, VM_FAILED, "with code 42", 30 * SECOND);
}

static void test_unclaimed_port_strict(void **state)
{
	(void)state;
	run_fails(PROBE_MISBEHAVE_BAD_PORT, VM_FAILED, "port 0x99", 30 * SECOND);
}

static void test_guest_fault(void **state)
{
	(void)state;
	run_fails(PROBE_MISBEHAVE_FAULT, VM_FAILED, "shut down", 30 * SECOND);
}

static void test_hang_times_out(void **state)
{
	(void)state;
	run_fails(PROBE_MISBEHAVE_HANG, VM_STOPPED, "timed out", SECOND / 5);
}

static void test_unclaimed_port_lenient(void **state)
{
	/* Lenient mode logs and ignores: the guest goes on to DONE. */
	struct vm_config vcfg = { .mem_size = 2 * MiB, .nr_vcpus = 1 };
	struct probe_params p = { .misbehave = PROBE_MISBEHAVE_BAD_PORT };
	struct probe probe;
	struct vm *vm;

	(void)state;
	assert_int_equal(vm__create(&kvm, &vcfg, NULL, &vm), 0);
	assert_int_equal(probe__setup(&probe, vm, &p), 0);
	assert_int_equal(vm__start(vm), 0);
	assert_int_equal(vm__wait(vm, 30 * SECOND), VM_COMPLETED);
	assert_int_equal(vm->io.unclaimed, 1);
	assert_int_equal(probe.state.done, 1);
	assert_int_equal(probe.state.checksum, probe__expected_checksum(&p, 1));
	vm__destroy(vm);
}

static void test_stop_from_another_thread(void **state)
{
	struct vm_config vcfg = { .mem_size = 2 * MiB, .nr_vcpus = 2,
				  .strict_io = true };
	struct probe_params p = { .misbehave = PROBE_MISBEHAVE_HANG };
	struct probe probe;
	struct vm *vm;

	(void)state;
	assert_int_equal(vm__create(&kvm, &vcfg, NULL, &vm), 0);
	assert_int_equal(probe__setup(&probe, vm, &p), 0);
	assert_int_equal(vm__start(vm), 0);
	usleep(50000);
	vm__end(vm, VM_STOPPED, "stopped by the test");
	assert_int_equal(vm__wait(vm, 0), VM_STOPPED);
	assert_string_equal(vm->reason, "stopped by the test");
	assert_int_equal(probe.state.ready, 2);
	vm__destroy(vm);
}

static void test_bad_config_rejected(void **state)
{
	struct run_config cfg = config(1, 0, 4 * MiB, PROBE_PATTERN_SEQ,
				       PROBE_OP_READ);
	struct run_result res = { 0 };

	(void)state;
	cfg.mem_size = 4 * MiB; /* working set needs 6 MiB */
	assert_int_equal(runner__probe(&kvm, &cfg, &res), -EINVAL);
	assert_non_null(strstr(err__last(), "raise --mem"));
	cfg = config(PROBE_MAX_VCPUS + 1, 0, 0, PROBE_PATTERN_SEQ,
		     PROBE_OP_READ);
	assert_int_equal(runner__probe(&kvm, &cfg, &res), -EINVAL);
	assert_int_equal(vm__create(&kvm, &(struct vm_config){
		.mem_size = 3 * MiB, .nr_vcpus = 1 }, NULL,
		&(struct vm *){ NULL }), -EINVAL);
}

static void test_no_leaks_over_50_vms(void **state)
{
	struct run_config cfg = config(2, 2 * MiB, 2 * MiB, PROBE_PATTERN_SEQ,
				       PROBE_OP_WRITE);
	struct run_result res;
	unsigned int fds, maps;

	(void)state;
	/* One VM first, so one-time allocations (thread stacks cached by
	 * libc, signal handler) are in the baseline. */
	run_ok(&cfg);
	fds = procfs__count_entries("/proc/self/fd");
	maps = procfs__count_maps(NULL);
	for (int i = 0; i < 50; i++) {
		/* Every other VM on memfd, whose mapping has a name. */
		cfg.mem_ops = mem__backend(i % 2 ? "memfd" : "anon");
		memset(&res, 0, sizeof(res));
		assert_int_equal(runner__probe(&kvm, &cfg, &res), 0);
		assert_int_equal(res.outcome, VM_COMPLETED);
	}
	assert_int_equal(procfs__count_entries("/proc/self/fd"), fds);
	assert_int_equal(procfs__count_maps("kvm-vcpu"), 0);
	assert_int_equal(procfs__count_maps(MEM_VMA_NAME), 0);
#ifndef __SANITIZE_ADDRESS__
	/* ASan's allocator maps memory of its own; elsewhere the count of
	 * mappings must come back exactly (anonymous guest memory too). */
	assert_int_equal(procfs__count_maps(NULL), maps);
#else
	(void)maps;
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minimal),
#define WORKLOAD(i) cmocka_unit_test_prestate(test_workload, \
					       (void *)&workloads[i])
		WORKLOAD(0), WORKLOAD(1), WORKLOAD(2), WORKLOAD(3),
		WORKLOAD(4), WORKLOAD(5), WORKLOAD(6), WORKLOAD(7),
		cmocka_unit_test(test_host_cpuid),
		cmocka_unit_test(test_checksum_depends_on_work),
		cmocka_unit_test(test_abort),
		cmocka_unit_test(test_unclaimed_port_strict),
		cmocka_unit_test(test_guest_fault),
		cmocka_unit_test(test_hang_times_out),
		cmocka_unit_test(test_unclaimed_port_lenient),
		cmocka_unit_test(test_stop_from_another_thread),
		cmocka_unit_test(test_bad_config_rejected),
		cmocka_unit_test(test_no_leaks_over_50_vms),
	};
	int ret = kvm__open(&kvm, NULL);

	_Static_assert(sizeof(workloads) / sizeof(workloads[0]) == 8,
		       "every workload is listed in tests[]");
	if (ret < 0) {
		fprintf(stderr, "skipping: %s\n", err__last());
		return 77;
	}
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	kvm__close(&kvm);
	return ret;
}
