/* The userfaultfd restore strategies: anonymous guest memory registered
 * for missing-page faults, served by a handler thread with UFFDIO_COPY
 * from the memory file, or UFFDIO_ZEROPAGE where the file has a hole.
 * prefetch (REAP-style) adds a working set: recorded in first-touch order
 * on a restore without one, installed in bulk before the guest runs on
 * later restores. uffd-huge does the same on 2 MiB hugetlb pages, one
 * whole huge page per fault; prefetch-thp installs the working set as
 * transparent huge pages. The working-set file: uffd_wset.c; installing
 * pages around those present: uffd_install.c. */
#include "mem_uffd.h"

#include "err.h"
#include "jail.h"
#include "mem_source.h"
#include "seccomp.h"
#include "units.h"
#include "zmem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <linux/mman.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096ull

struct uffd_state {
	struct guest_mem *m;
	int uffd;
	int stop_fd;       /* eventfd: tells the handler to exit */
	pthread_t thread;
	bool running;      /* the handler thread exists */
	bool stopping;     /* stop_handler asked it to exit */
	bool gave_up;      /* it reported a failure to the VM */
	uint8_t *data_map; /* bit per page: the file has data there */
	uint8_t *buf;      /* one page (2 MiB when huge), staging UFFDIO_COPY */
	bool huge;         /* hugetlb memory, served in 2 MiB pages */
	uint8_t *zbuf;     /* one chunk, decompressed (compressed source) */
	uint8_t *zscratch; /* one compressed frame */
	bool record;       /* log faulting pages for a working set; set
			    * after the handler starts, so read atomically */
	uint32_t *log;     /* page numbers in first-touch order */
	size_t log_len, log_cap;
};

#define WSET_MERGE_GAP 32 /* pages: FaaSnap merges regions closer than this */

/* A userfaultfd: the system call, else /dev/userfaultfd (when
 * vm.unprivileged_userfaultfd forbids the call). */
static int open_uffd(void)
{
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK), dev;

	if (fd >= 0)
		return fd;
	/* a jailed VMM has no /dev: it kept the device open */
	dev = jail__uffd_dev();
	if (dev < 0)
		dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return err__sys(errno, "userfaultfd");
	fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
	if (dev != jail__uffd_dev())
		close(dev);
	return fd < 0 ? err__sys(errno, "USERFAULTFD_IOC_NEW") : fd;
}

/* Marks the pages of one data extent in the data map. */
static int mark_extent(void *ctx, uint64_t start, uint64_t end)
{
	struct uffd_state *u = ctx;

	for (uint64_t p = start / PAGE; p < (end + PAGE - 1) / PAGE; p++)
		u->data_map[p / 8] |= (uint8_t)(1u << (p % 8));
	return 0;
}

static int map_extents(struct uffd_state *u)
{
	const struct zmem *z = u->m->zmem;

	if (!z)
		return mem_source__for_each_extent(u->m->src_fd, u->m->size,
						    mark_extent, u);
	for (uint32_t i = 0; i < z->nchunks; i++)
		if (z->index[i].csize)
			mark_extent(u, (uint64_t)i * z->chunk_size,
				    (uint64_t)(i + 1) * z->chunk_size);
	return 0;
}

static int has_data(const struct uffd_state *u, uint64_t page)
{
	return u->data_map[page / 8] & (1u << (page % 8));
}

/* Installs the whole chunk holding `addr`: decompressing is per chunk, so
 * installing less would decompress the same chunk again. */
