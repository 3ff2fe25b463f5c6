/* Writing result files safely: a file appears complete under its final
 * name or not at all. */
#ifndef COLDSTART_OUTPUT_H
#define COLDSTART_OUTPUT_H

#include "timeline.h"

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

/* snprintf for paths: -ENAMETOOLONG with a message instead of a cut
 * path. */
int output__pathf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Creates `dir` and its parents (mode 0755); 0 or -errno. */
int output__mkdirs(const char *dir);

/* Writes all `len` bytes to `fd`, retrying short writes and EINTR; 0 or
 * -errno (no message: callers name the file). */
int output__write_all(int fd, const void *data, size_t len);

/* A file being made beside its final name: every file coldstart writes
 * next to user data goes through one. The temporary is created in the
 * destination directory under a random name (".NAME.XXXXXX") with
 * O_CREAT | O_EXCL | O_NOFOLLOW, so it is always a new file of ours and
 * never a link someone planted; it is written through `fd` and renamed
 * over `path`. rename() never follows links: a symlink at `path` itself
 * is replaced, not written through. */
struct output_file {
	int fd;
	char tmp[PATH_MAX];
	char path[PATH_MAX];
};

/* Creates the temporary for `path` with `mode` less the umask (no chmod,
 * by path or descriptor). 0 or -errno, no message (callers name the
 * file); f->fd is -1 on failure. */
int output__file_open(struct output_file *f, const char *path, mode_t mode);

/* Closes the temporary (after fsync when `sync`) and renames it over
 * f->path; removes it on any failure. 0 or -errno, no message. */
int output__file_commit(struct output_file *f, bool sync);

/* Closes and removes the temporary (nothing when it was never made). */
void output__file_abort(struct output_file *f);

/* Makes a new directory from `tmpl`, whose last six bytes are "XXXXXX"
 * and become random, with mode 0777 less the umask (mkdtemp's 0700 would
 * need a chmod by path). 0 or -errno, no message. */
int output__mkdtemp(char *tmpl);

/* Writes `len` bytes to `path` through a temporary file (output_file),
 * fsync and rename. 0 or -errno with a message. */
int output__write_path(const char *path, const char *data, size_t len);

/* The same for dir/name. */
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

/* `s` as one word for a POSIX shell, so that a command coldstart prints
 * or records can be pasted back: as it is when it holds only characters
 * no shell treats specially, else in single quotes (a ' inside as '\''). */
void output__shell_word(FILE *f, const char *s);

/* Progress on stderr, only when stderr is a terminal: "\rwhat: i/n". */
void output__progress(const char *what, unsigned long i, unsigned long n);
void output__progress_done(void);

#endif
