/* The PC keyboard controller, as much as Linux needs: its command byte,
 * self-tests and the output buffer that answers them, so the driver's
 * probe finishes without timeouts, and the reset line that `reboot=k`
 * pulses, which ends the VM as completed ("guest exit"). No keyboard or
 * mouse sits behind it and it raises no IRQ: Linux polls for command
 * replies. */
#ifndef COLDSTART_I8042_H
#define COLDSTART_I8042_H

#include <pthread.h>
#include <stdint.h>

struct vm;

#define I8042_DATA_PORT 0x60
#define I8042_CMD_PORT 0x64

struct i8042_regs {
	uint32_t version;
	uint8_t ctr;        /* controller command byte */
	uint8_t out;        /* output buffer */
	uint8_t out_full;   /* OBF: `out` holds a byte to read */
	uint8_t pending;    /* command waiting for its data byte, or 0 */
	uint8_t last_cmd;   /* the last write went to the command port */
	uint8_t pad[3];
};

#define I8042_STATE_VERSION 1

struct i8042 {
	struct vm *vm;
	pthread_mutex_t lock;
	struct i8042_regs regs;
};

/* Claims ports 0x60 and 0x64 and registers device "i8042". */
int i8042__init(struct i8042 *k, struct vm *vm);
void i8042__destroy(struct i8042 *k);

#endif
