/* A disk image seen through a per-VM sparse overlay file: the image (the
 * base) is opened read-only and never written; a guest's write copies
 * the 4 KiB blocks it touches into the overlay, at the same offsets, and
 * later reads of those blocks come from there. Which blocks are in the
 * overlay is the overlay file's own allocation (SEEK_DATA), read once at
 * open, so the file alone is the disk's state: reopened later (a restart,
 * a snapshot that carries it) it shows the same disk. Disk used per VM is
 * about the blocks it wrote; the base stays in the shared page cache. */
#ifndef COLDSTART_BLK_OVERLAY_H
#define COLDSTART_BLK_OVERLAY_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>

#define BLK_OVERLAY_BLOCK 4096u

/* A read-only overlay under the VM's own: a snapshot's disk state. */
struct blk_layer {
	int fd;
	uint64_t *map; /* a bit per block: in this layer */
};

#define BLK_OVERLAY_MAX_LOWER 64
/* How a lower layer (a snapshot's disk.N) is opened (jail__open: kept
 * open from before a jail). */
#define BLK_OVERLAY_LAYER_FLAGS (O_RDONLY | O_NOFOLLOW | O_CLOEXEC)

struct blk_overlay {
	int base;        /* the image, read-only */
	int file;        /* the overlay, read-write */
	uint64_t bytes;  /* the disk's size, the base's */
	uint64_t *map;   /* a bit per block: in the overlay */
	uint64_t blocks; /* blocks now in the overlay */
	/* Read-only layers between the base and the overlay, lowest
	 * first: a block the overlay lacks is read from the highest layer
	 * that has it, else from the base. */
	struct blk_layer *lower;
	unsigned int nr_lower;
};

/* Opens the overlay `path` over `base_fd` (borrowed, `bytes` long): a
 * new file is made sparse at the base's size (mode 0600, never through a
 * symbolic link); an existing one must have that size. NULL: an unnamed
 * file (O_TMPFILE) in $TMPDIR or /tmp, gone when closed. -errno with a
 * message naming the overlay. */
int blk_overlay__open(struct blk_overlay *o, int base_fd, uint64_t bytes,
		      const char *path);
void blk_overlay__close(struct blk_overlay *o);

/* Whether unnamed overlays can be made as O_TMPFILE files in $TMPDIR (or
 * /tmp), without a name: what threads whose system call filter allows
 * no O_CREAT (the pool's refill workers) need. 0, or -errno with a
 * message naming the directory and what to do. */
int blk_overlay__check_unnamed(void);

/* Puts the overlay file `path` (as blk_overlay__open reopens one: the
 * disk's size, its data extents its blocks) read-only above the layers
 * added before and below the overlay, which must hold no block yet: a
 * snapshot's disk restored under a new, empty overlay. 0, or -errno with
 * a message naming `path`. */
int blk_overlay__add_lower(struct blk_overlay *o, const char *path);

/* Writes the blocks the overlay holds (with `all`: also those of every
 * lower layer) into `fd`, a new empty file, at their offsets, the file
 * sized as the disk and sparse elsewhere: the disk's state a snapshot
 * keeps (its blocks exactly, whatever extents the filesystem reports).
 * *bytes gets the bytes written. 0, or -errno with a message. */
int blk_overlay__save(const struct blk_overlay *o, int fd, bool all,
		      uint64_t *bytes);

/* The file that holds the disk's bytes at `off` as a read sees them (the
 * overlay, a lower layer or the base), and in *n how many of the next
 * `len` (> 0, within the disk) it holds in a row: one read's worth. */
int blk_overlay__source(const struct blk_overlay *o, uint64_t off,
			uint64_t len, uint64_t *n);

/* Reads or writes [off, off + len) of the disk (within it). 0, or -EIO
 * (a short or failed read or write of either file). */
int blk_overlay__read(const struct blk_overlay *o, void *buf, uint64_t len,
		      uint64_t off);
int blk_overlay__write(struct blk_overlay *o, const void *buf, uint64_t len,
		       uint64_t off);

#endif
