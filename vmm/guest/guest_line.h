/* What coldstart's hosted guest programs (coldstart-init, coldstart-agent)
 * share: the boot timer's port and values (Firecracker's), and console
 * lines written whole. Header-only: each program is built on its own. */
#ifndef COLDSTART_GUEST_LINE_H
#define COLDSTART_GUEST_LINE_H

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#define GUEST_TIMER_PORT 0x3f0
#define GUEST_TIMER_MMIO 0xC0000000ul
#define GUEST_TIMER_BOOT_COMPLETE 123
#define GUEST_TIMER_WORK_DONE 124

/* One write(2) per line, unbuffered, so markers never interleave: PREFIX,
 * the formatted text (cut at about 500 bytes) and a newline. */
static inline void guest__vline(int fd, const char *prefix, const char *fmt,
				va_list ap)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "%s", prefix);

	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(fd, line, (size_t)n) < 0)
		return; /* no console: nothing else to tell */
}

#endif
