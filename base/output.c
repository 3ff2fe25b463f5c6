/* Atomic result files and terminal progress. */
#include "output.h"

#include "err.h"
#include "regfile.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* mkstemp creates 0600; results are for sharing, so use the umask. */
static void fchmod_default(const char *path)
{
	mode_t mask = umask(0);

	umask(mask);
	chmod(path, 0666 & ~mask);
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

int output__write_file(const char *dir, const char *name, const char *data,
		       size_t len)
{
	char final[PATH_MAX], tmp[PATH_MAX];
	int fd, ret;

	if (snprintf(final, sizeof(final), "%s/%s", dir, name) >= PATH_MAX ||
	    snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, name) >= PATH_MAX)
		return err__set(ENAMETOOLONG, "path %s/%s is too long", dir,
				name);
	fd = mkstemp(tmp);
	if (fd < 0)
		return err__sys(errno, "creating a temporary file in %s", dir);
	ret = output__write_all(fd, data, len);
	if (ret == 0 && fsync(fd) < 0)
		ret = -errno;
	if (close(fd) < 0 && ret == 0)
		ret = -errno;
	if (ret == 0) {
		fchmod_default(tmp);
		if (rename(tmp, final) < 0)
			ret = -errno;
	}
	if (ret < 0) {
		unlink(tmp);
		return err__sys(-ret, "writing %s", final);
	}
	return 0;
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
