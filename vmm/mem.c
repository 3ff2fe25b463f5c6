/* Guest memory backends: anonymous, memfd and hugetlb. */
#include "mem.h"

#include "err.h"

#include <fcntl.h>
#include <linux/memfd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GUEST_PROT (PROT_READ | PROT_WRITE)

/* Names the mapping "[anon:coldstart-guest]" in /proc/PID/maps where the
 * kernel allows (CONFIG_ANON_VMA_NAME), so tools and users can find it. */
static void name_anon(void *p, size_t size)
{
	prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)p, size,
	      (unsigned long)MEM_VMA_NAME);
}

static int anon_map(struct guest_mem *m)
{
	void *p = mmap(NULL, m->size, GUEST_PROT,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return err__sys(errno, "mmap of %zu bytes of guest memory",
				m->size);
	name_anon(p, m->size);
	m->host = p;
	return 0;
}

static void plain_unmap(struct guest_mem *m)
{
	munmap(m->host, m->size);
	if (m->fd >= 0)
		close(m->fd);
}

static int shared_file_map(struct guest_mem *m, const char *what)
{
	void *p;

	if (ftruncate(m->fd, (off_t)m->size) < 0)
		return err__sys(errno, "sizing %s guest memory", what);
	p = mmap(NULL, m->size, GUEST_PROT, MAP_SHARED | MAP_NORESERVE, m->fd,
		 0);
	if (p == MAP_FAILED)
		return err__sys(errno, "mmap of %s guest memory", what);
	m->host = p;
	return 0;
}

/* A memfd with `flags`, sized and mapped shared. */
static int memfd_backed(struct guest_mem *m, unsigned int flags,
			const char *what)
{
	int ret;

	m->fd = memfd_create(MEM_VMA_NAME, MFD_CLOEXEC | flags);
	if (m->fd < 0)
		return err__sys(errno, "memfd_create for %s guest memory", what);
	ret = shared_file_map(m, what);
	if (ret < 0) {
		close(m->fd);
		m->fd = -1;
	}
	return ret;
}

static int memfd_map(struct guest_mem *m)
{
	return memfd_backed(m, 0, "memfd");
}

/* The first number after `key` in the small file at `path`, or -1. */
static long read_number(const char *path, const char *key)
{
	char buf[4096] = "";
	const char *p = buf;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || (key && !(p = strstr(buf, key))))
		return -1;
	p += key ? strlen(key) : 0;
	return strtol(p, NULL, 10);
}

/* Free 2 MiB hugetlb pages, from sysfs or else (in a jail, which has its
 * own /proc but no /sys) /proc/meminfo when its default size is 2 MiB;
 * -1 when neither tells. */
static long free_hugepages(void)
{
	long n = read_number(
		"/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages",
		NULL);

	if (n >= 0 ||
	    read_number("/proc/meminfo", "Hugepagesize:") != 2048)
		return n;
	return read_number("/proc/meminfo", "HugePages_Free:");
}

int mem__need_hugepages(size_t size, const char *what)
{
	long need = (long)(size / MEM_ALIGN), have = free_hugepages();

	if (have < need && have >= 0)
		return err__set(ENOTSUP,
				"%s needs %ld free 2 MiB pages, the host has "
				"%ld (reserve them with: echo N > "
				"/proc/sys/vm/nr_hugepages)", what, need, have);
	return 0;
}

static int hugetlb_map(struct guest_mem *m)
{
	int ret = mem__need_hugepages(m->size, "the hugetlb backend");

	if (ret < 0)
		return ret;
	return memfd_backed(m, MFD_HUGETLB | MFD_HUGE_2MB, "hugetlb");
}

static const struct guest_mem_ops anon_ops = {
	.name = "anon",
	.help = "private anonymous memory (default)",
	.map = anon_map,
	.unmap = plain_unmap,
};

static const struct guest_mem_ops memfd_ops = {
	.name = "memfd",
	.help = "shared memfd (a file descriptor other processes could map)",
	.map = memfd_map,
	.unmap = plain_unmap,
};

static const struct guest_mem_ops hugetlb_ops = {
	.name = "hugetlb",
	.help = "memfd on 2 MiB hugetlb pages (needs vm.nr_hugepages)",
	.map = hugetlb_map,
	.unmap = plain_unmap,
};

static const struct guest_mem_ops *const backends[] = {
	&anon_ops, &memfd_ops, &hugetlb_ops, NULL,
};

const struct guest_mem_ops *const *mem__backends(void)
{
	return backends;
}

