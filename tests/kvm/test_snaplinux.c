/* KVM tests of Linux-guest snapshots with the ring-0 test kernel
 * (vmm/guest/testkernel): boot to the boot-complete signal, save the
 * whole machine, destroy it, rebuild the machine without a kernel,
 * restore with several memory strategies and run the guest to its exit:
 * the rest of its console output, the guest-done signal and the reset
 * must follow exactly. Device-set mismatches are refused. Runs on PVM
 * (ring 0 is interpreted, the test kernel is tiny). Exits 77 without
 * /dev/kvm. */
#include "err.h"
#include "linux_x86.h"
#include "mem_restore.h"
#include "snapshot.h"
#include "snaptest.h"
#include "units.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#define TIMEOUT_NS (60ull * 1000000000ull)
#define CMDLINE "console=ttyS0 reboot=k panic=-1"

/* Boots the test kernel on `vcpus` vCPUs to boot complete and saves it;
 * the console up to there goes to *before. */
static void take(const char *name, unsigned int vcpus, char **before)
{
	struct linux_kernel k;
	struct linux_boot b;
	struct linux_machine m;
	struct snap_guest_rec rec;
	struct snapshot_stats st;
	struct vm_config cfg;
	struct vm *vm;
	size_t len;
	char dir[256];
	FILE *console = open_memstream(before, &len);

	snaptest__path(dir, sizeof(dir), name);
	assert_non_null(console);
	assert_int_equal(linux__open_kernel(&k, COLDSTART_TESTKERNEL_ELF), 0);
	assert_int_equal(linux__plan(&b, &k, CMDLINE, NULL, 32 * MiB, vcpus),
			 0);
	assert_int_equal(snapguest__describe(&rec, SNAP_GUEST_LINUX,
					     COLDSTART_TESTKERNEL_ELF, NULL,
					     CMDLINE), 0);
	cfg = linux__vm_config(b.mem_size, b.nr_vcpus);
	assert_int_equal(vm__create(&kvm, &cfg, NULL, &vm), 0);
	assert_int_equal(linux_machine__create(&m, vm,
			 &(struct linux_machine_opts){ console,
						      BOOTTIMER_PAUSE }), 0);
	assert_int_equal(linux__load(vm, &b), 0);
	assert_int_equal(vm__start(vm), 0);
	if (vm__wait_paused(vm, TIMEOUT_NS) < 0)
		fail_msg("no boot complete: %s", err__last());
	assert_int_equal(m.timer.regs.first, BOOTTIMER_VIA_PORT);
	if (snapshot__save_guest(vm, &rec, NULL, dir, 0, &st) < 0)
		fail_msg("save: %s", err__last());
	vm__destroy(vm);
	linux_machine__destroy(&m);
	linux__plan_free(&b);
	linux__close_kernel(&k);
	fclose(console);
}

struct setup_ctx {
	struct linux_machine m;
	FILE *console;
	int extra; /* 1: register one device more, -1: skip the boot timer */
	bool created;
};

static size_t none_size(const void *dev)
{
	(void)dev;
	return 4;
}

static int none_save(const void *dev, void *buf, size_t len)
{
	(void)dev;
	memset(buf, 0, len);
	return 0;
}

static int none_restore(void *dev, const void *buf, size_t len)
{
	(void)dev, (void)buf, (void)len;
	return 0;
}

static const struct device_ops extra_ops = {
	.name = "extra", .state_size = none_size, .save = none_save,
	.restore = none_restore
};

static int setup(struct vm *vm, void *arg)
{
	struct setup_ctx *c = arg;
	int ret = linux_machine__create(&c->m, vm,
		&(struct linux_machine_opts){ c->console, BOOTTIMER_CONTINUE });

	c->created = ret == 0;
	if (ret == 0 && c->extra > 0)
		ret = vm__add_device(vm, &extra_ops, NULL);
	if (ret == 0 && c->extra < 0) { /* as if the machine had no timer */
		struct device *d = vm__find_device(vm, "boottimer");

		assert_non_null(d);
		*d = vm->devices[--vm->nr_devices];
	}
	return ret;
}

/* Restores `name` with `strategy`; the console from there goes to
 * *after. Returns the outcome. */
