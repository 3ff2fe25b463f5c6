/* What `bench suite` passes each driver for the user's guest: with
 * --rootfs, peers and density in their root-disk modes at the suite's
 * root_* counts (peers without --cmdline, which it does not take);
 * without it, peers not run and density in its plain Linux mode; the
 * probe guest's levels unchanged. Built as the suite builds it, from the
 * parsed options, nothing run. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent_client.h"
#include "commands.h"
#include "driver.h"
#include "err.h"
#include "suite.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* a regular file, for --kernel, --initrd and --rootfs */
static char file[] = "/tmp/coldstart-test-suite-args-XXXXXX";

static const struct bench_driver *suite(void)
{
	size_t n;
	const struct bench_driver *const *d = bench__drivers(&n);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(d[i]->name, "suite"))
			return d[i];
	fail_msg("no suite driver");
	return NULL;
}

/* The suite's options parsed from `args` (NULL-terminated, after
 * "suite"), or NULL with err__last() saying why. */
static void *parse(const char *const *args)
{
	const struct bench_driver *s = suite();
	char *argv[24] = { "suite" };
	int argc = 1;
	size_t n;
	const struct bench_driver *const *table = bench__drivers(&n);
	void *o = calloc(1, s->size);

	for (; args[argc - 1]; argc++)
		argv[argc] = (char *)args[argc - 1];
	if (bench__parse(s, table, n, argc, argv, o) != 0) {
		free(o);
		return NULL;
	}
	return o;
}

/* Driver `name`'s recorded arguments: "-" when it is not run. */
static const char *args(void *o, const char *name)
{
	static char text[1024];

	if (!suite__driver_args(o, name, text, sizeof(text)))
		return "-";
	return text;
}

static char *join(const char *fmt, ...)
{
	static char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return buf;
}

/* The default command as one shell word: pasted into a shell, the
 * recorded arguments give the driver the same --exec. */
#define EXEC_WORD                                                         \
	"'python3 -c '\\''import json, re, subprocess, urllib.request; "  \
	"print(1)'\\'''"

static void rootfs_runs_peers_and_density_on_the_disk(void **state)
{
	const char *argv[] = { "--quick", "--kernel", file, "--initrd", file,
			       "--rootfs", file, "--cmdline", "quiet x=1",
			       NULL };
	void *o = parse(argv);

	(void)state;
	assert_non_null(o);
	assert_string_equal(args(o, "peers"),
			    join("-n 4 -w 1 --rootfs %s --kernel %s --initrd "
				 "%s", file, file, file));
	assert_string_equal(args(o, "density"),
			    join("-n 3 -w 0 --rootfs %s --exec %s --kernel "
				 "%s --initrd %s --cmdline 'quiet x=1'", file,
				 EXEC_WORD, file, file));
	assert_string_equal(args(o, "boot"),
			    join("-n 20 -w 2 --rootfs %s --exec %s --kernel "
				 "%s --initrd %s --cmdline 'quiet x=1'", file,
				 EXEC_WORD, file, file));
	assert_string_equal(args(o, "rate"),
			    join("-n 4 -w 1 --rounds 2 --kernel %s --initrd %s "
				 "--cmdline 'quiet x=1'", file, file));
	assert_true(!strncmp(args(o, "session"), "--turns 3 ", 10));
	assert_string_equal(args(o, "lifecycle"), "-");
	free(o);
}

/* Each level its own counts; smoke's peers reads less of the disk. */
static void rootfs_levels(void **state)
{
	const char *smoke[] = { "--smoke", "--kernel", file, "--initrd", file,
				"--rootfs", file, NULL };
	const char *full[] = { "--kernel", file, "--initrd", file, "--rootfs",
			       file, NULL };
	void *o = parse(smoke);

	(void)state;
	assert_non_null(o);
	assert_true(!strncmp(args(o, "peers"), "-n 2 -w 0 --read 16M --rootfs ",
			     30));
	assert_true(!strncmp(args(o, "density"), "-n 2 -w 0 --rootfs ", 19));
	free(o);
	o = parse(full);
	assert_non_null(o);
	assert_true(!strncmp(args(o, "peers"), "-n 10 -w 2 --rootfs ", 20));
	assert_true(!strncmp(args(o, "density"), "-n 8 -w 1 --rootfs ", 19));
	free(o);
}

/* Without the disk: peers is not run, density boots the plain guest
 * with its Linux counts; without --initrd peers is not run either
 * (QEMU's guest mounts its root through the initramfs). */
static void without_rootfs_or_initrd(void **state)
{
	const char *plain[] = { "--quick", "--kernel", file, "--initrd", file,
				NULL };
	const char *no_initrd[] = { "--quick", "--kernel", file, "--rootfs",
				    file, NULL };
	void *o = parse(plain);

	(void)state;
	assert_non_null(o);
	assert_string_equal(args(o, "peers"), "-");
	assert_string_equal(args(o, "session"), "-");
	assert_string_equal(args(o, "density"),
			    join("-n 4 -w 0 --kernel %s --initrd %s", file,
				 file));
	free(o);
	o = parse(no_initrd);
	assert_non_null(o);
	assert_string_equal(args(o, "peers"), "-");
	assert_true(!strncmp(args(o, "density"), "-n 3 -w 0 --rootfs ", 19));
	free(o);
}

/* The probe guest's levels stay the drivers' own. */
static void probe_guest(void **state)
{
	const char *quick[] = { "--quick", NULL };
	void *o = parse(quick);

	(void)state;
	assert_non_null(o);
	assert_string_equal(args(o, "peers"), "-n 10 -w 2");
	assert_string_equal(args(o, "density"), "-n 8 -w 1");
	assert_string_equal(args(o, "session"), "-");
	free(o);
}

/* --only naming peers with a guest not on its disk is a usage error. */
static void only_peers_needs_the_disk(void **state)
{
	const char *no_disk[] = { "--kernel", file, "--initrd", file,
				  "--only", "peers", NULL };
	const char *disk[] = { "--kernel", file, "--initrd", file, "--rootfs",
			       file, "--only", "peers,density", NULL };
	void *o;

	(void)state;
	assert_null(parse(no_disk));
	assert_non_null(strstr(err__last(), "--only: peers needs a guest on "
			       "its root disk"));
	o = parse(disk);
	assert_non_null(o);
	assert_string_equal(args(o, "boot"), "-");
	assert_string_not_equal(args(o, "peers"), "-");
	free(o);
}

static int setup(void **state)
{
	int fd = mkstemp(file);

	(void)state;
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(file);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rootfs_runs_peers_and_density_on_the_disk),
		cmocka_unit_test(rootfs_levels),
		cmocka_unit_test(without_rootfs_or_initrd),
		cmocka_unit_test(probe_guest),
		cmocka_unit_test(only_peers_needs_the_disk),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
