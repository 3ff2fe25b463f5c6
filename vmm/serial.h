/* An 8250/16550A UART as Linux's 8250 driver sees it: divisor latch,
 * interrupt enable and identification, line and modem control and status
 * (with loopback), scratch register, and the transmitter-empty interrupt
 * on an ISA IRQ. Output goes to a FILE as the guest writes it; there is
 * no input (the receiver never has data). */
#ifndef COLDSTART_SERIAL_H
#define COLDSTART_SERIAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct vm;

#define SERIAL_COM1_PORT 0x3f8
#define SERIAL_COM1_IRQ 4

/* Everything a snapshot needs; version first. */
struct serial_regs {
	uint32_t version;
	uint8_t ier, lcr, mcr, scr, fcr, dll, dlm;
	uint8_t thr_pending; /* a THRE interrupt is pending */
	uint8_t irq_level;   /* what the IRQ line was last set to */
	uint8_t pad[7];
};

#define SERIAL_STATE_VERSION 1

#define SERIAL_LINE_MAX 256

/* Called with each complete output line (without the newline, cut at
 * SERIAL_LINE_MAX - 1 characters) from the vCPU thread that wrote it. */
typedef void (*serial_line_fn)(void *ctx, const char *line);

struct serial {
	struct vm *vm;
	uint16_t port;
	uint32_t irq;
	FILE *out;          /* borrowed; NULL discards output */
	uint64_t bytes_out; /* characters the guest transmitted */
	serial_line_fn on_line; /* optional, set before vCPUs start */
	void *line_ctx;
	char line[SERIAL_LINE_MAX]; /* the output line being assembled */
	unsigned int line_len;
	pthread_mutex_t lock;
	struct serial_regs regs;
};

/* Resets the UART as COM1 (ports 0x3f8-0x3ff, IRQ 4), claims its ports in
 * the VM's trap table and registers it as device "serial.com1". `out`
 * may be NULL. The VM needs the in-kernel irqchip. */
int serial__init_com1(struct serial *s, struct vm *vm, FILE *out);

/* Frees what serial__init allocated (not the traps: they die with the
 * VM). */
void serial__destroy(struct serial *s);

#endif
