/* Unit tests for resultfmt/: a document made from its caller's facts,
 * the warnings and texts the writer derives, and reading it back. */
#include "result.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static bool has_warning(const json_t *doc, const char *text)
{
	const json_t *w;
	size_t i;

	json_array_foreach(json_object_get(doc, "warnings"), i, w)
		if (strstr(json_string_value(w), text))
			return true;
	return false;
}

/* A first sample is a first-run effect only when it is a MAD outlier
 * and more than 10 % above the median: 51.6 vs 48.4 ns with MAD 0 is an
 * outlier but 6.6 % slower, so no first-run warning; 60 is 24 % slower.
 * {12,10,8,12,8,10,11}: 20 % slower but within 3 robust sigmas (MAD 2,
 * limit 8.9), so no warning either. */
static void first_run_warning_needs_practical_difference(void **state)
{
	static const double close[] = { 51.6, 48.4, 48.4, 48.4, 48.4 };
	static const double slow[] = { 60, 48.4, 48.4, 48.4, 48.4 };
	static const double spread[] = { 12, 10, 8, 12, 8, 10, 11 };
	json_t *doc = json_pack("{s:[], s:[]}", "series", "warnings");

	(void)state;
	assert_non_null(result__add_series(doc, "close", "ns", RESULT_LOWER,
					   NULL, close, 5));
	assert_true(has_warning(doc, "close: 1 of 5 samples are outliers"));
	assert_false(has_warning(doc, "close: the first counted sample"));
	assert_non_null(result__add_series(doc, "spread", "ns", RESULT_LOWER,
					   NULL, spread, 7));
	assert_false(has_warning(doc, "spread:"));
	assert_non_null(result__add_series(doc, "slow", "ns", RESULT_LOWER,
					   NULL, slow, 5));
	assert_true(has_warning(doc, "slow: the first counted sample is slow "
				"(60.0 ns vs median 48.4 ns)"));
	json_decref(doc);
}

/* Values read in the unit their size (or their column's) suits. */
static void value_text_units(void **state)
{
	char buf[48];

	(void)state;
	result__value_text(buf, sizeof(buf), "ns", 48.4, 48.4);
	assert_string_equal(buf, "48.4 ns");
	result__value_text(buf, sizeof(buf), "ns", 813830, 813830);
	assert_string_equal(buf, "813.83 us");
	result__value_text(buf, sizeof(buf), "ns", 1634300, 813830);
	assert_string_equal(buf, "1634.30 us");
	result__value_text(buf, sizeof(buf), "ns", 1138000, 1138000);
	assert_string_equal(buf, "1.138 ms");
	result__value_text(buf, sizeof(buf), "kib", 5808, 5808);
	assert_string_equal(buf, "5808 KiB");
	/* never e-notation: 37632.6 KiB reads as MiB */
	result__value_text(buf, sizeof(buf), "kib", 37632.6, 37632.6);
	assert_string_equal(buf, "36.75 MiB");
	/* one unit for a column: a small value in its reference's unit */
	result__value_text(buf, sizeof(buf), "kib", 112, 37632.6);
	assert_string_equal(buf, "0.11 MiB");
	result__value_text(buf, sizeof(buf), "vms_per_s", 1762.4, 1762.4);
	assert_string_equal(buf, "1762 VMs/s");
	result__value_text(buf, sizeof(buf), "vms_per_gib", 2896.1, 234.4);
	assert_string_equal(buf, "2896.1 VMs/GiB");
	result__value_text(buf, sizeof(buf), "mib_per_s", 36.03, 36.03);
	assert_string_equal(buf, "36.03 MiB/s");
	result__value_text(buf, sizeof(buf), "ops", 12345678.9, 12345678.9);
	assert_string_equal(buf, "12345679 ops");
	/* a rate in a summary line or table cell: never 0 for a slow one
	 * (a Linux guest in the emulated host: 0.149 VMs/s read "0") */
	assert_string_equal(result__rate_text(buf, sizeof(buf), 0.1491), "0.149");
	assert_string_equal(result__rate_text(buf, sizeof(buf), 12.34), "12.3");
	assert_string_equal(result__rate_text(buf, sizeof(buf), 1762.4), "1762");
	assert_string_equal(result__rate_text(buf, sizeof(buf), 0), "0");
}

/* The Markdown warning list: outlier warnings collapse into one line
 * with their count and the first five names; others stay whole. */
static void md_warnings_collapse_outliers(void **state)
{
	json_t *doc = json_pack("{s:[], s:[s]}", "series", "warnings",
				"other: keep me");
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	for (int i = 0; i < 7; i++)
		result__warn(doc, "s%d: 1 of 5 samples are outliers (more "
			     "than 3 robust standard deviations from the "
			     "median)", i);
	result__md_warning_list(f, doc);
	fclose(f);
	assert_non_null(strstr(text, "- other: keep me\n"));
	assert_non_null(strstr(text, "- 7 series have MAD outliers"));
	assert_non_null(strstr(text, ": s0, s1, s2, s3, s4, ...;"));
	assert_null(strstr(text, "s5"));
	assert_int_equal(json_array_size(json_object_get(doc, "warnings")), 8);
	free(text);
	json_decref(doc);
}

