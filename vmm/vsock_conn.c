/* virtio-vsock's packets and connections (vsock_int.h): the guest's
 * packets from the transmit queue, the host's CONNECT lines, and what
 * goes to the guest on the receive queue, control packets before data,
 * data only within the credit the guest gave. */
#include "vsock_int.h"

#include "err.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define HDR sizeof(struct virtio_vsock_hdr)

static struct vsock_conn *find(struct vsock *v, uint32_t local,
			       uint32_t peer)
{
	for (unsigned int i = 0; i < VSOCK_MAX_CONNS; i++) {
		struct vsock_conn *c = &v->conns[i];

		if (c->state != VSOCK_FREE && c->state != VSOCK_AWAIT_LINE &&
		    c->local_port == local && c->peer_port == peer)
			return c;
	}
	return NULL;
}

static struct vsock_conn *slot(struct vsock *v)
{
	for (unsigned int i = 0; i < VSOCK_MAX_CONNS; i++)
		if (v->conns[i].state == VSOCK_FREE)
			return &v->conns[i];
	return NULL;
}

void vsock__drop(struct vsock *v, struct vsock_conn *c)
{
	/* out of the epoll set first: a copy of the socket (a fork's) would
	 * keep it there, waking the slot's next connection */
	if (c->fd >= 0 && c->ep)
		epoll_ctl(v->epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
	if (c->fd >= 0)
		close(c->fd);
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

/* A reset for a guest port with no connection (or one just dropped). */
static void owe_rst(struct vsock *v, uint32_t local, uint32_t peer)
{
	if (v->nr_rsts < sizeof(v->rsts) / sizeof(v->rsts[0]))
		v->rsts[v->nr_rsts++] = (struct vsock_rst){ local, peer };
}

static void reset_conn(struct vsock *v, struct vsock_conn *c)
{
	owe_rst(v, c->local_port, c->peer_port);
	vsock__drop(v, c);
}

int vsock__flush(struct vsock_conn *c)
{
	while (c->out_len) {
		ssize_t n = send(c->fd, c->out, c->out_len, MSG_NOSIGNAL);

		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		memmove(c->out, c->out + n, c->out_len - (size_t)n);
		c->out_len -= (uint32_t)n;
		c->fwd_cnt += (uint32_t)n;
	}
	return 0;
}

/* The guest's payload for the host: sent now as far as the socket
 * takes it, the rest kept within what the device advertised. */
static int forward(struct vsock_conn *c, const uint8_t *p, uint32_t len)
{
	if (c->out_len + len > VSOCK_BUF_ALLOC)
		return -1; /* more than the credit the guest was given */
	if (!c->out) {
		c->out = malloc(VSOCK_BUF_ALLOC);
		if (!c->out)
			return -1;
	}
	memcpy(c->out + c->out_len, p, len);
	c->out_len += len;
	if (vsock__flush(c) < 0)
		return -1;
	/* Tell the guest its credit once a quarter of it came back. */
	if (c->fwd_cnt - c->fwd_told >= VSOCK_BUF_ALLOC / 4)
		c->owed |= VSOCK_SEND_CREDIT;
	return 0;
}

/* The guest asks to connect to host port `port`: PATH_port. */
static void guest_connects(struct vsock *v, const struct virtio_vsock_hdr *h)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct vsock_conn *c = slot(v);
	int fd;

	if (!c || v->no_host_ports ||
	    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s_%u", v->path,
		     h->dst_port) >= (int)sizeof(sa.sun_path)) {
		owe_rst(v, h->dst_port, h->src_port);
		return;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (fd >= 0)
			close(fd);
		owe_rst(v, h->dst_port, h->src_port);
		return;
	}
	*c = (struct vsock_conn){ .state = VSOCK_ESTABLISHED, .fd = fd,
				  .local_port = h->dst_port,
				  .peer_port = h->src_port,
				  .owed = VSOCK_SEND_RESPONSE };
}

static void guest_accepts(struct vsock *v, struct vsock_conn *c)
{
	char ok[24];
	int n = snprintf(ok, sizeof(ok), "OK %u\n", c->local_port);

	c->state = VSOCK_ESTABLISHED;
	if (send(c->fd, ok, (size_t)n, MSG_NOSIGNAL) != n)
		reset_conn(v, c);
}

/* One packet from the guest. Anything malformed, or for no connection,
 * gets a reset; nothing the guest sends stops the device. */
