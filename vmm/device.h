/* Emulated devices as the VM sees them for snapshots: each registers its
 * state under a unique name so snapshot save and restore can handle every
 * device without knowing it. Device state lives in the device's own
 * struct, never in file-scope statics. */
#ifndef COLDSTART_DEVICE_H
#define COLDSTART_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct device_ops {
	const char *name; /* unique per VM, e.g. "serial.com1" */
	/* Bytes save() writes: fixed for a device (a versioned struct). */
	size_t (*state_size)(const void *dev);
	/* Copies the state into buf (state_size bytes). Called with every
	 * vCPU paused. 0 or -errno with a message. */
	int (*save)(const void *dev, void *buf, size_t len);
	/* Loads a state save() wrote; -EINVAL with a message when len or a
	 * version field does not fit. Called before vCPUs start. */
	int (*restore)(void *dev, const void *buf, size_t len);
	/* NULL, or waits until the device's own threads can serve: 0 or
	 * -errno with a message. vm__start calls it before any vCPU runs. */
	int (*ready)(void *dev);
	/* NULL, or with `hold` waits until the device's own threads serve
	 * nothing, and keeps them so until called again without: a
	 * snapshot saves memory and state in between, so no request is
	 * half done in them. */
	void (*hold)(void *dev, bool hold);
};

struct device {
	const struct device_ops *ops;
	void *dev;
};

#define VM_MAX_DEVICES 16

/* The checks of save() and restore() for a device whose state is one
 * struct of `size` bytes that starts with its uint32_t version. */

/* 0, or -EINVAL with a message when `len` is not `size`. */
int device__check_save(const char *name, size_t size, size_t len);

/* 0 when buf holds `len` == `size` bytes of state at `version`, else
 * -EINVAL with a message; the caller then copies buf. */
int device__check_restore(const char *name, size_t size, uint32_t version,
			  const void *buf, size_t len);

#endif
