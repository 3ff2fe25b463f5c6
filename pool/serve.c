/* The pool's Unix-socket server (serve.h): the caller's thread accepts,
 * one thread per connection reads its request lines, serves them in order
 * and writes one reply each. An eventfd, written once at the stop and
 * never read, wakes every thread that waits. */
#include "serve_int.h"

#include "err.h"
#include "jail.h"
#include "seccomp.h"
#include "timeline.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/un.h>
#include <unistd.h>

/* How often the accept loop looks at *stop. */
#define STOP_POLL_MS 100
/* How long, once stopping, a reply waits for a client that reads none. */
#define STOP_SEND_GRACE_MS 1000
/* Linux 6.5's and 6.9's, for older headers */
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif
#ifndef PID_FS_MAGIC
#define PID_FS_MAGIC 0x50494446
#endif
/* next_line(): a line too long, read to its newline and dropped. */
#define LINE_TOO_LONG 2

static const char oom_reply[] = "{\"ok\":false,\"error\":\"the server is out "
				"of memory\"}\n";

static bool stopping(struct server *s)
{
	return __atomic_load_n(&s->stopping, __ATOMIC_ACQUIRE);
}

static void begin_stop(struct server *s)
{
	__atomic_store_n(&s->stopping, true, __ATOMIC_RELEASE);
	/* cannot fail: the counter is far from its maximum */
	(void)eventfd_write(s->efd, 1);
}

/* ---- one connection ---- */

/* How long poll() may wait for the next line: -1 for ever, 0 once it is
 * overdue. */
static int idle_ms(const struct conn *c)
{
	uint64_t now = timeline__now(), ms;

	if (!c->srv->l->idle_timeout_ns)
		return -1;
	if (now >= c->idle_until)
		return 0;
	/* rounded up: poll() must not wake a little early, again and again */
	ms = (c->idle_until - now + 999999) / 1000000;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* Reads what the client sent: > 0 bytes, 0 at its end, at a stop or
 * when the next line is overdue (c->idled), or -errno. */
static int read_more(struct conn *c)
{
	struct pollfd pfd[2] = {
		{ .fd = c->fd, .events = POLLIN },
		{ .fd = c->srv->efd, .events = POLLIN },
	};
	ssize_t n;
	int got;

	for (;;) {
		got = poll(pfd, 2, idle_ms(c));
		if (got == 0) {
			c->idled = true;
			return 0;
		}
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (pfd[1].revents)
			return 0;
		n = recv(c->fd, c->buf + c->len, SERVE_MAX_LINE + 1 - c->len,
			 MSG_DONTWAIT);
		if (n >= 0) {
			c->len += (size_t)n;
			return (int)n;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
	}
}

/* The connection waits for a line: idle, evictable. */
static void begin_wait(struct conn *c)
{
	if (__atomic_load_n(&c->state, __ATOMIC_RELAXED) != CONN_BUSY)
		return;
	__atomic_store_n(&c->idle_since, timeline__now(), __ATOMIC_RELAXED);
	__atomic_store_n(&c->state, CONN_WAITING, __ATOMIC_RELEASE);
}

/* A line is whole: the connection serves it, unless it was evicted. */
static bool claim(struct conn *c)
{
	int want = CONN_WAITING;

	return __atomic_compare_exchange_n(&c->state, &want, CONN_BUSY, false,
					   __ATOMIC_ACQ_REL,
					   __ATOMIC_ACQUIRE) ||
	       want == CONN_BUSY;
}

/* The next line into *line (its newline replaced by NUL) and *n: 1; or
 * LINE_TOO_LONG for a line longer than SERVE_MAX_LINE, dropped; 0 at the
 * connection's end, a stop, its idle timeout or its eviction; or
 * -errno. */
static int next_line(struct conn *c, char **line, size_t *n)
{
	char *nl;
	int ret;

	memmove(c->buf, c->buf + c->used, c->len - c->used);
	c->len -= c->used;
	c->used = 0;
	c->seen = 0;
	/* bytes that trickle in do not put it off: the whole line is due */
	c->idle_until = timeline__now() + c->srv->l->idle_timeout_ns;
	for (;;) {
		nl = memchr(c->buf + c->seen, '\n', c->len - c->seen);
		if (nl && !claim(c))
			return 0;
		if (nl) {
			c->used = (size_t)(nl - c->buf) + 1;
			if (c->overlong) {
				c->overlong = false;
				return LINE_TOO_LONG;
			}
			*nl = '\0';
			*line = c->buf;
			*n = (size_t)(nl - c->buf);
			return 1;
		}
		c->seen = c->len;
		/* a full buffer without a newline: the line is too long */
		if (c->overlong || c->len == SERVE_MAX_LINE + 1) {
			c->overlong = true;
			c->len = c->seen = 0;
		}
		begin_wait(c);
		ret = read_more(c);
		if (ret <= 0)
			return ret;
	}
}

/* Whitespace alone (a NUL is not: json_loadb names it). */
static bool blank(const char *line, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strchr(" \t\r", line[i]) || !line[i])
			return false;
	return true;
}

/* Writes all of it, waiting for a client slow to read; once the server
 * stops, for STOP_SEND_GRACE_MS at most. */
static int send_all(struct conn *c, const char *s, size_t n)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLOUT };
	int stalled_ms = 0;
	ssize_t w;

	while (n) {
		/* MSG_NOSIGNAL: a client gone is EPIPE, not SIGPIPE */
		w = send(c->fd, s, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w >= 0) {
			s += w;
			n -= (size_t)w;
			stalled_ms = 0;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		if (stopping(c->srv) &&
		    (stalled_ms += STOP_POLL_MS) > STOP_SEND_GRACE_MS)
			return -ETIMEDOUT;
		poll(&pfd, 1, STOP_POLL_MS);
	}
	return 0;
}