static int serve_chunk(struct uffd_state *u, uint64_t addr)
{
	struct guest_mem *m = u->m;
	const struct zmem *z = m->zmem;
	uint32_t i = (uint32_t)((addr - (uintptr_t)m->host) / z->chunk_size);
	uint64_t dst = (uintptr_t)m->host + (uint64_t)i * z->chunk_size, read;
	int ret;

	if (!z->index[i].csize) {
		if (mem_uffd__install(u->uffd, dst, 0, z->chunk_size, PAGE) < 0)
			return err__sys(errno, "UFFDIO_ZEROPAGE of chunk %u", i);
		return 0;
	}
	ret = zmem__read_chunk(z, i, u->zbuf, u->zscratch, &read);
	if (ret < 0)
		return ret;
	m->stats.bytes_read += read;
	if (mem_uffd__install(u->uffd, dst, (uintptr_t)u->zbuf, z->chunk_size,
		      PAGE) < 0)
		return err__sys(errno, "UFFDIO_COPY of chunk %u", i);
	return 0;
}

/* The 2 MiB of guest memory at `off` into u->buf: from the file where it
 * has data (chunk by chunk when compressed), zeros elsewhere. */
static int fill_huge(struct uffd_state *u, uint64_t off)
{
	struct guest_mem *m = u->m;
	const struct zmem *z = m->zmem;
	bool data = false;
	ssize_t n;

	if (z) {
		for (uint64_t c = off; c < off + MEM_ALIGN; c += z->chunk_size) {
			uint32_t i = (uint32_t)(c / z->chunk_size);
			uint64_t read = 0;
			int ret = 0;

			if (z->index[i].csize)
				ret = zmem__read_chunk(z, i, u->buf + (c - off),
						       u->zscratch, &read);
			else
				memset(u->buf + (c - off), 0, z->chunk_size);
			if (ret < 0)
				return ret;
			m->stats.bytes_read += read;
		}
		return 0;
	}
	for (uint64_t p = off / PAGE; !data && p < (off + MEM_ALIGN) / PAGE; p++)
		data = has_data(u, p);
	if (!data) {
		memset(u->buf, 0, MEM_ALIGN);
		return 0;
	}
	n = pread(m->src_fd, u->buf, MEM_ALIGN, (off_t)off);
	if (n != (ssize_t)MEM_ALIGN)
		return err__set(EIO, "the memory file could not be read at "
				"offset 0x%llx (%s): was it truncated or "
				"removed?", (unsigned long long)off,
				n < 0 ? strerror(errno) : "short read");
	m->stats.bytes_read += MEM_ALIGN;
	return 0;
}

/* hugetlb memory is installed a whole 2 MiB page at a time; it has no
 * UFFDIO_ZEROPAGE, so holes are copied from zeros. */
static int serve_huge(struct uffd_state *u, uint64_t addr)
{
	struct guest_mem *m = u->m;
	uint64_t off = (addr - (uintptr_t)m->host) & ~(MEM_ALIGN - 1);
	int ret = fill_huge(u, off);

	if (ret < 0)
		return ret;
	if (mem_uffd__install(u->uffd, (uintptr_t)m->host + off, (uintptr_t)u->buf,
		      MEM_ALIGN, MEM_ALIGN) < 0)
		return err__sys(errno, "UFFDIO_COPY of the 2 MiB page at offset "
				"0x%llx", (unsigned long long)off);
	return 0;
}

/* Serves one missing page; -errno with a message on failure. */
static int serve(struct uffd_state *u, uint64_t addr)
{
	struct guest_mem *m = u->m;
	uint64_t off = (addr - (uintptr_t)m->host) & ~(PAGE - 1);

	if (u->huge)
		return serve_huge(u, addr);
	if (m->zmem)
		return serve_chunk(u, addr);
	uint64_t dst = (uintptr_t)m->host + off;
	ssize_t n;

	if (!has_data(u, off / PAGE)) {
		if (mem_uffd__install(u->uffd, dst, 0, PAGE, PAGE) < 0)
			return err__sys(errno, "UFFDIO_ZEROPAGE at offset 0x%llx",
					(unsigned long long)off);
		return 0;
	}
	n = pread(m->src_fd, u->buf, PAGE, (off_t)off);
	if (n != (ssize_t)PAGE)
		return err__set(EIO, "the memory file could not be read at "
				"offset 0x%llx (%s): was it truncated or "
				"removed?", (unsigned long long)off,
				n < 0 ? strerror(errno) : "short read");
	m->stats.bytes_read += PAGE;
	if (mem_uffd__install(u->uffd, dst, (uintptr_t)u->buf, PAGE, PAGE) < 0)
		return err__sys(errno, "UFFDIO_COPY at offset 0x%llx",
				(unsigned long long)off);
	return 0;
}

