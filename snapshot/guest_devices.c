/* A Linux guest's virtio devices in its snapshot (guest_devices.h). */
#include "guest_devices.h"

#include "blk_overlay.h"
#include "err.h"
#include "guest/agent_abi.h"
#include "jail.h"
#include "virtio_blk.h"
#include "virtio_vsock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int save_disk(void *ctx, unsigned int i, int fd, bool all,
		     uint64_t *bytes)
{
	struct linux_machine *m = ctx;

	return vblk__save_disk(&m->blk[i], fd, all, bytes);
}

int guestdev__describe(struct guestdev_save *g, struct linux_machine *m,
		       const char *const *paths, bool agent)
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
		r->flags = agent ? SNAP_VIRTIO_AGENT : 0;
	}
	g->virtio = (struct snap_guest_virtio){ r, save_disk, m };
	return 0;
}

void guestdev__describe_restored(struct guestdev_save *g,
				 struct linux_machine *m,
				 const struct snap_virtio_rec *rec)
{
	memset(g, 0, sizeof(*g));
	g->rec = *rec;
	g->virtio = (struct snap_guest_virtio){ &g->rec, save_disk, m };
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

/* Drive i's layers, lowest first: disk.i of each link. */
static int layers(const struct snapshot *s, struct guestdev_restore *d,
		  unsigned int i, unsigned int at)
{
	unsigned int n = s->chain_len + 1;
	char name[32];

	snprintf(name, sizeof(name), SNAPSHOT_DISK_FILE_FMT, i);
	for (unsigned int l = 0; l < n; l++) {
		int ret = snapshot__join(d->layer[at + l],
					 l < s->chain_len ? s->chain[l] : s->dir,
					 name);

		if (ret < 0)
			return ret;
		d->lower[at + l] = d->layer[at + l];
	}
	d->drive[i].lower = &d->lower[at];
	d->drive[i].nr_lower = n;
	return 0;
}

int guestdev__restore(const struct snapshot *s, struct guestdev_restore *d,
		      const char *vsock_path, struct linux_restore *lr)
{
	unsigned int per = s->chain_len + 1, n = s->virtio.nr_drives;
	int ret = 0;

	memset(d, 0, sizeof(*d));
	if (n > LINUX_MAX_DRIVES)
		return guestdev__check(s);
	d->layer = calloc((size_t)per * (n ? n : 1), sizeof(*d->layer));
	d->lower = calloc((size_t)per * (n ? n : 1), sizeof(*d->lower));
	if (!d->layer || !d->lower)
		ret = err__set(ENOMEM, "the snapshot's disk layers");
	for (unsigned int i = 0; ret == 0 && i < n; i++) {
		const struct snap_drive_rec *r = &s->virtio.drive[i];

		d->drive[i] = (struct linux_drive){
			.path = r->path,
			.mode = r->mode == SNAP_DRIVE_RO ? VBLK_RO : VBLK_OVERLAY,
		};
		if (r->mode == SNAP_DRIVE_OVERLAY)
			ret = layers(s, d, i, i * per);
	}
	if (ret < 0) {
		guestdev__restore_free(d);
		return ret;
	}
	lr->drives = d->drive;
	lr->nr_drives = n;
	lr->vsock = s->virtio.vsock;
	lr->vsock_path = s->virtio.vsock ? vsock_path : NULL;
	lr->vsock_cid = s->virtio.vsock_cid;
	return 0;
}

int guestdev__keep_files(const struct snapshot *s)
{
	char name[32], path[PATH_MAX];
	int ret = 0;

	for (unsigned int i = 0; ret == 0 && i < s->virtio.nr_drives; i++) {
		const struct snap_drive_rec *r = &s->virtio.drive[i];

		ret = jail__keep_file(r->path, VBLK_IMAGE_RO_FLAGS);
		snprintf(name, sizeof(name), SNAPSHOT_DISK_FILE_FMT, i);
		for (unsigned int l = 0; ret == 0 && r->mode ==
		     SNAP_DRIVE_OVERLAY && l <= s->chain_len; l++) {
			ret = snapshot__join(path, l < s->chain_len
					     ? s->chain[l] : s->dir, name);
			if (ret == 0)
				ret = jail__keep_file(path,
						      BLK_OVERLAY_LAYER_FLAGS);
		}
	}
	return ret;
}

void guestdev__restore_free(struct guestdev_restore *d)
{
	free(d->layer);
	free(d->lower);
	d->layer = NULL;
	d->lower = NULL;
}

/* Drive i's layers in `dirs` seen through an empty overlay, saved whole. */
static int merge_drive(const struct snap_drive_rec *r, unsigned int i,
		       const char *const *dirs, unsigned int n, int out,
		       uint64_t *bytes)
{
	struct blk_overlay o;
	char name[32], path[PATH_MAX];
	int img = open(r->path, O_RDONLY | O_CLOEXEC), ret;

	if (img < 0)
		return err__sys(errno, "drive %u's image %s", i, r->path);
	ret = blk_overlay__open(&o, img, r->bytes, NULL);
	if (ret < 0) {
		close(img);
		return ret;
	}
	snprintf(name, sizeof(name), SNAPSHOT_DISK_FILE_FMT, i);
	for (unsigned int l = 0; ret == 0 && l < n; l++) {
		ret = snapshot__join(path, dirs[l], name);
		if (ret == 0)
			ret = blk_overlay__add_lower(&o, path);
	}
	if (ret == 0)
		ret = blk_overlay__save(&o, out, true, bytes);
	blk_overlay__close(&o);
	close(img);
	return ret;
}

int guestdev__merge_disks(struct snap_virtio_rec *rec,
			  const char *const *dirs, unsigned int n,
			  const char *tmp, uint64_t *bytes)
{
	*bytes = 0;
	for (uint32_t i = 0; i < rec->nr_drives; i++) {
		char name[32];
		uint64_t b = 0;
		int fd, ret;

		if (rec->drive[i].mode != SNAP_DRIVE_OVERLAY)
			continue;
		snprintf(name, sizeof(name), SNAPSHOT_DISK_FILE_FMT, i);
		fd = snapshot__new_file(tmp, name);
		if (fd < 0)
			return fd;
		ret = merge_drive(&rec->drive[i], i, dirs, n, fd, &b);
		if (ret == 0 && fsync(fd) < 0)
			ret = err__sys(errno, "fsync of the merged %s", name);
		close(fd);
		if (ret < 0)
			return ret;
		rec->drive[i].layer_bytes = b;
		*bytes += b;
	}
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

bool guestdev__has_agent(const struct snapshot *s)
{
	return s->cfg.guest == SNAP_GUEST_LINUX &&
	       snapguest__has_agent(&s->virtio);
}
