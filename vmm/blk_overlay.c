/* A disk image under a per-VM sparse overlay file (blk_overlay.h). */
#include "blk_overlay.h"

#include "err.h"
#include "jail.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK BLK_OVERLAY_BLOCK

static bool in_map(const uint64_t *map, uint64_t blk)
{
	return map[blk / 64] >> (blk % 64) & 1;
}

static bool present(const struct blk_overlay *o, uint64_t blk)
{
	return in_map(o->map, blk);
}

static void mark(struct blk_overlay *o, uint64_t blk)
{
	o->map[blk / 64] |= 1ull << (blk % 64);
	o->blocks++;
}

/* The file block `blk` is read from: the overlay, the highest lower
 * layer holding it, or the base. */
static int source(const struct blk_overlay *o, uint64_t blk)
{
	if (present(o, blk))
		return o->file;
	for (unsigned int i = o->nr_lower; i-- > 0;)
		if (in_map(o->lower[i].map, blk))
			return o->lower[i].fd;
	return o->base;
}

static uint64_t map_words(uint64_t bytes)
{
	return ((bytes + BLOCK - 1) / BLOCK + 63) / 64;
}

/* The blocks an overlay file `fd` of a `bytes` disk holds, its data
 * extents, set in `map`; *count gets how many. */
static int load_map(int fd, uint64_t bytes, uint64_t *map, uint64_t *count,
		    const char *path)
{
	off_t data = 0, hole;

	*count = 0;
	for (;;) {
		data = lseek(fd, data, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			return 0; /* no data past here */
		if (data < 0)
			return err__sys(errno, "overlay %s: SEEK_DATA", path);
		hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0)
			return err__sys(errno, "overlay %s: SEEK_HOLE", path);
		for (uint64_t b = (uint64_t)data / BLOCK;
		     b * BLOCK < (uint64_t)hole && b * BLOCK < bytes; b++) {
			if (!in_map(map, b))
				(*count)++;
			map[b / 64] |= 1ull << (b % 64);
		}
		data = hole;
	}
}

static int check_size(int fd, uint64_t bytes, const char *path, bool made)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return err__sys(errno, "overlay %s", path);
	if (!S_ISREG(st.st_mode))
		return err__set(EINVAL, "overlay %s: not a regular file", path);
	if (made && ftruncate(fd, (off_t)bytes) < 0)
		return err__sys(errno, "overlay %s: sizing it", path);
	if (!made && (uint64_t)st.st_size != bytes)
		return err__set(EINVAL, "overlay %s: %llu bytes, the image "
				"%llu: an overlay of another disk", path,
				(unsigned long long)st.st_size,
				(unsigned long long)bytes);
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
	if (!*path && jail__dir()) {
		/* jailed (a pool's VMs, a restore whose fault handler came
		 * first): TMPDIR is out of reach, the writes go to memory */
		*path = "memory (memfd)";
		o->file = memfd_create("coldstart-overlay", MFD_CLOEXEC);
		return o->file < 0 ? err__sys(errno, "an unnamed overlay in "
					      "memory (memfd_create)") : 0;
	}
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
	bool unnamed = !path, fresh;
	int ret;

	memset(o, 0, sizeof(*o));
	o->base = base_fd;
	o->bytes = bytes;
	ret = open_file(o, &path, &fresh);
	if (ret < 0)
		return ret;
	o->map = calloc(map_words(bytes), sizeof(uint64_t));
	ret = o->map ? check_size(o->file, bytes, path, fresh) :
		       err__set(ENOMEM, "overlay %s: its block map", path);
	if (ret == 0 && !fresh)
		ret = load_map(o->file, bytes, o->map, &o->blocks, path);
	if (ret == 0)
		return 0;
	free(o->map);
	close(o->file);
	if (fresh && !unnamed)
		unlink(path);
	return ret;
}

int blk_overlay__check_unnamed(void)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	fd = open(dir, O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return err__sys(errno, "the VMs' disk overlays are unnamed files in "
			"%s (O_TMPFILE), which its file system refuses (an "
			"overlayfs before Linux 6.6?); point TMPDIR at a "
			"directory on ext4, XFS, btrfs or tmpfs", dir);
}

void blk_overlay__close(struct blk_overlay *o)
{
	while (o->nr_lower) {
		struct blk_layer *l = &o->lower[--o->nr_lower];

		free(l->map);
		close(l->fd);
	}
	free(o->lower);
	o->lower = NULL;
	free(o->map);
	close(o->file);
}

