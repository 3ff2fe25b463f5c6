/* virtio-vsock over virtio-mmio, in user space, with Firecracker's
 * host-side convention so that its clients work unchanged:
 * - the host connects to the Unix socket PATH and writes "CONNECT
 *   <port>\n"; once the guest accepts, it reads "OK <host port>\n" and
 *   the stream is the guest's;
 * - a guest's connection to host port P is a connection to the Unix
 *   socket "PATH_P" (refused, the guest sees a reset, if nothing listens
 *   there, if the device has no PATH, or if the VMM is jailed: the
 *   host's paths are not looked up inside the jail);
 * - the VMM itself connects through vsock__connect_local(), without a
 *   path, as it must once jailed.
 * One I/O thread serves the queues and every socket; it never blocks on
 * a socket, and holds the guest to the credit it advertised and itself to
 * the guest's. After a restore, the host's connections are gone: the
 * device tells the guest so (VIRTIO_VSOCK_EVENT_TRANSPORT_RESET), and the
 * guest's applications reconnect. */
#ifndef COLDSTART_VIRTIO_VSOCK_H
#define COLDSTART_VIRTIO_VSOCK_H

#include "device.h"
#include "io_thread.h"
#include "virtio_mmio.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct guest_mem;
struct vm;

#define VSOCK_HOST_CID 2
#define VSOCK_MAX_CONNS 64
/* What the device lets the guest send ahead of the host socket (its
 * buf_alloc), per connection. */
#define VSOCK_BUF_ALLOC (256u * 1024u)
#define VSOCK_MAX_PAYLOAD (64u * 1024u)

enum vsock_conn_state {
	VSOCK_FREE = 0,
	VSOCK_AWAIT_LINE,     /* the host connected; its CONNECT line */
	VSOCK_AWAIT_RESPONSE, /* the guest was asked; its answer */
	VSOCK_ESTABLISHED,
};

/* Control packets a connection owes the guest (bits). */
enum {
	VSOCK_SEND_REQUEST = 1,
	VSOCK_SEND_RESPONSE = 2,
	VSOCK_SEND_CREDIT = 4,
	VSOCK_SEND_SHUTDOWN = 8,
};

struct vsock_conn {
	enum vsock_conn_state state;
	int fd;              /* the host's end: a Unix stream socket */
	uint32_t local_port; /* the host side's port, as the guest sees it */
	uint32_t peer_port;  /* the guest's port */
	uint32_t peer_buf_alloc, peer_fwd_cnt; /* the guest's credit */
	uint32_t rx_cnt;   /* payload bytes given to the guest */
	uint32_t fwd_cnt;  /* the guest's payload bytes written to fd */
	uint32_t fwd_told; /* fwd_cnt when the guest last heard it */
	unsigned int owed; /* VSOCK_SEND_* */
	bool readable;     /* fd has data or its end */
	bool host_done;    /* the host closed its end: no more reads */
	uint8_t *out;      /* the guest's bytes fd did not take yet */
	uint32_t out_len;
	char line[40];
	uint8_t line_len;
	uint32_t ep; /* the events fd is registered for; 0: not in the set */
};

/* A reset the device owes a guest port that has no connection. */
struct vsock_rst {
	uint32_t local_port, peer_port;
};

struct vsock {
	struct virtio_mmio t;
	struct virtio_dev_ops ops;
	uint64_t guest_cid;
	char path[100]; /* the host's Unix socket; PATH_P for guest ports */
	int listen_fd, epoll_fd, kick; /* listen_fd: -1 without a path */
	bool no_host_ports; /* guests' connections refused (jailed, no path) */
	struct io_thread io;
	pthread_mutex_t serving; /* held while the thread works */
	bool active, stop;
	bool drop_owed;      /* a reset's connections, for the thread to close */
	bool rx_starved;     /* the guest gave no receive buffer lately */
	bool reset_event;    /* the transport reset is owed to the guest */
	/* The guest has the reset but has not handled it yet: until it
	 * gives the event buffer back (the event queue's available index
	 * moves past evq_avail), it would reset any connection made now,
	 * so the host's new connections wait. */
	bool reset_unacked;
	uint16_t evq_avail;
	uint32_t next_port;  /* the next host port of a host connection */
	struct vsock_conn conns[VSOCK_MAX_CONNS];
	struct vsock_rst rsts[16];
	unsigned int nr_rsts;
	struct virtq_chain chain;
	uint8_t bounce[VSOCK_MAX_PAYLOAD];
	struct device_ops dev;
	char dev_name[16];
	uint64_t packets_in, packets_out, resets_sent;
};

/* The device at guest-physical `base` with interrupt `irq` for a guest
 * with context ID `cid` (3 or more), listening on the Unix socket `path`
 * (made new: an existing file there is an error, never removed; NULL:
 * none, the host connects through vsock__connect_local only), with its
 * I/O thread started idle. -errno with a message. */
int vsock__open(struct vsock *v, uint64_t cid, const char *path,
		const struct guest_mem *mem, uint64_t base, uint32_t irq,
		void (*raise)(void *ctx, uint32_t irq), void *raise_ctx);

/* Claims the register window and registers the state as "virtio-vsock". */
int vsock__attach(struct vsock *v, struct vm *vm);

/* The host's connections are gone (after a restore): closes them and
 * sends the guest VIRTIO_VSOCK_EVENT_TRANSPORT_RESET. Host connections
 * made after it reach the guest once it has handled the event (Linux
 * resets every connected socket then: one made before would be lost). */
void vsock__transport_reset(struct vsock *v);

/* A host connection made inside the VMM, as if a client had connected
 * to PATH: the returned end (a blocking Unix stream socket) writes
 * "CONNECT <port>\n" and reads "OK ..." as such a client would. -EAGAIN
 * while the guest's driver has not started the device or every
 * connection slot is taken; -errno with a message otherwise. */
int vsock__connect_local(struct vsock *v);

/* Stops the thread, closes every socket and removes `path` (not when
 * jailed: the jail's parent does). */
void vsock__close(struct vsock *v);

struct vsock_state {
	uint32_t version;
	uint32_t pad;
	uint64_t guest_cid;
	struct virtio_mmio_state t;
};

#define VSOCK_STATE_VERSION 1

#endif
