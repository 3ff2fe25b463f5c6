/* eBPF probe tests: every probe loads and attaches; on the probe guest
 * with a known workload, guest fault counts land in the expected range
 * and port-I/O exits equal the ucalls the guest made; ioctls are counted
 * one by one; events that did not happen are not observed; a process
 * other than ours is followed by pid. Exit 77 without BPF or /dev/kvm. */
#include "err.h"
#include "probes.h"
#include "runner.h"
#include "units.h"

#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define PAGES(bytes) ((bytes) / 4096)
/* Pages the guest touches besides its workload (stack, image, boot
 * info) plus slack for re-faults after KVM zaps a shadow page. */
#define FAULT_SLACK 256

static struct kvm_host kvm;

/* Runs the probe guest with the probes attached to this process. */
static struct probes_report *probed_run(unsigned int set, unsigned int vcpus,
					uint64_t init, uint64_t ws,
					struct run_result *res)
{
	struct run_config cfg = {
		.nr_vcpus = vcpus,
		.probe = { .init_bytes = init, .ws_bytes = ws, .seed = 3,
			   .op = PROBE_OP_WRITE, .stride = 1 },
		.timeout_ns = 60ull * 1000000000ull,
		.verify = true,
	};
	struct probes_report *r = NULL;
	struct probes *p;

	cfg.mem_size = runner__min_mem(&cfg.probe);
	memset(res, 0, sizeof(*res));
	if (probes__attach(getpid(), set, &p) < 0)
		fail_msg("attach: %s", err__last());
	assert_int_equal(runner__probe(&kvm, &cfg, res), 0);
	if (probes__finish(p, &r) < 0)
		fail_msg("finish: %s", err__last());
	probes__destroy(p);
	if (!runner__succeeded(&cfg, res))
		fail_msg("run failed: %s", res->reason);
	return r;
}

/* Every KVM tracepoint that fires on the hosts we test on (PVM, SVM)
 * attaches. */
static void test_attach(void **state)
{
	static const enum probes_ev needed[] = {
		PEV_KVM_PIO, PEV_KVM_MMIO, PEV_KVM_USERSPACE_EXIT,
		PEV_MMU_SPTE_REQUESTED, PEV_MMU_SET_SPTE, PEV_PAGE_FAULT_USER,
		PEV_PAGE_FAULT_KERNEL, PEV_SYS_ENTER_IOCTL, PEV_SYS_EXIT_IOCTL,
		PEV_SCHED_WAKEUP, PEV_SCHED_SWITCH, PEV_MMAP_LOCK_START,
		PEV_MMAP_LOCK_ACQUIRED, PEV_MMAP_LOCK_RELEASED,
	};
	struct probes_report *r;
	struct probes *p;

	(void)state;
	if (probes__attach(getpid(), PROBES_ALL, &p) < 0)
		fail_msg("attach: %s", err__last());
	if (probes__finish(p, &r) < 0)
		fail_msg("finish: %s", err__last());
	probes__destroy(p);
	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++)
		if (!r->attached[needed[i]])
			fail_msg("%s did not attach",
				 probes__event_name(needed[i]));
	assert_true(r->end_ns >= r->start_ns);
	probes__report_free(r);
}

static uint64_t timeline_guest_faults(const struct probes_report *r,
				      uint64_t from, uint64_t to)
{
	uint64_t n = 0;

	for (size_t i = 0; i < r->nr_timeline; i++)
		if (r->timeline[i].kind == FAULTS_GUEST &&
		    r->timeline[i].ts >= from && r->timeline[i].ts < to)
			n++;
	return n;
}

