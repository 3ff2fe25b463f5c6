/* The pool's Unix-socket server (serve.h): the caller's thread accepts,
 * one thread per connection reads its request lines, serves them in order
 * and writes one reply each. An eventfd, written once at the stop and
 * never read, wakes every thread that waits. */
#include "serve.h"

#include "err.h"
#include "jail.h"
#include "seccomp.h"
#include "timeline.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* How often the accept loop looks at *stop. */
#define STOP_POLL_MS 100
/* How long, once stopping, a reply waits for a client that reads none. */
#define STOP_SEND_GRACE_MS 1000
/* Replies on one line; 12 digits keep the nanoseconds of a microsecond
 * count up to 100 s, without %.17g's 72.284999999999997. */
#define DUMP_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(12))
/* next_line(): a line too long, read to its newline and dropped. */
#define LINE_TOO_LONG 2

static const char oom_reply[] = "{\"ok\":false,\"error\":\"the server is out "
				"of memory\"}\n";

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
static void say(struct server *s, const char *fmt, ...)
{
	va_list ap;

	if (!s->log)
		return;
	flockfile(s->log);
	fputs("pool serve: ", s->log);
	va_start(ap, fmt);
	vfprintf(s->log, fmt, ap);
	va_end(ap);
	fputc('\n', s->log);
	fflush(s->log);
	funlockfile(s->log);
}

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

/* ---- replies ---- */

/* A message as a JSON string; bytes that are not UTF-8 become '?'. */
static json_t *text(const char *msg)
{
	json_t *j = json_string(msg);
	char safe[512];
	size_t i;

	if (j)
		return j;
	for (i = 0; msg[i] && i < sizeof(safe) - 1; i++)
		safe[i] = (unsigned char)msg[i] < 0x80 ? msg[i] : '?';
	safe[i] = '\0';
	return json_string(safe);
}

/* The object, or NULL (out of memory) when building it went wrong. */
static json_t *built(json_t *o, int bad)
{
	if (o && bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

__attribute__((format(printf, 1, 2)))
static json_t *fail(const char *fmt, ...)
{
	json_t *r = json_object();
	char msg[512];
	va_list ap;
	int bad;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!r)
		return NULL;
	bad = json_object_set_new(r, "ok", json_false());
	bad |= json_object_set_new(r, "error", text(msg));
	return built(r, bad);
}

static json_t *success(void)
{
	json_t *r = json_object();

	return r ? built(r, json_object_set_new(r, "ok", json_true())) : NULL;
}

/* ---- the ops ---- */

/* A number, or null for NaN and infinities, which JSON cannot hold. */
static json_t *number(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* Microseconds from `from` to `t`, or null when `t` did not happen. */
static json_t *us_after(uint64_t t, uint64_t from)
{
	return t ? number(((double)t - (double)from) / 1e3) : json_null();
}

static json_t *op_acquire(struct conn *c, json_t *req, uint64_t arrival)
{
	struct pool_request r = { .arrival_ns = arrival };
	char sum[24];
	json_t *out;
	int bad;

	(void)req;
	if (pool__serve(c->srv->pool, &r) < 0)
		return fail("%s", err__last());
	snprintf(sum, sizeof(sum), "0x%016" PRIx64, r.checksum);
	out = success();
	if (!out)
		return NULL;
	bad = json_object_set_new(out, "hit", json_boolean(r.hit));
	bad |= json_object_set_new(out, "waited", json_boolean(r.waited));
	bad |= json_object_set_new(out, "failures", json_integer(r.failures));
	bad |= json_object_set_new(out, "acquire_us",
				   us_after(r.acquired_ns, r.arrival_ns));
	bad |= json_object_set_new(out, "first_run_us",
				   us_after(r.first_run_ns, r.arrival_ns));
	bad |= json_object_set_new(out, "done_us",
				   us_after(r.done_ns, r.arrival_ns));
	bad |= json_object_set_new(out, "checksum", json_string(sum));
	return built(out, bad);
}

json_t *pool_serve__stats_json(const struct pool_stats *st)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
			 "s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:o}",
			 "requests", (json_int_t)st->requests,
			 "hits", (json_int_t)st->hits,
			 "misses", (json_int_t)st->misses,
			 "waits", (json_int_t)st->waits,
			 "made", (json_int_t)st->made,
			 "made_on_demand", (json_int_t)st->made_on_demand,
			 "make_failures", (json_int_t)st->make_failures,
			 "guest_failures", (json_int_t)st->guest_failures,
			 "reaped", (json_int_t)st->reaped,
			 "held", (json_int_t)st->held,
			 "making", (json_int_t)st->making,
			 "target", (json_int_t)st->target,
			 "idle_vm_s", number(st->idle_vm_s),
			 "refill_cpu_s", number(st->refill_cpu_s),
			 "rate", number(st->rate),
			 "make_s", number(st->make_s),
			 "last_error", text(st->last_error));
}