/* The skeleton keeps its keys in the order documents have always had,
 * and takes the facts it was given as they are: no VMM asked. */
static void make_orders_keys_and_takes_facts(void **state)
{
	static const char *const keys[] = { "schema", "bench", "coldstart",
		"sysinfo", "config", "series", "warnings", "skipped",
		"seccomp", "guest" };
	struct result_origin o = {
		.sysinfo = json_pack("{s:{s:s}, s:s}", "coldstart", "version",
				     "9.9", "hostname", "h"),
		.seccomp = json_pack("{s:s}", "mode", "off"),
		.guest = json_pack("{s:s}", "name", "probe"),
	};
	json_t *doc = result__make("boot", json_pack("{s:i}", "count", 3), &o);
	const char *key;
	json_t *v;
	size_t i = 0;

	(void)state;
	assert_non_null(doc);
	json_object_foreach(doc, key, v) {
		assert_true(i < sizeof(keys) / sizeof(keys[0]));
		assert_string_equal(key, keys[i++]);
	}
	assert_int_equal(i, sizeof(keys) / sizeof(keys[0]));
	assert_int_equal(json_integer_value(json_object_get(doc, "schema")),
			 RESULT_SCHEMA);
	assert_string_equal(json_string_value(json_object_get(json_object_get(
				    doc, "coldstart"), "version")), "9.9");
	assert_ptr_equal(json_object_get(doc, "sysinfo"), o.sysinfo);
	assert_string_equal(json_string_value(json_object_get(json_object_get(
				    doc, "guest"), "name")), "probe");
	json_decref(doc);
}

/* Without sysinfo (its collection failed) both it and the build are
 * null, and an absent config is an empty object. */
static void make_without_sysinfo(void **state)
{
	struct result_origin o = { .seccomp = json_object(),
				   .guest = json_object() };
	json_t *doc = result__make("boot", NULL, &o);

	(void)state;
	assert_non_null(doc);
	assert_true(json_is_null(json_object_get(doc, "sysinfo")));
	assert_true(json_is_null(json_object_get(doc, "coldstart")));
	assert_int_equal(json_object_size(json_object_get(doc, "config")), 0);
	json_decref(doc);
}

/* A made and filled document reads back: its series by name, the
 * emulated host's label, and an empty series only for parse_all. */
static void made_document_reads_back(void **state)
{
	static const double x[] = { 3, 1, 2 };
	struct result_origin o = {
		.sysinfo = json_pack("{s:{s:s}}", "kvm", "emulated",
				     "qemu-tcg-svm"),
		.seccomp = json_object(),
		.guest = json_object(),
	};
	json_t *doc = result__make("boot", NULL, &o);
	struct result_doc d;
	const struct result_series *s;

	(void)state;
	assert_non_null(result__add_series(doc, "b", "ns", RESULT_LOWER, NULL,
					   x, 3));
	assert_non_null(result__add_series(doc, "a", "vms_per_s",
					   RESULT_HIGHER, NULL, x, 2));
	assert_int_equal(result__parse(doc, &d), 0);
	assert_string_equal(d.bench, "boot");
	assert_int_equal(d.nr_series, 2);
	s = result__find(&d, "a");
	assert_non_null(s);
	assert_int_equal(s->n, 2);
	assert_true(s->higher_is_better);
	assert_null(result__find(&d, "c"));
	assert_string_equal(result__sysinfo_emulated(d.sysinfo),
			    "qemu-tcg-svm");
	result__free(&d);
	assert_non_null(result__add_series(doc, "empty", "ns", RESULT_LOWER,
					   NULL, NULL, 0));
	assert_int_equal(result__parse(doc, &d), -EINVAL);
	assert_int_equal(result__parse_all(doc, &d), 0);
	assert_int_equal(d.nr_series, 3);
	result__free(&d);
	json_decref(doc);
}

/* A native host, or a document from before the label, has none. */
static void sysinfo_without_label_is_native(void **state)
{
	json_t *sys = json_pack("{s:{s:n}}", "kvm", "emulated");

	(void)state;
	assert_null(result__sysinfo_emulated(sys));
	assert_null(result__sysinfo_emulated(NULL));
	json_decref(sys);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(make_orders_keys_and_takes_facts),
		cmocka_unit_test(make_without_sysinfo),
		cmocka_unit_test(made_document_reads_back),
		cmocka_unit_test(sysinfo_without_label_is_native),
		cmocka_unit_test(first_run_warning_needs_practical_difference),
		cmocka_unit_test(value_text_units),
		cmocka_unit_test(md_warnings_collapse_outliers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
