/* The probes of a build without BPF: attaching fails with -ENOTSUP and a
 * message naming what was missing, so `--probes` exits 77; the probe
 * table is there, without loaders. Linked with probes/ as a build without
 * BPF has it, whatever this build has. */
#include "err.h"
#include "probe_row.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static void test_attach_fails_clearly(void **state)
{
	struct probes *p = (struct probes *)&p;

	(void)state;
	assert_false(probes__built());
	assert_int_equal(probes__attach(getpid(), PROBES_ALL, &p), -ENOTSUP);
	assert_null(p);
	assert_non_null(strstr(err__last(), "without eBPF probes"));
	assert_non_null(strstr(err__last(), "clang"));
	probes__destroy(NULL);
}

static void test_names_and_percentiles(void **state)
{
	struct probes_hist h = { .count = 4, .sum_ns = 40, .max_ns = 15 };

	(void)state;
	assert_string_equal(probes__event_name(PEV_KVM_PIO), "kvm:kvm_pio");
	assert_string_equal(probes__ioctl_name(KVMIOCTL_RUN), "KVM_RUN");
	assert_string_equal(probes__exit_reason_name(2), "IO");
	assert_int_equal(probes__exit_kind_event(KVMEXIT_PIO_OUT),
			 PEV_KVM_PIO);
	/* Four values in [8, 16) with a maximum of 15. */
	h.slots[3] = 4;
	assert_true(probes__hist_percentile(&h, 50) >= 8);
	assert_true(probes__hist_percentile(&h, 100) <= 16);
	h = (struct probes_hist){ .count = 1, .sum_ns = 700, .max_ns = 700 };
	h.slots[9] = 1;
	assert_true(probes__hist_percentile(&h, 50) == 700);
}

/* The table is there without BPF, without loaders: names parse. */
static void test_rows_without_loaders(void **state)
{
	unsigned int set = 0;

	(void)state;
	for (unsigned int i = 0; i < PROBES_NR; i++) {
		assert_null(probes__row(i)->open);
		assert_null(probes__row(i)->collect);
	}
	assert_int_equal(probes__parse_set("kvmexit,faulttime", &set), 0);
	assert_int_equal(set, PROBES_KVMEXIT | PROBES_FAULTTIME);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attach_fails_clearly),
		cmocka_unit_test(test_names_and_percentiles),
		cmocka_unit_test(test_rows_without_loaders),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
