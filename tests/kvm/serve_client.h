/* The client side of the pool server's tests (test_pool_serve.c): connect,
 * send lines, read replies; any failure fails the running cmocka test,
 * and no read waits longer than CLIENT_REPLY_TIMEOUT_MS. */
#ifndef COLDSTART_TEST_SERVE_CLIENT_H
#define COLDSTART_TEST_SERVE_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* How long a client waits for a reply before the test fails. */
#define CLIENT_REPLY_TIMEOUT_MS 30000

/* A connection to the socket at `path`, or -errno. */
int client__connect(const char *path);

void client__send_raw(int fd, const char *s, size_t n);
/* `line` and its newline. */
void client__send_line(int fd, const char *line);

/* The next line the server sent, without its newline; NULL at its end. */
char *client__read_line(int fd);

/* The next reply: one JSON object with "ok". */
json_t *client__reply(int fd);

/* `line` sent, its reply. */
json_t *client__ask(int fd, const char *line);

/* The reply's "ok" is true. */
bool client__ok(json_t *r);

/* Fails the test with the server's message unless the reply is ok. */
void client__must_be_ok(json_t *r);

/* The integer field `key` of `o`; fails the test if it is none. */
json_int_t client__int_field(json_t *o, const char *key);

/* A stats request answered: its "stats" field (a new reference). */
json_t *client__stats(int fd);

/* One counter of a stats reply. */
json_int_t client__stat_of(int fd, const char *key);

#endif