static void from_guest(struct vsock *v, const struct virtq_chain *ch)
{
	struct virtio_vsock_hdr h;
	struct vsock_conn *c;

	v->packets_in++;
	if (virtq__read(ch, 0, &h, HDR) != HDR)
		return;
	if (h.op == VIRTIO_VSOCK_OP_RST)
		goto rst;
	if (h.type != VIRTIO_VSOCK_TYPE_STREAM || h.dst_cid != VSOCK_HOST_CID ||
	    h.src_cid != v->guest_cid || h.len > VSOCK_MAX_PAYLOAD ||
	    h.len > ch->readable - HDR) {
		owe_rst(v, h.dst_port, h.src_port);
		return;
	}
	c = find(v, h.dst_port, h.src_port);
	if (h.op == VIRTIO_VSOCK_OP_REQUEST) {
		if (c)
			reset_conn(v, c);
		else
			guest_connects(v, &h);
		c = find(v, h.dst_port, h.src_port);
	}
	if (!c) {
		if (h.op != VIRTIO_VSOCK_OP_REQUEST)
			owe_rst(v, h.dst_port, h.src_port);
		return;
	}
	c->peer_buf_alloc = h.buf_alloc;
	c->peer_fwd_cnt = h.fwd_cnt;
	switch (h.op) {
	case VIRTIO_VSOCK_OP_RESPONSE:
		if (c->state == VSOCK_AWAIT_RESPONSE)
			guest_accepts(v, c);
		else
			reset_conn(v, c);
		break;
	case VIRTIO_VSOCK_OP_RW:
		if (c->state != VSOCK_ESTABLISHED ||
		    virtq__read(ch, HDR, v->bounce, h.len) != h.len ||
		    forward(c, v->bounce, h.len) < 0)
			reset_conn(v, c);
		break;
	case VIRTIO_VSOCK_OP_SHUTDOWN:
		/* The guest will neither send nor receive: the host's end
		 * closes, and the connection ends with a reset. */
		if ((h.flags & 3) == 3) {
			vsock__flush(c);
			reset_conn(v, c);
		} else if (h.flags & VIRTIO_VSOCK_SHUTDOWN_SEND) {
			vsock__flush(c);
			shutdown(c->fd, SHUT_WR);
		}
		break;
	case VIRTIO_VSOCK_OP_CREDIT_REQUEST:
		c->owed |= VSOCK_SEND_CREDIT;
		break;
	case VIRTIO_VSOCK_OP_CREDIT_UPDATE:
	case VIRTIO_VSOCK_OP_REQUEST:
		break;
	default:
		reset_conn(v, c);
	}
	return;
rst:
	c = find(v, h.dst_port, h.src_port);
	if (c)
		vsock__drop(v, c);
}

/* A header for the guest from the host's side of a connection. */
static struct virtio_vsock_hdr header(const struct vsock *v, uint32_t local,
				      uint32_t peer, uint16_t op,
				      const struct vsock_conn *c)
{
	return (struct virtio_vsock_hdr){
		.src_cid = VSOCK_HOST_CID, .dst_cid = v->guest_cid,
		.src_port = local, .dst_port = peer,
		.type = VIRTIO_VSOCK_TYPE_STREAM, .op = op,
		.buf_alloc = VSOCK_BUF_ALLOC,
		.fwd_cnt = c ? c->fwd_cnt : 0,
	};
}

/* Takes the guest's next receive buffer that holds a header into
 * v->chain; false when the guest gave none (the thread then waits for
 * its notification) or a malformed one (the transport then resets). */
static bool rx_buffer(struct vsock *v)
{
	struct virtq *q = &v->t.q[VSOCK_RXQ];
	int ret;

	while ((ret = virtq__pop(q, &v->chain)) > 0) {
		if (v->chain.writable >= HDR)
			return true;
		virtq__push(q, v->chain.head, 0); /* too small: back empty */
	}
	if (ret < 0)
		virtio_mmio__needs_reset(&v->t);
	v->rx_starved = true;
	return false;
}

/* Fills the buffer rx_buffer took with a packet and returns it. */
static void rx_fill(struct vsock *v, const struct virtio_vsock_hdr *h,
		    const void *payload)
{
	virtq__write(&v->chain, 0, h, HDR);
	if (h->len)
		virtq__write(&v->chain, HDR, payload, h->len);
	virtq__push(&v->t.q[VSOCK_RXQ], v->chain.head,
		    (uint32_t)(HDR + h->len));
	v->packets_out++;
}

static bool to_guest(struct vsock *v, const struct virtio_vsock_hdr *h)
{
	if (!rx_buffer(v))
		return false;
	rx_fill(v, h, NULL);
	return true;
}

