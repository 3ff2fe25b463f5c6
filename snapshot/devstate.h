/* Device sections of a snapshot: every device registered with the VM
 * (vmm/device.h) saved as its own section "dev.<name>", and restored into
 * a VM that must have registered exactly the same set of devices. */
#ifndef COLDSTART_DEVSTATE_H
#define COLDSTART_DEVSTATE_H

#include "format.h"

struct vm;

/* Adds one section per registered device, in registration order. The VM
 * must be paused. 0 or -errno with a message naming the device. */
int devstate__save(const struct vm *vm, struct snap_writer *w);

/* Checks the device sections alone: well-formed names, no name twice.
 * -EINVAL naming the problem. */
int devstate__check(const struct snap_reader *r);

/* Restores every device section into the device of the same name. The
 * snapshot and the VM must hold the same set of devices, each state of
 * the size the device expects: -EINVAL naming a missing or unknown device
 * or a size mismatch. Call before the vCPUs start. */
int devstate__restore(struct vm *vm, const struct snap_reader *r);

#endif
