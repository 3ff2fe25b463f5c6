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
#include <stdbool.h>
#include <stdint.h>

/* What snapshot__save_guest needs of machine `m`'s devices. */
struct guestdev_save {
	struct snap_virtio_rec rec;
	struct snap_guest_virtio virtio; /* points at rec and m */
};

/* Describes `m`'s drives (opened from paths[i]; each image read once for
 * its CRC-32) and vsock device into `g`, with `agent` when the guest's
 * agent listens on it (it was waited for). Drives that write into the
 * image, private memory or a reflinked copy cannot be kept: -EINVAL
 * naming the drive and the modes that can. -errno with a message. */
int guestdev__describe(struct guestdev_save *g, struct linux_machine *m,
		       const char *const *paths, bool agent);

/* The same for a machine restored from a snapshot whose record is
 * `rec` (the images checked then, not read again). */
void guestdev__describe_restored(struct guestdev_save *g,
				 struct linux_machine *m,
				 const struct snap_virtio_rec *rec);

/* The devices of a restore of `s`, for linux_restore: each overlay
 * drive's layers (disk.N of every link of the chain, the full snapshot's
 * first), on the heap. */
struct guestdev_restore {
	struct linux_drive drive[LINUX_MAX_DRIVES];
	char (*layer)[PATH_MAX];
	const char **lower;
};

/* Checks that every image `s`'s drives name is the one snapshotted
 * (snapguest__check_drive) and that a Linux machine takes them: once per
 * opened snapshot, before restores. -errno with a message. */
int guestdev__check(const struct snapshot *s);

/* Fills `d` and lr's drives and vsock device from `s`: each overlay
 * drive on its image with its disk.N layers under a new unnamed overlay,
 * the vsock device (if `s` had one) on the Unix socket `vsock_path`
 * (NULL: none; the VMM reaches it through vsock__connect_local). `d` borrows `s`; free it
 * with guestdev__restore_free (also after a failure) once the drives
 * are open. */
int guestdev__restore(const struct snapshot *s, struct guestdev_restore *d,
		      const char *vsock_path, struct linux_restore *lr);
void guestdev__restore_free(struct guestdev_restore *d);

/* Before a jail: keeps open (jail__keep_file) every file the restores
 * of `s` open by path, its drives' images and disk layers, so that
 * restores made inside the jail reach them. -errno with a message. */
int guestdev__keep_files(const struct snapshot *s);

/* A merge's disks: for each overlay drive of `rec`, the blocks of its
 * disk.N in each of `dirs` (lowest first, later ones winning) into
 * `tmp`/disk.N, fsynced; rec's layer_bytes get what each holds now.
 * 0, or -errno with a message. */
int guestdev__merge_disks(struct snap_virtio_rec *rec,
			  const char *const *dirs, unsigned int n,
			  const char *tmp, uint64_t *bytes);

/* Whether `s` holds a Linux guest that runs an agent, which commands
 * can be sent to (snapguest__has_agent): a vsock device alone is not
 * one. */
bool guestdev__has_agent(const struct snapshot *s);

/* The vsock port `s`'s guest agent listens on: the one it was booted
 * with (coldstart.agent=N on its command line), else AGENT_PORT. */
uint32_t guestdev__agent_port(const struct snapshot *s);

#endif
