/* Opening files that come from users or from disk for reading: regular
 * files only, and never blocking (a FIFO or a device planted where a file
 * is expected must give an error, not a hang). */
#ifndef COLDSTART_REGFILE_H
#define COLDSTART_REGFILE_H

#include <stdint.h>
#include <stdio.h>

/* Opens `path` read-only (close-on-exec, blocking reads once open): the
 * fd, or -errno with a message naming `path` (-EINVAL: not a regular
 * file). `size` (may be NULL) gets the file's size. */
int regfile__open(const char *path, uint64_t *size);

/* The same as a stdio stream; NULL with errno set and the message left
 * for err__last(). */
FILE *regfile__fopen(const char *path);

#endif
