/* Restore strategies: eager copy (on 4 KiB, transparent huge or hugetlb
 * pages), lazy private mapping, and populate. */
#include "mem_restore.h"

#include "err.h"
#include "mem_source.h"
#include "mem_uffd.h"
#include "zmem.h"

#include <stdlib.h>

#include <stdio.h>
#include <string.h>
#include <linux/mman.h>
#include <sys/mman.h>
#include <unistd.h>

#define GUEST_PROT (PROT_READ | PROT_WRITE)

static void unmap_only(struct guest_mem *m)
{
	munmap(m->host, m->size);
}

/* One data extent of the memory file, for the extent walker. */
static int read_extent(void *ctx, uint64_t start, uint64_t end)
{
	return mem_source__read_range(ctx, start, end);
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

/* Fills fresh anonymous memory at m->host; unmaps it on failure. */
static int eager_fill(struct guest_mem *m)
{
	/* Holes are never read: they stay zero in fresh anonymous memory. */
	int ret = m->zmem ? decompress_all(m)
			  : mem_source__for_each_extent(m->src_fd, m->size,
							 read_extent, m);

	/* A file cut short reads as holes: refuse it rather than run the
	 * guest on zeros. */
	if (ret == 0)
		ret = mem__check_source(m);
	if (ret < 0) {
		m->ops->unmap(m);
		m->host = NULL;
	}
	return ret;
}

static int eager_map(struct guest_mem *m)
{
	void *p = mmap(NULL, m->size, GUEST_PROT,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return err__sys(errno, "mmap of guest memory");
	m->host = p;
	return eager_fill(m);
}


static int eager_thp_map(struct guest_mem *m)
{
	void *p = NULL;
	int ret = mem_source__map_thp(m->size, &p);

	if (ret < 0)
		return ret;
	m->host = p;
	return eager_fill(m);
}

static int eager_huge_map(struct guest_mem *m)
{
	int ret = mem__need_hugepages(m->size, "--mem-restore eager-huge");
	void *p;

	if (ret < 0)
		return ret;
	p = mmap(NULL, m->size, GUEST_PROT,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_HUGE_2MB, -1,
		 0);
	if (p == MAP_FAILED)
		return err__sys(errno, "mmap of %zu bytes of hugetlb memory",
				m->size);
	m->host = p;
	return eager_fill(m);
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
		int e = errno;

		/* EFAULT: part of the file is gone. */
		ret = e == EFAULT ? mem__check_source(m) : 0;
		if (ret == 0)
			ret = err__sys(e, "madvise(MADV_POPULATE_WRITE)");
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

static const struct guest_mem_ops eager_thp_ops = {
	.name = "eager-thp",
	.help = "eager into anonymous memory with MADV_HUGEPAGE (transparent "
		"2 MiB pages)",
	.restore = true,
	.map = eager_thp_map,
	.unmap = unmap_only,
};

static const struct guest_mem_ops eager_huge_ops = {
	.name = "eager-huge",
	.help = "eager into 2 MiB hugetlb pages (needs vm.nr_hugepages)",
	.restore = true,
	.map = eager_huge_map,
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
	&mem_prefetch_ops, &eager_thp_ops, &eager_huge_ops, &mem_uffd_huge_ops,
	&mem_prefetch_thp_ops, NULL,
};

const struct guest_mem_ops *const *mem_restore__strategies(void)
{
	return strategies;
}

const struct guest_mem_ops *mem_restore__strategy(const char *name)
{
	return mem__find(strategies, name);
}