int blk_overlay__add_lower(struct blk_overlay *o, const char *path)
{
	struct blk_layer l = { .fd = -1 };
	uint64_t count;
	int ret;

	if (o->blocks)
		return err__set(EBUSY, "overlay layer %s: the overlay above it "
				"holds blocks already", path);
	if (o->nr_lower == BLK_OVERLAY_MAX_LOWER)
		return err__set(E2BIG, "overlay layer %s: a disk takes at most "
				"%d layers", path, BLK_OVERLAY_MAX_LOWER);
	if (!o->lower) {
		o->lower = calloc(BLK_OVERLAY_MAX_LOWER, sizeof(*o->lower));
		if (!o->lower)
			return err__set(ENOMEM, "overlay layer %s", path);
	}
	l.fd = jail__open(path, BLK_OVERLAY_LAYER_FLAGS);
	if (l.fd < 0)
		return err__sys(errno, "overlay layer %s%s", path,
				errno == ELOOP ? " (a symbolic link)" : "");
	l.map = calloc(map_words(o->bytes), sizeof(uint64_t));
	ret = l.map ? check_size(l.fd, o->bytes, path, false) :
		      err__set(ENOMEM, "overlay layer %s: its block map", path);
	if (ret == 0)
		ret = load_map(l.fd, o->bytes, l.map, &count, path);
	if (ret < 0) {
		free(l.map);
		close(l.fd);
		return ret;
	}
	o->lower[o->nr_lower++] = l;
	return 0;
}

static bool kept(const struct blk_overlay *o, uint64_t blk, bool all)
{
	if (present(o, blk))
		return true;
	for (unsigned int i = 0; all && i < o->nr_lower; i++)
		if (in_map(o->lower[i].map, blk))
			return true;
	return false;
}

#define SAVE_CHUNK (1u << 20)

int blk_overlay__save(const struct blk_overlay *o, int fd, bool all,
		      uint64_t *bytes)
{
	uint64_t nblocks = (o->bytes + BLOCK - 1) / BLOCK;
	uint8_t *buf = malloc(SAVE_CHUNK);
	int ret = 0;

	*bytes = 0;
	if (!buf)
		return err__set(ENOMEM, "saving a disk's overlay");
	if (ftruncate(fd, (off_t)o->bytes) < 0)
		ret = err__sys(errno, "sizing a disk's saved overlay");
	for (uint64_t b = 0; ret == 0 && b < nblocks; b++) {
		uint64_t off, len, n = 1;

		if (!kept(o, b, all))
			continue;
		while (b + n < nblocks && n < SAVE_CHUNK / BLOCK &&
		       kept(o, b + n, all))
			n++;
		off = b * BLOCK;
		len = off + n * BLOCK > o->bytes ? o->bytes - off : n * BLOCK;
		ret = blk_overlay__read(o, buf, len, off);
		if (ret < 0)
			ret = err__sys(EIO, "reading a disk's overlay");
		else if (pwrite(fd, buf, len, (off_t)off) != (ssize_t)len)
			ret = err__sys(errno ? errno : EIO,
				       "writing a disk's saved overlay");
		*bytes += len;
		b += n - 1;
	}
	free(buf);
	return ret;
}

static int full_pread(int fd, void *buf, uint64_t len, uint64_t off)
{
	return pread(fd, buf, len, (off_t)off) == (ssize_t)len ? 0 : -EIO;
}

static int full_pwrite(int fd, const void *buf, uint64_t len, uint64_t off)
{
	return pwrite(fd, buf, len, (off_t)off) == (ssize_t)len ? 0 : -EIO;
}

int blk_overlay__source(const struct blk_overlay *o, uint64_t off,
			uint64_t len, uint64_t *n)
{
	int fd = source(o, off / BLOCK);

	*n = BLOCK - off % BLOCK;
	while (*n < len && source(o, (off + *n) / BLOCK) == fd)
		*n += BLOCK;
	*n = *n < len ? *n : len;
	return fd;
}

int blk_overlay__read(const struct blk_overlay *o, void *buf, uint64_t len,
		      uint64_t off)
{
	uint8_t *p = buf;

	while (len) {
		uint64_t n;
		/* a run of blocks from the same file in one read */
		int fd = blk_overlay__source(o, off, len, &n);

		if (full_pread(fd, p, n, off) < 0)
			return -EIO;
		p += n;
		off += n;
		len -= n;
	}
	return 0;
}

/* Copies block `blk` as the disk shows it (a lower layer's or the
 * base's) into the overlay with [from, from + n) of it replaced by
 * `data`. */
static int copy_up(struct blk_overlay *o, uint64_t blk, const uint8_t *data,
		   uint64_t from, uint64_t n)
{
	uint8_t buf[BLOCK];
	uint64_t at = blk * BLOCK;
	uint64_t size = o->bytes - at < BLOCK ? o->bytes - at : BLOCK;

	if (n < size && full_pread(source(o, blk), buf, size, at) < 0)
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
