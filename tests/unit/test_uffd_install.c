/* Unit test for installing guest memory through userfaultfd around pages
 * already present (snapshot/uffd_install.c): the prefetcher's bulk copy
 * met a page the fault handler had just installed, UFFDIO_COPY stopped
 * there with EAGAIN, and the restore failed (kvm.shell, four VMs
 * restoring in one process). Needs no KVM; skips where userfaultfd is not
 * allowed. */
#include "mem_uffd.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <setjmp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#define PAGE 4096u
#define PAGES 64u

struct region {
	int uffd;
	uint8_t *mem, *src;
};

static int setup(void **state)
{
	static struct region r;
	/* SIGBUS, not a wait for a handler, when a test reads a page that
	 * was not installed: a regression fails instead of hanging */
	struct uffdio_api api = { .api = UFFD_API,
				  .features = UFFD_FEATURE_SIGBUS };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };

	r.uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (r.uffd < 0 || ioctl(r.uffd, UFFDIO_API, &api) < 0)
		return -1;
	r.mem = mmap(NULL, PAGES * PAGE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	r.src = mmap(NULL, PAGES * PAGE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r.mem == MAP_FAILED || r.src == MAP_FAILED)
		return -1;
	reg.range.start = (uintptr_t)r.mem;
	reg.range.len = PAGES * PAGE;
	if (ioctl(r.uffd, UFFDIO_REGISTER, &reg) < 0)
		return -1;
	for (unsigned int i = 0; i < PAGES; i++)
		memset(r.src + i * PAGE, (int)(i + 1), PAGE);
	*state = &r;
	return 0;
}

static int teardown(void **state)
{
	struct region *r = *state;

	munmap(r->mem, PAGES * PAGE);
	munmap(r->src, PAGES * PAGE);
	close(r->uffd);
	return 0;
}

static void install_one(struct region *r, unsigned int page, uint8_t fill)
{
	static uint8_t buf[PAGE] __attribute__((aligned(PAGE)));
	struct uffdio_copy c = { .dst = (uintptr_t)r->mem + page * PAGE,
				 .src = (uintptr_t)buf, .len = PAGE };

	memset(buf, fill, PAGE);
	assert_int_equal(ioctl(r->uffd, UFFDIO_COPY, &c), 0);
}

/* Pages 0, 17 and 63 present first (one of them the range's first page,
 * one in the middle, one last): the bulk copy installs every other page
 * and leaves those three as they were. */
static void test_copy_around_present_pages(void **state)
{
	struct region *r = *state;
	const unsigned int present[] = { 0, 17, 63 };

	for (unsigned int i = 0; i < 3; i++)
		install_one(r, present[i], 0xee);
	assert_int_equal(mem_uffd__install(r->uffd, (uintptr_t)r->mem,
					   (uintptr_t)r->src, PAGES * PAGE,
					   PAGE), 0);
	for (unsigned int i = 0; i < PAGES; i++) {
		uint8_t want = (i == 0 || i == 17 || i == 63) ? 0xee
							     : (uint8_t)(i + 1);

		assert_int_equal(r->mem[i * PAGE], want);
		assert_int_equal(r->mem[i * PAGE + PAGE - 1], want);
	}
}

/* Zero pages around a present page, the same way. */
static void test_zeropage_around_present_page(void **state)
{
	struct region *r = *state;

	install_one(r, 5, 0x5a);
	assert_int_equal(mem_uffd__install(r->uffd, (uintptr_t)r->mem, 0,
					   16 * PAGE, PAGE), 0);
	for (unsigned int i = 0; i < 16; i++)
		assert_int_equal(r->mem[i * PAGE + 100], i == 5 ? 0x5a : 0);
}

/* An address outside any registered range is an error, not a loop. */
static void test_unregistered_fails(void **state)
{
	struct region *r = *state;

	errno = 0;
	assert_int_equal(mem_uffd__install(r->uffd, (uintptr_t)r->src,
					   (uintptr_t)r->src, PAGE, PAGE), -1);
	assert_int_not_equal(errno, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_copy_around_present_pages,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_zeropage_around_present_page,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_unregistered_fails, setup,
						teardown),
	};
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);

	if (fd < 0) {
		printf("skipping: userfaultfd: %s\n", strerror(errno));
		return 77;
	}
	close(fd);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