static void log_page(struct uffd_state *u, uint64_t addr)
{
	uint32_t page = (uint32_t)((addr - (uintptr_t)u->m->host) / PAGE);

	if (u->log_len == u->log_cap) {
		size_t cap = u->log_cap ? u->log_cap * 2 : 4096;
		uint32_t *grown = realloc(u->log, cap * sizeof(*grown));

		if (!grown)
			return; /* the working set is a hint: keep serving */
		u->log = grown;
		u->log_cap = cap;
	}
	u->log[u->log_len++] = page;
}

/* Reports the failure to the VM and lets blocked faults go: once the
 * range is unregistered they retry against plain anonymous memory, and
 * the VM, already ending, stops its vCPUs. */
static void give_up(struct uffd_state *u)
{
	struct guest_mem *m = u->m;
	void (*fail)(void *, const char *) =
		__atomic_load_n(&m->fail, __ATOMIC_ACQUIRE);
	struct uffdio_range r = { (uintptr_t)m->host, m->size };

	u->gave_up = true;
	if (fail)
		fail(m->fail_ctx, err__last());
	else
		fprintf(stderr, "coldstart: uffd handler: %s\n", err__last());
	ioctl(u->uffd, UFFDIO_UNREGISTER, &r);
}

/* Runs whenever the handler thread ends, also when it is cancelled: an
 * end nobody asked for would leave every later guest fault blocked, so
 * it fails the VM instead. */
static void handler_ended(void *arg)
{
	struct uffd_state *u = arg;

	if (u->gave_up || __atomic_load_n(&u->stopping, __ATOMIC_ACQUIRE))
		return;
	err__set(EPIPE, "the uffd handler thread ended while the guest "
		 "still needed it; its missing pages cannot be served");
	give_up(u);
}

static void serve_faults(struct uffd_state *u)
{
	struct pollfd fds[2] = { { u->uffd, POLLIN, 0 },
				 { u->stop_fd, POLLIN, 0 } };
	struct uffd_msg msg;

	for (;;) {
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			err__sys(errno, "uffd handler: poll");
			give_up(u);
			break;
		}
		if (fds[1].revents)
			break;
		if (read(u->uffd, &msg, sizeof(msg)) != sizeof(msg))
			continue;
		if (msg.event != UFFD_EVENT_PAGEFAULT)
			continue;
		uint64_t t0 = now_ns();
		if (serve(u, msg.arg.pagefault.address) < 0) {
			give_up(u);
			break;
		}
		if (__atomic_load_n(&u->record, __ATOMIC_ACQUIRE))
			log_page(u, msg.arg.pagefault.address);
		u->m->stats.faults++;
		u->m->stats.handler_ns += now_ns() - t0;
	}
}

static void *handler(void *arg)
{
	pthread_cleanup_push(handler_ended, arg);
	if (seccomp__install(SECCOMP_UFFD) < 0)
		give_up(arg);
	else
		serve_faults(arg);
	pthread_cleanup_pop(1);
	return NULL;
}

