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

/* The decimal number after `key` on the command line, or `dflt`. */
uint64_t arg_num(const char *cmdline, const char *key, uint64_t dflt);

/* One request of type `type` on `sector` with `len` bytes of data at
 * `buf` (0: none) to the disk check_virtio set up, the data writable by
 * the device unless `out`. Returns the status byte, or 0xff when the
 * device never answered (virtio.c). */
uint8_t blk_request(uint32_t type, uint64_t sector, void *buf, uint32_t len,
		    int out);

/* Writes `mib` MiB from 1 MiB into the disk of `sectors` sectors in
 * 64 KiB requests, flushes, reads them back, then makes 1000 requests
 * without disk data, and prints the TSC cycles of each phase (the last
 * per request; blkbench.c). */
void blk_bench(uint64_t mib, uint64_t sectors);

#endif