const struct guest_mem_ops *mem__find(const struct guest_mem_ops *const *list,
				      const char *name)
{
	for (size_t i = 0; list[i]; i++)
		if (!strcmp(list[i]->name, name))
			return list[i];
	return NULL;
}

int mem__choose(const struct guest_mem_ops *const *list, const char *opt,
		const char *name, const struct guest_mem_ops **out)
{
	char names[256] = "";
	size_t used = 0;

	*out = mem__find(list, name);
	if (*out)
		return 0;
	for (size_t i = 0; list[i] && used < sizeof(names); i++)
		used += (size_t)snprintf(names + used, sizeof(names) - used,
					 "%s%s", i ? ", " : "", list[i]->name);
	return err__set(EINVAL, "%s: '%s' is not one of: %s", opt, name,
			names);
}

const struct guest_mem_ops *mem__backend(const char *name)
{
	return mem__find(backends, name);
}

int mem__create(struct guest_mem *m, const struct guest_mem_ops *ops,
		size_t size)
{
	return mem__create_from(m, ops, size, NULL);
}

int mem__create_from(struct guest_mem *m, const struct guest_mem_ops *ops,
		     size_t size, const struct mem_source *src)
{
	struct timespec t0, t1;
	int ret;

	memset(m, 0, sizeof(*m));
	m->fd = -1;
	m->src_fd = ops->restore && src ? src->fd : -1;
	m->zmem = ops->restore && src ? src->zmem : NULL;
	if (ops->restore && m->src_fd < 0)
		return err__set(EINVAL, "restore strategy %s needs a memory "
				"file", ops->name);
	if (m->src_fd >= 0 && !(m->src_bytes = src->bytes)) {
		struct stat st;

		if (fstat(m->src_fd, &st) < 0)
			return err__sys(errno, "fstat of the memory file");
		m->src_bytes = (uint64_t)st.st_size;
	}
	if (size == 0 || size % MEM_ALIGN)
		return err__set(EINVAL, "guest memory size %zu is not a "
				"positive multiple of 2 MiB", size);
	/* A copy: the caller's string may not live as long as the memory
	 * (prefetch writes the working set at unmap). */
	if (ops->restore && src && src->wset_path) {
		m->wset_path = strdup(src->wset_path);
		if (!m->wset_path)
			return err__set(ENOMEM, "copying the working-set path");
	}
	m->ops = ops;
	m->size = size;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = ops->map(m);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	m->stats.setup_ns = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000ll +
				       (t1.tv_nsec - t0.tv_nsec));
	if (ret < 0) {
		m->ops = NULL;
		free((char *)m->wset_path);
		m->wset_path = NULL;
	}
	return ret;
}

int mem__check_source(const struct guest_mem *m)
{
	struct stat st;

	if (m->src_fd < 0)
		return 0;
	if (fstat(m->src_fd, &st) < 0)
		return err__sys(errno, "fstat of the memory file");
	if ((uint64_t)st.st_size >= m->src_bytes)
		return 0;
	return err__set(EIO, "the memory file shrank from %llu to %llu bytes "
			"during the restore: was it truncated?",
			(unsigned long long)m->src_bytes,
			(unsigned long long)st.st_size);
}

void mem__on_failure(struct guest_mem *m, void (*fail)(void *, const char *),
		     void *ctx)
{
	__atomic_store_n(&m->fail_ctx, ctx, __ATOMIC_RELAXED);
	__atomic_store_n(&m->fail, fail, __ATOMIC_RELEASE);
}

void mem__settle(struct guest_mem *m)
{
	if (m->ops && m->ops->settle)
		m->ops->settle(m);
}

void mem__destroy(struct guest_mem *m)
{
	free(m->written);
	m->written = NULL;
	if (m->ops)
		m->ops->unmap(m);
	free((char *)m->wset_path);
	m->wset_path = NULL;
	m->ops = NULL;
	m->host = NULL;
	m->fd = -1;
}

void mem__mark_written(const struct guest_mem *m, uint64_t gpa, uint64_t len)
{
	uint64_t *w = __atomic_load_n(&m->written, __ATOMIC_ACQUIRE);

	if (!w || !len || gpa >= m->size)
		return;
	if (len > m->size - gpa)
		len = m->size - gpa;
	for (uint64_t p = gpa / 4096; p <= (gpa + len - 1) / 4096; p++)
		__atomic_fetch_or(&w[p / 64], 1ull << (p % 64),
				  __ATOMIC_RELAXED);
}

void *mem__gpa_to_host(const struct guest_mem *m, uint64_t gpa, uint64_t len)
{
	if (gpa > m->size || len > m->size - gpa)
		return NULL;
	return m->host + gpa;
}