static int setup(struct uffd_state *u)
{
	struct guest_mem *m = u->m;
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {
		.range = { (uintptr_t)m->host, m->size },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	int ret = map_extents(u);

	if (ret < 0)
		return ret;
	u->uffd = open_uffd();
	if (u->uffd < 0)
		return u->uffd;
	if (ioctl(u->uffd, UFFDIO_API, &api) < 0)
		return err__sys(errno, "UFFDIO_API");
	if (ioctl(u->uffd, UFFDIO_REGISTER, &reg) < 0)
		return err__sys(errno, "UFFDIO_REGISTER");
	u->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (u->stop_fd < 0)
		return err__sys(errno, "eventfd");
	/* the VMM's first thread: a jail comes before it */
	ret = jail__enter_pending();
	if (ret < 0)
		return ret;
	ret = pthread_create(&u->thread, NULL, handler, u);
	if (ret)
		return err__sys(ret, "creating the uffd handler thread");
	u->running = true;
	return 0;
}

/* Tells the handler thread to exit and waits for it. */
static void stop_handler(struct uffd_state *u)
{
	uint64_t one = 1;

	if (!u->running)
		return;
	__atomic_store_n(&u->stopping, true, __ATOMIC_RELEASE);
	if (write(u->stop_fd, &one, sizeof(one)) == sizeof(one))
		pthread_join(u->thread, NULL);
	u->running = false;
}

static void teardown(struct uffd_state *u)
{
	stop_handler(u);
	if (u->stop_fd >= 0)
		close(u->stop_fd);
	if (u->uffd >= 0)
		close(u->uffd);
	free(u->data_map);
	free(u->buf);
	free(u->zbuf);
	free(u->zscratch);
	free(u->log);
	free(u);
}

/* Registers the guest memory already mapped at m->host (hugetlb pages
 * when `huge`) and starts its handler thread. Pages present by now are
 * never faulted on. */
static int uffd_attach(struct guest_mem *m, bool huge)
{
	struct uffd_state *u = calloc(1, sizeof(*u));
	int ret;

	if (!u)
		return err__set(ENOMEM, "allocating the uffd handler");
	u->m = m;
	u->huge = huge;
	u->uffd = u->stop_fd = -1;
	u->data_map = calloc(m->size / PAGE / 8 + 1, 1);
	u->buf = aligned_alloc(PAGE, huge ? MEM_ALIGN : PAGE);
	if (m->zmem) {
		u->zbuf = aligned_alloc(PAGE, m->zmem->chunk_size);
		u->zscratch = malloc(zmem__scratch_size(m->zmem));
	}
	if (!u->data_map || !u->buf ||
	    (m->zmem && (!u->zbuf || !u->zscratch)))
		ret = err__set(ENOMEM, "allocating the uffd handler's buffers");
	else
		ret = setup(u);
	if (ret < 0) {
		teardown(u);
		return ret;
	}
	m->priv = u;
	return 0;
}

/* Anonymous guest memory, on hugetlb pages when `huge`, served by a new
 * handler thread. */
static int uffd_map_mem(struct guest_mem *m, bool huge)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS |
		    (huge ? MAP_HUGETLB | MAP_HUGE_2MB : MAP_NORESERVE);
	void *p = mmap(NULL, m->size, PROT_READ | PROT_WRITE, flags, -1, 0);
	int ret;

	if (p == MAP_FAILED)
		return err__sys(errno, "mmap of guest memory for uffd");
	m->host = p;
	ret = uffd_attach(m, huge);
	if (ret < 0) {
		munmap(p, m->size);
		m->host = NULL;
	}
	return ret;
}

static int uffd_map(struct guest_mem *m)
{
	return uffd_map_mem(m, false);
}

static int uffd_huge_map(struct guest_mem *m)
{
	int ret = mem__need_hugepages(m->size, "--mem-restore uffd-huge");

	return ret < 0 ? ret : uffd_map_mem(m, true);
}

/* With the handler gone, a page still missing would hold whatever
 * thread touches it forever (a device's, once its VM ended: the restore
 * waited on its join): the range is given up, and such a touch gets a
 * zero page instead. */
static void uffd_settle(struct guest_mem *m)
{
	struct uffd_state *u = m->priv;
	struct uffdio_range r = { (uintptr_t)m->host, m->size };

	if (!u->running)
		return;
	stop_handler(u);
	if (!u->gave_up)
		ioctl(u->uffd, UFFDIO_UNREGISTER, &r);
}

static void uffd_unmap(struct guest_mem *m)
{
	teardown(m->priv);
	munmap(m->host, m->size);
}

