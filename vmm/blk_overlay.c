/* A disk image under a per-VM sparse overlay file (blk_overlay.h). */
#include "blk_overlay.h"

#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK BLK_OVERLAY_BLOCK

static bool present(const struct blk_overlay *o, uint64_t blk)
{
	return o->map[blk / 64] >> (blk % 64) & 1;
}

static void mark(struct blk_overlay *o, uint64_t blk)
{
	o->map[blk / 64] |= 1ull << (blk % 64);
	o->blocks++;
}

/* The blocks an existing overlay holds: its data extents. */
static int load_map(struct blk_overlay *o, const char *path)
{
	off_t data = 0, hole;

	for (;;) {
		data = lseek(o->file, data, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			return 0; /* no data past here */
		if (data < 0)
			return err__sys(errno, "overlay %s: SEEK_DATA", path);
		hole = lseek(o->file, data, SEEK_HOLE);
		if (hole < 0)
			return err__sys(errno, "overlay %s: SEEK_HOLE", path);
		for (uint64_t b = (uint64_t)data / BLOCK;
		     b * BLOCK < (uint64_t)hole && b * BLOCK < o->bytes; b++)
			if (!present(o, b))
				mark(o, b);
		data = hole;
	}
}

static int check_size(struct blk_overlay *o, const char *path, bool made)
{
	struct stat st;

	if (fstat(o->file, &st) < 0)
		return err__sys(errno, "overlay %s", path);
	if (!S_ISREG(st.st_mode))
		return err__set(EINVAL, "overlay %s: not a regular file", path);
	if (made && ftruncate(o->file, (off_t)o->bytes) < 0)
		return err__sys(errno, "overlay %s: sizing it", path);
	if (!made && (uint64_t)st.st_size != o->bytes)
		return err__set(EINVAL, "overlay %s: %llu bytes, the image "
				"%llu: an overlay of another disk", path,
				(unsigned long long)st.st_size,
				(unsigned long long)o->bytes);
	return 0;
}

static int open_unlinked(struct blk_overlay *o, const char *dir)
{
	char name[PATH_MAX];
	int n = snprintf(name, sizeof(name), "%s/.coldstart-overlay-XXXXXX",
			 dir);

	if (n < 0 || (size_t)n >= sizeof(name))
		return err__set(ENAMETOOLONG, "an unnamed overlay in %s: the "
				"path is too long", dir);
	o->file = mkostemp(name, O_CLOEXEC);
	if (o->file < 0)
		return err__sys(errno, "an unnamed overlay in %s", dir);
	unlink(name);
	return 0;
}

/* The overlay's file: `*path` made or reopened, or with no path an
 * unnamed one in $TMPDIR (*path then names the directory); *fresh says
 * it is new, to be sized. */
static int open_file(struct blk_overlay *o, const char **path, bool *fresh)
{
	const char *dir = getenv("TMPDIR");

	*fresh = true;
	if (!*path) {
		*path = dir && *dir ? dir : "/tmp";
		o->file = open(*path, O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);
		/* a file system without O_TMPFILE (overlayfs before 6.6):
		 * a new name, unlinked at once */
		if (o->file < 0 && (errno == EOPNOTSUPP || errno == EISDIR))
			return open_unlinked(o, *path);
		return o->file < 0 ? err__sys(errno, "an unnamed overlay in "
					      "%s (O_TMPFILE)", *path) : 0;
	}
	o->file = open(*path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
				      O_CLOEXEC, 0600);
	if (o->file < 0 && errno == EEXIST) {
		*fresh = false;
		o->file = open(*path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	}
	if (o->file < 0)
		return err__sys(errno, "overlay %s%s", *path,
				errno == ELOOP ? " (a symbolic link)" : "");
	return 0;
}

int blk_overlay__open(struct blk_overlay *o, int base_fd, uint64_t bytes,
		      const char *path)
{
	uint64_t nblocks = (bytes + BLOCK - 1) / BLOCK;
	bool unnamed = !path, fresh;
	int ret;

	memset(o, 0, sizeof(*o));
	o->base = base_fd;
	o->bytes = bytes;
	ret = open_file(o, &path, &fresh);
	if (ret < 0)
		return ret;
	o->map = calloc((nblocks + 63) / 64, sizeof(uint64_t));
	ret = o->map ? check_size(o, path, fresh) :
		       err__set(ENOMEM, "overlay %s: its block map", path);
	if (ret == 0 && !fresh)
		ret = load_map(o, path);
	if (ret == 0)
		return 0;
	free(o->map);
	close(o->file);
	if (fresh && !unnamed)
		unlink(path);
	return ret;
}

void blk_overlay__close(struct blk_overlay *o)
{
	free(o->map);
	close(o->file);
}

static int full_pread(int fd, void *buf, uint64_t len, uint64_t off)
{
	return pread(fd, buf, len, (off_t)off) == (ssize_t)len ? 0 : -EIO;
}

static int full_pwrite(int fd, const void *buf, uint64_t len, uint64_t off)
{
	return pwrite(fd, buf, len, (off_t)off) == (ssize_t)len ? 0 : -EIO;
}

int blk_overlay__read(struct blk_overlay *o, void *buf, uint64_t len,
		      uint64_t off)
{
	uint8_t *p = buf;

	while (len) {
		uint64_t blk = off / BLOCK, n = BLOCK - off % BLOCK;
		int fd;

		/* a run of blocks from the same file in one read */
		fd = present(o, blk) ? o->file : o->base;
		while (n < len &&
		       present(o, (off + n) / BLOCK) == (fd == o->file))
			n += BLOCK;
		n = n < len ? n : len;
		if (full_pread(fd, p, n, off) < 0)
			return -EIO;
		p += n;
		off += n;
		len -= n;
	}
	return 0;
}

/* Copies block `blk` of the base into the overlay with [from, from + n)
 * of it replaced by `data`. */
static int copy_up(struct blk_overlay *o, uint64_t blk, const uint8_t *data,
		   uint64_t from, uint64_t n)
{
	uint8_t buf[BLOCK];
	uint64_t at = blk * BLOCK;
	uint64_t size = o->bytes - at < BLOCK ? o->bytes - at : BLOCK;

	if (n < size && full_pread(o->base, buf, size, at) < 0)
		return -EIO;
	memcpy(buf + from, data, n);
	if (full_pwrite(o->file, buf, size, at) < 0)
		return -EIO;
	mark(o, blk);
	return 0;
}

int blk_overlay__write(struct blk_overlay *o, const void *buf, uint64_t len,
		       uint64_t off)
{
	const uint8_t *p = buf;

	while (len) {
		uint64_t blk = off / BLOCK, from = off % BLOCK;
		uint64_t n = BLOCK - from < len ? BLOCK - from : len;
		int ret = present(o, blk) ? full_pwrite(o->file, p, n, off) :
					    copy_up(o, blk, p, from, n);

		if (ret < 0)
			return ret;
		p += n;
		off += n;
		len -= n;
	}
	return 0;
}
