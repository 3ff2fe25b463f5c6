/* Unit tests for virtio-vsock (vmm/virtio_vsock.c, vmm/vsock_conn.c),
 * driven as a guest's driver would drive it, with the host's side on real
 * Unix sockets: the host connecting with "CONNECT <port>", the guest
 * connecting to PATH_PORT, data both ways, credit held to, shutdowns and
 * resets, malformed packets and lines answered without harm, the
 * transport reset after a restore (host connections held until the
 * guest has handled it), a close racing a pass of the I/O thread, and
 * the refusals at open. */
#include "err.h"
#include "mem.h"
#include "virtio_vsock.h"

#include <errno.h>
#include <linux/virtio_vsock.h>
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#define MEM_SIZE 0x80000
#define QSIZE 16
#define RXBUF 0x40000 /* 16 receive buffers of 4 KiB */
#define TXBUF 0x60000
#define EVBUF 0x70000
#define CID 3
#define HDR sizeof(struct virtio_vsock_hdr)

struct ring {
	uint64_t desc, avail, used;
	uint16_t next_desc, seen_used;
};

static uint8_t ram[MEM_SIZE] __attribute__((aligned(4096)));
static const struct guest_mem mem = { .host = ram, .size = MEM_SIZE,
				      .fd = -1 };
static struct vsock vs;
static struct ring rq[3] = {
	{ 0x1000, 0x2000, 0x3000, 0, 0 },
	{ 0x4000, 0x5000, 0x6000, 0, 0 },
	{ 0x7000, 0x8000, 0x9000, 0, 0 },
};
static char dir[] = "/tmp/coldstart-vsock-XXXXXX";
static char path[64];

static void raise_irq(void *ctx, uint32_t irq)
{
	(void)ctx;
	(void)irq;
}

static void wr(uint64_t off, uint32_t v)
{
	virtio_mmio__access(&vs.t, off, 4, true, (uint8_t *)&v);
}

static uint32_t rd(uint64_t off)
{
	uint32_t v;

	virtio_mmio__access(&vs.t, off, 4, false, (uint8_t *)&v);
	return v;
}

static void start(void)
{
	memset(ram, 0, sizeof(ram));
	for (int i = 0; i < 3; i++)
		rq[i].next_desc = rq[i].seen_used = 0;
	wr(VIRTIO_MMIO_STATUS, 0);
	wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
	wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	wr(VIRTIO_MMIO_DRIVER_FEATURES, 1);
	wr(VIRTIO_MMIO_STATUS, rd(VIRTIO_MMIO_STATUS) |
				       VIRTIO_STATUS_FEATURES_OK);
	for (uint32_t q = 0; q < 3; q++) {
		wr(VIRTIO_MMIO_QUEUE_SEL, q);
		wr(VIRTIO_MMIO_QUEUE_NUM, QSIZE);
		wr(VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)rq[q].desc);
		wr(VIRTIO_MMIO_QUEUE_DRIVER_LOW, (uint32_t)rq[q].avail);
		wr(VIRTIO_MMIO_QUEUE_DEVICE_LOW, (uint32_t)rq[q].used);
		wr(VIRTIO_MMIO_QUEUE_READY, 1);
	}
	wr(VIRTIO_MMIO_STATUS, rd(VIRTIO_MMIO_STATUS) |
				       VIRTIO_STATUS_DRIVER_OK);
	assert_true(rd(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_DRIVER_OK);
}

/* Makes buffer [addr, +len) available on queue q as one descriptor. */
static void offer(unsigned int q, uint64_t addr, uint32_t len, bool write)
{
	struct ring *r = &rq[q];
	uint16_t d = r->next_desc++ % QSIZE;
	struct virtq_desc *desc = (struct virtq_desc *)(ram + r->desc) + d;
	uint16_t *avail = (uint16_t *)(ram + r->avail);

	*desc = (struct virtq_desc){ addr, len, write ? VIRTQ_DESC_F_WRITE : 0,
				     0 };
	avail[2 + avail[1] % QSIZE] = d;
	__atomic_store_n(&avail[1], (uint16_t)(avail[1] + 1),
			 __ATOMIC_RELEASE);
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, q);
}

static void give_rx(unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		offer(0, RXBUF + (uint64_t)(rq[0].next_desc % QSIZE) * 4096,
		      4096, true);
}

