/* Unit tests for the RTC's calendar arithmetic (vmm/legacy_x86.c), which
 * replaces gmtime_r so that the vCPU thread opens no time zone file under
 * its seccomp filter. Checked against glibc's gmtime_r, here where files
 * may be opened. */
#include "legacy_x86.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <time.h>
#include <cmocka.h>

static void expect_gmtime(int64_t secs)
{
	time_t t = (time_t)secs;
	struct tm want;
	struct rtc_time got;

	assert_non_null(gmtime_r(&t, &want));
	legacy_x86__civil_time(secs, &got);
	assert_int_equal(got.year, want.tm_year + 1900);
	assert_int_equal(got.mon, want.tm_mon + 1);
	assert_int_equal(got.mday, want.tm_mday);
	assert_int_equal(got.wday, want.tm_wday);
	assert_int_equal(got.hour, want.tm_hour);
	assert_int_equal(got.min, want.tm_min);
	assert_int_equal(got.sec, want.tm_sec);
}

/* Known dates: the epoch, a leap day, the century rules (2000 leap, 2100
 * not), the 32-bit overflow and the second before the epoch. */
static void test_known_dates(void **state)
{
	struct rtc_time t;

	(void)state;
	legacy_x86__civil_time(0, &t);
	assert_true(t.year == 1970 && t.mon == 1 && t.mday == 1 && t.wday == 4);
	legacy_x86__civil_time(951782400, &t); /* 2000-02-29 00:00:00 */
	assert_true(t.year == 2000 && t.mon == 2 && t.mday == 29 && t.wday == 2);
	legacy_x86__civil_time(4107542400, &t); /* 2100-03-01 00:00:00 */
	assert_true(t.year == 2100 && t.mon == 3 && t.mday == 1);
	legacy_x86__civil_time(2147483648, &t); /* 2038-01-19 03:14:08 */
	assert_true(t.year == 2038 && t.mon == 1 && t.mday == 19 &&
		    t.hour == 3 && t.min == 14 && t.sec == 8);
	legacy_x86__civil_time(-1, &t); /* 1969-12-31 23:59:59 */
	assert_true(t.year == 1969 && t.mon == 12 && t.mday == 31 &&
		    t.hour == 23 && t.min == 59 && t.sec == 59 && t.wday == 3);
}

/* Every day from 1900 to 2400 at a varying time of day. */
static void test_matches_gmtime(void **state)
{
	(void)state;
	for (int64_t s = -2208988800LL; s < 13569465600LL; s += 86400 + 3607)
		expect_gmtime(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_dates),
		cmocka_unit_test(test_matches_gmtime),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
