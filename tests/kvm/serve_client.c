/* The client side of the pool server's tests (serve_client.h). */
#include "serve_client.h"

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

int client__connect(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		close(fd);
		return -errno;
	}
	return fd;
}

void client__send_raw(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);

		if (w < 0)
			fail_msg("send: %s", strerror(errno));
		s += w;
		n -= (size_t)w;
	}
}

void client__send_line(int fd, const char *line)
{
	client__send_raw(fd, line, strlen(line));
	client__send_raw(fd, "\n", 1);
}

/* The next line the server sent, without its newline; NULL at its end. */
char *client__read_line(int fd)
{
	static char buf[4096];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t n = 0;

	for (;;) {
		if (poll(&pfd, 1, CLIENT_REPLY_TIMEOUT_MS) != 1)
			fail_msg("no reply within %d ms",
				 CLIENT_REPLY_TIMEOUT_MS);
		ssize_t got = recv(fd, buf + n, 1, 0);

		if (got < 0)
			fail_msg("recv: %s", strerror(errno));
		if (got == 0) {
			assert_int_equal(n, 0);
			return NULL;
		}
		if (buf[n] == '\n') {
			buf[n] = '\0';
			return buf;
		}
		assert_true(++n < sizeof(buf));
	}
}

/* The next reply: one JSON object with "ok". */
json_t *client__reply(int fd)
{
	char *line = client__read_line(fd);
	json_error_t jerr;
	json_t *r;

	if (!line)
		fail_msg("the server closed the connection");
	r = json_loads(line, 0, &jerr);
	if (!r || !json_is_object(r))
		fail_msg("not a JSON object: %s", line);
	assert_true(json_is_boolean(json_object_get(r, "ok")));
	return r;
}

json_t *client__ask(int fd, const char *line)
{
	client__send_line(fd, line);
	return client__reply(fd);
}

bool client__ok(json_t *r)
{
	return json_is_true(json_object_get(r, "ok"));
}

/* Fails the test with the server's message unless the reply is ok. */
void client__must_be_ok(json_t *r)
{
	if (!client__ok(r))
		fail_msg("refused: %s",
			 json_string_value(json_object_get(r, "error")));
}

json_int_t client__int_field(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_integer(v))
		fail_msg("\"%s\" is not an integer", key);
	return json_integer_value(v);
}

/* A stats request answered: its "stats" field (a new reference). */
json_t *client__stats(int fd)
{
	json_t *r = client__ask(fd, "{\"op\":\"stats\"}"), *st;

	client__must_be_ok(r);
	st = json_object_get(r, "stats");
	assert_true(json_is_object(st));
	json_incref(st);
	json_decref(r);
	return st;
}

json_int_t client__stat_of(int fd, const char *key)
{
	json_t *st = client__stats(fd);
	json_int_t v = client__int_field(st, key);

	json_decref(st);
	return v;
}