/* The reply as one line; takes the reference. */
static int send_reply(struct conn *c, json_t *reply)
{
	size_t n = reply ? json_dumpb(reply, NULL, 0, DUMP_FLAGS) : 0;
	char *s = n ? malloc(n + 1) : NULL;
	int ret;

	if (s && json_dumpb(reply, s, n, DUMP_FLAGS) == n) {
		s[n] = '\n';
		ret = send_all(c, s, n + 1);
	} else {
		ret = send_all(c, oom_reply, sizeof(oom_reply) - 1);
	}
	free(s);
	json_decref(reply);
	return ret;
}

/* Serves one line; 0, or -errno when the reply could not be written. */
static int serve_line(struct conn *c, int got, char *line, size_t n)
{
	uint64_t arrival = timeline__now();
	json_t *reply;

	if (got == LINE_TOO_LONG)
		reply = pool_serve__fail("a request line is at most %u bytes",
					 SERVE_MAX_LINE);
	else if (blank(line, n))
		return 0;
	else
		reply = pool_serve__answer(c, line, n, arrival);
	c->requests++;
	return send_reply(c, reply);
}

static void *conn_thread(void *arg)
{
	struct conn *c = arg;
	struct server *s = c->srv;
	char *line = NULL, ebuf[128];
	const char *why;
	size_t n = 0;
	int ret = 0;

	while (!stopping(s)) {
		ret = next_line(c, &line, &n);
		if (ret <= 0)
			break;
		ret = serve_line(c, ret, line, n);
		if (c->drain)
			begin_stop(s);
		if (ret < 0)
			break;
	}
	if (ret == -ETIMEDOUT)
		why = "its client read no reply for a while after the stop";
	else if (ret < 0)
		why = strerror_r(-ret, ebuf, sizeof(ebuf));
	else if (c->idled && snprintf(ebuf, sizeof(ebuf), "no request line "
				       "within the idle timeout, %.3g s",
				       (double)s->l->idle_timeout_ns / 1e9))
		why = ebuf;
	else if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) == CONN_EVICTED)
		why = "the server was full, and it had waited longest for a "
		      "request: its place went to a new connection";
	else
		why = stopping(s) ? "the server stops" : "the client closed it";
	/* the client sees its end now; the descriptor is closed when the
	 * thread is joined, by the thread that evicts, so that it never
	 * shuts a number down that was closed and given to another file */
	shutdown(c->fd, SHUT_RDWR);
	pool_serve__say(s, "connection %u closed after %" PRIu64 " requests: "
			"%s", c->id, c->requests, why);
	__atomic_store_n(&c->finished, true, __ATOMIC_RELEASE);
	return NULL;
}

/* ---- accepting ---- */

