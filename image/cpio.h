/* A writer of gzip-compressed newc cpio archives: the initramfs format the
 * Linux kernel unpacks. Entries are written in the order added; owners are
 * root and mtimes 0, so the same inputs give the same bytes. */
#ifndef COLDSTART_CPIO_H
#define COLDSTART_CPIO_H

#include <stddef.h>
#include <stdint.h>

struct cpio;

/* Starts an archive on `fd` (not closed by the writer; the caller syncs
 * and closes it after cpio__finish). */
int cpio__open(struct cpio **out, int fd);

/* Names are relative to the archive root, without a leading "/". */
int cpio__dir(struct cpio *c, const char *name, uint32_t perm);
int cpio__file(struct cpio *c, const char *name, uint32_t perm,
	       const void *data, size_t size);
int cpio__symlink(struct cpio *c, const char *name, const char *target);
int cpio__chardev(struct cpio *c, const char *name, uint32_t perm,
		  uint32_t major, uint32_t minor);

/* Writes the trailer and flushes the compressor; frees `c` in every case.
 * Returns 0 only if every entry was written. */
int cpio__finish(struct cpio *c);

/* Frees `c` without completing the archive (an error path). */
void cpio__abort(struct cpio *c);

#endif
