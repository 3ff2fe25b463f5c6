/* What the test kernel's files share: port I/O, COM1 output (com1.c) and
 * the command line. */
#ifndef COLDSTART_TK_H
#define COLDSTART_TK_H

#include <stdint.h>

#define COM1 0x3f8

static inline void outb(uint16_t port, uint8_t v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint8_t inb(uint16_t port)
{
	uint8_t v;

	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

void putc_com1(char c);
void puts_com1(const char *s);
void put_hex(uint64_t v);
void put_dec(uint64_t v);
/* Whether `needle` occurs in `hay`. */
int has(const char *hay, const char *needle);

/* Drives each virtio-mmio device named on the command line: a disk
 * (virtio.c), a vsock device (vsock.c). */
void check_virtio(const char *cmdline);
void check_vsock(volatile uint8_t *regs, const char *cmdline);

#endif