static uint16_t used_idx(unsigned int q)
{
	return __atomic_load_n((uint16_t *)(ram + rq[q].used + 2),
			       __ATOMIC_ACQUIRE);
}

/* The next used element of queue q, waiting up to 5 s; false if none. */
static bool next_used(unsigned int q, struct virtq_used_elem *e)
{
	for (int i = 0; i < 5000 && used_idx(q) == rq[q].seen_used; i++)
		usleep(1000);
	if (used_idx(q) == rq[q].seen_used)
		return false;
	*e = ((struct virtq_used_elem *)(ram + rq[q].used + 4))
		[rq[q].seen_used++ % QSIZE];
	return true;
}

/* The guest's next received packet: its header, payload into `data`. */
static struct virtio_vsock_hdr recv_pkt(char *data)
{
	struct virtq_used_elem e;
	struct virtio_vsock_hdr h;
	const struct virtq_desc *d;

	if (!next_used(0, &e))
		fail_msg("no packet reached the guest");
	d = (const struct virtq_desc *)(ram + rq[0].desc) + e.id;
	memcpy(&h, ram + d->addr, HDR);
	assert_int_equal(e.len, HDR + h.len);
	if (data) {
		memcpy(data, ram + d->addr + HDR, h.len);
		data[h.len] = '\0';
	}
	give_rx(1);
	return h;
}

static struct virtio_vsock_hdr hdr(uint32_t src_port, uint32_t dst_port,
				   uint16_t op, uint32_t len)
{
	return (struct virtio_vsock_hdr){
		.src_cid = CID, .dst_cid = 2, .src_port = src_port,
		.dst_port = dst_port, .len = len, .type = 1, .op = op,
		.buf_alloc = 1 << 16,
	};
}

/* The guest sends a packet: header then payload, one descriptor. */
static void send_pkt(struct virtio_vsock_hdr h, const void *payload,
		     uint32_t payload_len)
{
	static unsigned int slot;
	uint64_t at = TXBUF + (uint64_t)(slot++ % QSIZE) * 1024;
	struct virtq_used_elem e;

	memcpy(ram + at, &h, HDR);
	if (payload_len)
		memcpy(ram + at + HDR, payload, payload_len);
	offer(1, at, (uint32_t)(HDR + payload_len), false);
	assert_true(next_used(1, &e));
}

static int host_connect(const char to[64])
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", to);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

static int host_listen(uint32_t port)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s_%u", path, port);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 4), 0);
	return fd;
}

/* Reads what the host's end has within 5 s (0 at its end). */
static ssize_t host_read(int fd, char *buf, size_t size)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	assert_int_equal(poll(&p, 1, 5000), 1);
	n = read(fd, buf, size - 1);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/coldstart-vsock-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/v.sock", dir);
	assert_int_equal(vsock__open(&vs, CID, path, &mem, 0xd0004000, 7,
				     raise_irq, NULL), 0);
	start();
	give_rx(8);
	return 0;
}

