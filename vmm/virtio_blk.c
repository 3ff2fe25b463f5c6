/* virtio-blk (virtio_blk.h): the device's configuration, its I/O thread
 * and its requests. The thread sleeps on an eventfd that the transport's
 * notification writes; it takes every available chain, serves it against
 * the image and returns it as used, then raises one interrupt. */
#include "virtio_blk.h"

#include "err.h"
#include "io_thread.h"
#include "jail.h"
#include "kvm.h"
#include "vm.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define HEADER 16
#define QUEUE_MAX VIRTQ_MAX_SIZE

struct header {
	uint32_t type;
	uint32_t reserved;
	uint64_t sector;
};

int vblk__mode(const char *text, enum vblk_mode *out, const char **own)
{
	static const char *const names[] = { "rw", "ro", "cow", "overlay" };
	static const char *const owned[] = { "overlay=", "reflink=" };

	*own = NULL;
	for (unsigned int i = 0; i < 4; i++) {
		if (strcmp(text, names[i]) == 0) {
			*out = (enum vblk_mode)i;
			return 0;
		}
	}
	for (unsigned int i = 0; i < 2; i++) {
		size_t n = strlen(owned[i]);

		if (strncmp(text, owned[i], n) == 0 && text[n]) {
			*out = i ? VBLK_REFLINK : VBLK_OVERLAY;
			*own = text + n;
			return 0;
		}
	}
	return err__set(EINVAL, "drive mode '%s': expected ro, rw, cow, "
			"overlay, overlay=FILE or reflink=FILE", text);
}

static void config_read(void *dev, uint32_t off, void *data, uint32_t len)
{
	const struct vblk *b = dev;
	uint8_t cfg[24] = { 0 };
	uint64_t sectors = b->bytes / VIRTIO_BLK_SECTOR;
	uint32_t seg_max = QUEUE_MAX - 2;

	memcpy(cfg, &sectors, 8);      /* capacity */
	memcpy(cfg + 12, &seg_max, 4); /* seg_max */
	memcpy(data, cfg + off, len);
}

/* Moves n bytes between `host` and the disk at `disk` where a request
 * goes piece by piece: the memory view, an overlay's writes (which copy
 * whole blocks up). 0, or -EIO. */
static int move(struct vblk *b, bool to_disk, uint8_t *host, uint64_t n,
		uint64_t disk)
{
	if (b->ovl)
		return blk_overlay__write(b->ovl, host, n, disk);
	if (to_disk)
		memcpy(b->view + disk, host, n);
	else
		memcpy(host, b->view + disk, n);
	return 0;
}

/* The chain's buffers of one kind (device-writable or not) from byte
 * `at` of them on, `len` bytes' worth, as iovecs: their count, or -1
 * when the chain holds fewer bytes. */
static int slice(const struct virtq_chain *c, bool writable, uint64_t at,
		 uint64_t len, struct iovec *iov)
{
	int cnt = 0;

	for (unsigned int k = 0; k < c->n && len; k++) {
		const struct virtq_buf *buf = &c->buf[k];
		uint64_t n;

		if (buf->write != writable)
			continue;
		if (at >= buf->len) {
			at -= buf->len;
			continue;
		}
		n = buf->len - at < len ? buf->len - at : len;
		iov[cnt++] = (struct iovec){ buf->host + at, n };
		len -= n;
		at = 0;
	}
	return len ? -1 : cnt;
}

/* All `len` bytes of `iov` to or from `fd` at `off`: one preadv or
 * pwritev for the whole request (Linux sends a read as one buffer a
 * page, so one call each cost a system call a page). 0, or -EIO. */
static int full_iov(int fd, bool to_disk, struct iovec *iov, int cnt,
		    uint64_t len, uint64_t off)
{
	while (len) {
		ssize_t got = to_disk ? pwritev(fd, iov, cnt, (off_t)off) :
					preadv(fd, iov, cnt, (off_t)off);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return -EIO;
		len -= (uint64_t)got;
		off += (uint64_t)got;
		while (cnt && (size_t)got >= iov->iov_len) {
			got -= (ssize_t)iov->iov_len;
			iov++;
			cnt--;
		}
		if (cnt) {
			iov->iov_base = (uint8_t *)iov->iov_base + got;
			iov->iov_len -= (size_t)got;
		}
	}
	return 0;
}