static uint32_t credit(const struct vsock_conn *c)
{
	uint32_t in_flight = c->rx_cnt - c->peer_fwd_cnt;

	return in_flight < c->peer_buf_alloc ? c->peer_buf_alloc - in_flight :
						0;
}

/* The control packets a connection owes, in order; false when the
 * receive queue ran dry. */
static bool send_owed(struct vsock *v, struct vsock_conn *c)
{
	static const struct {
		unsigned int bit;
		uint16_t op;
	} order[] = {
		{ VSOCK_SEND_REQUEST, VIRTIO_VSOCK_OP_REQUEST },
		{ VSOCK_SEND_RESPONSE, VIRTIO_VSOCK_OP_RESPONSE },
		{ VSOCK_SEND_CREDIT, VIRTIO_VSOCK_OP_CREDIT_UPDATE },
		{ VSOCK_SEND_SHUTDOWN, VIRTIO_VSOCK_OP_SHUTDOWN },
	};

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		struct virtio_vsock_hdr h;

		if (!(c->owed & order[i].bit))
			continue;
		h = header(v, c->local_port, c->peer_port, order[i].op, c);
		if (order[i].bit == VSOCK_SEND_SHUTDOWN)
			h.flags = VIRTIO_VSOCK_SHUTDOWN_RCV |
				  VIRTIO_VSOCK_SHUTDOWN_SEND;
		if (!to_guest(v, &h))
			return false;
		c->owed &= ~order[i].bit;
		c->fwd_told = c->fwd_cnt;
	}
	return true;
}

/* The host's bytes, as far as the guest's credit and buffers go; a
 * buffer is taken before the socket is read, so nothing read is ever
 * dropped. */
static bool send_data(struct vsock *v, struct vsock_conn *c)
{
	while (c->state == VSOCK_ESTABLISHED && c->readable && !c->host_done) {
		uint32_t room = credit(c);
		struct virtio_vsock_hdr h;
		ssize_t n;

		if (room == 0)
			return true; /* the guest's CREDIT_UPDATE wakes it */
		/* Is there anything (data or the end) before a buffer is
		 * taken for it? */
		n = recv(c->fd, v->bounce, 1, MSG_DONTWAIT | MSG_PEEK);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			c->readable = false;
			return true;
		}
		if (!rx_buffer(v))
			return false;
		if (room > sizeof(v->bounce))
			room = sizeof(v->bounce);
		if (room > v->chain.writable - HDR)
			room = (uint32_t)(v->chain.writable - HDR);
		n = recv(c->fd, v->bounce, room, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			/* Gone since the peek (it cannot be, with one reader):
			 * the buffer carries our credit instead. */
			c->readable = false;
			h = header(v, c->local_port, c->peer_port,
				   VIRTIO_VSOCK_OP_CREDIT_UPDATE, c);
		} else if (n <= 0) { /* the host closed its end */
			c->host_done = true;
			c->owed &= ~VSOCK_SEND_SHUTDOWN;
			h = header(v, c->local_port, c->peer_port,
				   VIRTIO_VSOCK_OP_SHUTDOWN, c);
			h.flags = VIRTIO_VSOCK_SHUTDOWN_RCV |
				  VIRTIO_VSOCK_SHUTDOWN_SEND;
		} else {
			h = header(v, c->local_port, c->peer_port,
				   VIRTIO_VSOCK_OP_RW, c);
			h.len = (uint32_t)n;
			c->rx_cnt += (uint32_t)n;
		}
		rx_fill(v, &h, v->bounce);
		c->fwd_told = c->fwd_cnt;
	}
	return true;
}

/* "CONNECT <port>\n" from a host connection; anything else closes it. */
static void read_line(struct vsock *v, struct vsock_conn *c)
{
	char *end;
	unsigned long port;
	ssize_t n = recv(c->fd, c->line + c->line_len,
			 sizeof(c->line) - 1 - c->line_len, MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
		c->readable = false;
		return;
	}
	if (n <= 0) {
		vsock__drop(v, c);
		return;
	}
	c->line_len = (uint8_t)(c->line_len + n);
	c->line[c->line_len] = '\0';
	end = strchr(c->line, '\n');
	if (!end) {
		if (c->line_len == sizeof(c->line) - 1)
			vsock__drop(v, c);
		return;
	}
	*end = '\0';
	errno = 0;
	if (strncmp(c->line, "CONNECT ", 8) || c->line[8] < '0' ||
	    c->line[8] > '9' ||
	    (port = strtoul(c->line + 8, &end, 10), *end) || errno ||
	    port > UINT32_MAX || end + 1 != c->line + c->line_len) {
		vsock__drop(v, c);
		return;
	}
	c->state = VSOCK_AWAIT_RESPONSE;
	c->local_port = v->next_port++;
	c->peer_port = (uint32_t)port;
	c->owed = VSOCK_SEND_REQUEST;
	c->readable = false;
}