static int teardown(void **state)
{
	char cmd[160];

	(void)state;
	vsock__close(&vs);
	assert_int_equal(access(path, F_OK), -1); /* removed at close */
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static void the_host_connects(void **state)
{
	char buf[256], want[32];
	struct virtio_vsock_hdr h;
	uint64_t cid;
	int fd;

	(void)state;
	virtio_mmio__access(&vs.t, VIRTIO_MMIO_CONFIG, 8, false,
			    (uint8_t *)&cid);
	assert_int_equal(cid, CID);
	fd = host_connect(path);
	assert_int_equal(write(fd, "CONNECT 52\n", 11), 11);
	h = recv_pkt(NULL);
	assert_int_equal(h.op, VIRTIO_VSOCK_OP_REQUEST);
	assert_int_equal(h.src_cid, 2);
	assert_int_equal(h.dst_cid, CID);
	assert_int_equal(h.dst_port, 52);
	send_pkt(hdr(52, h.src_port, VIRTIO_VSOCK_OP_RESPONSE, 0), NULL, 0);
	snprintf(want, sizeof(want), "OK %u\n", h.src_port);
	host_read(fd, buf, sizeof(buf));
	assert_string_equal(buf, want);

	assert_int_equal(write(fd, "hello", 5), 5);
	h = recv_pkt(buf);
	assert_int_equal(h.op, VIRTIO_VSOCK_OP_RW);
	assert_string_equal(buf, "hello");
	send_pkt(hdr(52, h.src_port, VIRTIO_VSOCK_OP_RW, 5), "world", 5);
	host_read(fd, buf, sizeof(buf));
	assert_string_equal(buf, "world");

	/* The guest shuts down both ways: the host sees the end, the
	 * guest a reset. */
	struct virtio_vsock_hdr sd = hdr(52, h.src_port,
					 VIRTIO_VSOCK_OP_SHUTDOWN, 0);
	sd.flags = 3;
	send_pkt(sd, NULL, 0);
	assert_int_equal(host_read(fd, buf, sizeof(buf)), 0);
	assert_int_equal(recv_pkt(NULL).op, VIRTIO_VSOCK_OP_RST);
	close(fd);
}

static void the_guest_connects(void **state)
{
	char buf[256];
	struct virtio_vsock_hdr h;
	int lfd = host_listen(1234), fd;

	(void)state;
	send_pkt(hdr(5000, 1234, VIRTIO_VSOCK_OP_REQUEST, 0), NULL, 0);
	h = recv_pkt(NULL);
	assert_int_equal(h.op, VIRTIO_VSOCK_OP_RESPONSE);
	assert_int_equal(h.src_port, 1234);
	assert_int_equal(h.dst_port, 5000);
	fd = accept(lfd, NULL, NULL);
	assert_true(fd >= 0);
	send_pkt(hdr(5000, 1234, VIRTIO_VSOCK_OP_RW, 4), "ping", 4);
	host_read(fd, buf, sizeof(buf));
	assert_string_equal(buf, "ping");
	assert_int_equal(write(fd, "pong", 4), 4);
	h = recv_pkt(buf);
	assert_int_equal(h.op, VIRTIO_VSOCK_OP_RW);
	assert_string_equal(buf, "pong");
	/* The host closes: the guest hears a shutdown of both ways. */
	close(fd);
	h = recv_pkt(NULL);
	assert_int_equal(h.op, VIRTIO_VSOCK_OP_SHUTDOWN);
	assert_int_equal(h.flags, 3);
	send_pkt(hdr(5000, 1234, VIRTIO_VSOCK_OP_RST, 0), NULL, 0);
	/* Nothing listens on port 999: refused with a reset. */
	send_pkt(hdr(5001, 999, VIRTIO_VSOCK_OP_REQUEST, 0), NULL, 0);
	h = recv_pkt(NULL);
	assert_int_equal(h.op, VIRTIO_VSOCK_OP_RST);
	assert_int_equal(h.dst_port, 5001);
	close(lfd);
}

static void credit_is_held_to(void **state)
{
	char buf[256], big[100];
	struct virtio_vsock_hdr h, g;
	int lfd = host_listen(77), fd;

	(void)state;
	g = hdr(6000, 77, VIRTIO_VSOCK_OP_REQUEST, 0);
	g.buf_alloc = 10; /* the guest takes 10 bytes ahead */
	send_pkt(g, NULL, 0);
	assert_int_equal(recv_pkt(NULL).op, VIRTIO_VSOCK_OP_RESPONSE);
	fd = accept(lfd, NULL, NULL);
	memset(big, 'x', sizeof(big));
	assert_int_equal(write(fd, big, sizeof(big)), sizeof(big));
	h = recv_pkt(buf);
	assert_int_equal(h.op, VIRTIO_VSOCK_OP_RW);
	assert_int_equal(h.len, 10);
	/* Nothing more until the guest says it consumed them. */
	usleep(100 * 1000);
	assert_int_equal(used_idx(0), rq[0].seen_used);
	g = hdr(6000, 77, VIRTIO_VSOCK_OP_CREDIT_UPDATE, 0);
	g.buf_alloc = 10;
	g.fwd_cnt = 10;
	send_pkt(g, NULL, 0);
	h = recv_pkt(buf);
	assert_int_equal(h.op, VIRTIO_VSOCK_OP_RW);
	assert_int_equal(h.len, 10);
	close(fd);
	close(lfd);
}

static void malformed_packets_get_resets(void **state)
{
	struct virtio_vsock_hdr h;
	struct virtq_used_elem e;
	char junk[20] = { 0 };

	(void)state;
	/* Shorter than a header: returned, nothing else. */
	offer(1, TXBUF + 15 * 1024, sizeof(junk), false);
	assert_true(next_used(1, &e));
	h = hdr(7000, 1, VIRTIO_VSOCK_OP_RW, 0);
	h.dst_cid = 9; /* not the host */
	send_pkt(h, NULL, 0);
	assert_int_equal(recv_pkt(NULL).op, VIRTIO_VSOCK_OP_RST);
	h = hdr(7000, 1, VIRTIO_VSOCK_OP_RW, 500); /* longer than sent */
	send_pkt(h, "abc", 3);
	assert_int_equal(recv_pkt(NULL).op, VIRTIO_VSOCK_OP_RST);
	h = hdr(7000, 1, VIRTIO_VSOCK_OP_RW, 0);
	h.type = 2;
	send_pkt(h, NULL, 0);
	assert_int_equal(recv_pkt(NULL).op, VIRTIO_VSOCK_OP_RST);
	send_pkt(hdr(7000, 1, VIRTIO_VSOCK_OP_RW, 3), "abc", 3); /* no conn */
	assert_int_equal(recv_pkt(NULL).op, VIRTIO_VSOCK_OP_RST);
	/* The device still works. */
	assert_false(rd(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_NEEDS_RESET);
}

static void bad_connect_lines_close(void **state)
{
	static const char *const lines[] = { "HELLO\n", "CONNECT x\n",
					     "CONNECT 99999999999\n",
					     "CONNECT 5\nextra" };
	char buf[64];

	(void)state;
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		int fd = host_connect(path);

		assert_int_equal(write(fd, lines[i], strlen(lines[i])),
				 (ssize_t)strlen(lines[i]));
		assert_int_equal(host_read(fd, buf, sizeof(buf)), 0);
		close(fd);
	}
	assert_int_equal(used_idx(0), rq[0].seen_used); /* guest untold */
}

static void a_restore_resets_the_transport(void **state)
{
	struct virtq_used_elem e;
	char buf[64];
	uint32_t id;
	int lfd = host_listen(88), fd;

	(void)state;
	send_pkt(hdr(8000, 88, VIRTIO_VSOCK_OP_REQUEST, 0), NULL, 0);
	assert_int_equal(recv_pkt(NULL).op, VIRTIO_VSOCK_OP_RESPONSE);
	fd = accept(lfd, NULL, NULL);
	offer(2, EVBUF, 4, true);
	vsock__transport_reset(&vs);
	assert_true(next_used(2, &e));
	memcpy(&id, ram + EVBUF, 4);
	assert_int_equal(id, VIRTIO_VSOCK_EVENT_TRANSPORT_RESET);
	assert_int_equal(host_read(fd, buf, sizeof(buf)), 0);
	close(fd);
	close(lfd);
}

/* Waits (up to 5 s) for a pass of the I/O thread to have taken a host
 * connection's CONNECT line, and returns with that pass over: `serving`
 * held, so whatever the pass sent the guest is on the rings. */
static void hold_after_connect_line(void)
{
	for (int i = 0; i < 5000; i++) {
		pthread_mutex_lock(&vs.serving);
		for (unsigned int c = 0; c < VSOCK_MAX_CONNS; c++)
			if (vs.conns[c].state == VSOCK_AWAIT_RESPONSE)
				return;
		pthread_mutex_unlock(&vs.serving);
		usleep(1000);
	}
	fail_msg("the device never read the CONNECT line");
}

/* After a transport reset the guest resets every connected socket while
 * it handles the event: a host connection's REQUEST waits until the
 * driver gives the event buffer back, then goes. */
static void connects_wait_for_the_reset_to_be_handled(void **state)
{
	struct virtq_used_elem e;
	struct virtio_vsock_hdr h;
	uint16_t rx_before;
	int fd;

	(void)state;
	offer(2, EVBUF, 4, true);
	vsock__transport_reset(&vs);
	assert_true(next_used(2, &e));
	fd = host_connect(path);
	assert_int_equal(write(fd, "CONNECT 52\n", 11), 11);
	hold_after_connect_line();
	rx_before = used_idx(0);
	pthread_mutex_unlock(&vs.serving);
	assert_int_equal(rx_before, rq[0].seen_used); /* no REQUEST yet */
	offer(2, EVBUF, 4, true); /* the guest handled the event */
	h = recv_pkt(NULL);
	assert_int_equal(h.op, VIRTIO_VSOCK_OP_REQUEST);
	assert_int_equal(h.dst_port, 52);
	close(fd);
}

/* The system call thread `tid` of this process is in, -1 when running. */
static long syscall_of(long tid)
{
	char file[64], buf[32] = "";
	FILE *f;

	snprintf(file, sizeof(file), "/proc/self/task/%ld/syscall", tid);
	f = fopen(file, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return buf[0] >= '0' && buf[0] <= '9' ? strtol(buf, NULL, 10) : -1;
}

/* The device's I/O thread: the one waiting in epoll (up to 5 s). */
static long io_thread_tid(void)
{
	for (int i = 0; i < 5000; i++) {
		DIR *d = opendir("/proc/self/task");
		struct dirent *e;
		long tid = -1;

		assert_non_null(d);
		while (tid < 0 && (e = readdir(d))) {
			long t = strtol(e->d_name, NULL, 10);
			long nr = t > 0 && t != (long)gettid() ? syscall_of(t)
							       : -1;

			if (nr == SYS_epoll_wait || nr == SYS_epoll_pwait)
				tid = t;
		}
		closedir(d);
		if (tid > 0)
			return tid;
		usleep(1000);
	}
	fail_msg("no thread waits in epoll");
	return -1;
}

/* The unread kicks of the device's eventfd, from its fdinfo. */
static unsigned long unread_kicks(void)
{
	char file[64], line[128];
	unsigned long n = 0;
	FILE *f;

	snprintf(file, sizeof(file), "/proc/self/fdinfo/%d", vs.kick);
	f = fopen(file, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "eventfd-count: %lx", &n) == 1)
			break;
	fclose(f);
	return n;
}

static void *close_device(void *arg)
{
	(void)arg;
	vsock__close(&vs);
	return NULL;
}

/* Close's kick read by a pass of the thread that began before close
 * (woken by the guest's notify, waiting for `serving`): the thread must
 * still see the stop, not wait in epoll for a kick that came. */
static void close_while_a_pass_waits(void **state)
{
	struct timespec by;
	pthread_t closer;
	long tid = io_thread_tid();
	int i;

	(void)state;
	pthread_mutex_lock(&vs.serving);
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 1);
	for (i = 0; i < 5000 && syscall_of(tid) != SYS_futex; i++)
		usleep(1000);
	assert_int_equal(syscall_of(tid), SYS_futex); /* at the mutex */
	assert_int_equal(pthread_create(&closer, NULL, close_device, NULL), 0);
	for (i = 0; i < 5000 && unread_kicks() < 2; i++)
		usleep(1000);
	assert_int_equal(unread_kicks(), 2); /* the notify's and close's */
	pthread_mutex_unlock(&vs.serving);
	clock_gettime(CLOCK_REALTIME, &by);
	by.tv_sec += 10;
	if (pthread_timedjoin_np(closer, NULL, &by))
		fail_msg("vsock__close still waits for the I/O thread");
}

