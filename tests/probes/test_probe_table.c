/* The probe table drives the --probes parser, the names the help texts
 * and errors list, and the report's sections: every row is reachable
 * through each of them, and nothing else is. */
#include "err.h"
#include "probe_report.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_every_name_parses_to_its_bit(void **state)
{
	unsigned int seen = 0;

	(void)state;
	for (unsigned int i = 0; i < PROBES_NR; i++) {
		const struct probe_row *row = probes__row(i);
		unsigned int set = 0;

		assert_int_equal(row->bit, 1u << i);
		assert_int_equal(probes__parse_set(row->name, &set), 0);
		assert_int_equal(set, row->bit);
		assert_string_equal(probes__probe_name(row->bit), row->name);
		seen |= row->bit;
	}
	assert_int_equal(seen, PROBES_ALL);
}

static void test_groups_follow_the_table(void **state)
{
	unsigned int set = 0, costly = 0;

	(void)state;
	for (unsigned int i = 0; i < PROBES_NR; i++)
		if (probes__row(i)->costly)
			costly |= probes__row(i)->bit;
	assert_int_equal(probes__parse_set("default", &set), 0);
	assert_int_equal(set, PROBES_ALL & ~costly);
	assert_int_equal(probes__parse_set("", &set), 0);
	assert_int_equal(set, PROBES_ALL & ~costly);
	assert_int_equal(probes__parse_set("all", &set), 0);
	assert_int_equal(set, PROBES_ALL);
}

/* The list the help texts print: every name, in table order. */
static void test_help_lists_every_row(void **state)
{
	char names[256], expect[256] = "";

	(void)state;
	probes__set_names(names, sizeof(names), PROBES_ALL, ",", ",");
	for (unsigned int i = 0; i < PROBES_NR; i++) {
		strcat(expect, i ? "," : "");
		strcat(expect, probes__row(i)->name);
	}
	assert_string_equal(names, expect);
	probes__set_names(names, sizeof(names), PROBES_KVMEXIT |
			  PROBES_FAULTS | PROBES_KVMIOCTL, ", ", " and ");
	assert_string_equal(names, "kvmexit, faults and kvmioctl");
	probes__set_names(names, 9, PROBES_ALL, ",", ",");
	assert_string_equal(names, "kvmexit,");
}

static void test_unknown_name_lists_every_row(void **state)
{
	unsigned int set = 7;

	(void)state;
	assert_int_equal(probes__parse_set("kvmexit,frobs", &set), -EINVAL);
	assert_int_equal(set, 7);
	assert_non_null(strstr(err__last(), "'frobs' is not a probe"));
	for (unsigned int i = 0; i < PROBES_NR; i++)
		assert_non_null(strstr(err__last(), probes__row(i)->name));
}

static void test_every_event_has_a_row(void **state)
{
	(void)state;
	for (int ev = 0; ev < PEV_COUNT; ev++) {
		unsigned int bit = probes__event_probe(ev);

		assert_true(bit && (bit & PROBES_ALL) && !(bit & (bit - 1)));
		assert_true(strlen(probes__event_tracepoint(ev)) > 0);
		assert_non_null(strchr(probes__event_name(ev), ':'));
	}
}

static char *print_report(const struct probes_report *r)
{
	struct probe_report_opts o = { 0 };
	FILE *f = tmpfile();
	char *text;
	long size;

	assert_non_null(f);
	probe_report__print(f, r, &o);
	size = ftell(f);
	text = calloc(1, (size_t)size + 1);
	assert_non_null(text);
	rewind(f);
	assert_int_equal(fread(text, 1, (size_t)size, f), size);
	fclose(f);
	return text;
}

/* A report of one probe prints the others as "not probed", lists only
 * it in JSON "probes", and has every row's JSON member. */
static void test_report_goes_through_the_table(void **state)
{
	(void)state;
	for (unsigned int i = 0; i < PROBES_NR; i++) {
		const struct probe_row *row = probes__row(i);
		struct probes_report r = { .set = row->bit };
		struct probe_report_opts o = { 0 };
		char *text = print_report(&r), *np;
		json_t *doc = probe_report__json(&r, &o);

		np = strstr(text, "not probed (see --probes): ");
		assert_non_null(np);
		for (unsigned int j = 0; j < PROBES_NR; j++)
			assert_true(!strstr(np, probes__row(j)->name) ==
				    (i == j));
		assert_non_null(doc);
		assert_int_equal(json_array_size(json_object_get(doc,
						 "probes")), 1);
		assert_string_equal(json_string_value(json_array_get(
			json_object_get(doc, "probes"), 0)), row->name);
		for (unsigned int j = 0; j < PROBES_NR; j++)
			if (probes__row(j)->json)
				assert_non_null(json_object_get(doc,
					probes__row(j)->json_key));
		json_decref(doc);
		free(text);
	}
}

/* Each row with a section prints it only when it was in the set. */
static void test_sections_follow_the_set(void **state)
{
	struct probes_report none = { 0 }, all = { .set = PROBES_ALL };
	char *without = print_report(&none), *with = print_report(&all);

	(void)state;
	assert_non_null(strstr(with, "VM exits (kvm tracepoints):"));
	assert_null(strstr(without, "VM exits (kvm tracepoints):"));
	assert_non_null(strstr(with, "mmap_lock:"));
	assert_null(strstr(without, "mmap_lock:"));
	assert_null(strstr(with, "not probed"));
	free(without);
	free(with);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_name_parses_to_its_bit),
		cmocka_unit_test(test_groups_follow_the_table),
		cmocka_unit_test(test_help_lists_every_row),
		cmocka_unit_test(test_unknown_name_lists_every_row),
		cmocka_unit_test(test_every_event_has_a_row),
		cmocka_unit_test(test_report_goes_through_the_table),
		cmocka_unit_test(test_sections_follow_the_set),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
