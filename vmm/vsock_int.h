/* What virtio_vsock.c (the device, its thread and sockets) and
 * vsock_conn.c (the packets and connections) share. */
#ifndef COLDSTART_VSOCK_INT_H
#define COLDSTART_VSOCK_INT_H

#include "virtio_vsock.h"

#include <linux/virtio_vsock.h>

enum { VSOCK_RXQ = 0, VSOCK_TXQ = 1, VSOCK_EVQ = 2 };

/* One pass over everything pending: the guest's packets, the host's
 * CONNECT lines, what the guest is owed (control packets, then data),
 * the transport reset event. With the serving lock held. */
void vsock__serve(struct vsock *v);

/* A new host connection from the listening socket. */
void vsock__accept(struct vsock *v);

/* Host connection `fd` (non-blocking) waits for its CONNECT line in a
 * free slot; false when every slot is taken. With the serving lock. */
bool vsock__adopt(struct vsock *v, int fd);

/* Closes a connection's socket and frees its slot. */
void vsock__drop(struct vsock *v, struct vsock_conn *c);

/* Writes what the guest sent and fd did not take; 0, or -1 when the
 * host's end is gone. */
int vsock__flush(struct vsock_conn *c);

/* Which events each socket waits for now. */
void vsock__interest(struct vsock *v);

#endif