static int teardown_closed(void **state)
{
	char cmd[160];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static void refused_at_open(void **state)
{
	struct vsock *v = malloc(sizeof(*v));
	char longp[120];

	(void)state;
	assert_int_equal(vsock__open(v, 2, "/tmp/x.sock", &mem, 0, 7,
				     raise_irq, NULL), -EINVAL);
	assert_non_null(strstr(err__last(), "CID 2"));
	assert_int_equal(vsock__open(v, 4, path, &mem, 0, 7, raise_irq, NULL),
			 -EADDRINUSE);
	assert_non_null(strstr(err__last(), "exists"));
	memset(longp, 'a', sizeof(longp) - 1);
	longp[0] = '/';
	longp[sizeof(longp) - 1] = '\0';
	assert_int_equal(vsock__open(v, 4, longp, &mem, 0, 7, raise_irq, NULL),
			 -ENAMETOOLONG);
	free(v);
}

/* The VMM's own connection (vsock__connect_local): a host connection
 * like one to PATH, with its CONNECT line and OK answer. */
static void a_connection_from_inside(void **state)
{
	char buf[64], want[32];
	struct virtio_vsock_hdr h;
	int fd;

	(void)state;
	fd = vsock__connect_local(&vs);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "CONNECT 52\n", 11), 11);
	h = recv_pkt(NULL);
	assert_int_equal(h.op, VIRTIO_VSOCK_OP_REQUEST);
	assert_int_equal(h.dst_port, 52);
	send_pkt(hdr(52, h.src_port, VIRTIO_VSOCK_OP_RESPONSE, 0), NULL, 0);
	snprintf(want, sizeof(want), "OK %u\n", h.src_port);
	host_read(fd, buf, sizeof(buf));
	assert_string_equal(buf, want);
	close(fd);
}