/* Moves `len` bytes between the chain's buffers of one kind, from byte
 * `at` of them on, and the disk at `disk`: one vectored call a run of
 * the disk held by one file. 0, or -EIO. */
static int transfer(struct vblk *b, const struct virtq_chain *c, bool to_disk,
		    uint64_t at, uint64_t len, uint64_t disk)
{
	struct iovec iov[QUEUE_MAX];

	while (len) {
		uint64_t n = len;
		int fd = b->fd, cnt;

		/* an overlay's write copies whole blocks up: block by block */
		if (b->ovl && !to_disk)
			fd = blk_overlay__source(b->ovl, disk, len, &n);
		cnt = slice(c, !to_disk, at, n, iov);
		if (cnt < 0)
			return -EIO;
		if (b->view || (b->ovl && to_disk)) {
			uint64_t d = disk;

			for (int k = 0; k < cnt; d += iov[k++].iov_len)
				if (move(b, to_disk, iov[k].iov_base,
					 iov[k].iov_len, d) < 0)
					return -EIO;
		} else if (full_iov(fd, to_disk, iov, cnt, n, disk) < 0) {
			return -EIO;
		}
		at += n;
		disk += n;
		len -= n;
	}
	return 0;
}

/* Modes whose writes reach a file, where a flush must make them
 * durable. */
static bool flushes(enum vblk_mode mode)
{
	return mode == VBLK_RW || mode == VBLK_OVERLAY || mode == VBLK_REFLINK;
}

/* Whether [sector, + len bytes) lies on the disk, in whole sectors. */
static bool in_range(const struct vblk *b, uint64_t sector, uint64_t len)
{
	uint64_t sectors = b->bytes / VIRTIO_BLK_SECTOR;

	return len % VIRTIO_BLK_SECTOR == 0 && sector <= sectors &&
	       len / VIRTIO_BLK_SECTOR <= sectors - sector;
}

/* Serves one request; returns the bytes written into its buffers. */
static uint32_t serve(struct vblk *b, const struct virtq_chain *c)
{
	struct header h;
	uint8_t status = VIRTIO_BLK_S_OK;
	uint64_t data = 0;

	if (c->writable < 1)
		return 0; /* nowhere to put a status: nothing to answer */
	if (virtq__read(c, 0, &h, HEADER) != HEADER) {
		status = VIRTIO_BLK_S_IOERR;
		goto out;
	}
	switch (h.type) {
	case VIRTIO_BLK_T_IN:
		data = c->writable - 1;
		if (!in_range(b, h.sector, data) ||
		    transfer(b, c, false, 0, data,
			     h.sector * VIRTIO_BLK_SECTOR) < 0)
			status = VIRTIO_BLK_S_IOERR, data = 0;
		else
			b->bytes_read += data;
		break;
	case VIRTIO_BLK_T_OUT: {
		uint64_t len = c->readable - HEADER;

		if (b->mode == VBLK_RO || !in_range(b, h.sector, len) ||
		    transfer(b, c, true, HEADER, len,
			     h.sector * VIRTIO_BLK_SECTOR) < 0)
			status = VIRTIO_BLK_S_IOERR;
		else
			b->bytes_written += len;
		break;
	}
	case VIRTIO_BLK_T_FLUSH:
		if (flushes(b->mode) &&
		    fdatasync(b->ovl ? b->ovl->file : b->fd) < 0)
			status = VIRTIO_BLK_S_IOERR;
		break;
	case VIRTIO_BLK_T_GET_ID:
		data = c->writable - 1 < sizeof(b->id) ? c->writable - 1 :
							  sizeof(b->id);
		virtq__write(c, 0, b->id, data);
		break;
	default:
		status = VIRTIO_BLK_S_UNSUPP;
	}
out:
	if (status != VIRTIO_BLK_S_OK)
		b->errors++;
	b->requests++;
	virtq__write(c, c->writable - 1, &status, 1);
	return (uint32_t)data + 1;
}

