/* Unit tests for command-line value parsing (base/args.c). */
#include "args.h"
#include "err.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

struct good {
	const char *text;
	uint64_t value;
};

static void size_accepts_units(void **state)
{
	static const struct good cases[] = {
		{ "0", 0 },
		{ "4096", 4096 },
		{ "4k", 4096 },
		{ "4K", 4096 },
		{ "4kB", 4096 },
		{ "4KiB", 4096 },
		{ "4kib", 4096 },
		{ "512B", 512 },
		{ "64M", 64ull << 20 },
		{ "64MiB", 64ull << 20 },
		{ "64mb", 64ull << 20 },
		{ "2G", 2ull << 30 },
		{ "2g", 2ull << 30 },
		{ "1T", 1ull << 40 },
		{ "16777215T", 16777215ull << 40 },
		{ "18446744073709551615", UINT64_MAX },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		uint64_t v = 12345;

		assert_int_equal(args__size("--mem", cases[i].text, &v), 0);
		assert_int_equal(v, cases[i].value);
	}
}

static void size_rejects_garbage(void **state)
{
	static const char *const bad[] = {
		"", "abc", "12q", "-1", "+1", " 1", "1 ", "1.5M", "0x10",
		"64Mi", "64MiBs", "4bb", "k", "4kk", "99999999999T",
		"16777216T", "18446744073709551616",
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		uint64_t v = 12345;

		assert_int_equal(args__size("--mem", bad[i], &v), -EINVAL);
		assert_int_equal(v, 12345);
		assert_non_null(strstr(err__last(), "--mem"));
		assert_non_null(strstr(err__last(), bad[i]));
	}
}

static void u64_accepts_counts(void **state)
{
	static const struct good cases[] = {
		{ "1", 1 },
		{ "10", 10 },
		{ "1e6", 1000000 },
		{ "1E3", 1000 },
		{ "7e0", 7 },
		{ "10k", 10000 },
		{ "10K", 10000 },
		{ "2M", 2000000 },
		{ "3G", 3000000000ull },
		{ "1e19", 10000000000000000000ull },
		{ "18446744073709551615", UINT64_MAX },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		uint64_t v = 12345;

		assert_int_equal(args__u64("--n", cases[i].text, 0, UINT64_MAX,
					   &v), 0);
		assert_int_equal(v, cases[i].value);
	}
}

static void u64_checks_range(void **state)
{
	uint64_t v = 12345;

	(void)state;
	assert_int_equal(args__u64("--vcpus", "1", 1, 64, &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(args__u64("--vcpus", "64", 1, 64, &v), 0);
	assert_int_equal(v, 64);
	v = 12345;
	assert_int_equal(args__u64("--vcpus", "0", 1, 64, &v), -EINVAL);
	assert_non_null(strstr(err__last(), "--vcpus"));
	assert_non_null(strstr(err__last(), "1..64"));
	assert_int_equal(args__u64("--vcpus", "65", 1, 64, &v), -EINVAL);
	/* The range applies after the suffix. */
	assert_int_equal(args__u64("--n", "2k", 0, 1999, &v), -EINVAL);
	assert_int_equal(args__u64("--n", "1e3", 1001, 2000, &v), -EINVAL);
	assert_int_equal(v, 12345);
}

static void u64_rejects_garbage(void **state)
{
	static const char *const bad[] = {
		"", "abc", "-3", "1.5", "10x", "1e", "1e+3", "1e20", "2e19",
		"19000000000000000000", "18446744073709551616", "10m", "10kk",
		"20000000000G",
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		uint64_t v = 12345;

		assert_int_equal(args__u64("--n", bad[i], 0, UINT64_MAX, &v),
				 -EINVAL);
		assert_int_equal(v, 12345);
		assert_non_null(strstr(err__last(), "--n"));
		assert_non_null(strstr(err__last(), bad[i]));
	}
}

static void duration_in_nanoseconds(void **state)
{
	static const struct good cases[] = {
		{ "250ms", 250000000ull },
		{ "10s", 10000000000ull },
		{ "2m", 120000000000ull },
		{ "5h", 18000000000000ull },
		{ "500us", 500000ull },
		{ "100ns", 100ull },
		{ "7", 7000000000ull },
		{ "0", 0 },
		{ "307445734m", 307445734ull * 60000000000ull },
		{ "18446744073709551615ns", UINT64_MAX },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		uint64_t ns = 12345;

		assert_int_equal(args__duration("--timeout", cases[i].text,
						&ns), 0);
		assert_int_equal(ns, cases[i].value);
	}
}

static void duration_rejects_garbage(void **state)
{
	static const char *const bad[] = {
		"", "5d", "ms", "s", "h", "-1s", "1.5s", "10 s", "10sec", "1e3ms",
		"18446744073709551615s", "307445735m", "5124096h",
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		uint64_t ns;

		assert_int_equal(args__duration("--timeout", bad[i], &ns),
				 -EINVAL);
		assert_non_null(strstr(err__last(), "--timeout"));
		assert_non_null(strstr(err__last(), bad[i]));
	}
}

static void probability_strictly_inside(void **state)
{
	static const char *const bad[] = { "0", "1", "-0.1", "1.5", "", "x",
					   "0.01x", "nan", "1e-999" };
	double p = 0;

	(void)state;
	assert_int_equal(args__probability("--alpha", "0.01", &p), 0);
	assert_float_equal(p, 0.01, 0);
	assert_int_equal(args__probability("--alpha", "5e-2", &p), 0);
	assert_float_equal(p, 0.05, 0);
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		assert_int_equal(args__probability("--alpha", bad[i], &p),
				 -EINVAL);
		assert_non_null(strstr(err__last(), "--alpha"));
	}
}

static void choice_finds_index(void **state)
{
	static const char *const names[] = { "anon", "memfd", "hugetlb",
					     NULL };
	unsigned int idx = 99;

	(void)state;
	assert_int_equal(args__choice("--mem-backend", "anon", names, &idx), 0);
	assert_int_equal(idx, 0);
	assert_int_equal(args__choice("--mem-backend", "memfd", names, &idx),
			 0);
	assert_int_equal(idx, 1);
	assert_int_equal(args__choice("--mem-backend", "hugetlb", names, &idx),
			 0);
	assert_int_equal(idx, 2);
}

static void choice_error_lists_choices(void **state)
{
	static const char *const names[] = { "anon", "memfd", "hugetlb",
					     NULL };
	static const char *const bad[] = { "nope", "", "mem", "memfd ",
					   "ANON" };

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		unsigned int idx = 99;

		assert_int_equal(args__choice("--mem-backend", bad[i], names,
					      &idx), -EINVAL);
		assert_int_equal(idx, 99);
		assert_non_null(strstr(err__last(), "--mem-backend"));
		assert_non_null(strstr(err__last(), "anon, memfd, hugetlb"));
	}
	assert_non_null(strstr(err__last(), "'ANON'"));
}

