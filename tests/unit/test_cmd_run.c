/* Unit tests of `coldstart run` option parsing: defaults, memory sized to
 * the workload, and rejected combinations. */
#include "run_opts.h"
#include "err.h"
#include "units.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>

#include <cmocka.h>

/* Parses a NULL-terminated list of words after "run". */
static int parse(struct run_cli *o, ...)
{
	char *argv[32] = { "run" };
	int argc = 1;
	va_list ap;

	va_start(ap, o);
	while ((argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	va_end(ap);
	return run_opts__parse(argc, argv, o);
}

static void defaults(void **state)
{
	struct run_cli o;

	(void)state;
	assert_int_equal(parse(&o, NULL), 0);
	assert_int_equal(o.cfg.mem_size, 2 * MiB);
	assert_int_equal(o.cfg.nr_vcpus, 1);
	assert_null(o.cfg.mem_ops);
	assert_int_equal(o.cfg.cpuid, VM_CPUID_NONE);
	assert_int_equal(o.cfg.timeout_ns, 60ull * 1000000000ull);
	assert_true(o.cfg.verify);
	assert_int_equal(o.cfg.probe.seed, 1);
	assert_int_equal(o.cfg.probe.stride, 16);
	assert_false(o.cfg.probe.stop_at_ready);
	assert_false(o.json || o.quiet || o.help);
}

static void memory_fits_the_workload(void **state)
{
	struct run_cli o;

	(void)state;
	/* 2 MiB system area plus the larger of init and ws, rounded up. */
	assert_int_equal(parse(&o, "--init", "3M", "--ws", "1M", NULL), 0);
	assert_int_equal(o.cfg.mem_size, 6 * MiB);
	assert_int_equal(parse(&o, "--ws", "4k", NULL), 0);
	assert_int_equal(o.cfg.mem_size, 4 * MiB);
	assert_int_equal(parse(&o, "--ws", "8M", "--mem", "64M", NULL), 0);
	assert_int_equal(o.cfg.mem_size, 64 * MiB);
}

static void every_option(void **state)
{
	struct run_cli o;

	(void)state;
	assert_int_equal(parse(&o, "--vcpus", "4", "--mem-backend", "memfd",
			       "--pattern", "stride", "--stride", "3", "--op",
			       "write", "--seed", "9", "--compute", "1e6",
			       "--stop-at", "ready", "--timeout", "250ms",
			       "--misbehave", "hang", "--cpuid", "host",
			       "--kvm", "/tmp/kvm", "--json", NULL), 0);
	assert_int_equal(o.cfg.nr_vcpus, 4);
	assert_string_equal(o.cfg.mem_ops->name, "memfd");
	assert_int_equal(o.cfg.probe.pattern, PROBE_PATTERN_STRIDE);
	assert_int_equal(o.cfg.probe.stride, 3);
	assert_int_equal(o.cfg.probe.op, PROBE_OP_WRITE);
	assert_int_equal(o.cfg.probe.seed, 9);
	assert_int_equal(o.cfg.probe.compute_iters, 1000000);
	assert_true(o.cfg.probe.stop_at_ready);
	assert_int_equal(o.cfg.timeout_ns, 250000000);
	assert_int_equal(o.cfg.probe.misbehave, PROBE_MISBEHAVE_HANG);
	assert_int_equal(o.cfg.cpuid, VM_CPUID_HOST);
	assert_string_equal(o.kvm_path, "/tmp/kvm");
	assert_true(o.json);
}

static void expect_error(const char *needle, ...)
{
	char *argv[32] = { "run" };
	struct run_cli o;
	int argc = 1;
	va_list ap;

	va_start(ap, needle);
	while ((argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	va_end(ap);
	assert_int_equal(run_opts__parse(argc, argv, &o), -EINVAL);
	if (!strstr(err__last(), needle))
		fail_msg("'%s' lacks '%s'", err__last(), needle);
}

static void rejected(void **state)
{
	(void)state;
	expect_error("multiple of 2 MiB", "--mem", "3M", NULL);
	expect_error("needs at least 10 MiB", "--ws", "8M", "--mem", "4M",
		     NULL);
	expect_error("multiples of 4 KiB", "--init", "6000", NULL);
	expect_error("exclude each other", "--json", "-q", NULL);
	expect_error("unexpected argument 'x'", "x", NULL);
	expect_error("unknown or incomplete option '--mem'", "--mem", NULL);
	expect_error("not one of: anon, memfd, hugetlb", "--mem-backend",
		     "pmem", NULL);
	expect_error("outside 1..64", "--vcpus", "100", NULL);
	expect_error("not one of: done, ready, boot", "--stop-at", "exit",
		     NULL);
	expect_error("--stop-at boot needs --kernel", "--stop-at", "boot", NULL);
	expect_error("--initrd needs --kernel", "--initrd", "x", NULL);
	expect_error("--init applies to the probe guest", "--kernel", "k",
		     "--init", "4M", NULL);
}

/* --rootfs is drive 0 wherever it stands; --exec needs it. */
static void rootfs_and_exec(void **state)
{
	struct run_cli o;

	(void)state;
	assert_int_equal(parse(&o, "--kernel", "k", "--drive", "d,ro",
			       "--rootfs", "r.ext4", "--exec", "python3 -V",
			       NULL), 0);
	assert_int_equal(o.nr_drives, 2);
	assert_string_equal(o.drives[0].path, "r.ext4");
	assert_int_equal(o.drives[0].mode, VBLK_OVERLAY);
	assert_string_equal(o.drives[1].path, "d");
	assert_string_equal(o.exec, "python3 -V");
	assert_int_equal(o.agent_port, 1024);
	expect_error("--exec needs --rootfs", "--kernel", "k", "--exec",
		     "true", NULL);
	expect_error("--exec needs a command", "--kernel", "k", "--rootfs",
		     "r", "--exec", "", NULL);
	expect_error("--rootfs given twice", "--kernel", "k", "--rootfs", "r",
		     "--rootfs", "r", NULL);
	expect_error("at most 4 disks in all", "--kernel", "k", "--rootfs",
		     "r", "--drive", "a", "--drive", "b", "--drive", "c",
		     "--drive", "d", NULL);
	expect_error("exclude each other", "--kernel", "k", "--rootfs", "r",
		     "--exec", "true", "--stop-at", "boot", NULL);
	expect_error("--agent-port", "--kernel", "k", "--rootfs", "r",
		     "--agent-port", "0", NULL);
	expect_error("--rootfs needs --kernel", "--rootfs", "r", NULL);
}

static void help_skips_size_checks(void **state)
{
	struct run_cli o;

	(void)state;
	assert_int_equal(parse(&o, "--mem", "3M", "--help", NULL), 0);
	assert_true(o.help);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults),
		cmocka_unit_test(memory_fits_the_workload),
		cmocka_unit_test(every_option),
		cmocka_unit_test(rejected),
		cmocka_unit_test(rootfs_and_exec),
		cmocka_unit_test(help_skips_size_checks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
