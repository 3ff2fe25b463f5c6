/* A snapshot's memory file as the restore strategies read it: its data
 * extents, a range of it read into guest memory, and the 2 MiB-aligned
 * memory that transparent huge pages back. Below both mem_restore.c (the
 * strategies' table and the eager ones) and mem_uffd.c (the lazy ones). */
#include "mem_source.h"

#include "err.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define GUEST_PROT (PROT_READ | PROT_WRITE)

int mem_source__for_each_extent(int fd, uint64_t size,
				 int (*fn)(void *ctx, uint64_t start,
					   uint64_t end),
				 void *ctx)
{
	off_t end = (off_t)size, data, hole;
	int ret;

	for (data = lseek(fd, 0, SEEK_DATA); data >= 0 && data < end;
	     data = lseek(fd, hole, SEEK_DATA)) {
		hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0 || hole > end)
			hole = end;
		ret = fn(ctx, (uint64_t)data, (uint64_t)hole);
		if (ret < 0)
			return ret;
	}
	if (data < 0 && errno != ENXIO)
		return err__sys(errno, "seeking the memory file");
	return 0;
}

int mem_source__read_range(struct guest_mem *m, uint64_t start,
			    uint64_t end)
{
	for (uint64_t at = start; at < end;) {
		ssize_t n = pread(m->src_fd, m->host + at, (size_t)(end - at),
				  (off_t)at);

		if (n == 0 && mem__check_source(m) < 0)
			return -EIO;
		if (n <= 0)
			return err__sys(n < 0 ? errno : EIO, "reading the memory "
					"file at offset %llu",
					(unsigned long long)at);
		at += (uint64_t)n;
		m->stats.bytes_read += (uint64_t)n;
	}
	return 0;
}

/* What the kernel said of THP, read once: a jail entered later hides
 * /sys. 1 available, -1 no such file, -2 set to never. */
static int thp_state;

static int read_thp_state(const char *path)
{
	char buf[128] = "";
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return strstr(buf, "[never]") || !strchr(buf, '[') ? -2 : 1;
}

int mem_source__thp_available(void)
{
	static const char path[] = "/sys/kernel/mm/transparent_hugepage/enabled";
	int state = __atomic_load_n(&thp_state, __ATOMIC_ACQUIRE);

	if (state == 0) {
		state = read_thp_state(path);
		__atomic_store_n(&thp_state, state, __ATOMIC_RELEASE);
	}
	if (state == -1)
		return err__set(ENOTSUP, "transparent huge pages: %s is "
				"missing (no THP in this kernel)", path);
	if (state == -2)
		return err__set(ENOTSUP, "transparent huge pages are disabled "
				"(%s says never; enable them with: echo madvise "
				"> %s)", path, path);
	return 0;
}

/* Anonymous memory whose start is 2 MiB aligned, so that huge pages can
 * map it and guest-physical 2 MiB frames line up with them. */
static void *map_aligned(size_t size)
{
	size_t len = size + MEM_ALIGN;
	uint8_t *p = mmap(NULL, len, GUEST_PROT,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uintptr_t start;

	if (p == MAP_FAILED)
		return p;
	start = ((uintptr_t)p + MEM_ALIGN - 1) & ~(uintptr_t)(MEM_ALIGN - 1);
	if (start > (uintptr_t)p)
		munmap(p, start - (uintptr_t)p);
	munmap((uint8_t *)start + size,
	       (uintptr_t)p + len - (start + size));
	return (void *)start;
}

int mem_source__map_thp(size_t size, void **out)
{
	int ret = mem_source__thp_available();
	void *p;

	if (ret < 0)
		return ret;
	p = map_aligned(size);
	if (p == MAP_FAILED)
		return err__sys(errno, "mmap of guest memory");
	/* Before the first write, so the first touches fault in 2 MiB
	 * pages. */
	if (madvise(p, size, MADV_HUGEPAGE) < 0) {
		ret = err__sys(errno, "madvise(MADV_HUGEPAGE)");
		munmap(p, size);
		return ret;
	}
	*out = p;
	return 0;
}
