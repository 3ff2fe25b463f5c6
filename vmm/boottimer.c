/* Boot-complete and guest-done signals on port 0x3f0 and MMIO 3 GiB. */
#include "boottimer.h"

#include "device.h"
#include "err.h"
#include "vm.h"

#include <pthread.h>
#include <string.h>

const char *boottimer__variant_name(uint32_t variant)
{
	switch (variant) {
	case BOOTTIMER_VIA_PORT:
		return "port";
	case BOOTTIMER_VIA_MMIO:
		return "mmio";
	default:
		return NULL;
	}
}

static int boot_complete(struct boottimer *t, uint32_t variant)
{
	struct vm *vm = t->vm;
	bool first;

	pthread_mutex_lock(&vm->lock);
	first = t->regs.first == 0;
	t->regs.seen |= variant;
	if (first) {
		t->regs.first = variant;
		timeline__mark(vm->tl, TL_BOOT_COMPLETE);
		/* Under the lock, before any other vCPU can move on. */
		if (t->at_boot == BOOTTIMER_PAUSE)
			vm__request_pause_locked(vm);
	}
	pthread_mutex_unlock(&vm->lock);
	if (first && t->at_boot == BOOTTIMER_STOP) {
		vm__end(vm, VM_COMPLETED, "stopped at boot complete");
		return IOTRAP_STOP;
	}
	return IOTRAP_CONTINUE;
}

static int guest_done(struct boottimer *t)
{
	pthread_mutex_lock(&t->vm->lock);
	t->regs.done++;
	timeline__mark(t->vm->tl, TL_GUEST_DONE);
	/* Before the writing vCPU reaches its next instruction, which may
	 * well be the guest's exit. */
	if (t->at_done == BOOTTIMER_PAUSE)
		vm__request_pause_locked(t->vm);
	pthread_mutex_unlock(&t->vm->lock);
	if (t->at_done == BOOTTIMER_STOP) {
		vm__end(t->vm, VM_COMPLETED, "stopped at the guest's done "
			"signal");
		return IOTRAP_STOP;
	}
	return IOTRAP_CONTINUE;
}

/* Writes of other values and reads are harmless: reads return zero. */
static int boottimer_trap(struct vcpu *vcpu, const struct io_access *a,
			  void *opaque)
{
	struct boottimer *t = opaque;
	bool port = a->space == IO_SPACE_PIO;

	(void)vcpu;
	if (!a->is_write) {
		memset(a->data, 0, a->len);
		return IOTRAP_CONTINUE;
	}
	if (a->len != 1)
		return IOTRAP_CONTINUE;
	if (a->data[0] == BOOTTIMER_BOOT_COMPLETE)
		return boot_complete(t, port ? BOOTTIMER_VIA_PORT
					     : BOOTTIMER_VIA_MMIO);
	if (a->data[0] == BOOTTIMER_GUEST_DONE)
		return guest_done(t);
	return IOTRAP_CONTINUE;
}

static size_t boottimer_state_size(const void *dev)
{
	(void)dev;
	return sizeof(struct boottimer_regs);
}

static int boottimer_save(const void *dev, void *buf, size_t len)
{
	const struct boottimer *t = dev;
	int ret = device__check_save("boottimer", sizeof(t->regs), len);

	if (ret == 0) /* vCPUs are paused */
		memcpy(buf, &t->regs, sizeof(t->regs));
	return ret;
}

_Static_assert(offsetof(struct boottimer_regs, version) == 0,
	       "device__check_restore reads the version first");

static int boottimer_restore(void *dev, const void *buf, size_t len)
{
	struct boottimer *t = dev;
	int ret = device__check_restore("boottimer", sizeof(t->regs),
					BOOTTIMER_STATE_VERSION, buf, len);

	if (ret == 0) /* before vCPUs start */
		memcpy(&t->regs, buf, sizeof(t->regs));
	return ret;
}

static const struct device_ops boottimer_ops = {
	.name = "boottimer",
	.state_size = boottimer_state_size,
	.save = boottimer_save,
	.restore = boottimer_restore,
};

int boottimer__init(struct boottimer *t, struct vm *vm,
		    enum boottimer_action at_boot)
{
	int ret;

	memset(t, 0, sizeof(*t));
	t->vm = vm;
	t->at_boot = at_boot;
	t->regs.version = BOOTTIMER_STATE_VERSION;
	ret = iotrap__register(&vm->io, IO_SPACE_PIO, BOOTTIMER_PORT, 1,
			       boottimer_trap, t, "boottimer.port");
	if (ret == 0)
		ret = iotrap__register(&vm->io, IO_SPACE_MMIO,
				       BOOTTIMER_MMIO_GPA, BOOTTIMER_MMIO_SIZE,
				       boottimer_trap, t, "boottimer.mmio");
	if (ret == 0)
		ret = vm__add_device(vm, &boottimer_ops, t);
	return ret;
}
