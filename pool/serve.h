/* The pool's server for other processes: line-delimited JSON over a Unix
 * stream socket, so an orchestrator can drive a warm pool it does not
 * link against.
 *
 * Each request is one JSON object on one line ('\n'); each gets exactly
 * one reply, one JSON object on one line, in the order the requests came
 * on that connection. Lines holding only whitespace are ignored. Every
 * reply has "ok"; a failed one has "error", a message for people. A
 * request's optional "id", of any JSON type, is echoed in its reply.
 *
 *   {"op": "acquire"}
 *     One request served by the pool (pool__serve): a VM taken (or made),
 *     its request phase run to DONE, its checksum checked.
 *     -> {"ok": true, "hit": bool, "waited": bool, "failures": n,
 *         "acquire_us": f, "first_run_us": f, "done_us": f,
 *         "checksum": "0x%016x"}
 *     Times are microseconds from the request's arrival (its line read
 *     whole), null for an event that was not recorded. The checksum is a
 *     hex string: it is 64 bits, more than a JSON number holds exactly.
 *   {"op": "acquire", "exec": "CMD"}
 *     On a pool of a guest with an agent (pool__exec): the request runs
 *     CMD (a string of 1 to POOL_EXEC_MAX bytes, no NUL; without "exec",
 *     the pool's command) through it; the reply adds
 *       "status": n, "stdout": s, "stderr": s, "truncated": bool,
 *       "first_output_us": f
 *     (each stream's first POOL_OUTPUT_MAX bytes, bytes that are not
 *     UTF-8 as '?'; truncated when either was cut; done_us is the
 *     command's exit). A non-zero status is still "ok": true. "exec" of
 *     the wrong type or length, or on a pool whose guest has no agent,
 *     is an error reply, checked before a VM is taken.
 *   {"op": "stats"}
 *     -> {"ok": true, "stats": {"requests", "hits", "misses", "waits",
 *         "made", "made_on_demand", "make_failures", "guest_failures",
 *         "reaped", "held", "making", "target", "idle_vm_s",
 *         "refill_cpu_s", "rate", "make_s", "last_error"}}
 *     as struct pool_stats (pool.h) describes them; a rate or time
 *     that is not a finite number is null.
 *   {"op": "resize", "size": N}      N an integer >= 0
 *     A new fixed target (pool__resize), clamped to the pool's bounds.
 *     -> {"ok": true, "target": the target now}
 *   {"op": "drain"}
 *     -> {"ok": true}; then the server stops accepting, finishes the
 *     requests being served, closes every connection and returns. Lines
 *     other connections sent but the server had not yet begun to serve
 *     get no reply.
 *
 * A line that is not JSON, not an object, or longer than
 * SERVE_MAX_LINE bytes (it is read to its newline and dropped), an
 * unknown op, or a field missing, ill-typed or unknown to the op gets
 * {"ok": false, "error": "..."} and the connection goes on serving.
 * Idle connections cannot keep others out: one that sends no whole
 * request line within the idle timeout (struct pool_listener's
 * idle_timeout_ns) of its opening or of its last reply is closed, with
 * no reply; and a new connection to a server that has SERVE_MAX_CONNS
 * takes the place of the one that has waited longest for a request
 * line, which is closed the same way. Only when all of them are serving
 * a request does the new one get one error reply and is closed. Nor can
 * one client process hold more than the listener's client_conns
 * (serve_listen.h): its next connection takes the place of its own that
 * has waited longest, or, all of its serving, is refused the same way.
 *
 * Ownership: the server borrows the pool; it neither drains nor frees
 * it, and pool__drain must wait until pool_serve__run returned. */
#ifndef COLDSTART_POOL_SERVE_H
#define COLDSTART_POOL_SERVE_H

#include "pool.h"
#include "serve_listen.h"

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* The longest request line, its newline not counted. */
#define SERVE_MAX_LINE 65536
/* Connections served at once, one thread each. */
#define SERVE_MAX_CONNS 256


/* Serves `p` on a Unix socket at `path` until a drain request or until
 * *stop becomes non-zero (a signal handler may set it; it is looked at
 * every 100 ms; NULL: drain requests only). The socket is made mode 0600;
 * an existing file that is not a socket is refused (-EEXIST), a socket
 * nobody listens on is replaced, a live server's is refused
 * (-EADDRINUSE). On return the socket is removed, every connection
 * thread joined and every descriptor closed. `log` (NULL: none) gets one
 * line per connection event. Returns 0 once stopped, or -errno with a
 * message (err__last). */
/* The pool's counters as the stats reply's "stats" object (non-finite
 * numbers as null); NULL when out of memory. */
json_t *pool_serve__stats_json(const struct pool_stats *st);

int pool_serve__run(struct pool *p, const char *path,
		    volatile sig_atomic_t *stop, FILE *log);

/* pool_serve__run in two steps, for a server that binds its socket
 * before the pool starts (a jailed one: the path is on the host's
 * filesystem, out of the jail's reach once the refill workers run):
 * pool_serve__listen (serve_listen.h), then pool_serve__run_on, which
 * serves on it and closes it, removing the socket file where it still
 * can. */
int pool_serve__run_on(struct pool *p, struct pool_listener *l,
		       volatile sig_atomic_t *stop, FILE *log);

#endif