/* --init 16M: 4096 first-touched pages before READY. */
static void test_fault_count_init(void **state)
{
	const uint64_t pages = PAGES(16 * MiB);
	struct run_result res;
	struct probes_report *r = probed_run(PROBES_DEFAULT, 1, 16 * MiB, 0,
					     &res);
	uint64_t faults = r->events[PEV_MMU_SPTE_REQUESTED], before_ready;

	(void)state;
	if (faults < pages || faults > pages + FAULT_SLACK)
		fail_msg("%llu guest faults for %llu first-touched pages",
			 (unsigned long long)faults,
			 (unsigned long long)pages);
	/* The timeline places them before READY. */
	assert_int_equal(r->timeline_lost, 0);
	before_ready = timeline_guest_faults(r, 0, res.tl.t[TL_GUEST_READY]);
	assert_in_range(before_ready, pages, pages + FAULT_SLACK);
	assert_int_equal(timeline_guest_faults(r, 0, UINT64_MAX), faults);
	probes__report_free(r);
}

/* faulttime: a handling time per fault; a fault whose thread moves to
 * another CPU mid-fault loses its record (counted as unmatched). */
static void test_fault_times(void **state)
{
	const uint64_t pages = PAGES(4 * MiB);
	struct run_result res;
	struct probes_report *r = probed_run(PROBES_DEFAULT | PROBES_FAULTTIME,
					     1, 4 * MiB, 0, &res);
	uint64_t faults = r->events[PEV_MMU_SPTE_REQUESTED];

	(void)state;
	assert_true(r->attached[PEV_MMU_PAGETABLE_WALK]);
	assert_in_range(faults, pages, pages + FAULT_SLACK);
	assert_in_range(r->guest_fault.count, faults * 9 / 10, faults);
	assert_true(r->guest_fault.sum_ns > 0);
	assert_true(r->guest_fault.max_ns * r->guest_fault.count >=
		    r->guest_fault.sum_ns);
	probes__report_free(r);
}

/* --ws 8M after READY, on 2 vCPUs: 2048 pages plus each vCPU's own few.
 * (One vCPU may start its share before the other reports READY, so the
 * phases are not asserted here.) */
static void test_fault_count_workload(void **state)
{
	const uint64_t pages = PAGES(8 * MiB);
	struct run_result res;
	struct probes_report *r = probed_run(PROBES_DEFAULT, 2, 0, 8 * MiB,
					     &res);
	uint64_t faults = r->events[PEV_MMU_SPTE_REQUESTED], per_thread = 0;
	unsigned int vcpus = 0;

	(void)state;
	assert_in_range(faults, pages, pages + FAULT_SLACK);
	assert_int_equal(r->timeline_lost, 0);
	assert_int_equal(timeline_guest_faults(r, 0, UINT64_MAX), faults);
	for (size_t i = 0; i < r->nr_threads; i++) {
		per_thread += r->threads[i].guest_faults;
		vcpus += r->threads[i].guest_faults > pages / 4;
	}
	assert_int_equal(per_thread, faults);
	assert_int_equal(vcpus, 2); /* each touched its half */
	probes__report_free(r);
}

/* Port-I/O exits equal ucalls (5 per vCPU), one vCPU thread each. */
static void test_pio_exits_equal_ucalls(void **state)
{
	for (unsigned int vcpus = 1; vcpus <= 3; vcpus++) {
		struct run_result res;
		struct probes_report *r = probed_run(PROBES_DEFAULT, vcpus,
						     2 * MiB, 0, &res);
		unsigned int vcpu_threads = 0;

		(void)state;
		assert_int_equal(res.probe.ucalls, 5ull * vcpus);
		assert_int_equal(r->exits[KVMEXIT_PIO_IN] +
					 r->exits[KVMEXIT_PIO_OUT],
				 res.probe.ucalls);
		assert_int_equal(r->events[PEV_KVM_PIO], res.probe.ucalls);
		assert_true(r->exits[KVMEXIT_USERSPACE] >= res.probe.ucalls);
		assert_int_equal(r->exit_reasons[2 /* KVM_EXIT_IO */],
				 res.probe.ucalls);
		for (size_t i = 0; i < r->nr_threads; i++) {
			if (!r->threads[i].vcpu)
				continue;
			vcpu_threads++;
			assert_int_equal(r->threads[i].exits[KVMEXIT_PIO_OUT],
					 5);
		}
		assert_int_equal(vcpu_threads, vcpus);
		probes__report_free(r);
	}
}