static void serve_all(struct vblk *b)
{
	struct virtq *q = &b->t.q[0];
	struct virtq_chain *c = &b->chain;
	bool used = false;
	int ret;

	while ((ret = virtq__pop(q, c)) > 0) {
		virtq__push(q, c->head, serve(b, c));
		used = true;
	}
	if (used)
		virtio_mmio__used(&b->t, 0);
	if (ret < 0) {
		fprintf(stderr, "coldstart: virtio-blk: %s; the device needs "
			"a reset\n", err__last());
		virtio_mmio__needs_reset(&b->t);
	}
}

static void io_main(void *arg)
{
	struct vblk *b = arg;
	uint64_t n;

	for (;;) {
		if (read(b->kick, &n, sizeof(n)) < 0 && errno != EINTR)
			break;
		if (__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE))
			break;
		pthread_mutex_lock(&b->serving);
		if (b->active && !(__atomic_load_n(&b->t.s.status,
						   __ATOMIC_ACQUIRE) &
				   VIRTIO_STATUS_NEEDS_RESET))
			serve_all(b);
		pthread_mutex_unlock(&b->serving);
	}
}

static void kick(struct vblk *b)
{
	uint64_t one = 1;

	if (write(b->kick, &one, sizeof(one)) < 0) {
		/* An eventfd write fails only past 2^64 - 2 unread kicks:
		 * the thread is awake already. */
	}
}

static void notify(void *dev, unsigned int q)
{
	(void)q;
	kick(dev);
}

/* The thread exists from open to close, made before the VM's threads
 * load their system call filters (a vCPU may not start threads); the
 * driver's DRIVER_OK and reset only open and close its work. */
static int activate(void *dev, uint64_t features)
{
	struct vblk *b = dev;

	(void)features;
	pthread_mutex_lock(&b->serving);
	b->active = true;
	pthread_mutex_unlock(&b->serving);
	kick(b); /* chains made available before DRIVER_OK */
	return 0;
}

/* Returns once the thread serves no request, and it serves none until
 * the next activate. */
static void reset(void *dev)
{
	struct vblk *b = dev;

	pthread_mutex_lock(&b->serving);
	b->active = false;
	pthread_mutex_unlock(&b->serving);
}

static int disk_size(int fd, const char *path, uint64_t *bytes)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return err__sys(errno, "drive %s", path);
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, bytes) < 0)
			return err__sys(errno, "drive %s: its size", path);
	} else if (S_ISREG(st.st_mode)) {
		*bytes = (uint64_t)st.st_size;
	} else {
		return err__set(EINVAL, "drive %s: not a regular file or a "
				"block device", path);
	}
	if (*bytes == 0 || *bytes % VIRTIO_BLK_SECTOR)
		return err__set(EINVAL, "drive %s: %llu bytes, not a whole "
				"number of 512-byte sectors", path,
				(unsigned long long)*bytes);
	return 0;
}

static int map_private(struct vblk *b, const char *path)
{
	b->view = mmap(NULL, b->bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_NORESERVE, b->fd, 0);
	if (b->view != MAP_FAILED)
		return 0;
	b->view = NULL;
	return err__sys(errno, "drive %s: mapping it copy-on-write", path);
}

static int open_overlay(struct vblk *b, const char *own)
{
	int ret;

	b->ovl = malloc(sizeof(*b->ovl));
	if (!b->ovl)
		return err__set(ENOMEM, "overlay %s: out of memory",
				own ? own : "(unnamed)");
	ret = blk_overlay__open(b->ovl, b->fd, b->bytes, own);
	if (ret < 0) {
		free(b->ovl);
		b->ovl = NULL;
	}
	return ret;
}

