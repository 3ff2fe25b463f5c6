/* Error messages from library code: functions return -errno and leave a
 * human-readable reason in a thread-local buffer that the CLI prints. */
#ifndef COLDSTART_ERR_H
#define COLDSTART_ERR_H

#include <errno.h>

/* Formats the message and returns -errnum, so callers can write
 * `return err__set(EINVAL, ...)`. */
int err__set(int errnum, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The same for a failed system call: appends ": strerror(errnum)". */
int err__sys(int errnum, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The calling thread's last message ("" if none). */
const char *err__last(void);

#endif