static void choice_survives_a_long_list(void **state)
{
	static const char *names[101];
	static const char head[] = "--x: 'other' is not one of: "
				   "a-rather-long-choice-name, a-rather";
	unsigned int idx = 99;

	(void)state;
	for (size_t i = 0; i < 100; i++)
		names[i] = "a-rather-long-choice-name";
	names[100] = NULL;
	/* The list does not fit the message; it must be cut, not overrun. */
	assert_int_equal(args__choice("--x", "other", names, &idx), -EINVAL);
	assert_int_equal(strncmp(err__last(), head, sizeof(head) - 1), 0);
}

static void both_sets_the_two_series(void **state)
{
	static const struct {
		const char *text;
		bool a, b;
	} cases[] = {
		{ "both", true, true },
		{ "fresh", true, false },
		{ "clone", false, true },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool a = !cases[i].a, b = !cases[i].b;

		assert_int_equal(args__both("--mode", cases[i].text, "fresh",
					    "clone", &a, &b), 0);
		assert_int_equal(a, cases[i].a);
		assert_int_equal(b, cases[i].b);
	}
}

static void both_rejects_others_unchanged(void **state)
{
	bool a = true, b = false;

	(void)state;
	assert_int_equal(args__both("--mode", "neither", "fresh", "clone",
				    &a, &b), -EINVAL);
	assert_true(a);
	assert_false(b);
	assert_non_null(strstr(err__last(), "both, fresh, clone"));
}

static void operands_after_options(void **state)
{
	char *argv[] = { "cmd", "--x", "extra", NULL };

	(void)state;
	optind = 3;
	assert_int_equal(args__no_operands(3, argv), 0);
	optind = 2;
	assert_int_equal(args__no_operands(3, argv), -EINVAL);
	assert_string_equal(err__last(), "unexpected argument 'extra'");
	optind = 2;
	assert_int_equal(args__bad_option(argv), -EINVAL);
	assert_string_equal(err__last(),
			    "unknown or incomplete option '--x'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(size_accepts_units),
		cmocka_unit_test(size_rejects_garbage),
		cmocka_unit_test(u64_accepts_counts),
		cmocka_unit_test(u64_checks_range),
		cmocka_unit_test(u64_rejects_garbage),
		cmocka_unit_test(duration_in_nanoseconds),
		cmocka_unit_test(duration_rejects_garbage),
		cmocka_unit_test(probability_strictly_inside),
		cmocka_unit_test(choice_finds_index),
		cmocka_unit_test(choice_error_lists_choices),
		cmocka_unit_test(choice_survives_a_long_list),
		cmocka_unit_test(both_sets_the_two_series),
		cmocka_unit_test(both_rejects_others_unchanged),
		cmocka_unit_test(operands_after_options),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