int mem_uffd__kill_handler(struct guest_mem *m)
{
	struct uffd_state *u = m->priv;
	int ret;

	if (!m->ops || m->ops->settle != uffd_settle || !u->running)
		return err__set(EINVAL, "no uffd handler thread is running");
	ret = pthread_cancel(u->thread);
	if (ret)
		return err__sys(ret, "pthread_cancel of the uffd handler");
	return 0;
}

const struct guest_mem_ops mem_uffd_ops = {
	.name = "uffd",
	.help = "anonymous memory filled on demand by a userfaultfd handler "
		"(UFFDIO_COPY, zero pages for holes)",
	.restore = true,
	.map = uffd_map,
	.unmap = uffd_unmap,
	.settle = uffd_settle,
};

const struct guest_mem_ops mem_uffd_huge_ops = {
	.name = "uffd-huge",
	.help = "uffd on 2 MiB hugetlb pages, one whole huge page per fault "
		"(needs vm.nr_hugepages)",
	.restore = true,
	.map = uffd_huge_map,
	.unmap = uffd_unmap,
	.settle = uffd_settle,
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Writes the recorded first-touch log next to the snapshot (temporary
 * file and rename, like every snapshot file). VMs restored from one
 * snapshot at once may all record: each writes its own temporary file
 * (a new file under a random name) and the last rename wins, so the file
 * is always one whole log. */
static void wset_write(struct uffd_state *u)
{
	if (u->log_len > u->m->size / PAGE) /* wset_read would refuse it */
		return;
	mem_uffd__wset_write(u->m->wset_path, u->log, (uint32_t)u->log_len);
}

/* Installs [first, last] pages with one read and one UFFDIO_COPY. */
static int install_region(struct uffd_state *u, uint64_t first,
			  uint64_t last, uint8_t *buf)
{
	struct guest_mem *m = u->m;
	size_t len = (size_t)((last - first + 1) * PAGE);
	ssize_t n = pread(m->src_fd, buf, len, (off_t)(first * PAGE));

	if (n != (ssize_t)len)
		return err__set(EIO, "the memory file could not be read at "
				"offset 0x%llx: was it truncated?",
				(unsigned long long)(first * PAGE));
	m->stats.bytes_read += len;
	if (mem_uffd__install(u->uffd, (uintptr_t)m->host + first * PAGE,
		      (uintptr_t)buf, len, PAGE) < 0)
		return err__sys(errno, "UFFDIO_COPY of %zu bytes", len);
	return 0;
}

/* Sorts the working set, merges pages closer than WSET_MERGE_GAP into
 * regions and installs each region in bulk. */
static int install_wset(struct uffd_state *u, uint32_t *pages, uint32_t n)
{
	size_t cap = 0;
	uint8_t *buf = NULL;
	int ret = 0;

	qsort(pages, n, sizeof(*pages), cmp_u32);
	for (uint32_t i = 0; ret == 0 && i < n;) {
		uint32_t j = i;

		while (j + 1 < n && pages[j + 1] - pages[j] <= WSET_MERGE_GAP)
			j++;
		size_t len = (size_t)(pages[j] - pages[i] + 1) * PAGE;
		if (len > cap) {
			free(buf);
			buf = aligned_alloc(PAGE, len);
			cap = buf ? len : 0;
		}
		ret = buf ? install_region(u, pages[i], pages[j], buf)
			  : err__set(ENOMEM, "staging the working set");
		i = j + 1;
	}
	free(buf);
	return ret;
}

/* The working set's pages (NULL, 0 when there is none yet) of a raw
 * snapshot. */
static int prefetch_wset(struct guest_mem *m, uint32_t **pages, uint32_t *n)
{
	int ret;

	*pages = NULL;
	*n = 0;
	if (m->zmem)
		return err__set(EINVAL, "--mem-restore %s reads the memory file "
				"in regions and needs it raw; this snapshot is "
				"compressed (use eager or uffd)", m->ops->name);
	ret = m->wset_path ? mem_uffd__wset_read(m->wset_path, m->size / PAGE,
						 pages, n)
			   : -ENOENT;
	return ret == -ENOENT ? 0 : ret;
}

static int prefetch_map(struct guest_mem *m)
{
	uint32_t *pages, n;
	struct uffd_state *u;
	int ret = prefetch_wset(m, &pages, &n);

	if (ret < 0)
		return ret;
	ret = uffd_map(m);
	if (ret < 0) {
		free(pages);
		return ret;
	}
	u = m->priv;
	if (pages) {
		ret = install_wset(u, pages, n);
		free(pages);
		if (ret < 0)
			uffd_unmap(m);
	} else {
		__atomic_store_n(&u->record, m->wset_path != NULL,
				 __ATOMIC_RELEASE);
	}
	return ret;
}

static void prefetch_unmap(struct guest_mem *m)
{
	struct uffd_state *u = m->priv;

	if (u->record) {
		/* The handler logs a page after serving it, so it may still
		 * be writing the log once every vCPU is gone: stop it first. */
		stop_handler(u);
		if (u->log_len)
			wset_write(u);
	}
	uffd_unmap(m);
}

const struct guest_mem_ops mem_prefetch_ops = {
	.name = "prefetch",
	.help = "uffd plus a working set (REAP): installs DIR/wset in bulk "
		"before the guest runs; records it on a restore without one",
	.restore = true,
	.map = prefetch_map,
	.unmap = prefetch_unmap,
	.settle = uffd_settle,
};

/* Installs every 2 MiB frame that holds a working-set page, in runs of
 * adjacent frames: the reads fault in transparent huge pages. */
static int install_frames(struct guest_mem *m, uint32_t *pages, uint32_t n)
{
	const uint32_t per = (uint32_t)(MEM_ALIGN / PAGE);
	int ret = 0;

	qsort(pages, n, sizeof(*pages), cmp_u32);
	for (uint32_t i = 0; ret == 0 && i < n;) {
		uint32_t first = pages[i] / per, last = first;
		uint64_t end;

		while (i < n && pages[i] / per <= last + 1)
			last = pages[i++] / per;
		end = (uint64_t)(last + 1) * MEM_ALIGN;
		ret = mem_source__read_range(m, first * MEM_ALIGN,
					      end < m->size ? end : m->size);
	}
	return ret;
}

/* prefetch on transparent huge pages: the working set's 2 MiB frames are
 * read into 2 MiB-aligned MADV_HUGEPAGE memory before uffd is registered,
 * so they come back as huge pages and the guest's first touches there cost
 * one host (or shadow) fault per 2 MiB, not per 4 KiB; uffd serves the
 * rest in 4 KiB pages. Records the working set like prefetch. */
static int prefetch_thp_map(struct guest_mem *m)
{
	uint32_t *pages, n;
	void *p = NULL;
	int ret = prefetch_wset(m, &pages, &n);
	bool have_wset = pages != NULL;

	if (ret == 0)
		ret = mem_source__map_thp(m->size, &p);
	if (ret < 0) {
		free(pages);
		return ret;
	}
	m->host = p;
	ret = have_wset ? install_frames(m, pages, n) : 0;
	free(pages);
	if (ret == 0)
		ret = uffd_attach(m, false);
	if (ret < 0) {
		munmap(p, m->size);
		m->host = NULL;
		return ret;
	}
	__atomic_store_n(&((struct uffd_state *)m->priv)->record,
			 !have_wset && m->wset_path, __ATOMIC_RELEASE);
	return 0;
}

const struct guest_mem_ops mem_prefetch_thp_ops = {
	.name = "prefetch-thp",
	.help = "prefetch into transparent huge pages: the working set's "
		"2 MiB frames read in before uffd serves the rest",
	.restore = true,
	.map = prefetch_thp_map,
	.unmap = prefetch_unmap,
	.settle = uffd_settle,
};

