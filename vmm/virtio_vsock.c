/* virtio-vsock (virtio_vsock.h): the device, its listening socket, its
 * I/O thread and what each socket waits for. The thread sleeps in
 * epoll_wait on the notifications' eventfd, the listening socket and the
 * connections; the packets are vsock_conn.c's. */
#include "vsock_int.h"

#include "err.h"
#include "io_thread.h"
#include "jail.h"
#include "vm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define EP_KICK 0
#define EP_LISTEN 1
#define EP_CONN 2 /* + the connection's index */

static void config_read(void *dev, uint32_t off, void *data, uint32_t len)
{
	const struct vsock *v = dev;

	memcpy(data, (const uint8_t *)&v->guest_cid + off, len);
}

static void kick(struct vsock *v)
{
	uint64_t one = 1;

	if (write(v->kick, &one, sizeof(one)) < 0) {
		/* Fails only past 2^64 - 2 unread kicks: awake already. */
	}
}

static void notify(void *dev, unsigned int q)
{
	(void)q;
	kick(dev);
}

static void drop_all(struct vsock *v)
{
	for (unsigned int i = 0; i < VSOCK_MAX_CONNS; i++)
		if (v->conns[i].state != VSOCK_FREE)
			vsock__drop(v, &v->conns[i]);
	v->nr_rsts = 0;
	v->rx_starved = false;
}

static int activate(void *dev, uint64_t features)
{
	struct vsock *v = dev;

	(void)features;
	pthread_mutex_lock(&v->serving);
	v->active = true;
	pthread_mutex_unlock(&v->serving);
	kick(v);
	return 0;
}

/* The driver reset the device: its connections end with it, closed by
 * the I/O thread (this runs on a vCPU's, whose filter holds no close). */
static void reset(void *dev)
{
	struct vsock *v = dev;

	pthread_mutex_lock(&v->serving);
	v->active = false;
	v->reset_event = false;
	v->reset_unacked = false;
	v->drop_owed = true;
	pthread_mutex_unlock(&v->serving);
	kick(v);
}

void vsock__transport_reset(struct vsock *v)
{
	pthread_mutex_lock(&v->serving);
	drop_all(v);
	v->reset_event = true;
	pthread_mutex_unlock(&v->serving);
	kick(v);
}

static uint32_t wanted(const struct vsock *v, const struct vsock_conn *c)
{
	uint32_t ev = 0;

	if (c->state == VSOCK_AWAIT_LINE)
		return EPOLLIN;
	/* Readable is not asked again until what was read is passed on,
	 * which waits for the guest's credit and buffers. */
	if (c->state == VSOCK_ESTABLISHED && !c->readable && !c->host_done &&
	    !v->rx_starved)
		ev |= EPOLLIN;
	if (c->out_len)
		ev |= EPOLLOUT;
	return ev;
}

/* A socket is in the epoll set exactly while wanted() is not 0: epoll
 * reports a hang-up (EPOLLHUP) whatever the mask, so a host end closed
 * while its connection waits for the guest (not yet accepted, the end
 * already told, no buffers, no credit) would end every wait at once until
 * the guest acts, which a paused guest never does: the thread spun.
 * No wake-up is lost by leaving the set:
 * - a socket's readiness is a level kept by the kernel, not an edge:
 *   EPOLL_CTL_ADD reports at once what is pending (data, the end);
 * - wanted() reads only the connection's state, readable, host_done,
 *   out_len and rx_starved; they change only in this thread's passes
 *   (under `serving`), each of which ends here, or in drop_all by
 *   another thread, which kicks for such a pass;
 * - out of the set means nothing would act on the socket now: readable
 *   is set already (or the end was told: host_done), the guest has not
 *   accepted (its answer is a packet: a kick, then a pass), or it gave
 *   no buffer to receive into (its next one is a kick, then a pass that
 *   clears rx_starved and adds the socket back).
 * EPOLLIN alone sees the host's end too (end of file is readable);
 * EPOLLRDHUP is not asked for: a half-closed end would wake every wait
 * while only EPOLLOUT is wanted. */
void vsock__interest(struct vsock *v)
{
	for (unsigned int i = 0; i < VSOCK_MAX_CONNS; i++) {
		struct vsock_conn *c = &v->conns[i];
		struct epoll_event e = { .data.u64 = EP_CONN + i };
		uint32_t want;
		int op;

		if (c->state == VSOCK_FREE)
			continue;
		want = wanted(v, c);
		if (want == c->ep)
			continue;
		e.events = want;
		op = !want ? EPOLL_CTL_DEL : c->ep ? EPOLL_CTL_MOD
						   : EPOLL_CTL_ADD;
		if (epoll_ctl(v->epoll_fd, op, c->fd, &e) == 0)
			c->ep = want;
	}
}