/* Whether the device's epoll set watches descriptor `fd` (its fdinfo's
 * "tfd:" lines). */
static bool epoll_watches(int fd)
{
	char name[64], line[256];
	bool found = false;
	FILE *f;
	int tfd;

	snprintf(name, sizeof(name), "/proc/self/fdinfo/%d", vs.epoll_fd);
	f = fopen(name, "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		found |= sscanf(line, "tfd: %d", &tfd) == 1 && tfd == fd;
	fclose(f);
	return found;
}

/* A connection the guest resets leaves the epoll set even when its
 * socket lives on in a copy (a fork's): else the copy's events would
 * wake the slot's next connection. */
static void a_dropped_connection_leaves_epoll(void **state)
{
	char buf[64];
	struct virtio_vsock_hdr h;
	int fd, conn = -1, copy;

	(void)state;
	fd = vsock__connect_local(&vs);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "CONNECT 52\n", 11), 11);
	h = recv_pkt(NULL);
	send_pkt(hdr(52, h.src_port, VIRTIO_VSOCK_OP_RESPONSE, 0), NULL, 0);
	host_read(fd, buf, sizeof(buf));
	for (unsigned int i = 0; i < VSOCK_MAX_CONNS; i++)
		if (vs.conns[i].state != VSOCK_FREE)
			conn = vs.conns[i].fd;
	assert_true(conn >= 0);
	for (int i = 0; i < 500 && !epoll_watches(conn); i++)
		usleep(10000);
	assert_true(epoll_watches(conn));
	copy = dup(conn);
	assert_true(copy >= 0);
	send_pkt(hdr(52, h.src_port, VIRTIO_VSOCK_OP_RST, 0), NULL, 0);
	for (int i = 0; i < 500 && epoll_watches(conn); i++)
		usleep(10000);
	assert_false(epoll_watches(conn));
	close(copy);
	close(fd);
}

