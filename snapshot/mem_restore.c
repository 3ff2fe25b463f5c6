/* Restore strategies: eager copy, lazy private mapping, and populate. */
#include "mem_restore.h"

#include "err.h"
#include "mem_uffd.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define GUEST_PROT (PROT_READ | PROT_WRITE)

static void unmap_only(struct guest_mem *m)
{
	munmap(m->host, m->size);
}

/* Reads the file's data extents (SEEK_DATA/SEEK_HOLE) into `dst`: holes
 * are never read, they stay zero in fresh anonymous memory. */
static int read_extents(struct guest_mem *m, uint8_t *dst)
{
	off_t end = (off_t)m->size, data, hole;

	for (data = lseek(m->src_fd, 0, SEEK_DATA); data >= 0 && data < end;
	     data = lseek(m->src_fd, hole, SEEK_DATA)) {
		hole = lseek(m->src_fd, data, SEEK_HOLE);
		if (hole < 0 || hole > end)
			hole = end;
		for (off_t at = data; at < hole;) {
			ssize_t n = pread(m->src_fd, dst + at,
					  (size_t)(hole - at), at);

			if (n <= 0)
				return err__sys(n < 0 ? errno : EIO,
						"reading the memory file at "
						"offset %lld", (long long)at);
			at += n;
			m->stats.bytes_read += (uint64_t)n;
		}
	}
	if (data < 0 && errno != ENXIO)
		return err__sys(errno, "seeking the memory file");
	return 0;
}

static int eager_map(struct guest_mem *m)
{
	void *p = mmap(NULL, m->size, GUEST_PROT,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	int ret;

	if (p == MAP_FAILED)
		return err__sys(errno, "mmap of guest memory");
	ret = read_extents(m, p);
	if (ret < 0) {
		munmap(p, m->size);
		return ret;
	}
	m->host = p;
	return 0;
}

static int private_map(struct guest_mem *m)
{
	void *p = mmap(NULL, m->size, GUEST_PROT, MAP_PRIVATE | MAP_NORESERVE,
		       m->src_fd, 0);

	if (p == MAP_FAILED)
		return err__sys(errno, "mmap of the memory file");
	m->host = p;
	return 0;
}

static int populate_map(struct guest_mem *m)
{
	int ret = private_map(m);

	if (ret < 0)
		return ret;
	/* Fault every page in, copied (written), before the guest runs. */
	if (madvise(m->host, m->size, MADV_POPULATE_WRITE) < 0) {
		ret = err__sys(errno, "madvise(MADV_POPULATE_WRITE)");
		munmap(m->host, m->size);
		return ret;
	}
	m->stats.bytes_read = m->size;
	return 0;
}

static const struct guest_mem_ops eager_ops = {
	.name = "eager",
	.help = "read the memory file's data into anonymous memory first",
	.restore = true,
	.map = eager_map,
	.unmap = unmap_only,
};

static const struct guest_mem_ops mmap_ops = {
	.name = "mmap",
	.help = "MAP_PRIVATE mapping of the memory file (lazy, shares clean "
		"pages through the page cache)",
	.restore = true,
	.file_pages = true,
	.map = private_map,
	.unmap = unmap_only,
};

static const struct guest_mem_ops populate_ops = {
	.name = "populate",
	.help = "MAP_PRIVATE mapping plus MADV_POPULATE_WRITE before resuming",
	.restore = true,
	.file_pages = true,
	.map = populate_map,
	.unmap = unmap_only,
};

static const struct guest_mem_ops *const strategies[] = {
	&eager_ops, &mmap_ops, &populate_ops, &mem_uffd_ops,
	&mem_prefetch_ops, NULL,
};

const struct guest_mem_ops *const *mem_restore__strategies(void)
{
	return strategies;
}

const struct guest_mem_ops *mem_restore__strategy(const char *name)
{
	for (size_t i = 0; strategies[i]; i++)
		if (!strcmp(strategies[i]->name, name))
			return strategies[i];
	return NULL;
}