static void event(struct vsock *v, const struct epoll_event *e)
{
	uint64_t n;

	if (e->data.u64 == EP_KICK) {
		if (read(v->kick, &n, sizeof(n)) < 0) {
			/* EAGAIN: another read took it */
		}
	} else if (e->data.u64 == EP_LISTEN) {
		vsock__accept(v);
		if (!v->active) /* no driver: nobody to connect to */
			drop_all(v);
	} else if (e->data.u64 - EP_CONN < VSOCK_MAX_CONNS) {
		struct vsock_conn *c = &v->conns[e->data.u64 - EP_CONN];

		if (e->events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
			c->readable = true;
	}
}

static void io_main(void *arg)
{
	struct vsock *v = arg;
	struct epoll_event ev[16];

	for (;;) {
		int n = epoll_wait(v->epoll_fd, ev, 16, -1);

		if (n < 0 && errno != EINTR)
			break;
		pthread_mutex_lock(&v->serving);
		if (v->drop_owed) { /* the driver reset the device */
			drop_all(v);
			v->drop_owed = false;
		}
		for (int i = 0; i < n; i++)
			event(v, &ev[i]);
		/* After the events, not before: the kick they read may be
		 * vsock__close's, made while this pass waited for `serving`,
		 * and no other would come to end the next wait. */
		if (__atomic_load_n(&v->stop, __ATOMIC_ACQUIRE)) {
			pthread_mutex_unlock(&v->serving);
			break;
		}
		if (v->active && !(__atomic_load_n(&v->t.s.status,
						   __ATOMIC_ACQUIRE) &
				   VIRTIO_STATUS_NEEDS_RESET))
			vsock__serve(v);
		vsock__interest(v);
		pthread_mutex_unlock(&v->serving);
	}
}

static int listen_on(struct vsock *v, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	/* Guest ports add "_PORT" (at most 11 bytes) to the path. */
	if (strlen(path) + 12 > sizeof(sa.sun_path) ||
	    strlen(path) >= sizeof(v->path))
		return err__set(ENAMETOOLONG, "vsock socket %s: longer than "
				"%zu bytes", path, sizeof(sa.sun_path) - 12);
	strcpy(v->path, path);
	strcpy(sa.sun_path, path);
	v->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
					       SOCK_CLOEXEC, 0);
	if (v->listen_fd < 0)
		return err__sys(errno, "vsock socket");
	if (bind(v->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(v->listen_fd, 16) < 0) {
		int e = errno;

		close(v->listen_fd);
		return err__sys(e, "vsock socket %s%s", path,
				e == EADDRINUSE ? ": the file exists (remove "
						  "it, or choose another)" : "");
	}
	return 0;
}

/* The listening socket closed and its file removed (by its path: a
 * jailed VMM cannot reach it, and its parent removes it). */
static void unlisten(struct vsock *v)
{
	if (v->listen_fd < 0)
		return;
	close(v->listen_fd);
	if (!jail__dir())
		unlink(v->path);
}

static int watch(int epfd, int fd, uint64_t tag)
{
	struct epoll_event e = { .events = EPOLLIN, .data.u64 = tag };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e);
}

static int start(struct vsock *v)
{
	int ret;

	v->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	v->kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (v->epoll_fd < 0 || v->kick < 0 ||
	    watch(v->epoll_fd, v->kick, EP_KICK) < 0 ||
	    (v->listen_fd >= 0 &&
	     watch(v->epoll_fd, v->listen_fd, EP_LISTEN) < 0))
		return err__sys(errno, "vsock: epoll");
	pthread_mutex_init(&v->serving, NULL);
	ret = io_thread__start(&v->io, "virtio-vsock", io_main, v);
	if (ret < 0)
		pthread_mutex_destroy(&v->serving);
	return ret;
}

