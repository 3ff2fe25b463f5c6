/* The bare-ioctl floor: the same create -> run to a port write -> destroy
 * cycle as the probe guest's lifecycle, with nothing but raw KVM ioctls and
 * the least setup the host accepts. Benchmarks report coldstart against it. */
#ifndef COLDSTART_FLOOR_H
#define COLDSTART_FLOOR_H

#include "driver.h"

#include <stddef.h>

/* `coldstart bench floor` (floor_driver.c). */
extern const struct bench_driver floor_driver;

struct floor {
	int kvm_fd;
	size_t run_size;
};

/* Opens the KVM device (NULL: /dev/kvm); -errno with a message. */
int floor__open(struct floor *f, const char *path);
void floor__close(struct floor *f);

/* One full cycle with a 2 MiB guest and one vCPU. 0 or -errno. */
int floor__cycle(struct floor *f);

#endif
