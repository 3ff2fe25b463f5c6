/* i8042 keyboard controller: command byte, self-tests, CPU reset. */
#include "i8042.h"

#include "device.h"
#include "err.h"
#include "vm.h"

#include <string.h>

#define STATUS_OBF 0x01
#define STATUS_SYS 0x04 /* system flag: self-test passed */
#define STATUS_CMD 0x08 /* last write was a command */
#define STATUS_UNLOCKED 0x10 /* keyboard not inhibited by a keylock */

enum {
	CMD_READ_CTR = 0x20,
	CMD_WRITE_CTR = 0x60,
	CMD_AUX_DISABLE = 0xa7,
	CMD_AUX_ENABLE = 0xa8,
	CMD_AUX_TEST = 0xa9,
	CMD_SELF_TEST = 0xaa,
	CMD_KBD_TEST = 0xab,
	CMD_KBD_DISABLE = 0xad,
	CMD_KBD_ENABLE = 0xae,
	CMD_READ_OUTPORT = 0xd0,
	CMD_WRITE_OUTPORT = 0xd1,
	CMD_WRITE_KBD_OUT = 0xd2,
	CMD_WRITE_AUX_OUT = 0xd3,
	CMD_WRITE_AUX = 0xd4,
	CMD_PULSE_FIRST = 0xf0, /* 0xf0-0xff pulse output port bits 0-3 */
};

#define CTR_KBD_DISABLED 0x10
#define CTR_AUX_DISABLED 0x20
#define SELF_TEST_OK 0x55
#define PORT_TEST_OK 0x00
#define OUTPORT_RESET_HIGH 0x01 /* bit 0 low resets the CPU */
#define OUTPORT_A20 0x02

static void reply(struct i8042_regs *r, uint8_t v)
{
	r->out = v;
	r->out_full = 1;
}

/* Ends the VM: a reset is how `reboot=k` (and panic=-1) leave. */
static int reset(struct i8042 *k)
{
	timeline__mark(k->vm->tl, TL_GUEST_EXIT);
	vm__end(k->vm, VM_COMPLETED, "guest reset through the i8042");
	return IOTRAP_STOP;
}

/* A byte written to the command port (0x64): a controller command. */
static int controller_command(struct i8042 *k, uint8_t cmd)
{
	struct i8042_regs *r = &k->regs;

	switch (cmd) {
	case CMD_READ_CTR:
		reply(r, r->ctr);
		break;
	case CMD_WRITE_CTR:
	case CMD_WRITE_OUTPORT:
	case CMD_WRITE_KBD_OUT:
	case CMD_WRITE_AUX_OUT:
	case CMD_WRITE_AUX:
		r->pending = cmd;
		break;
	case CMD_AUX_DISABLE:
		r->ctr |= CTR_AUX_DISABLED;
		break;
	case CMD_AUX_ENABLE:
		r->ctr &= (uint8_t)~CTR_AUX_DISABLED;
		break;
	case CMD_SELF_TEST:
		reply(r, SELF_TEST_OK);
		break;
	case CMD_AUX_TEST:
	case CMD_KBD_TEST:
		reply(r, PORT_TEST_OK);
		break;
	case CMD_KBD_DISABLE:
		r->ctr |= CTR_KBD_DISABLED;
		break;
	case CMD_KBD_ENABLE:
		r->ctr &= (uint8_t)~CTR_KBD_DISABLED;
		break;
	case CMD_READ_OUTPORT:
		reply(r, OUTPORT_RESET_HIGH | OUTPORT_A20);
		break;
	default:
		if (cmd >= CMD_PULSE_FIRST && !(cmd & OUTPORT_RESET_HIGH))
			return reset(k);
		break; /* unknown commands are ignored, as hardware does */
	}
	return IOTRAP_CONTINUE;
}

/* A data byte completes a pending command; without one it would go to
 * the keyboard, and there is none. */
