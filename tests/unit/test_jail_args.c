/* The jail's option values (jail__parse_option): --memory, --cpus, --uid
 * and --gid take a plain decimal number (and --memory one K, M or G);
 * anything else, spaces around it, a sign, a stray suffix, zero or a
 * value out of range, is refused with a message naming the option. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "err.h"
#include "jail.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int parse(struct jail_opts *o, int opt, const char *arg)
{
	jail__init(o);
	return jail__parse_option(o, opt, arg);
}

static void refused(int opt, const char *arg, const char *name)
{
	struct jail_opts o;

	if (parse(&o, opt, arg) != -EINVAL)
		fail_msg("%s '%s' was taken", name, arg);
	if (!strstr(err__last(), name))
		fail_msg("'%s' does not name %s", err__last(), name);
}

static void memory_sizes(void **state)
{
	static const struct {
		const char *arg;
		uint64_t bytes;
	} good[] = {
		{ "1", 1 }, { "4096", 4096 }, { "512M", 512ull << 20 },
		{ "512m", 512ull << 20 }, { "2G", 2ull << 30 },
		{ "64k", 64ull << 10 }, { "1024G", 1ull << 40 },
		{ "1048576G", 1ull << 50 },
	};
	struct jail_opts o;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++) {
		if (parse(&o, JAIL_OPT_MEMORY, good[i].arg))
			fail_msg("'%s': %s", good[i].arg, err__last());
		assert_int_equal(o.memory, good[i].bytes);
		assert_true(o.limit_given);
	}
}

static void memory_garbage(void **state)
{
	static const char *const bad[] = {
		"1024 ", " 1024", "1024\t", "", " ", "0", "0M", "-1", "-1M",
		"+5M", "12X", "5T", "5MB", "5MiB", "M", "5 M", "5M ", "1.5G",
		"0x10", "1e3", "18446744073709551616", "99999999999999999999G",
		"1048577G", "1125899906842625", "5\xc7",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		refused(JAIL_OPT_MEMORY, bad[i], "--memory");
}

static void cpus(void **state)
{
	static const char *const bad[] = {
		"", " ", "1 ", " 1", "0", "0.001", "-1", "+1", "1e0", "0x1p0",
		"inf", "nan", "4097", "1.", ".", "1..5", "1,5", "2 CPUs",
	};
	struct jail_opts o;

	(void)state;
	assert_int_equal(parse(&o, JAIL_OPT_CPUS, "1.5"), 0);
	assert_true(o.cpus == 1.5);
	assert_int_equal(parse(&o, JAIL_OPT_CPUS, "0.01"), 0);
	assert_int_equal(parse(&o, JAIL_OPT_CPUS, ".5"), 0);
	assert_int_equal(parse(&o, JAIL_OPT_CPUS, "4096"), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		refused(JAIL_OPT_CPUS, bad[i], "--cpus");
}

static void ids(void **state)
{
	static const char *const bad[] = {
		"", " 5", "5 ", "-1", "+5", "bob", "4294901760", "0x10",
		"99999999999999999999",
	};
	struct jail_opts o;

	(void)state;
	assert_int_equal(parse(&o, JAIL_OPT_UID, "12345"), 0);
	assert_int_equal(o.uid, 12345);
	assert_int_equal(parse(&o, JAIL_OPT_GID, "0"), 0);
	assert_int_equal(o.gid, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		refused(JAIL_OPT_UID, bad[i], "--uid");
		refused(JAIL_OPT_GID, bad[i], "--gid");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(memory_sizes),
		cmocka_unit_test(memory_garbage),
		cmocka_unit_test(cpus),
		cmocka_unit_test(ids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