static enum vm_outcome restore(const char *name, const char *strategy,
			       char **after, struct boottimer_regs *timer)
{
	struct setup_ctx c = { 0 };
	struct snapshot snap;
	enum vm_outcome outcome;
	struct vm *vm;
	size_t len;
	char dir[256];

	snaptest__path(dir, sizeof(dir), name);
	c.console = open_memstream(after, &len);
	assert_non_null(c.console);
	if (snapshot__open(&snap, dir) < 0)
		fail_msg("open: %s", err__last());
	assert_int_equal(snap.cfg.guest, SNAP_GUEST_LINUX);
	if (snapshot__restore_guest(&kvm, &snap,
				    mem_restore__strategy(strategy), NULL,
				    setup, &c, &vm) < 0)
		fail_msg("restore (%s): %s", strategy, err__last());
	/* The boot timer came back with the boot already complete. */
	assert_int_equal(c.m.timer.regs.first, BOOTTIMER_VIA_PORT);
	assert_int_equal(vm__start(vm), 0);
	outcome = vm__wait(vm, TIMEOUT_NS);
	if (outcome != VM_COMPLETED)
		fail_msg("%s: %s", strategy, vm->reason);
	*timer = c.m.timer.regs;
	vm__destroy(vm);
	linux_machine__destroy(&c.m);
	snapshot__close(&snap);
	fclose(c.console);
	return outcome;
}

static void check_case(unsigned int vcpus)
{
	static const char *const strategies[] = { "eager", "mmap", "uffd",
						  "populate" };
	struct boottimer_regs timer;
	char *before = NULL, *after = NULL;
	char name[32];

	snprintf(name, sizeof(name), "tk%u", vcpus);
	take(name, vcpus, &before);
	/* Everything up to the signal ran before the snapshot... */
	assert_non_null(strstr(before, "coldstart test kernel\n"));
	assert_non_null(strstr(before, "rtc: year"));
	assert_null(strstr(before, "workload done"));
	for (size_t i = 0; i < sizeof(strategies) / sizeof(strategies[0]);
	     i++) {
		/* ... and exactly the rest after each restore. */
		assert_int_equal(restore(name, strategies[i], &after, &timer),
				 VM_COMPLETED);
		assert_string_equal(after, "workload done\n");
		assert_int_equal(timer.done, 1);
		free(after);
	}
	free(before);
}

static void test_one_vcpu(void **state)
{
	(void)state;
	check_case(1);
}

static void test_two_vcpus(void **state)
{
	/* vCPU 1 is still waiting for INIT/SIPI in the snapshot. */
	(void)state;
	check_case(2);
}

static void test_guest_recorded(void **state)
{
	struct snapshot snap;
	char dir[256];
	char *before = NULL;

	(void)state;
	take("rec", 1, &before);
	free(before);
	snaptest__path(dir, sizeof(dir), "rec");
	assert_int_equal(snapshot__open(&snap, dir), 0);
	assert_true(snap.cfg.irqchip);
	assert_non_null(strstr(snap.guest.kernel, "testkernel.elf"));
	assert_int_equal(snap.guest.kernel[0], '/');
	assert_true(snap.guest.kernel_bytes > 0);
	assert_string_equal(snap.guest.cmdline, CMDLINE);
	assert_string_equal(snap.guest.initrd, "");
	/* The probe restore refuses it. */
	assert_int_equal(snapshot__restore(&kvm, &snap,
					   mem_restore__strategy("mmap"), NULL,
					   NULL, NULL), -EINVAL);
	assert_non_null(strstr(err__last(), "Linux guest"));
	snapshot__close(&snap);
}

static void expect_mismatch(int extra, const char *what)
{
	struct setup_ctx c = { .extra = extra };
	struct snapshot snap;
	struct vm *vm = NULL;
	char dir[256];

	snaptest__path(dir, sizeof(dir), "rec");
	assert_int_equal(snapshot__open(&snap, dir), 0);
	assert_int_equal(snapshot__restore_guest(&kvm, &snap,
						 mem_restore__strategy("mmap"),
						 NULL, setup, &c, &vm),
			 -EINVAL);
	if (!strstr(err__last(), what))
		fail_msg("message '%s' (want '%s')", err__last(), what);
	assert_null(vm);
	assert_true(c.created);
	linux_machine__destroy(&c.m);
	snapshot__close(&snap);
}

static void test_device_mismatch_refused(void **state)
{
	(void)state;
	expect_mismatch(1, "device 'extra' of the restored VM has no state");
	expect_mismatch(-1, "state of device 'boottimer', which the restored "
			    "VM does not have");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_vcpu),
		cmocka_unit_test(test_two_vcpus),
		cmocka_unit_test(test_guest_recorded),
		cmocka_unit_test(test_device_mismatch_refused),
	};

	return snaptest__main("snaplinux", tests, NULL);
}
