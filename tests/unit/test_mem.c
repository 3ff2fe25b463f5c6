/* Unit tests for guest memory (vmm/mem.c): checked translation and the
 * backends that need no special host setup (anon, memfd). */
#include "err.h"
#include "mem.h"
#include "units.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

static void translate_checks_bounds(void **state)
{
	static uint8_t buf[4096];
	const struct guest_mem m = { .host = buf, .size = sizeof(buf),
				     .fd = -1 };

	(void)state;
	assert_ptr_equal(mem__gpa_to_host(&m, 0, 4096), buf);
	assert_ptr_equal(mem__gpa_to_host(&m, 4095, 1), buf + 4095);
	assert_ptr_equal(mem__gpa_to_host(&m, 4088, 8), buf + 4088);
	assert_ptr_equal(mem__gpa_to_host(&m, 100, 8), buf + 100);
	assert_null(mem__gpa_to_host(&m, 4095, 2));
	assert_null(mem__gpa_to_host(&m, 4096, 1));
	assert_null(mem__gpa_to_host(&m, 0, 4097));
	assert_null(mem__gpa_to_host(&m, 8192, 8));
}

static void translate_is_overflow_safe(void **state)
{
	static uint8_t buf[4096];
	const struct guest_mem m = { .host = buf, .size = sizeof(buf),
				     .fd = -1 };

	(void)state;
	assert_null(mem__gpa_to_host(&m, UINT64_MAX, 1));
	assert_null(mem__gpa_to_host(&m, UINT64_MAX - 7, 8));
	assert_null(mem__gpa_to_host(&m, 1, UINT64_MAX));
	assert_null(mem__gpa_to_host(&m, 0, UINT64_MAX));
	/* gpa + len wraps around to a small value inside memory. */
	assert_null(mem__gpa_to_host(&m, 16, UINT64_MAX - 15));
	assert_null(mem__gpa_to_host(&m, 4000, UINT64_MAX - 3990));
	assert_null(mem__gpa_to_host(&m, UINT64_MAX - 15, 32));
}

static void create_rejects_bad_sizes(void **state)
{
	static const size_t bad[] = { 0, 4096, MiB, 3 * MiB, 2 * MiB + 4096 };
	const struct guest_mem_ops *anon = mem__backend("anon");
	struct guest_mem m;

	(void)state;
	assert_non_null(anon);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&m, 0xaa, sizeof(m));
		assert_int_equal(mem__create(&m, anon, bad[i]), -EINVAL);
		assert_non_null(strstr(err__last(), "2 MiB"));
		assert_null(m.ops);
		assert_int_equal(m.fd, -1);
		mem__destroy(&m); /* harmless after a failed create */
	}
}

/* The permissions of the host mapping that holds `p`, from
 * /proc/self/maps ("rw-p"), or "" when not found. */
static void mapping_perms(const void *p, char perms[5])
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	perms[0] = '\0';
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end;
		char pm[5];

		if (sscanf(line, "%llx-%llx %4s", &start, &end, pm) == 3 &&
		    start <= (uintptr_t)p && (uintptr_t)p < end) {
			memcpy(perms, pm, 5);
			break;
		}
	}
	fclose(f);
}

/* Create, touch both ends, translate, destroy. */
static void round_trip(const char *backend, struct guest_mem *m)
{
	const size_t size = 4 * MiB;
	char perms[5];
	uint8_t *last;

	assert_int_equal(mem__create(m, mem__backend(backend), size), 0);
	assert_non_null(m->host);
	assert_ptr_equal(m->ops, mem__backend(backend));
	assert_int_equal(m->size, size);
	assert_int_equal(m->host[0], 0);
	assert_int_equal(m->host[size - 1], 0);
	last = mem__gpa_to_host(m, size - 1, 1);
	assert_ptr_equal(last, m->host + size - 1);
	*last = 0x5a;
	m->host[0] = 0xa5;
	assert_int_equal(m->host[size - 1], 0x5a);
	assert_int_equal(*(uint8_t *)mem__gpa_to_host(m, 0, 1), 0xa5);
	assert_null(mem__gpa_to_host(m, size - 1, 2));
	mapping_perms(m->host, perms);
	assert_int_equal(perms[0], 'r');
	assert_int_equal(perms[1], 'w');
	assert_int_equal(perms[2], '-'); /* never executable on the host */
}

static void anon_round_trip(void **state)
{
	struct guest_mem m;

	(void)state;
	round_trip("anon", &m);
	assert_int_equal(m.fd, -1);
	mem__destroy(&m);
	assert_null(m.host);
	assert_null(m.ops);
	mem__destroy(&m); /* idempotent */
}

static void memfd_round_trip(void **state)
{
	struct guest_mem m;
	struct stat st;
	uint8_t byte = 0;
	int fd;

	(void)state;
	round_trip("memfd", &m);
	fd = m.fd;
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 4 * MiB);
	/* The mapping is shared: the file sees what the guest wrote. */
	assert_int_equal(pread(fd, &byte, 1, 4 * MiB - 1), 1);
	assert_int_equal(byte, 0x5a);
	mem__destroy(&m);
	assert_null(m.host);
	assert_null(m.ops);
	/* The descriptor was closed. */
	assert_int_equal(fcntl(fd, F_GETFD), -1);
	assert_int_equal(errno, EBADF);
}

static void backends_by_name(void **state)
{
	const struct guest_mem_ops *const *all = mem__backends();
	size_t n = 0;

	(void)state;
	assert_null(mem__backend("nope"));
	assert_null(mem__backend(""));
	assert_null(mem__backend("anonymous"));
	assert_string_equal(mem__backend("anon")->name, "anon");
	assert_string_equal(mem__backend("memfd")->name, "memfd");
	assert_string_equal(mem__backend("hugetlb")->name, "hugetlb");
	/* Every listed backend has help text and is found by its name. */
	for (; all[n]; n++) {
		assert_non_null(all[n]->help);
		assert_non_null(all[n]->map);
		assert_non_null(all[n]->unmap);
		assert_ptr_equal(mem__backend(all[n]->name), all[n]);
	}
	assert_true(n >= 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(translate_checks_bounds),
		cmocka_unit_test(translate_is_overflow_safe),
		cmocka_unit_test(create_rejects_bad_sizes),
		cmocka_unit_test(anon_round_trip),
		cmocka_unit_test(memfd_round_trip),
		cmocka_unit_test(backends_by_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
