/* Atomic result files and terminal progress. */
#include "output.h"

#include "err.h"
#include "regfile.h"

#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Names tried before giving up on a directory full of our temporaries. */
#define TEMP_TRIES 100

int output__text_open(struct output_text *t)
{
	*t = (struct output_text){ 0 };
	t->f = open_memstream(&t->text, &t->len);
	return t->f ? 0 : err__sys(errno, "open_memstream");
}

int output__text_close(struct output_text *t, const char *what)
{
	int failed = fclose(t->f) != 0;

	t->f = NULL;
	if (!failed)
		return 0;
	free(t->text);
	t->text = NULL;
	return err__set(ENOMEM, "building %s", what);
}

int output__text_write(struct output_text *t, const char *dir,
		       const char *name)
{
	int ret = output__text_close(t, name);

	if (ret == 0)
		ret = output__write_file(dir, name, t->text, t->len);
	free(t->text);
	t->text = NULL;
	return ret;
}

/* Appends a newline to a malloc'ed string; frees it on failure. */
static char *realloc_newline(char *text, size_t *len)
{
	char *grown = realloc(text, *len + 2);

	if (!grown) {
		free(text);
		return NULL;
	}
	grown[(*len)++] = '\n';
	grown[*len] = '\0';
	return grown;
}

int output__mkdirs(const char *dir)
{
	char path[PATH_MAX];
	size_t len = strlen(dir);

	if (len == 0 || len >= sizeof(path))
		return err__set(EINVAL, "bad output directory '%s'", dir);
	memcpy(path, dir, len + 1);
	for (char *p = path + 1; ; p++) {
		char c = *p;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return err__sys(errno, "creating %s", path);
		*p = c;
		if (!c)
			return 0;
	}
}

int output__write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Random bytes for the XXXXXX of a temporary name, from getrandom, or
 * the clock when it has none to give yet (as mkstemp does): O_EXCL, not
 * the name, is what makes the file ours, the name only makes it hard to
 * plant anything in its way. */
static void random_name(char x[6])
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyz"
				  "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	uint64_t r;
	struct timespec ts;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		r = ((uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^
		     (uint64_t)getpid() << 40) * 0x9e3779b97f4a7c15ull;
	}
	for (int i = 0; i < 6; i++, r /= sizeof(set) - 1)
		x[i] = set[r % (sizeof(set) - 1)];
}

/* "DIR/.BASE.XXXXXX" for path "DIR/BASE" (".BASE.XXXXXX" without DIR). */
static int temp_template(char tmp[PATH_MAX], const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	int dir_len = slash ? (int)(slash - path + 1) : 0;

	if (!*base)
		return -EISDIR;
	if (snprintf(tmp, PATH_MAX, "%.*s.%s.XXXXXX", dir_len, path, base) >=
	    PATH_MAX)
		return -ENAMETOOLONG;
	return 0;
}

int output__file_open(struct output_file *f, const char *path, mode_t mode)
{
	size_t len = strlen(path);
	int ret = len < sizeof(f->path) ? temp_template(f->tmp, path)
					: -ENAMETOOLONG;

	f->fd = -1;
	if (ret < 0) {
		f->tmp[0] = '\0';
		return ret;
	}
	memcpy(f->path, path, len + 1);
	for (int i = 0; i < TEMP_TRIES; i++) {
		random_name(f->tmp + strlen(f->tmp) - 6);
		f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
				     O_CLOEXEC, mode);
		if (f->fd >= 0)
			return 0;
		if (errno != EEXIST)
			break;
	}
	ret = -errno;
	f->tmp[0] = '\0';
	return ret;
}

int output__file_commit(struct output_file *f, bool sync)
{
	int ret = sync && fsync(f->fd) < 0 ? -errno : 0;

	if (close(f->fd) < 0 && ret == 0)
		ret = -errno;
	f->fd = -1;
	if (ret == 0 && rename(f->tmp, f->path) < 0)
		ret = -errno;
	if (ret < 0)
		unlink(f->tmp);
	f->tmp[0] = '\0';
	return ret;
}

void output__file_abort(struct output_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	if (f->tmp[0])
		unlink(f->tmp);
	f->fd = -1;
	f->tmp[0] = '\0';
}

int output__mkdtemp(char *tmpl)
{
	size_t len = strlen(tmpl);

	if (len < 6 || strcmp(tmpl + len - 6, "XXXXXX"))
		return -EINVAL;
	for (int i = 0; i < TEMP_TRIES; i++) {
		random_name(tmpl + len - 6);
		if (mkdir(tmpl, 0777) == 0)
			return 0;
		if (errno != EEXIST)
			break;
	}
	return -errno;
}