static json_t *op_stats(struct conn *c, json_t *req, uint64_t arrival)
{
	struct pool_stats st;

	(void)req;
	(void)arrival;
	pool__stats(c->srv->pool, &st);
	return json_pack("{s:b, s:o}", "ok", 1, "stats", pool_serve__stats_json(&st));
}

static json_t *op_resize(struct conn *c, json_t *req, uint64_t arrival)
{
	json_t *size = json_object_get(req, "size");
	struct pool_stats st;
	json_int_t n;

	(void)arrival;
	if (!size)
		return fail("resize needs \"size\", the new target");
	n = json_is_integer(size) ? json_integer_value(size) : -1;
	if (n < 0)
		return fail("\"size\" must be an integer >= 0");
	/* the pool clamps it to its maximum, far below UINT_MAX */
	pool__resize(c->srv->pool, n > UINT_MAX ? UINT_MAX : (unsigned int)n);
	pool__stats(c->srv->pool, &st);
	say(c->srv, "connection %u: resize to %lld, target now %u", c->id,
	    (long long)n, st.target);
	return json_pack("{s:b, s:I}", "ok", 1, "target",
			 (json_int_t)st.target);
}

static json_t *op_drain(struct conn *c, json_t *req, uint64_t arrival)
{
	(void)req;
	(void)arrival;
	say(c->srv, "connection %u asked to drain", c->id);
	c->drain = true;
	return success();
}

struct op {
	const char *name;
	const char *field; /* the one it takes besides op and id, or NULL */
	json_t *(*serve)(struct conn *c, json_t *req, uint64_t arrival);
};

static const struct op ops[] = {
	{ "acquire", NULL, op_acquire },
	{ "stats", NULL, op_stats },
	{ "resize", "size", op_resize },
	{ "drain", NULL, op_drain },
};

/* A field the op does not take, so that a misspelt one is not ignored. */
static const char *stray_field(const struct op *op, json_t *req)
{
	const char *key;
	json_t *v;

	json_object_foreach(req, key, v) {
		(void)v;
		if (strcmp(key, "op") && strcmp(key, "id") &&
		    (!op->field || strcmp(key, op->field)))
			return key;
	}
	return NULL;
}

static json_t *dispatch(struct conn *c, json_t *req, uint64_t arrival)
{
	json_t *op = json_object_get(req, "op");
	const char *name, *stray;

	if (!json_is_object(req))
		return fail("a request is a JSON object, not an array");
	if (!op)
		return fail("the request has no \"op\" (acquire, stats, "
			    "resize or drain)");
	if (!json_is_string(op))
		return fail("\"op\" must be a string");
	name = json_string_value(op);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (strcmp(name, ops[i].name))
			continue;
		stray = stray_field(&ops[i], req);
		if (stray)
			return fail("%s takes no field \"%s\"", name, stray);
		return ops[i].serve(c, req, arrival);
	}
	return fail("unknown op \"%s\" (acquire, stats, resize or drain)",
		    name);
}

