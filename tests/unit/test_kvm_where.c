/* kvm__where and kvm__emulated without KVM: a device path that does not
 * exist or is not KVM reads as not usable with the reason, and the
 * emulated-host marker is found only as a whole kernel command-line
 * word. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "kvm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void assert_contains(const char *text, const char *part)
{
	if (!strstr(text, part))
		fail_msg("'%s' lacks '%s'", text, part);
}

static void missing_device_is_not_usable(void **state)
{
	struct kvm_where w;

	(void)state;
	memset(&w, 0xa5, sizeof(w)); /* every field must be set */
	kvm__where(&w, "/nonexistent/kvm");
	assert_false(w.usable);
	assert_int_equal(w.flavour, KVM_FLAVOUR_NONE);
	assert_string_equal(kvm__flavour_name(w.flavour), "none");
	assert_int_equal(w.api_version, 0);
	/* the reason depends on the host's modules, but always names the
	 * device that is missing */
	assert_contains(w.reason, "/nonexistent/kvm");
	assert_true(strlen(w.emulated) < sizeof(w.emulated));
}

/* /dev/null opens but answers no KVM ioctl. */
static void non_kvm_device_is_not_usable(void **state)
{
	struct kvm_where w;

	(void)state;
	if (access("/dev/null", R_OK | W_OK))
		skip();
	kvm__where(&w, "/dev/null");
	assert_false(w.usable);
	assert_int_equal(w.flavour, KVM_FLAVOUR_NONE);
	assert_int_equal(w.api_version, 0);
	assert_contains(w.reason, "KVM_GET_API_VERSION on /dev/null failed");
}

/* kvm__emulated on a command line written to a temporary file. */
static void emulated_of(const char *cmdline, char *buf, size_t size)
{
	char path[] = "/tmp/coldstart-cmdline-XXXXXX";
	int fd = mkstemp(path);
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(cmdline, f);
	fclose(f);
	kvm__emulated(buf, size, path);
	unlink(path);
}

static void emulated_marker_anywhere_as_a_word(void **state)
{
	static const struct {
		const char *cmdline, *want;
	} cases[] = {
		{ "coldstart.emulated=qemu-tcg-svm console=ttyS0\n",
		  "qemu-tcg-svm" },
		{ "root=/dev/vda coldstart.emulated=qemu-tcg-svm quiet\n",
		  "qemu-tcg-svm" },
		{ "root=/dev/vda quiet coldstart.emulated=qemu-tcg-svm\n",
		  "qemu-tcg-svm" },
		{ "root=/dev/vda coldstart.emulated=qemu-tcg-svm", "qemu-tcg-svm" },
		{ "root=/dev/vda console=ttyS0 quiet\n", "" },
		{ "", "" },
		/* a longer parameter ending in the marker is another one */
		{ "xcoldstart.emulated=fake quiet\n", "" },
		{ "root=/dev/vda my.coldstart.emulated=fake\n", "" },
		{ "xcoldstart.emulated=fake coldstart.emulated=real\n", "real" },
		{ "coldstart.emulated= quiet\n", "" },
	};
	char buf[32];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(buf, 'x', sizeof(buf));
		emulated_of(cases[i].cmdline, buf, sizeof(buf));
		if (strcmp(buf, cases[i].want))
			fail_msg("'%s': got '%s', want '%s'", cases[i].cmdline,
				 buf, cases[i].want);
	}
}

/* A label longer than the buffer is cut, never overrun. */
static void emulated_label_fits_the_buffer(void **state)
{
	char buf[5];

	(void)state;
	emulated_of("coldstart.emulated=qemu-tcg-svm\n", buf, sizeof(buf));
	assert_string_equal(buf, "qemu");
}

static void emulated_without_cmdline_is_native(void **state)
{
	char buf[32] = "stale";

	(void)state;
	kvm__emulated(buf, sizeof(buf), "/nonexistent/cmdline");
	assert_string_equal(buf, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(missing_device_is_not_usable),
		cmocka_unit_test(non_kvm_device_is_not_usable),
		cmocka_unit_test(emulated_marker_anywhere_as_a_word),
		cmocka_unit_test(emulated_label_fits_the_buffer),
		cmocka_unit_test(emulated_without_cmdline_is_native),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
