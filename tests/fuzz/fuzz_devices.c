/* Fuzz target: the devices of a Linux guest's machine (COM1 serial,
 * i8042, CMOS RTC and legacy sinks, ACPI PM, boot timer) driven through
 * the VM's trap registry by a sequence of port and MMIO accesses decoded
 * from the input, with snapshots in between: every device's state saved,
 * restored into a second machine and saved again must come out the same,
 * and states taken from the input are restored (as a snapshot's would
 * be) before the accesses go on.
 *
 * Input: a first byte choosing the boot timer's action, then records of
 * an op byte (bits 0-2: PIO read, PIO write, MMIO read, MMIO write, round
 * trip, restore from input, PIO write, PIO read; bits 3-4: size 1, 2, 4
 * or 8 bytes, PIO 8 read as 4; bit 5: a raw address follows instead of
 * a one-byte index into the devices' registers), the address, and for
 * writes the value. */
#include "fuzz.h"

#include "device.h"
#include "iotrap.h"

#include <stdlib.h>
#include <string.h>

/* Every port the machine claims, and a few nobody does. */
static const uint16_t ports[] = {
	0x3f8, 0x3f9, 0x3fa, 0x3fb, 0x3fc, 0x3fd, 0x3fe, 0x3ff, /* COM1 */
	0x60, 0x64,                                             /* i8042 */
	0x70, 0x71,                                             /* CMOS */
	0x600, 0x601, 0x602, 0x603, 0x604, 0x605,               /* ACPI PM */
	0x3f0,                                                  /* timer */
	0x80, 0x92, 0xed, 0x2e8, 0x2f8, 0x3b0, 0x3e8, 0x3f1, 0xcf8, /* sinks */
	0x61, 0x606, 0x400, 0xcfc,
};
#define NR_PORTS (sizeof(ports) / sizeof(ports[0]))
#define MAX_STATE 256

static void access_one(struct fuzz_machine *fm, uint8_t op,
		       struct fuzz_input *in)
{
	bool mmio = (op & 7) == 2 || (op & 7) == 3;
	bool write = (op & 7) == 1 || (op & 7) == 3 || (op & 7) == 6;
	uint32_t len = 1u << ((op >> 3) & 3);
	uint8_t data[8];
	struct io_access a = { .space = mmio ? IO_SPACE_MMIO : IO_SPACE_PIO,
			       .is_write = write, .data = data };

	if (!mmio && len == 8)
		len = 4;
	a.len = len;
	if (op & 0x20)
		a.addr = mmio ? fuzz__take(in, 8) : (uint16_t)fuzz__take(in, 2);
	else if (mmio)
		a.addr = BOOTTIMER_MMIO_GPA + fuzz__take(in, 1) * 8;
	else
		a.addr = ports[fuzz__take(in, 1) % NR_PORTS];
	memset(data, 0, sizeof(data));
	if (write) {
		uint64_t v = fuzz__take(in, len);

		memcpy(data, &v, len);
	}
	iotrap__dispatch(&fm->vm.io, NULL, &a);
}

/* Save, restore into `other`, save again: the states must match. */
static void round_trip(struct fuzz_machine *fm, struct fuzz_machine *other)
{
	uint8_t a[MAX_STATE], b[MAX_STATE];

	for (unsigned int i = 0; i < fm->vm.nr_devices; i++) {
		const struct device *d = &fm->vm.devices[i];
		const struct device *o = &other->vm.devices[i];
		size_t len = d->ops->state_size(d->dev);

		if (len > MAX_STATE || d->ops->save(d->dev, a, len) < 0 ||
		    o->ops->restore(o->dev, a, len) < 0 ||
		    o->ops->save(o->dev, b, len) < 0 || memcmp(a, b, len))
			abort();
	}
}

static void restore_from(struct fuzz_machine *fm, struct fuzz_input *in)
{
	const struct device *d =
		&fm->vm.devices[fuzz__take(in, 1) % fm->vm.nr_devices];
	size_t len = d->ops->state_size(d->dev);
	uint8_t state[MAX_STATE] = { 0 };
	size_t n = len < in->left ? len : in->left;

	if (len > MAX_STATE)
		abort();
	memcpy(state, in->p, n);
	in->p += n;
	in->left -= n;
	d->ops->restore(d->dev, state, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	struct fuzz_machine fm, other;

	fuzz__machine_init(&fm);
	fuzz__machine_init(&other);
	fm.m.timer.at_boot = (enum boottimer_action)(fuzz__take(&in, 1) % 3);
	while (in.left) {
		uint8_t op = (uint8_t)fuzz__take(&in, 1);

		if ((op & 7) == 4)
			round_trip(&fm, &other);
		else if ((op & 7) == 5)
			restore_from(&fm, &in);
		else
			access_one(&fm, op, &in);
	}
	round_trip(&fm, &other);
	fuzz__machine_destroy(&other);
	fuzz__machine_destroy(&fm);
	return 0;
}