static int setup_unnamed(void **state)
{
	(void)state;
	assert_int_equal(vsock__open(&vs, CID, NULL, &mem, 0xd0004000, 7,
				     raise_irq, NULL), 0);
	return 0;
}

static int teardown_unnamed(void **state)
{
	(void)state;
	vsock__close(&vs);
	return 0;
}

/* A device without a socket file (--exec without --vsock, a pool's
 * VMs): reached from inside only once the driver started it, and a
 * guest's connection to a host port is refused with a reset. */
static void a_device_without_a_path(void **state)
{
	struct virtio_vsock_hdr h;
	int fd;

	(void)state;
	assert_int_equal(vs.listen_fd, -1);
	assert_int_equal(vsock__connect_local(&vs), -EAGAIN);
	start();
	give_rx(8);
	send_pkt(hdr(5000, 1234, VIRTIO_VSOCK_OP_REQUEST, 0), NULL, 0);
	h = recv_pkt(NULL);
	assert_int_equal(h.op, VIRTIO_VSOCK_OP_RST);
	assert_int_equal(h.dst_port, 5000);
	fd = vsock__connect_local(&vs);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "CONNECT 7\n", 10), 10);
	assert_int_equal(recv_pkt(NULL).op, VIRTIO_VSOCK_OP_REQUEST);
	close(fd);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(the_host_connects),
		T(the_guest_connects),
		T(credit_is_held_to),
		T(malformed_packets_get_resets),
		T(bad_connect_lines_close),
		T(a_restore_resets_the_transport),
		T(connects_wait_for_the_reset_to_be_handled),
		T(refused_at_open),
		T(a_connection_from_inside),
		T(a_dropped_connection_leaves_epoll),
		cmocka_unit_test_setup_teardown(a_device_without_a_path,
						setup_unnamed, teardown_unnamed),
		cmocka_unit_test_setup_teardown(close_while_a_pass_waits, setup,
						teardown_closed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