static int data(struct i8042 *k, uint8_t v)
{
	struct i8042_regs *r = &k->regs;
	uint8_t cmd = r->pending;

	r->pending = 0;
	switch (cmd) {
	case CMD_WRITE_CTR:
		r->ctr = v;
		break;
	case CMD_WRITE_OUTPORT:
		if (!(v & OUTPORT_RESET_HIGH))
			return reset(k);
		break;
	case CMD_WRITE_KBD_OUT:
	case CMD_WRITE_AUX_OUT:
		reply(r, v);
		break;
	default:
		break;
	}
	return IOTRAP_CONTINUE;
}

static uint8_t read_port(struct i8042_regs *r, uint64_t port)
{
	if (port == I8042_CMD_PORT)
		return (uint8_t)((r->out_full ? STATUS_OBF : 0) | STATUS_SYS |
				 STATUS_UNLOCKED |
				 (r->last_cmd ? STATUS_CMD : 0));
	r->out_full = 0;
	return r->out;
}

static int i8042_trap(struct vcpu *vcpu, const struct io_access *a,
		      void *opaque)
{
	struct i8042 *k = opaque;
	int ret = IOTRAP_CONTINUE;

	(void)vcpu;
	pthread_mutex_lock(&k->lock);
	if (!a->is_write) {
		memset(a->data, 0, a->len);
		a->data[0] = read_port(&k->regs, a->addr);
	} else {
		k->regs.last_cmd = a->addr == I8042_CMD_PORT;
		ret = a->addr == I8042_CMD_PORT
			      ? controller_command(k, a->data[0])
			      : data(k, a->data[0]);
	}
	pthread_mutex_unlock(&k->lock);
	return ret;
}

static size_t i8042_state_size(const void *dev)
{
	(void)dev;
	return sizeof(struct i8042_regs);
}

static int i8042_save(const void *dev, void *buf, size_t len)
{
	struct i8042 *k = (struct i8042 *)dev;
	int ret = device__check_save("i8042", sizeof(k->regs), len);

	if (ret < 0)
		return ret;
	pthread_mutex_lock(&k->lock);
	memcpy(buf, &k->regs, sizeof(k->regs));
	pthread_mutex_unlock(&k->lock);
	return 0;
}

_Static_assert(offsetof(struct i8042_regs, version) == 0,
	       "device__check_restore reads the version first");

static int i8042_restore(void *dev, const void *buf, size_t len)
{
	struct i8042 *k = dev;
	int ret = device__check_restore("i8042", sizeof(k->regs),
					I8042_STATE_VERSION, buf, len);

	if (ret < 0)
		return ret;
	pthread_mutex_lock(&k->lock);
	memcpy(&k->regs, buf, sizeof(k->regs));
	pthread_mutex_unlock(&k->lock);
	return 0;
}

static const struct device_ops i8042_ops = {
	.name = "i8042",
	.state_size = i8042_state_size,
	.save = i8042_save,
	.restore = i8042_restore,
};

int i8042__init(struct i8042 *k, struct vm *vm)
{
	int ret;

	memset(k, 0, sizeof(*k));
	k->vm = vm;
	k->regs.version = I8042_STATE_VERSION;
	pthread_mutex_init(&k->lock, NULL);
	ret = iotrap__register(&vm->io, IO_SPACE_PIO, I8042_DATA_PORT, 1,
			       i8042_trap, k, "i8042.data");
	if (ret == 0)
		ret = iotrap__register(&vm->io, IO_SPACE_PIO, I8042_CMD_PORT, 1,
				       i8042_trap, k, "i8042.cmd");
	if (ret == 0)
		ret = vm__add_device(vm, &i8042_ops, k);
	if (ret < 0)
		pthread_mutex_destroy(&k->lock);
	return ret;
}

void i8042__destroy(struct i8042 *k)
{
	pthread_mutex_destroy(&k->lock);
}