/* Turns a connection away with one error reply. */
static void refuse(struct server *s, int fd, const char *why)
{
	json_t *r = pool_serve__fail("%s", why);
	char *line = r ? json_dumps(r, DUMP_FLAGS) : NULL;

	/* best effort: never wait for a client that will not be served */
	if (line)
		send(fd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT);
	send(fd, "\n", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	free(line);
	json_decref(r);
	close(fd);
	pool_serve__say(s, "connection refused: %s", why);
}

/* Joins the thread of the connection *pc, closes it and unlinks it. */
static void drop(struct server *s, struct conn **pc)
{
	struct conn *c = *pc;

	*pc = c->next;
	pthread_join(c->thread, NULL);
	close(c->fd);
	free(c->buf);
	free(c);
	s->nconns--;
}

/* Joins the connection threads that finished (all: every one, waiting). */
static void reap(struct server *s, bool all)
{
	struct conn **pc = &s->conns;

	while (*pc) {
		if (all || __atomic_load_n(&(*pc)->finished, __ATOMIC_ACQUIRE))
			drop(s, pc);
		else
			pc = &(*pc)->next;
	}
}

/* The place of the connection that has waited longest for a request
 * line, of `client`'s (0: of any client), or NULL when every one is
 * serving one. */
static struct conn **idlest(struct server *s, uint64_t client)
{
	struct conn **pc, **pick = NULL;
	uint64_t oldest = UINT64_MAX, t;

	for (pc = &s->conns; *pc; pc = &(*pc)->next) {
		if (__atomic_load_n(&(*pc)->state, __ATOMIC_ACQUIRE) !=
		    CONN_WAITING || (client && (*pc)->client != client))
			continue;
		t = __atomic_load_n(&(*pc)->idle_since, __ATOMIC_RELAXED);
		if (t < oldest) {
			oldest = t;
			pick = pc;
		}
	}
	return pick;
}

/* Makes room for a new connection (of `client`, which has its most;
 * 0: in a full server): closes the one that has waited longest for a
 * request line, so idle clients never keep a busy one out. False when
 * every one is serving a request. */
static bool evict_idlest(struct server *s, uint64_t client)
{
	struct conn **pc;
	int want;

	/* one that claimed its line meanwhile is skipped: the next */
	for (unsigned int i = 0;
	     i < SERVE_MAX_CONNS && (pc = idlest(s, client)); i++) {
		want = CONN_WAITING;
		if (!__atomic_compare_exchange_n(&(*pc)->state, &want,
						 CONN_EVICTED, false,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			continue;
		/* its thread wakes, sees the end and returns at once */
		shutdown((*pc)->fd, SHUT_RDWR);
		drop(s, pc);
		return true;
	}
	return false;
}

/* The client process at the other end of fd: its name for the log (pid
 * and uid as this process's namespaces see them), and a key that tells
 * processes apart.
 * A jailed server is in a PID namespace of its own, where every client
 * outside it has pid 0: there the key is the inode of a pidfd of the
 * peer (pidfs, Linux 6.9), one per process; 0 when neither tells. */
struct peer {
	uint64_t key;
	char name[80]; /* for people: "pid P (uid U)" */
};

static void peer_of(int fd, struct peer *p)
{
	struct ucred cred = { 0 };
	socklen_t len = sizeof(cred);
	struct statfs fs;
	struct stat st;
	int pidfd = -1;

	*p = (struct peer){ .name = "a process whose credentials are not "
				    "known" };
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return;
	if (cred.pid > 0) {
		snprintf(p->name, sizeof(p->name), "pid %d (uid %u)",
			 (int)cred.pid, (unsigned int)cred.uid);
		p->key = (uint64_t)cred.pid | 1ull << 63;
		return;
	}
	snprintf(p->name, sizeof(p->name), "a process outside the server's "
		 "PID namespace (uid %u)", (unsigned int)cred.uid);
	len = sizeof(pidfd);
	/* an older kernel's pidfds share one anonymous inode: no key */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) == 0 &&
	    fstatfs(pidfd, &fs) == 0 && fs.f_type == PID_FS_MAGIC &&
	    fstat(pidfd, &st) == 0)
		p->key = (uint64_t)st.st_ino & ~(1ull << 63);
	if (pidfd >= 0)
		close(pidfd);
}

static unsigned int conns_of(const struct server *s, uint64_t client)
{
	unsigned int n = 0;

	for (const struct conn *c = s->conns; c; c = c->next)
		n += c->client == client;
	return n;
}

/* Room for one more connection of `p`: under its limit or in place of
 * its own idlest; else (*why says so) none. */
static bool client_room(struct server *s, const struct peer *p, char *why,
			size_t len)
{
	unsigned int most = s->l->client_conns;

	if (!most || !p->key || conns_of(s, p->key) < most ||
	    evict_idlest(s, p->key))
		return true;
	snprintf(why, len, "this client, %s, has %u connections open, the "
		 "most one client may, each serving a request; try again later",
		 p->name, most);
	return false;
}

static void start_conn(struct server *s, int fd, const struct peer *p)
{
	struct conn *c = calloc(1, sizeof(*c));
	char why[160], ebuf[128];
	int ret;

	if (c)
		c->buf = malloc(SERVE_MAX_LINE + 1);
	if (!c || !c->buf) {
		free(c);
		refuse(s, fd, "the server is out of memory");
		return;
	}
	c->srv = s;
	c->fd = fd;
	c->id = ++s->next_id;
	c->client = p->key;
	pool_serve__say(s, "connection %u opened by %s", c->id, p->name);
	ret = pthread_create(&c->thread, NULL, conn_thread, c);
	if (ret) {
		snprintf(why, sizeof(why), "connection %u: no thread for it: "
			 "%s", c->id, strerror_r(ret, ebuf, sizeof(ebuf)));
		free(c->buf);
		free(c);
		refuse(s, fd, why);
		return;
	}
	c->next = s->conns;
	s->conns = c;
	s->nconns++;
}

/* Takes one waiting connection. Only a broken listening socket is an
 * error; running out of descriptors or memory is waited out. */
static int accept_one(struct server *s)
{
	struct peer peer;
	char why[200];
	int fd = accept4(s->l->fd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ||
		    errno == ECONNABORTED || errno == EPROTO)
			return 0;
		if (errno != EMFILE && errno != ENFILE && errno != ENOBUFS &&
		    errno != ENOMEM)
			return err__sys(errno, "accept on %s", s->path);
		if (!s->starved)
			pool_serve__say(s, "cannot accept connections: %s; "
					"retrying", strerror_r(errno, why,
							       sizeof(why)));
		s->starved = true;
		/* the listening socket stays readable: do not spin */
		poll(&(struct pollfd){ .fd = s->efd, .events = POLLIN }, 1,
		     STOP_POLL_MS);
		return 0;
	}
	s->starved = false;
	reap(s, false);
	peer_of(fd, &peer);
	if (!client_room(s, &peer, why, sizeof(why))) {
		refuse(s, fd, why);
		return 0;
	}
	if (s->nconns >= SERVE_MAX_CONNS && !evict_idlest(s, 0)) {
		snprintf(why, sizeof(why), "the server has %u connections, its "
			 "most, each serving a request; try again later",
			 s->nconns);
		refuse(s, fd, why);
		return 0;
	}
	start_conn(s, fd, &peer);
	return 0;
}