static void test_ioctls_counted(void **state)
{
	struct run_result res;
	struct probes_report *r = probed_run(PROBES_DEFAULT, 2, 2 * MiB, 0,
					     &res);

	(void)state;
	assert_int_equal(r->ioctl[KVMIOCTL_CREATE_VM].count, 1);
	assert_int_equal(r->ioctl[KVMIOCTL_CREATE_VCPU].count, 2);
	assert_true(r->ioctl[KVMIOCTL_SET_USER_MEMORY_REGION].count >= 1);
	/* Every KVM_RUN that returned was timed, and returned to us. */
	assert_true(r->ioctl[KVMIOCTL_RUN].count >= res.exits);
	assert_true(r->ioctl[KVMIOCTL_RUN].sum_ns > 0);
	assert_true(r->ioctl[KVMIOCTL_RUN].max_ns <=
		    r->ioctl[KVMIOCTL_RUN].sum_ns);
	probes__report_free(r);
}

/* The probe guest does no MMIO: attached, yet not observed. */
static void test_unfired_is_not_observed(void **state)
{
	struct run_result res;
	struct probes_report *r = probed_run(PROBES_ALL, 1, 0, 0, &res);

	(void)state;
	assert_true(r->attached[PEV_KVM_MMIO]);
	assert_false(probes__observed(r, PEV_KVM_MMIO));
	assert_true(probes__observed(r, PEV_KVM_PIO));
	probes__report_free(r);
}

/* Another process, followed by pid: its page faults, none of ours. */
static void test_other_process(void **state)
{
	const size_t pages = 2000;
	int go[2];
	pid_t child;
	char c;
	struct probes_report *r;
	struct probes *p;

	(void)state;
	assert_int_equal(pipe(go), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		volatile char *mem = mmap(NULL, pages * 4096,
					  PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		/* one fault per page: no transparent huge pages, which the
		 * emulated host's kernel gives such a region (726 faults) */
		if (read(go[0], &c, 1) != 1 || mem == MAP_FAILED ||
		    madvise((void *)mem, pages * 4096, MADV_NOHUGEPAGE) < 0)
			_exit(1);
		for (size_t i = 0; i < pages; i++)
			mem[i * 4096] = 1;
		_exit(0);
	}
	if (probes__attach(child, PROBES_ALL, &p) < 0)
		fail_msg("attach: %s", err__last());
	assert_int_equal(write(go[1], "g", 1), 1);
	waitpid(child, NULL, 0);
	assert_int_equal(probes__finish(p, &r), 0);
	probes__destroy(p);
	assert_int_equal(r->tgid, (uint32_t)child);
	assert_in_range(r->events[PEV_PAGE_FAULT_USER], pages, pages * 2);
	assert_false(probes__observed(r, PEV_KVM_PIO));
	probes__report_free(r);
	close(go[0]);
	close(go[1]);
}

static void test_no_such_process(void **state)
{
	struct probes *p;

	(void)state;
	assert_int_equal(probes__attach(0x3fffffff, PROBES_ALL, &p), -ESRCH);
	assert_int_equal(probes__attach(0, PROBES_ALL, &p), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attach),
		cmocka_unit_test(test_fault_count_init),
		cmocka_unit_test(test_fault_count_workload),
		cmocka_unit_test(test_fault_times),
		cmocka_unit_test(test_pio_exits_equal_ucalls),
		cmocka_unit_test(test_ioctls_counted),
		cmocka_unit_test(test_unfired_is_not_observed),
		cmocka_unit_test(test_other_process),
		cmocka_unit_test(test_no_such_process),
	};
	struct probes *p;
	int ret;

	ret = probes__attach(getpid(), PROBES_ALL, &p);
	if (ret == -ENOTSUP || ret == -EACCES) {
		fprintf(stderr, "skipping: %s\n", err__last());
		return 77;
	}
	if (ret < 0) {
		fprintf(stderr, "attaching failed: %s\n", err__last());
		return 1;
	}
	probes__destroy(p);
	ret = kvm__open(&kvm, NULL);
	if (ret < 0) {
		fprintf(stderr, "skipping: %s\n", err__last());
		return 77;
	}
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	kvm__close(&kvm);
	return ret;
}