/* A new file `own` sharing the image's extents (FICLONE): the VM then
 * writes into it as into an rw disk. Filesystems without reflinks (ext4,
 * tmpfs) or a copy across filesystems are an error, not a slow copy. */
static int reflink(struct vblk *b, const char *path, const char *own)
{
	int fd = open(own, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		      0600);
	int e;

	if (fd < 0)
		return err__sys(errno, "reflink %s", own);
	if (ioctl(fd, FICLONE, b->fd) == 0) {
		close(b->fd);
		b->fd = fd;
		return 0;
	}
	e = errno;
	close(fd);
	unlink(own);
	return err__sys(e, "reflink %s of %s: its filesystem cannot share "
			"the image's blocks (FICLONE; overlay=FILE works on "
			"any)", own, path);
}

static int open_image(struct vblk *b, const char *path, const char *own)
{
	int flags = b->mode == VBLK_RW ? O_RDWR | O_CLOEXEC
				       : VBLK_IMAGE_RO_FLAGS;
	int ret;

	b->fd = jail__open(path, flags);
	if (b->fd < 0)
		return err__sys(errno, "drive %s", path);
	ret = disk_size(b->fd, path, &b->bytes);
	if (ret == 0 && b->mode == VBLK_COW)
		ret = map_private(b, path);
	else if (ret == 0 && b->mode == VBLK_OVERLAY)
		ret = open_overlay(b, own);
	else if (ret == 0 && b->mode == VBLK_REFLINK)
		ret = reflink(b, path, own);
	if (ret < 0) {
		close(b->fd);
		b->fd = -1;
	}
	return ret;
}

/* Undoes open_image. */
static void close_image(struct vblk *b)
{
	if (b->view)
		munmap(b->view, b->bytes);
	if (b->ovl) {
		blk_overlay__close(b->ovl);
		free(b->ovl);
	}
	close(b->fd);
}

int vblk__open(struct vblk *b, const char *path, enum vblk_mode mode,
	       const char *own, const struct guest_mem *mem, uint64_t base,
	       uint32_t irq, void (*raise)(void *ctx, uint32_t irq),
	       void *raise_ctx)
{
	const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	int ret;

	memset(b, 0, sizeof(*b));
	b->mode = mode;
	if ((mode == VBLK_REFLINK) != (own != NULL) && mode != VBLK_OVERLAY)
		return err__set(EINVAL, "drive %s: a file of its own goes with "
				"modes overlay and reflink only, and reflink "
				"needs one", path);
	ret = open_image(b, path, own);
	if (ret < 0)
		return ret;
	/* GET_ID's 20 bytes need no terminator. */
	memcpy(b->id, name, strlen(name) < sizeof(b->id) ? strlen(name) :
							    sizeof(b->id));
	b->kick = eventfd(0, EFD_CLOEXEC);
	if (b->kick < 0) {
		ret = err__sys(errno, "virtio-blk: eventfd");
		goto err_image;
	}
	b->ops = (struct virtio_dev_ops){
		.name = "virtio-blk", .device_id = VIRTIO_ID_BLOCK,
		.features = VIRTIO_BLK_F_SEG_MAX |
			    (mode == VBLK_RO ? VIRTIO_BLK_F_RO : 0) |
			    (flushes(mode) ? VIRTIO_BLK_F_FLUSH : 0),
		.queues = 1, .queue_max = QUEUE_MAX, .config_size = 24,
		.config_read = config_read, .activate = activate,
		.notify = notify, .reset = reset,
	};
	ret = virtio_mmio__init(&b->t, &b->ops, b, mem, base, irq, raise,
				raise_ctx);
	if (ret < 0)
		goto err_kick;
	pthread_mutex_init(&b->serving, NULL);
	ret = io_thread__start(&b->io, "virtio-blk", io_main, b);
	if (ret < 0)
		goto err_transport;
	return 0;

err_transport:
	pthread_mutex_destroy(&b->serving);
	virtio_mmio__destroy(&b->t);
err_kick:
	close(b->kick);
err_image:
	close_image(b);
	return ret;
}

