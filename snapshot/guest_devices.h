/* A Linux guest's virtio devices and its snapshot (section vm.virtio,
 * guest.h): the record of a machine being saved, with its disks' written
 * blocks, and the same devices made again for a restore, each drive's
 * saved blocks laid under a new overlay of its own. */
#ifndef COLDSTART_GUEST_DEVICES_H
#define COLDSTART_GUEST_DEVICES_H

#include "guest.h"
#include "linux_x86.h"
#include "snapshot.h"

#include <limits.h>
#include <stdint.h>

/* What snapshot__save_guest needs of machine `m`'s devices. */
struct guestdev_save {
	struct snap_virtio_rec rec;
	struct snap_guest_virtio virtio; /* points at rec and m */
};

/* Describes `m`'s drives (opened from paths[i]; each image read once for
 * its CRC-32) and vsock device into `g`. Drives that write into the
 * image, private memory or a reflinked copy cannot be kept: -EINVAL
 * naming the drive and the modes that can. -errno with a message. */
int guestdev__describe(struct guestdev_save *g, struct linux_machine *m,
		       const char *const *paths);

/* The devices of a restore of `s`, for linux_restore. */
struct guestdev_restore {
	struct linux_drive drive[LINUX_MAX_DRIVES];
	char layer[LINUX_MAX_DRIVES][PATH_MAX];
	const char *lower[LINUX_MAX_DRIVES];
};

/* Checks that every image `s`'s drives name is the one snapshotted
 * (snapguest__check_drive) and that a Linux machine takes them: once per
 * opened snapshot, before restores. -errno with a message. */
int guestdev__check(const struct snapshot *s);

/* Fills `d` and lr's drives and vsock device from `s`: each overlay
 * drive on its image with disk.N under a new unnamed overlay, the vsock
 * device (if `s` had one) on the Unix socket `vsock_path`, which must
 * then be given: -EINVAL otherwise. */
int guestdev__restore(const struct snapshot *s, struct guestdev_restore *d,
		      const char *vsock_path, struct linux_restore *lr);

/* The vsock port `s`'s guest agent listens on: the one it was booted
 * with (coldstart.agent=N on its command line), else AGENT_PORT. */
uint32_t guestdev__agent_port(const struct snapshot *s);

#endif