bool vsock__adopt(struct vsock *v, int fd)
{
	struct vsock_conn *c = slot(v);

	if (c)
		*c = (struct vsock_conn){ .state = VSOCK_AWAIT_LINE, .fd = fd };
	return c != NULL;
}

void vsock__accept(struct vsock *v)
{
	int fd = accept4(v->listen_fd, NULL, NULL,
			 SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd >= 0 && !vsock__adopt(v, fd))
		close(fd); /* every slot taken: the host sees it closed */
}

static void send_event(struct vsock *v)
{
	struct virtq *q = &v->t.q[VSOCK_EVQ];
	struct virtio_vsock_event e = {
		.id = VIRTIO_VSOCK_EVENT_TRANSPORT_RESET
	};
	int ret;

	if (!q->ready) { /* no driver: no connection to reset */
		v->reset_event = false;
		return;
	}
	ret = virtq__pop(q, &v->chain);
	if (ret < 0)
		virtio_mmio__needs_reset(&v->t);
	if (ret <= 0 || v->chain.writable < sizeof(e))
		return; /* it waits for the guest's event buffer */
	virtq__write(&v->chain, 0, &e, sizeof(e));
	v->evq_avail = virtq__avail_idx(q);
	virtq__push(q, v->chain.head, sizeof(e));
	v->reset_event = false;
	v->reset_unacked = true;
	virtio_mmio__used(&v->t, VSOCK_EVQ);
}

/* Whether the guest may still be handling a transport reset. */
static bool reset_in_flight(struct vsock *v)
{
	const struct virtq *q = &v->t.q[VSOCK_EVQ];

	if (v->reset_unacked && q->ready &&
	    virtq__avail_idx(q) != v->evq_avail)
		v->reset_unacked = false;
	return v->reset_event || v->reset_unacked;
}

static void guest_packets(struct vsock *v)
{
	struct virtq *q = &v->t.q[VSOCK_TXQ];
	bool used = false;
	int ret;

	while ((ret = virtq__pop(q, &v->chain)) > 0) {
		from_guest(v, &v->chain);
		virtq__push(q, v->chain.head, 0);
		used = true;
	}
	if (used)
		virtio_mmio__used(&v->t, VSOCK_TXQ);
	if (ret < 0)
		virtio_mmio__needs_reset(&v->t);
}

static void owed_to_guest(struct vsock *v)
{
	uint16_t before = v->t.q[VSOCK_RXQ].used_idx;
	bool hold_requests = reset_in_flight(v);

	while (v->nr_rsts) {
		const struct vsock_rst *r = &v->rsts[v->nr_rsts - 1];
		struct virtio_vsock_hdr h = header(v, r->local_port,
						   r->peer_port,
						   VIRTIO_VSOCK_OP_RST, NULL);

		if (!to_guest(v, &h))
			goto out;
		v->nr_rsts--;
		v->resets_sent++;
	}
	for (unsigned int i = 0; i < VSOCK_MAX_CONNS; i++) {
		struct vsock_conn *c = &v->conns[i];

		if (c->state == VSOCK_FREE)
			continue;
		/* a new connection waits out a reset the guest handles */
		if ((c->owed & VSOCK_SEND_REQUEST) && hold_requests)
			continue;
		if (!send_owed(v, c) || !send_data(v, c))
			break;
	}
out:
	if (v->t.q[VSOCK_RXQ].used_idx != before)
		virtio_mmio__used(&v->t, VSOCK_RXQ);
}

void vsock__serve(struct vsock *v)
{
	if (v->reset_event)
		send_event(v);
	if (v->t.q[VSOCK_TXQ].ready)
		guest_packets(v);
	for (unsigned int i = 0; i < VSOCK_MAX_CONNS; i++) {
		struct vsock_conn *c = &v->conns[i];

		if (c->state == VSOCK_AWAIT_LINE && c->readable)
			read_line(v, c);
		if (c->state == VSOCK_ESTABLISHED && c->out_len &&
		    vsock__flush(c) < 0)
			reset_conn(v, c);
	}
	if (v->t.q[VSOCK_RXQ].ready) {
		v->rx_starved = false;
		owed_to_guest(v);
	}
}