static int accept_loop(struct server *s)
{
	struct pollfd pfd[2] = {
		{ .fd = s->l->fd, .events = POLLIN },
		{ .fd = s->efd, .events = POLLIN },
	};
	int ret = 0;

	while (ret == 0 && !stopping(s)) {
		/* atomic only for the thread sanitizer: a handler's store to
		 * a sig_atomic_t is plain */
		if (s->stop && __atomic_load_n(s->stop, __ATOMIC_RELAXED)) {
			pool_serve__say(s, "stopping: asked to (a signal)");
			break;
		}
		reap(s, false);
		if (poll(pfd, 2, STOP_POLL_MS) < 0) {
			if (errno != EINTR)
				ret = err__sys(errno, "poll on %s", s->path);
			continue;
		}
		if (pfd[0].revents)
			ret = accept_one(s);
	}
	return ret;
}

int pool_serve__run_on(struct pool *p, struct pool_listener *l,
		       volatile sig_atomic_t *stop, FILE *log)
{
	struct server s = { .pool = p, .path = l->path, .stop = stop,
			    .log = log, .l = l, .efd = -1 };
	int ret;

	s.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s.efd < 0) {
		ret = err__sys(errno, "eventfd for the server on %s", s.path);
		pool_serve__unlisten(l);
		return ret;
	}
	pool_serve__say(&s, "listening on %s%s%s%s", s.path, jail__dir() ? " (jailed in " : "",
	    jail__dir() ? jail__dir() : "", jail__dir() ? ")" : "");
	/* set up: from here the control thread only serves */
	ret = seccomp__enter_main();
	if (ret == 0)
		ret = accept_loop(&s);
	/* no new connections, then the ones open finish their request;
	 * a jailed server cannot remove the socket file: its parent does */
	begin_stop(&s);
	pool_serve__unlisten(l);
	reap(&s, true);
	close(s.efd);
	pool_serve__say(&s, "stopped after %u connections", s.next_id);
	return ret;
}

int pool_serve__run(struct pool *p, const char *path,
		    volatile sig_atomic_t *stop, FILE *log)
{
	struct pool_listener l;

	return pool_serve__listen(&l, path) ?: pool_serve__run_on(p, &l, stop, log);
}
