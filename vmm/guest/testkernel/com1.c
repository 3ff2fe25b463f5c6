/* COM1 output and the command line's words, for every check of the
 * test kernel. */
#include "tk.h"

void putc_com1(char c)
{
	while (!(inb(COM1 + 5) & 0x20)) /* LSR: THR empty */
		;
	outb(COM1, (uint8_t)c);
}

void puts_com1(const char *s)
{
	while (*s)
		putc_com1(*s++);
}

void put_hex(uint64_t v)
{
	puts_com1("0x");
	for (int shift = 60; shift >= 0; shift -= 4)
		putc_com1("0123456789abcdef"[(v >> shift) & 0xf]);
}

void put_dec(uint64_t v)
{
	char buf[21];
	int i = 20;

	buf[i] = 0;
	do
		buf[--i] = (char)('0' + v % 10);
	while ((v /= 10) && i);
	puts_com1(buf + i);
}

int has(const char *hay, const char *needle)
{
	for (; *hay; hay++) {
		const char *h = hay, *n = needle;

		while (*n && *h == *n)
			h++, n++;
		if (!*n)
			return 1;
	}
	return 0;
}
