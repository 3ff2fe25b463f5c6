/* Thread-local error message buffer. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char err_buf[512];

static int vset(int errnum, int sys, const char *fmt, va_list ap)
{
	int n = vsnprintf(err_buf, sizeof(err_buf), fmt, ap);

	if (sys && n >= 0 && (size_t)n < sizeof(err_buf))
		snprintf(err_buf + n, sizeof(err_buf) - (size_t)n, ": %s",
			 strerror(errnum));
	return errnum > 0 ? -errnum : -EINVAL;
}

int err__set(int errnum, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vset(errnum, 0, fmt, ap);
	va_end(ap);
	return ret;
}

int err__sys(int errnum, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vset(errnum, 1, fmt, ap);
	va_end(ap);
	return ret;
}

const char *err__last(void)
{
	return err_buf;
}