int vsock__open(struct vsock *v, uint64_t cid, const char *path,
		const struct guest_mem *mem, uint64_t base, uint32_t irq,
		void (*raise)(void *ctx, uint32_t irq), void *raise_ctx)
{
	int ret;

	memset(v, 0, sizeof(*v));
	v->epoll_fd = v->kick = v->listen_fd = -1;
	for (unsigned int i = 0; i < VSOCK_MAX_CONNS; i++)
		v->conns[i].fd = -1;
	if (cid < 3 || cid > UINT32_MAX - 1)
		return err__set(EINVAL, "vsock guest CID %llu: from 3 to "
				"4294967294 (0-2 are reserved)",
				(unsigned long long)cid);
	v->guest_cid = cid;
	v->next_port = 1u << 30;
	v->ops = (struct virtio_dev_ops){
		.name = "virtio-vsock", .device_id = 19, .features = 0,
		.queues = 3, .queue_max = VIRTQ_MAX_SIZE, .config_size = 8,
		.config_read = config_read, .activate = activate,
		.notify = notify, .reset = reset,
	};
	ret = virtio_mmio__init(&v->t, &v->ops, v, mem, base, irq, raise,
				raise_ctx);
	if (ret < 0)
		return ret;
	/* jailed, the host's paths are out of reach: a guest's connection
	 * to host port P is refused rather than looked up inside the jail */
	v->no_host_ports = !path || jail__pending() || jail__dir();
	ret = path ? listen_on(v, path) : 0;
	if (ret < 0)
		goto err_transport;
	ret = start(v);
	if (ret == 0)
		return 0;
	if (v->kick >= 0)
		close(v->kick);
	if (v->epoll_fd >= 0)
		close(v->epoll_fd);
	unlisten(v);
err_transport:
	virtio_mmio__destroy(&v->t);
	return ret;
}

void vsock__close(struct vsock *v)
{
	__atomic_store_n(&v->stop, true, __ATOMIC_RELEASE);
	kick(v);
	io_thread__join(&v->io);
	drop_all(v);
	pthread_mutex_destroy(&v->serving);
	close(v->kick);
	close(v->epoll_fd);
	unlisten(v);
	virtio_mmio__destroy(&v->t);
}

int vsock__connect_local(struct vsock *v)
{
	int sv[2], ret = 0;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return err__sys(errno, "vsock: socketpair");
	if (fcntl(sv[0], F_SETFL, O_NONBLOCK) < 0)
		ret = err__sys(errno, "vsock: O_NONBLOCK");
	pthread_mutex_lock(&v->serving);
	/* no driver: nobody to connect to, as for the listening socket */
	if (ret == 0 && (!v->active || !vsock__adopt(v, sv[0])))
		ret = -EAGAIN;
	pthread_mutex_unlock(&v->serving);
	if (ret < 0) {
		close(sv[0]);
		close(sv[1]);
		return ret;
	}
	kick(v);
	return sv[1];
}

static size_t state_size(const void *dev)
{
	(void)dev;
	return sizeof(struct vsock_state);
}

static int save(const void *dev, void *buf, size_t len)
{
	const struct vsock *v = dev;
	struct vsock_state st = { .version = VSOCK_STATE_VERSION,
				  .guest_cid = v->guest_cid };
	int ret = device__check_save(v->dev_name, sizeof(st), len);

	if (ret < 0)
		return ret;
	virtio_mmio__save(&v->t, &st.t);
	memcpy(buf, &st, sizeof(st));
	return 0;
}

static int ready(void *dev)
{
	return io_thread__ready(&((struct vsock *)dev)->io);
}

/* The guest's side comes back; the host's connections did not survive:
 * the guest hears of it and reconnects. */
static int restore(void *dev, const void *buf, size_t len)
{
	struct vsock *v = dev;
	struct vsock_state st;
	int ret = device__check_restore(v->dev_name, sizeof(st),
					VSOCK_STATE_VERSION, buf, len);

	if (ret < 0)
		return ret;
	memcpy(&st, buf, sizeof(st));
	if (st.guest_cid != v->guest_cid)
		return err__set(EINVAL, "virtio-vsock: the snapshot's guest "
				"CID is %llu, this VM's %llu",
				(unsigned long long)st.guest_cid,
				(unsigned long long)v->guest_cid);
	ret = virtio_mmio__restore(&v->t, &st.t);
	if (ret == 0)
		vsock__transport_reset(v);
	return ret;
}

static void hold(void *dev, bool on)
{
	struct vsock *v = dev;

	if (on)
		pthread_mutex_lock(&v->serving);
	else
		pthread_mutex_unlock(&v->serving);
}

int vsock__attach(struct vsock *v, struct vm *vm)
{
	int ret;

	snprintf(v->dev_name, sizeof(v->dev_name), "virtio-vsock");
	v->dev = (struct device_ops){ .name = v->dev_name,
				      .state_size = state_size, .save = save,
				      .restore = restore, .ready = ready,
				      .hold = hold };
	ret = virtio_mmio__register(&v->t, &vm->io);
	if (ret == 0)
		ret = virtio_mmio__kvm_paths(&v->t, vm, v->kick);
	if (ret == 0)
		ret = vm__add_device(vm, &v->dev, v);
	return ret;
}