int output__write_path(const char *path, const char *data, size_t len)
{
	struct output_file f;
	int ret = output__file_open(&f, path, 0666);

	if (ret < 0)
		return err__sys(-ret, "creating a temporary file for %s", path);
	ret = output__write_all(f.fd, data, len);
	if (ret < 0)
		output__file_abort(&f);
	else
		ret = output__file_commit(&f, true);
	return ret < 0 ? err__sys(-ret, "writing %s", path) : 0;
}

int output__write_file(const char *dir, const char *name, const char *data,
		       size_t len)
{
	char final[PATH_MAX];

	if (snprintf(final, sizeof(final), "%s/%s", dir, name) >= PATH_MAX)
		return err__set(ENAMETOOLONG, "path %s/%s is too long", dir,
				name);
	return output__write_path(final, data, len);
}

int output__write_json(const char *dir, const char *name, const json_t *doc)
{
	char *text = json_dumps(doc, JSON_INDENT(2));
	size_t len;
	int ret;

	if (!text)
		return err__set(ENOMEM, "serialising %s", name);
	len = strlen(text);
	text = realloc_newline(text, &len);
	ret = text ? output__write_file(dir, name, text, len)
		   : err__set(ENOMEM, "serialising %s", name);
	free(text);
	return ret;
}

json_t *output__timeline_json(const struct timeline *tl)
{
	json_t *obj = json_object();

	for (int ev = 0; ev < TL_COUNT; ev++)
		if (tl->t[ev])
			json_object_set_new(obj, timeline__key(ev),
				json_integer((json_int_t)(tl->t[ev] -
						tl->t[TL_PROCESS_START])));
	return obj;
}

/* jansson's reader for json_load_callback: a buffer's worth at a time
 * (json_loadf takes the file a character at a time, through a locked
 * getc, which was a tenth of `report`'s time on large documents). */
static size_t json_read(void *buf, size_t len, void *arg)
{
	FILE *f = arg;
	size_t n = fread(buf, 1, len, f);

	return n == 0 && ferror(f) ? (size_t)-1 : n;
}

json_t *output__json_load(const char *path, json_error_t *e)
{
	FILE *f = regfile__fopen(path);
	json_t *root;

	if (!f) {
		*e = (json_error_t){ .line = -1, .column = -1 };
		snprintf(e->text, sizeof(e->text), "%s", err__last());
		return NULL;
	}
	root = json_load_callback(json_read, f, 0, e);
	fclose(f);
	return root;
}

/* Bytes of the valid UTF-8 sequence at `p`, or 0 (overlong forms,
 * surrogates and code points past U+10FFFF are not valid). */
static size_t utf8_seq(const unsigned char *p)
{
	static const uint32_t min[] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t n = p[0] < 0x80 ? 1 : p[0] >= 0xc2 && p[0] <= 0xdf ? 2
				     : p[0] >= 0xe0 && p[0] <= 0xef ? 3
				     : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
	uint32_t cp = n > 1 ? p[0] & (0x3fu >> (n - 1)) : p[0];

	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (n > 1 && (cp < min[n] || cp > 0x10ffff ||
		      (cp >= 0xd800 && cp <= 0xdfff)))
		return 0;
	return n;
}

json_t *output__json_string(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), o = 0;
	char *fixed = malloc(len * 3 + 1);
	json_t *j;

	if (!fixed)
		return NULL;
	while (*p) {
		size_t n = utf8_seq(p);

		if (n) {
			memcpy(fixed + o, p, n);
			o += n;
			p += n;
		} else {
			memcpy(fixed + o, "\xef\xbf\xbd", 3); /* U+FFFD */
			o += 3;
			p++;
		}
	}
	fixed[o] = '\0';
	j = json_string(fixed);
	free(fixed);
	return j;
}

void output__progress(const char *what, unsigned long i, unsigned long n)
{
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "\r%s: %lu/%lu ", what, i, n);
}

void output__progress_done(void)
{
	if (isatty(STDERR_FILENO))
		fputs("\r\033[K", stderr);
}

int output__pathf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size)
		return err__set(ENAMETOOLONG, "path too long: %.64s...", buf);
	return 0;
}

void output__shell_word(FILE *f, const char *s)
{
	if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789_./:=,@+-") == strlen(s)) {
		fputs(s, f);
		return;
	}
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	}
	fputc('\'', f);
}
