/* The pool server's listening socket (serve_listen.c): made and bound
 * before the pool starts, so a jailed server binds its path on the
 * host's filesystem; served on by pool_serve__run_on (serve.h). */
#ifndef COLDSTART_POOL_SERVE_LISTEN_H
#define COLDSTART_POOL_SERVE_LISTEN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* How long a connection may wait to send a request line, by default. */
#define SERVE_IDLE_TIMEOUT_S 30
/* How many connections one client process may hold open, by default:
 * a quarter of SERVE_MAX_CONNS (serve.h), so that one cannot take every
 * place. */
#define SERVE_CLIENT_CONNS 64

struct pool_listener {
	const char *path;
	int fd;
	bool bound; /* the socket file at path is ours: */
	dev_t dev;  /* its device and inode */
	ino_t ino;
	/* SERVE_IDLE_TIMEOUT_S, set by pool_serve__listen; the caller may
	 * change it before pool_serve__run_on. 0: no idle timeout */
	uint64_t idle_timeout_ns;
	/* SERVE_CLIENT_CONNS, set by pool_serve__listen; the caller may
	 * change it too. 0: no limit per client */
	unsigned int client_conns;
};

/* Makes the socket at `path` and binds it (a stale socket file there is
 * replaced; a live server's, or another kind of file, is -EEXIST). 0 or
 * -errno with a message. */
int pool_serve__listen(struct pool_listener *l, const char *path);

/* Closes the listening socket and removes its file, unless another
 * server's replaced it (a jailed server cannot: its parent does). */
void pool_serve__unlisten(struct pool_listener *l);

#endif