/* The reply to one line; NULL when out of memory. */
static json_t *answer(struct conn *c, const char *line, size_t n,
		      uint64_t arrival)
{
	json_error_t jerr;
	json_t *req, *reply, *id;

	/* no JSON_DISABLE_EOF_CHECK: what follows the object is an error */
	req = json_loadb(line, n, JSON_REJECT_DUPLICATES, &jerr);
	if (!req)
		return fail("not JSON: %s (at byte %d)", jerr.text,
			    jerr.position);
	reply = dispatch(c, req, arrival);
	id = json_is_object(req) ? json_object_get(req, "id") : NULL;
	if (reply && id && json_object_set(reply, "id", id)) {
		json_decref(reply);
		reply = NULL;
	}
	json_decref(req);
	return reply;
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
		reply = fail("a request line is at most %u bytes",
			     SERVE_MAX_LINE);
	else if (blank(line, n))
		return 0;
	else
		reply = answer(c, line, n, arrival);
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
	say(s, "connection %u closed after %" PRIu64 " requests: %s", c->id,
	    c->requests, why);
	__atomic_store_n(&c->finished, true, __ATOMIC_RELEASE);
	return NULL;
}

/* ---- accepting ---- */

/* Turns a connection away with one error reply. */
static void refuse(struct server *s, int fd, const char *why)
{
	json_t *r = fail("%s", why);
	char *line = r ? json_dumps(r, DUMP_FLAGS) : NULL;

	/* best effort: never wait for a client that will not be served */
	if (line)
		send(fd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT);
	send(fd, "\n", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	free(line);
	json_decref(r);
	close(fd);
	say(s, "connection refused: %s", why);
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
 * line, or NULL when every one is serving one. */
static struct conn **idlest(struct server *s)
{
	struct conn **pc, **pick = NULL;
	uint64_t oldest = UINT64_MAX, t;

	for (pc = &s->conns; *pc; pc = &(*pc)->next) {
		if (__atomic_load_n(&(*pc)->state, __ATOMIC_ACQUIRE) !=
		    CONN_WAITING)
			continue;
		t = __atomic_load_n(&(*pc)->idle_since, __ATOMIC_RELAXED);
		if (t < oldest) {
			oldest = t;
			pick = pc;
		}
	}
	return pick;
}

/* Makes room for a new connection in a full server: closes the one that
 * has waited longest for a request line, so idle clients never keep a
 * busy one out. False when every one is serving a request. */
static bool evict_idlest(struct server *s)
{
	struct conn **pc;
	int want;

	/* one that claimed its line meanwhile is skipped: the next */
	for (unsigned int i = 0; i < SERVE_MAX_CONNS && (pc = idlest(s)); i++) {
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

static void log_opened(struct server *s, const struct conn *c)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
		say(s, "connection %u opened by pid %d (uid %u)", c->id,
		    (int)cred.pid, (unsigned int)cred.uid);
	else
		say(s, "connection %u opened", c->id);
}

static void start_conn(struct server *s, int fd)
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
	log_opened(s, c);
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
	char why[128];
	int fd = accept4(s->l->fd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ||
		    errno == ECONNABORTED || errno == EPROTO)
			return 0;
		if (errno != EMFILE && errno != ENFILE && errno != ENOBUFS &&
		    errno != ENOMEM)
			return err__sys(errno, "accept on %s", s->path);
		if (!s->starved)
			say(s, "cannot accept connections: %s; retrying",
			    strerror_r(errno, why, sizeof(why)));
		s->starved = true;
		/* the listening socket stays readable: do not spin */
		poll(&(struct pollfd){ .fd = s->efd, .events = POLLIN }, 1,
		     STOP_POLL_MS);
		return 0;
	}
	s->starved = false;
	reap(s, false);
	if (s->nconns >= SERVE_MAX_CONNS && !evict_idlest(s)) {
		snprintf(why, sizeof(why), "the server has %u connections, its "
			 "most, each serving a request; try again later",
			 s->nconns);
		refuse(s, fd, why);
		return 0;
	}
	start_conn(s, fd);
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
			say(s, "stopping: asked to (a signal)");
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
	say(&s, "listening on %s%s%s%s", s.path, jail__dir() ? " (jailed in " : "",
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
	say(&s, "stopped after %u connections", s.next_id);
	return ret;
}

int pool_serve__run(struct pool *p, const char *path,
		    volatile sig_atomic_t *stop, FILE *log)
{
	struct pool_listener l;

	return pool_serve__listen(&l, path) ?: pool_serve__run_on(p, &l, stop, log);
}