static size_t state_size(const void *dev)
{
	(void)dev;
	return sizeof(struct vblk_state);
}

static int save(const void *dev, void *buf, size_t len)
{
	const struct vblk *b = dev;
	struct vblk_state st = { .version = VBLK_STATE_VERSION,
				 .mode = b->mode, .bytes = b->bytes };
	int ret = device__check_save(b->dev_name, sizeof(st), len);

	if (ret < 0)
		return ret;
	virtio_mmio__save(&b->t, &st.t);
	memcpy(buf, &st, sizeof(st));
	return 0;
}

static int ready(void *dev)
{
	return io_thread__ready(&((struct vblk *)dev)->io);
}

static int restore(void *dev, const void *buf, size_t len)
{
	struct vblk *b = dev;
	struct vblk_state st;
	int ret = device__check_restore(b->dev_name, sizeof(st),
					VBLK_STATE_VERSION, buf, len);

	if (ret < 0)
		return ret;
	memcpy(&st, buf, sizeof(st));
	if (st.bytes != b->bytes || st.mode != (uint32_t)b->mode)
		return err__set(EINVAL, "%s: the snapshot's disk had %llu "
				"bytes (mode %u), this one has %llu (mode %u)",
				b->dev_name, (unsigned long long)st.bytes,
				st.mode, (unsigned long long)b->bytes, b->mode);
	return virtio_mmio__restore(&b->t, &st.t);
}

static void hold(void *dev, bool on)
{
	struct vblk *b = dev;

	if (on)
		pthread_mutex_lock(&b->serving);
	else
		pthread_mutex_unlock(&b->serving);
}

int vblk__add_lower(struct vblk *b, const char *path)
{
	if (!b->ovl)
		return err__set(EINVAL, "drive %s: a snapshot's disk state goes "
				"under an overlay drive only", b->dev_name);
	return blk_overlay__add_lower(b->ovl, path);
}

int vblk__save_disk(struct vblk *b, int fd, bool all, uint64_t *bytes)
{
	*bytes = 0;
	if (b->mode == VBLK_RO)
		return 0;
	if (!b->ovl)
		return err__set(ENOTSUP, "%s: a snapshot keeps a disk's writes "
				"from an overlay (the default mode) or a "
				"read-only disk; this one writes %s",
				b->dev_name, b->mode == VBLK_RW ? "into the "
				"image itself" : b->mode == VBLK_COW ?
				"into private memory" : "into a reflinked copy");
	return blk_overlay__save(b->ovl, fd, all, bytes);
}

int vblk__attach(struct vblk *b, struct vm *vm, unsigned int index)
{
	int ret;

	snprintf(b->dev_name, sizeof(b->dev_name), "virtio-blk.%u", index);
	b->dev = (struct device_ops){ .name = b->dev_name,
				      .state_size = state_size, .save = save,
				      .restore = restore, .ready = ready,
				      .hold = hold };
	ret = virtio_mmio__register(&b->t, &vm->io);
	if (ret == 0)
		ret = virtio_mmio__kvm_paths(&b->t, vm, b->kick);
	if (ret == 0)
		ret = vm__add_device(vm, &b->dev, b);
	return ret;
}

void vblk__irq_edge(void *vm, uint32_t irq)
{
	struct kvm_irq_level line = { .irq = irq, .level = 1 };
	int fd = ((struct vm *)vm)->fd;

	/* Errors cannot be reported from the I/O thread: the driver then
	 * misses this interrupt and finds the used buffers at the next. */
	if (KVM_IOCTL(fd, KVM_IRQ_LINE, &line) == 0) {
		line.level = 0;
		KVM_IOCTL(fd, KVM_IRQ_LINE, &line);
	}
}

void vblk__close(struct vblk *b)
{
	__atomic_store_n(&b->stop, true, __ATOMIC_RELEASE);
	kick(b);
	io_thread__join(&b->io);
	pthread_mutex_destroy(&b->serving);
	virtio_mmio__destroy(&b->t);
	close(b->kick);
	close_image(b);
}
