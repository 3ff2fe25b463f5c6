/* The userfaultfd restore strategy: anonymous guest memory registered for
 * missing-page faults, served by a handler thread with UFFDIO_COPY from
 * the memory file, or UFFDIO_ZEROPAGE where the file has a hole. */
#include "mem_uffd.h"

#include "err.h"

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096ull

struct uffd_state {
	struct guest_mem *m;
	int uffd;
	int stop_fd;       /* eventfd: tells the handler to exit */
	pthread_t thread;
	uint8_t *data_map; /* bit per page: the file has data there */
	uint8_t *buf;      /* one page, staging UFFDIO_COPY */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A userfaultfd: the system call, else /dev/userfaultfd (when
 * vm.unprivileged_userfaultfd forbids the call). */
static int open_uffd(void)
{
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK), dev;

	if (fd >= 0)
		return fd;
	dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return err__sys(errno, "userfaultfd");
	fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
	close(dev);
	return fd < 0 ? err__sys(errno, "USERFAULTFD_IOC_NEW") : fd;
}

/* Marks the pages the file has data for (SEEK_DATA/SEEK_HOLE extents). */
static int map_extents(struct uffd_state *u)
{
	const struct guest_mem *m = u->m;
	off_t end = (off_t)m->size, data, hole;

	for (data = lseek(m->src_fd, 0, SEEK_DATA); data >= 0 && data < end;
	     data = lseek(m->src_fd, hole, SEEK_DATA)) {
		hole = lseek(m->src_fd, data, SEEK_HOLE);
		if (hole < 0 || hole > end)
			hole = end;
		for (uint64_t p = (uint64_t)data / PAGE;
		     p < ((uint64_t)hole + PAGE - 1) / PAGE; p++)
			u->data_map[p / 8] |= (uint8_t)(1u << (p % 8));
	}
	if (data < 0 && errno != ENXIO)
		return err__sys(errno, "seeking the memory file");
	return 0;
}

static int has_data(const struct uffd_state *u, uint64_t page)
{
	return u->data_map[page / 8] & (1u << (page % 8));
}

/* Serves one missing page; -errno with a message on failure. */
static int serve(struct uffd_state *u, uint64_t addr)
{
	struct guest_mem *m = u->m;
	uint64_t off = (addr - (uintptr_t)m->host) & ~(PAGE - 1);
	uint64_t dst = (uintptr_t)m->host + off;
	ssize_t n;

	if (!has_data(u, off / PAGE)) {
		struct uffdio_zeropage z = { .range = { dst, PAGE } };

		if (ioctl(u->uffd, UFFDIO_ZEROPAGE, &z) < 0 && errno != EEXIST)
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
	struct uffdio_copy c = { .dst = dst, .src = (uintptr_t)u->buf,
				 .len = PAGE };
	if (ioctl(u->uffd, UFFDIO_COPY, &c) < 0 && errno != EEXIST)
		return err__sys(errno, "UFFDIO_COPY at offset 0x%llx",
				(unsigned long long)off);
	return 0;
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

	if (fail)
		fail(m->fail_ctx, err__last());
	else
		fprintf(stderr, "coldstart: uffd handler: %s\n", err__last());
	ioctl(u->uffd, UFFDIO_UNREGISTER, &r);
}

static void *handler(void *arg)
{
	struct uffd_state *u = arg;
	struct pollfd fds[2] = { { u->uffd, POLLIN, 0 },
				 { u->stop_fd, POLLIN, 0 } };
	struct uffd_msg msg;

	for (;;) {
		if (poll(fds, 2, -1) < 0 && errno != EINTR)
			break;
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
		u->m->stats.faults++;
		u->m->stats.handler_ns += now_ns() - t0;
	}
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
	ret = pthread_create(&u->thread, NULL, handler, u);
	return ret ? err__sys(ret, "creating the uffd handler thread") : 0;
}

static void teardown(struct uffd_state *u, bool started)
{
	if (started) {
		uint64_t one = 1;

		if (write(u->stop_fd, &one, sizeof(one)) == sizeof(one))
			pthread_join(u->thread, NULL);
	}
	if (u->stop_fd >= 0)
		close(u->stop_fd);
	if (u->uffd >= 0)
		close(u->uffd);
	free(u->data_map);
	free(u->buf);
	free(u);
}

static int uffd_map(struct guest_mem *m)
{
	struct uffd_state *u = calloc(1, sizeof(*u));
	void *p;
	int ret;

	if (!u)
		return err__set(ENOMEM, "allocating the uffd handler");
	u->m = m;
	u->uffd = u->stop_fd = -1;
	u->data_map = calloc(m->size / PAGE / 8 + 1, 1);
	u->buf = aligned_alloc(PAGE, PAGE);
	p = mmap(NULL, m->size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!u->data_map || !u->buf || p == MAP_FAILED) {
		ret = err__set(ENOMEM, "allocating guest memory for uffd");
		goto err;
	}
	m->host = p;
	ret = setup(u);
	if (ret < 0)
		goto err_unmap;
	m->priv = u;
	return 0;

err_unmap:
	munmap(p, m->size);
err:
	teardown(u, false);
	return ret;
}

static void uffd_unmap(struct guest_mem *m)
{
	teardown(m->priv, true);
	munmap(m->host, m->size);
}

const struct guest_mem_ops mem_uffd_ops = {
	.name = "uffd",
	.help = "anonymous memory filled on demand by a userfaultfd handler "
		"(UFFDIO_COPY, zero pages for holes)",
	.restore = true,
	.map = uffd_map,
	.unmap = uffd_unmap,
};
