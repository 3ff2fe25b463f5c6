/* Gzip-compressed newc cpio archives through zlib's gz* stream. */
#include "cpio.h"

#include "err.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define NEWC_MAGIC "070701"
#define NEWC_HEADER 110 /* magic + 13 eight-digit hex fields */

struct cpio {
	gzFile gz;
	uint32_t next_ino;
	int err; /* first error, sticky: later writes are skipped */
};

int cpio__open(struct cpio **out, int fd)
{
	struct cpio *c = calloc(1, sizeof(*c));
	int dupfd;

	if (!c)
		return err__set(ENOMEM, "out of memory");
	dupfd = dup(fd); /* gzclose closes its own descriptor */
	if (dupfd < 0) {
		free(c);
		return err__sys(errno, "dup");
	}
	c->gz = gzdopen(dupfd, "wb9");
	if (!c->gz) {
		close(dupfd);
		free(c);
		return err__set(ENOMEM, "gzdopen failed");
	}
	c->next_ino = 1;
	*out = c;
	return 0;
}

static void put(struct cpio *c, const void *data, size_t size)
{
	int errnum;

	if (c->err || size == 0)
		return;
	if (gzwrite(c->gz, data, (unsigned)size) != (int)size) {
		const char *why = gzerror(c->gz, &errnum);

		c->err = errnum == Z_ERRNO
				 ? err__sys(errno, "writing the initramfs")
				 : err__set(EIO, "compressing the initramfs: "
					    "%s", why);
	}
}

/* newc pads the header+name and the data each to 4 bytes. */
static void pad(struct cpio *c, size_t written)
{
	static const char zeros[4];

	put(c, zeros, (4 - written % 4) % 4);
}

static int entry(struct cpio *c, const char *name, uint32_t mode,
		 const void *data, size_t size, uint32_t rmajor,
		 uint32_t rminor)
{
	char header[NEWC_HEADER + 1];
	size_t namesize = strlen(name) + 1;

	if (size > UINT32_MAX)
		return c->err = err__set(EFBIG, "cpio: '%s' is larger than "
					 "4 GiB", name);
	snprintf(header, sizeof(header),
		 "%s%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
		 NEWC_MAGIC, c->next_ino++, mode, 0u, 0u,
		 S_ISDIR(mode) ? 2u : 1u, 0u, (uint32_t)size, 0u, 0u, rmajor,
		 rminor, (uint32_t)namesize, 0u);
	put(c, header, NEWC_HEADER);
	put(c, name, namesize);
	pad(c, NEWC_HEADER + namesize);
	put(c, data, size);
	pad(c, size);
	return c->err;
}

int cpio__dir(struct cpio *c, const char *name, uint32_t perm)
{
	return entry(c, name, S_IFDIR | (perm & 07777), NULL, 0, 0, 0);
}

int cpio__file(struct cpio *c, const char *name, uint32_t perm,
	       const void *data, size_t size)
{
	return entry(c, name, S_IFREG | (perm & 07777), data, size, 0, 0);
}

int cpio__symlink(struct cpio *c, const char *name, const char *target)
{
	return entry(c, name, S_IFLNK | 0777, target, strlen(target), 0, 0);
}

int cpio__chardev(struct cpio *c, const char *name, uint32_t perm,
		  uint32_t major, uint32_t minor)
{
	return entry(c, name, S_IFCHR | (perm & 07777), NULL, 0, major, minor);
}

int cpio__finish(struct cpio *c)
{
	int ret, zret;

	/* The trailer is an empty entry named TRAILER!!! with inode 0. */
	c->next_ino = 0;
	entry(c, "TRAILER!!!", 0, NULL, 0, 0, 0);
	ret = c->err;
	zret = gzclose(c->gz);
	if (ret == 0 && zret != Z_OK)
		ret = zret == Z_ERRNO ? err__sys(errno, "closing the initramfs")
				      : err__set(EIO, "finishing the gzip "
						 "stream (zlib error %d)", zret);
	free(c);
	return ret;
}

void cpio__abort(struct cpio *c)
{
	gzclose(c->gz);
	free(c);
}
