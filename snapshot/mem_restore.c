/* Restore strategies: eager copy, lazy private mapping, and populate. */
#include "mem_restore.h"

#include "err.h"
#include "mem_uffd.h"
#include "zmem.h"

#include <stdlib.h>

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define GUEST_PROT (PROT_READ | PROT_WRITE)

static void unmap_only(struct guest_mem *m)
{
	munmap(m->host, m->size);
}

int mem_restore__for_each_extent(int fd, uint64_t size,
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

/* Reads one data extent into the same offsets of guest memory. */
static int read_extent(void *ctx, uint64_t start, uint64_t end)
{
	struct guest_mem *m = ctx;

	for (uint64_t at = start; at < end;) {
		ssize_t n = pread(m->src_fd, m->host + at, (size_t)(end - at),
				  (off_t)at);

		if (n <= 0)
			return err__sys(n < 0 ? errno : EIO, "reading the memory "
					"file at offset %llu",
					(unsigned long long)at);
		at += (uint64_t)n;
		m->stats.bytes_read += (uint64_t)n;
	}
	return 0;
}

/* Decompresses every non-zero chunk in place. */
static int decompress_all(struct guest_mem *m)
{
	const struct zmem *z = m->zmem;
	void *scratch = malloc(zmem__scratch_size(z));
	uint64_t read;
	int ret = scratch ? 0 : err__set(ENOMEM, "allocating zstd scratch");

	for (uint32_t i = 0; ret == 0 && i < z->nchunks; i++) {
		if (!z->index[i].csize)
			continue;
		ret = zmem__read_chunk(z, i, m->host + (uint64_t)i * z->chunk_size,
				       scratch, &read);
		m->stats.bytes_read += read;
	}
	free(scratch);
	return ret;
}

/* Strategies that map the file itself need it raw. */
static int need_raw(const struct guest_mem *m)
{
	if (!m->zmem)
		return 0;
	return err__set(EINVAL, "--mem-restore %s maps the memory file and "
			"needs it raw; this snapshot is compressed (use eager "
			"or uffd)", m->ops->name);
}

static int eager_map(struct guest_mem *m)
{
	void *p = mmap(NULL, m->size, GUEST_PROT,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	int ret;

	if (p == MAP_FAILED)
		return err__sys(errno, "mmap of guest memory");
	/* Holes are never read: they stay zero in fresh anonymous memory. */
	m->host = p;
	ret = m->zmem ? decompress_all(m)
		      : mem_restore__for_each_extent(m->src_fd, m->size,
						     read_extent, m);
	if (ret < 0) {
		munmap(p, m->size);
		m->host = NULL;
	}
	return ret;
}

static int private_map(struct guest_mem *m)
{
	void *p;
	int ret = need_raw(m);

	if (ret < 0)
		return ret;
	p = mmap(NULL, m->size, GUEST_PROT, MAP_PRIVATE | MAP_NORESERVE,
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
	return mem__find(strategies, name);
}
