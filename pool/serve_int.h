/* What the pool server's files share (serve.c: connections and
 * accepting; serve_ops.c: the requests and their replies). */
#ifndef COLDSTART_POOL_SERVE_INT_H
#define COLDSTART_POOL_SERVE_INT_H

#include "serve.h"

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Replies on one line; 12 digits keep the nanoseconds of a microsecond
 * count up to 100 s, without %.17g's 72.284999999999997. */
#define DUMP_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(12))

struct server {
	struct pool *pool;
	const char *path;
	volatile sig_atomic_t *stop;
	FILE *log;
	struct pool_listener *l; /* the listening socket and its file */
	int efd;         /* readable once stopping */
	bool stopping;   /* atomic */
	bool starved;    /* accept() is out of descriptors or memory */
	struct conn *conns; /* the accepting thread's alone */
	unsigned int nconns, next_id;
};

/* A connection waiting for a request line is idle: the accepting thread
 * may take its place for a new one (CONN_EVICTED) until it has a line
 * whole; the claim and the eviction are compare-and-swaps. */
enum conn_state { CONN_BUSY, CONN_WAITING, CONN_EVICTED };

struct conn {
	struct server *srv;
	int fd;
	unsigned int id;
	uint64_t client; /* the process that opened it (serve.c's
			  * peer_of); 0: not known */
	pthread_t thread;
	bool finished; /* atomic: its thread is returning */
	bool drain;    /* it asked to drain: stop once the reply is out */
	bool idled;    /* closed: no whole line within the idle timeout */
	int state;     /* atomic: enum conn_state */
	uint64_t idle_since; /* atomic: when it began to wait for a line */
	uint64_t idle_until; /* timeline__now() the next line is due by */
	struct conn *next;
	uint64_t requests;
	char *buf;     /* SERVE_MAX_LINE + 1: a longest line, its newline */
	size_t len;    /* bytes in buf */
	size_t seen;   /* of them, known to hold no newline */
	size_t used;   /* of them, the line returned last and its newline */
	bool overlong; /* dropping a line too long, up to its newline */
};

/* One line of the log, whole even when threads log at once. */
__attribute__((format(printf, 2, 3)))
void pool_serve__say(struct server *s, const char *fmt, ...);

/* {"ok": false, "error": the message}; NULL when out of memory. */
__attribute__((format(printf, 1, 2)))
json_t *pool_serve__fail(const char *fmt, ...);

/* The reply to one request line (the op's, or an error); NULL when out
 * of memory. */
json_t *pool_serve__answer(struct conn *c, const char *line, size_t n,
			   uint64_t arrival);

#endif
