/* A Linux guest's virtio devices in its snapshot (guest_devices.h). */
#include "guest_devices.h"

#include "err.h"
#include "guest/agent_abi.h"
#include "virtio_blk.h"
#include "virtio_vsock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int save_disk(void *ctx, unsigned int i, int fd, uint64_t *bytes)
{
	struct linux_machine *m = ctx;

	/* a full snapshot: every layer the drive reads, its own on top */
	return vblk__save_disk(&m->blk[i], fd, true, bytes);
}

int guestdev__describe(struct guestdev_save *g, struct linux_machine *m,
		       const char *const *paths)
{
	struct snap_virtio_rec *r = &g->rec;

	memset(g, 0, sizeof(*g));
	r->version = SNAP_VIRTIO_VERSION;
	r->nr_drives = m->nr_blk;
	for (unsigned int i = 0; i < m->nr_blk; i++) {
		enum vblk_mode mode = m->blk[i].mode;
		int ret;

		if (mode != VBLK_OVERLAY && mode != VBLK_RO)
			return err__set(EINVAL, "drive %u (%s): a snapshot "
					"keeps a disk's writes in an overlay "
					"(the default mode, or overlay=FILE) "
					"or takes a read-only disk; not mode "
					"%s", i, paths[i],
					mode == VBLK_RW ? "rw" :
					mode == VBLK_COW ? "cow" : "reflink");
		ret = snapguest__describe_drive(&r->drive[i], paths[i],
						mode == VBLK_RO
							? SNAP_DRIVE_RO
							: SNAP_DRIVE_OVERLAY);
		if (ret < 0)
			return ret;
	}
	if (m->vsock) {
		r->vsock = 1;
		r->vsock_cid = m->vsock->guest_cid;
	}
	g->virtio = (struct snap_guest_virtio){ r, save_disk, m };
	return 0;
}

int guestdev__check(const struct snapshot *s)
{
	if (s->virtio.nr_drives > LINUX_MAX_DRIVES)
		return err__set(EINVAL, "the snapshot has %u drives; a Linux "
				"machine takes at most %d",
				s->virtio.nr_drives, LINUX_MAX_DRIVES);
	for (unsigned int i = 0; i < s->virtio.nr_drives; i++) {
		int ret = snapguest__check_drive(&s->virtio.drive[i], i);

		if (ret < 0)
			return ret;
	}
	return 0;
}

int guestdev__restore(const struct snapshot *s, struct guestdev_restore *d,
		      const char *vsock_path, struct linux_restore *lr)
{
	memset(d, 0, sizeof(*d));
	if (s->virtio.nr_drives > LINUX_MAX_DRIVES)
		return guestdev__check(s);
	if (s->virtio.vsock && !vsock_path)
		return err__set(EINVAL, "the snapshot's guest has a vsock "
				"device: its restore needs a socket path for it");
	for (unsigned int i = 0; i < s->virtio.nr_drives; i++) {
		const struct snap_drive_rec *r = &s->virtio.drive[i];
		char name[32];
		int ret;

		d->drive[i] = (struct linux_drive){
			.path = r->path,
			.mode = r->mode == SNAP_DRIVE_RO ? VBLK_RO : VBLK_OVERLAY,
		};
		if (r->mode != SNAP_DRIVE_OVERLAY)
			continue;
		snprintf(name, sizeof(name), SNAPSHOT_DISK_FILE_FMT, i);
		ret = snapshot__join(d->layer[i], s->dir, name);
		if (ret < 0)
			return ret;
		d->lower[i] = d->layer[i];
		d->drive[i].lower = &d->lower[i];
		d->drive[i].nr_lower = 1;
	}
	lr->drives = d->drive;
	lr->nr_drives = s->virtio.nr_drives;
	lr->vsock_path = s->virtio.vsock ? vsock_path : NULL;
	lr->vsock_cid = s->virtio.vsock_cid;
	return 0;
}

uint32_t guestdev__agent_port(const struct snapshot *s)
{
	const char *p = strstr(s->guest.cmdline, "coldstart.agent=");
	unsigned long port;
	char *end;

	if (!p)
		return AGENT_PORT;
	port = strtoul(p + 16, &end, 10);
	return port && port < UINT32_MAX && (*end == ' ' || !*end)
		       ? (uint32_t)port
		       : AGENT_PORT;
}
