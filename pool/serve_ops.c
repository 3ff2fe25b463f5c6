/* The pool server's requests (serve.h's protocol): a line parsed, its
 * op served, the reply built, the error replies among them; and the
 * server's log. */
#include "serve_int.h"

#include "err.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void pool_serve__say(struct server *s, const char *fmt, ...)
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

json_t *pool_serve__fail(const char *fmt, ...)
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

/* What a request's command did: its status, output and first output. */
static int command_reply(json_t *out, struct pool_request *r)
{
	int bad = json_object_set_new(out, "status", json_integer(r->status));

	bad |= json_object_set_new(out, "stdout", agent__capture_json(&r->output[0]));
	bad |= json_object_set_new(out, "stderr", agent__capture_json(&r->output[1]));
	bad |= json_object_set_new(out, "truncated",
				   json_boolean(r->output[0].truncated ||
						r->output[1].truncated));
	bad |= json_object_set_new(out, "first_output_us",
				   us_after(r->first_output_ns,
					    r->arrival_ns));
	return bad;
}

/* acquire's "exec": a string of 1 to POOL_EXEC_MAX bytes, for a pool
 * whose guest has an agent; NULL with *err set otherwise. */
static const char *exec_of(struct conn *c, json_t *req, json_t **err)
{
	json_t *e = json_object_get(req, "exec");
	size_t n;

	*err = NULL;
	if (!e)
		return NULL;
	if (!json_is_string(e)) {
		*err = pool_serve__fail("\"exec\" must be a string, the "
					"command");
		return NULL;
	}
	n = json_string_length(e);
	if (!n || n > POOL_EXEC_MAX || strlen(json_string_value(e)) != n)
		*err = pool_serve__fail("\"exec\" must hold 1 to %u bytes "
					"and no NUL, not %zu", POOL_EXEC_MAX,
					n);
	else if (!pool__exec(c->srv->pool))
		*err = pool_serve__fail("\"exec\": the pool's guest has no "
					"agent to run it");
	return *err ? NULL : json_string_value(e);
}

static json_t *op_acquire(struct conn *c, json_t *req, uint64_t arrival)
{
	struct pool_request r = { .arrival_ns = arrival };
	char sum[24];
	json_t *out;
	int bad;

	r.exec = exec_of(c, req, &out);
	if (out)
		return out;
	if (pool__serve(c->srv->pool, &r) < 0) {
		pool__request_release(&r);
		return pool_serve__fail("%s", err__last());
	}
	snprintf(sum, sizeof(sum), "0x%016" PRIx64, r.checksum);
	out = success();
	if (!out) {
		pool__request_release(&r);
		return NULL;
	}
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
	if (r.ran)
		bad |= command_reply(out, &r);
	pool__request_release(&r);
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
	return json_pack("{s:b, s:o}", "ok", 1, "stats",
			 pool_serve__stats_json(&st));
}

static json_t *op_resize(struct conn *c, json_t *req, uint64_t arrival)
{
	json_t *size = json_object_get(req, "size");
	struct pool_stats st;
	json_int_t n;

	(void)arrival;
	if (!size)
		return pool_serve__fail("resize needs \"size\", the new "
					"target");
	n = json_is_integer(size) ? json_integer_value(size) : -1;
	if (n < 0)
		return pool_serve__fail("\"size\" must be an integer >= 0");
	/* the pool clamps it to its maximum, far below UINT_MAX */
	pool__resize(c->srv->pool, n > UINT_MAX ? UINT_MAX : (unsigned int)n);
	pool__stats(c->srv->pool, &st);
	pool_serve__say(c->srv, "connection %u: resize to %lld, target now "
			"%u", c->id, (long long)n, st.target);
	return json_pack("{s:b, s:I}", "ok", 1, "target",
			 (json_int_t)st.target);
}

static json_t *op_drain(struct conn *c, json_t *req, uint64_t arrival)
{
	(void)req;
	(void)arrival;
	pool_serve__say(c->srv, "connection %u asked to drain", c->id);
	c->drain = true;
	return success();
}

struct op {
	const char *name;
	const char *field; /* the one it takes besides op and id, or NULL */
	json_t *(*serve)(struct conn *c, json_t *req, uint64_t arrival);
};

static const struct op ops[] = {
	{ "acquire", "exec", op_acquire },
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
		return pool_serve__fail("a request is a JSON object, not an "
					"array");
	if (!op)
		return pool_serve__fail("the request has no \"op\" (acquire, "
					"stats, resize or drain)");
	if (!json_is_string(op))
		return pool_serve__fail("\"op\" must be a string");
	name = json_string_value(op);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (strcmp(name, ops[i].name))
			continue;
		stray = stray_field(&ops[i], req);
		if (stray)
			return pool_serve__fail("%s takes no field \"%s\"",
						name, stray);
		return ops[i].serve(c, req, arrival);
	}
	return pool_serve__fail("unknown op \"%s\" (acquire, stats, resize "
				"or drain)", name);
}

/* The reply to one line; NULL when out of memory. */
json_t *pool_serve__answer(struct conn *c, const char *line, size_t n,
			   uint64_t arrival)
{
	json_error_t jerr;
	json_t *req, *reply, *id;

	/* no JSON_DISABLE_EOF_CHECK: what follows the object is an error */
	req = json_loadb(line, n, JSON_REJECT_DUPLICATES, &jerr);
	if (!req)
		return pool_serve__fail("not JSON: %s (at byte %d)",
					jerr.text, jerr.position);
	reply = dispatch(c, req, arrival);
	id = json_is_object(req) ? json_object_get(req, "id") : NULL;
	if (reply && id && json_object_set(reply, "id", id)) {
		json_decref(reply);
		reply = NULL;
	}
	json_decref(req);
	return reply;
}
