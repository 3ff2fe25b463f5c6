/* virtio-blk over virtio-mmio: a disk image as a guest's block device.
 * Requests are served on the device's own I/O thread, never on a vCPU's;
 * a request past the end of the disk, to a read-only disk, or of an
 * unknown type gets an error status, and a malformed queue asks the
 * driver for a reset: the VMM keeps running either way. */
#ifndef COLDSTART_VIRTIO_BLK_H
#define COLDSTART_VIRTIO_BLK_H

#include "blk_overlay.h"
#include "device.h"
#include "io_thread.h"
#include "virtio_mmio.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct guest_mem;
struct vm;

#define VIRTIO_ID_BLOCK 2
#define VIRTIO_BLK_SECTOR 512

/* Request types and status (virtio 1.x, 5.2.6). */
enum {
	VIRTIO_BLK_T_IN = 0,
	VIRTIO_BLK_T_OUT = 1,
	VIRTIO_BLK_T_FLUSH = 4,
	VIRTIO_BLK_T_GET_ID = 8,
};
enum {
	VIRTIO_BLK_S_OK = 0,
	VIRTIO_BLK_S_IOERR = 1,
	VIRTIO_BLK_S_UNSUPP = 2,
};

/* Feature bits the device offers. */
#define VIRTIO_BLK_F_SEG_MAX (1ull << 2)
#define VIRTIO_BLK_F_RO (1ull << 5)
#define VIRTIO_BLK_F_FLUSH (1ull << 9)

/* How an image the guest cannot write into is opened (jail__open:
 * kept open from before a jail). */
#define VBLK_IMAGE_RO_FLAGS (O_RDONLY | O_CLOEXEC)

/* How the guest's writes reach the image. */
enum vblk_mode {
	VBLK_RW,  /* into the file itself */
	VBLK_RO,  /* refused: the disk is read-only */
	VBLK_COW, /* into this VM's private copy-on-write view of the file */
	VBLK_OVERLAY, /* into a per-VM sparse overlay file (blk_overlay.h) */
	VBLK_REFLINK, /* into a reflinked copy of the image (FICLONE) */
};

struct vblk {
	struct virtio_mmio t;
	struct virtio_dev_ops ops;
	enum vblk_mode mode;
	int fd;
	uint8_t *view; /* VBLK_COW: the private mapping of the file */
	struct blk_overlay *ovl; /* VBLK_OVERLAY */
	uint64_t bytes;
	char id[20]; /* GET_ID: the image's name, not NUL-terminated if 20 */
	int kick;    /* eventfd: the driver notified, or the thread must stop */
	struct io_thread io;
	pthread_mutex_t serving; /* held while requests are served */
	bool active;             /* the driver started the device */
	bool stop;               /* the thread must end */
	struct virtq_chain chain; /* the request the thread serves */
	struct device_ops dev; /* its state in snapshots */
	char dev_name[16];     /* "virtio-blk.N" */
	/* Counters, for the driver's report. */
	uint64_t requests, bytes_read, bytes_written, errors;
};

/* Opens `path` (a regular file, or a block device, whose size is a
 * multiple of 512 bytes) as a disk at guest-physical `base` with
 * interrupt `irq`, and starts its I/O thread, idle until the driver
 * starts the device. VBLK_OVERLAY and VBLK_REFLINK write into the file
 * `own` (NULL for the other modes): the overlay, made or reopened (NULL:
 * an unnamed one, gone at close), or the reflinked copy, made new. -errno with a message naming the file
 * and what is wrong with it. */
int vblk__open(struct vblk *b, const char *path, enum vblk_mode mode,
	       const char *own, const struct guest_mem *mem, uint64_t base,
	       uint32_t irq, void (*raise)(void *ctx, uint32_t irq),
	       void *raise_ctx);

/* Puts a snapshot's disk state, the overlay file `path`, under a
 * VBLK_OVERLAY drive's own overlay (blk_overlay__add_lower), before the
 * guest runs. -EINVAL for other modes; -errno with a message. */
int vblk__add_lower(struct vblk *b, const char *path);

/* The disk's state for a snapshot, into `fd` (a new empty file): the
 * blocks of a VBLK_OVERLAY drive's overlay, with `all` its lower layers'
 * too (blk_overlay__save); a VBLK_RO drive has none (*bytes 0). Other
 * modes keep their writes where a snapshot cannot take them: -ENOTSUP
 * with a message. Call with the device held (device_ops.hold). */
int vblk__save_disk(struct vblk *b, int fd, bool all, uint64_t *bytes);

/* The device's saved state: the transport's registers and queues, and
 * the disk's size and mode, which a restore must find the same. */
struct vblk_state {
	uint32_t version;
	uint32_t mode;
	uint64_t bytes;
	struct virtio_mmio_state t;
};

#define VBLK_STATE_VERSION 1

/* Claims the device's register window among the VM's traps and registers
 * its state for snapshots as "virtio-blk.INDEX". Before vm__start. */
int vblk__attach(struct vblk *b, struct vm *vm, unsigned int index);

/* An edge on interrupt line `irq` of the VM's in-kernel irqchip: the
 * `raise` of devices on a VM (ctx is the struct vm). */
void vblk__irq_edge(void *vm, uint32_t irq);

/* Stops the I/O thread, releases the file. After the VM is destroyed. */
void vblk__close(struct vblk *b);

/* "ro", "rw", "cow", "overlay", or "overlay=FILE" or "reflink=FILE"
 * (*own then points at FILE in `text`, else is NULL); -EINVAL with a
 * message for other text. */
int vblk__mode(const char *text, enum vblk_mode *out, const char **own);

#endif
