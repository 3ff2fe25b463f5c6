/* Unit test for mem__settle on userfaultfd memory (snapshot/mem_uffd.c):
 * settling stopped the fault handler and left the range registered, so a
 * thread touching a page still missing afterwards waited forever (a vsock
 * device's thread once its VM ended, and the restore with it, joining
 * that thread). Needs no KVM; skips where userfaultfd is not allowed. */
#include "err.h"
#include "mem_uffd.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#define PAGE 4096u
#define SIZE (2u << 20)

static volatile int skipped;

/* A memory file whose page i holds i + 1 in every byte. */
static int memory_file(void)
{
	char path[] = "/tmp/coldstart-settle-XXXXXX";
	int fd = mkstemp(path);
	uint8_t *page = malloc(PAGE);

	assert_true(fd >= 0 && page);
	unlink(path);
	for (unsigned int i = 0; i < SIZE / PAGE; i++) {
		memset(page, (int)(i + 1), PAGE);
		assert_int_equal(write(fd, page, PAGE), PAGE);
	}
	free(page);
	return fd;
}

static void *touch(void *p)
{
	return (void *)(uintptr_t)*(volatile uint8_t *)p;
}

static const struct guest_mem_ops *const strategies[] = {
	&mem_uffd_ops, &mem_prefetch_ops,
};

/* A page first touched after mem__settle comes back (its contents are
 * not promised) instead of waiting for a handler that is gone; the
 * stats stay what they were at the settle. */
static void test_touch_after_settle(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(strategies) / sizeof(*strategies);
	     i++) {
		int fd = memory_file();
		struct mem_source src = { .fd = fd, .bytes = SIZE };
		struct guest_mem m;
		struct mem_stats st;
		struct timespec until;
		pthread_t t;
		void *got;
		int ret = mem__create_from(&m, strategies[i], SIZE, &src);

		if (ret < 0) {
			print_message("skipped: %s\n", err__last());
			close(fd);
			skipped = 1;
			return;
		}
		/* served by the handler, from the file */
		assert_int_equal(*(volatile uint8_t *)(m.host + 3 * PAGE), 4);
		mem__settle(&m);
		st = m.stats;
		assert_int_equal(pthread_create(&t, NULL, touch,
						m.host + 7 * PAGE), 0);
		/* a hang detector, not a measurement: the touch takes
		 * microseconds; before the fix it never returned */
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 20;
		ret = pthread_timedjoin_np(t, &got, &until);
		if (ret == ETIMEDOUT)
			fail_msg("%s: a page touched after mem__settle is still "
				 "waiting for its fault to be served",
				 strategies[i]->name);
		assert_int_equal(ret, 0);
		assert_memory_equal(&st, &m.stats, sizeof(st));
		mem__destroy(&m);
		close(fd);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_touch_after_settle),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);

	return failed ? failed : skipped ? 77 : 0;
}
