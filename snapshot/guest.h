/* Section vm.guest: what an OS guest was booted from (kernel, initrd,
 * command line), recorded at snapshot time for reports and inspect. The
 * probe guest has its own section (device.probe) instead. */
#ifndef COLDSTART_SNAPSHOT_GUEST_H
#define COLDSTART_SNAPSHOT_GUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SNAP_GUEST_PATH_MAX 1024
#define SNAP_GUEST_CMDLINE_MAX 2048

/* Fixed-size record, NUL-terminated strings, zero-padded. */
struct snap_guest_rec {
	uint32_t kind;         /* enum snap_guest (snapshot.h) */
	uint32_t kernel_crc32; /* zlib CRC-32 of the whole file */
	uint32_t initrd_crc32; /* 0 without an initrd */
	uint32_t reserved;
	uint64_t kernel_bytes;
	uint64_t initrd_bytes;
	char kernel[SNAP_GUEST_PATH_MAX]; /* absolute path */
	char initrd[SNAP_GUEST_PATH_MAX]; /* "" = none */
	char cmdline[SNAP_GUEST_CMDLINE_MAX];
};
_Static_assert(sizeof(struct snap_guest_rec) == 32 + 2 * SNAP_GUEST_PATH_MAX +
						       SNAP_GUEST_CMDLINE_MAX,
	       "guest record layout");

/* Fills `g` for a guest of `kind` booted from `kernel` (and `initrd`,
 * NULL: none) with `cmdline`: absolute paths, sizes and CRC-32s of the
 * files. -errno naming the file or the field that does not fit. */
int snapguest__describe(struct snap_guest_rec *g, uint32_t kind,
			const char *kernel, const char *initrd,
			const char *cmdline);

/* Copies and checks a vm.guest payload: exact size, terminated strings,
 * a known kind. -EINVAL naming the problem. */
int snapguest__parse(const void *payload, size_t len,
		     struct snap_guest_rec *out);

/* Section vm.virtio: the OS guest's virtio devices, which a restore
 * makes again before it loads their state. A disk is the image it was
 * opened from (identified by size, mtime and CRC-32) plus, for an
 * overlay drive, the blocks the guest had written: the snapshot's file
 * "disk.N" (SNAPSHOT_DISK_FILE_FMT), sparse, laid under the restored
 * VM's own new overlay, so the image and the snapshot are never
 * written. */
#define SNAP_MAX_DRIVES 8
/* Version 1 had no flags: a guest saved with a vsock device was taken to
 * run an agent, which a guest given --vsock alone need not. */
#define SNAP_VIRTIO_VERSION 2u
#define SNAP_VIRTIO_VERSION_NOFLAGS 1u

/* snap_virtio_rec.flags */
#define SNAP_VIRTIO_AGENT 1u /* its agent listened when it was saved */

enum snap_drive_mode {
	SNAP_DRIVE_RO = 1,      /* read-only: nothing written */
	SNAP_DRIVE_OVERLAY = 2, /* writes kept in disk.N */
};

struct snap_drive_rec {
	char path[SNAP_GUEST_PATH_MAX]; /* absolute */
	uint64_t bytes;       /* the image's size */
	uint64_t mtime_ns;    /* its modification time then */
	uint64_t layer_bytes; /* data in disk.N */
	uint32_t crc32;       /* zlib CRC-32 of the image */
	uint32_t mode;        /* enum snap_drive_mode */
};

struct snap_virtio_rec {
	uint32_t version;
	uint32_t nr_drives;
	uint32_t vsock; /* 1: a vsock device */
	uint32_t flags; /* SNAP_VIRTIO_*; version 1: unused */
	uint64_t vsock_cid;
	struct snap_drive_rec drive[SNAP_MAX_DRIVES];
};
_Static_assert(sizeof(struct snap_drive_rec) == SNAP_GUEST_PATH_MAX + 32,
	       "drive record layout");

/* Fills drive record `d` for the image at `path` in `mode`: absolute
 * path, size, mtime and CRC-32 (the whole file read once). -errno
 * naming the file. */
int snapguest__describe_drive(struct snap_drive_rec *d, const char *path,
			      enum snap_drive_mode mode);

/* Checks that the image a drive record names is the one snapshotted:
 * the same size, and the same mtime or else the same CRC-32 (a copy on
 * another host). -errno with a message naming drive `index` and what
 * differs. */
int snapguest__check_drive(const struct snap_drive_rec *d,
			   unsigned int index);

/* Copies and checks a vm.virtio payload: exact size, version (this one
 * or version 1), drive count, modes, cid and flags, terminated paths.
 * -EINVAL naming the problem. */
int snapguest__parse_virtio(const void *payload, size_t len,
			    struct snap_virtio_rec *out);

/* Whether the guest of record `v` runs an agent: its flag, or for a
 * version 1 record, its vsock device. A zeroed record (no vm.virtio)
 * has none. */
bool snapguest__has_agent(const struct snap_virtio_rec *v);

#endif
