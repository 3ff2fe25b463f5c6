/* Writing result files safely: a file appears complete under its final
 * name or not at all. */
#ifndef COLDSTART_OUTPUT_H
#define COLDSTART_OUTPUT_H

#include "timeline.h"

#include <jansson.h>

/* snprintf for paths: -ENAMETOOLONG with a message instead of a cut
 * path. */
int output__pathf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Creates `dir` and its parents (mode 0755); 0 or -errno. */
int output__mkdirs(const char *dir);

/* Writes all `len` bytes to `fd`, retrying short writes and EINTR; 0 or
 * -errno (no message: callers name the file). */
int output__write_all(int fd, const void *data, size_t len);

/* Writes `len` bytes to dir/name through a temporary file, fsync and
 * rename. 0 or -errno with a message. */
int output__write_file(const char *dir, const char *name, const char *data,
		       size_t len);

/* The same for a JSON document (indented, newline-terminated). */
int output__write_json(const char *dir, const char *name, const json_t *doc);

/* A file's text built in memory: print to `f`, then close or write. */
struct output_text {
	FILE *f;
	char *text;
	size_t len;
};

/* Opens t->f on memory; 0 or -errno with a message. */
int output__text_open(struct output_text *t);

/* Closes t->f; t->text and t->len then hold the text (free() it). 0, or
 * -ENOMEM with a message naming `what` and nothing left to free. */
int output__text_close(struct output_text *t, const char *what);

/* Closes t->f, writes the text to dir/name (output__write_file) and frees
 * it; 0 or -errno with a message. */
int output__text_write(struct output_text *t, const char *dir,
		       const char *name);

/* The events of `tl` that happened, as {"key": ns since process start}. */
json_t *output__timeline_json(const struct timeline *tl);

/* json_load_file for a file from the user: a regular file only, opened
 * without blocking (a FIFO is an error, not a hang). NULL with e->text
 * naming the problem. */
json_t *output__json_load(const char *path, json_error_t *e);

/* A JSON string of `s`, which need not be UTF-8 (a directory name, a
 * string from a file): each byte that is not part of a valid sequence
 * becomes U+FFFD. NULL only when out of memory. */
json_t *output__json_string(const char *s);

/* Progress on stderr, only when stderr is a terminal: "\rwhat: i/n". */
void output__progress(const char *what, unsigned long i, unsigned long n);
void output__progress_done(void);

#endif
