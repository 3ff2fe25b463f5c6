/* File I/O helpers shared by the snapshot writers. */
#ifndef COLDSTART_FILEIO_H
#define COLDSTART_FILEIO_H

#include <stddef.h>
#include <stdint.h>

/* Writes all `len` bytes at `off`, retrying short writes and EINTR;
 * 0 or -errno (no message: callers name the file). */
int fileio__pwrite_all(int fd, const void *p, size_t len, uint64_t off);

#endif
