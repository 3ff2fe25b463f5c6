/* Describing an OS guest's boot files for the vm.guest section. */
#include "guest.h"

#include "err.h"
#include "regfile.h"
#include "snapshot.h"

#include <fcntl.h>
#include <stdbool.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <zlib.h>

#define READ_CHUNK (1u << 20)

/* Absolute path, size and CRC-32 of the file at `path`. */
static int describe_file(const char *what, const char *path,
			 char out[SNAP_GUEST_PATH_MAX], uint64_t *bytes,
			 uint32_t *crc)
{
	char abs[PATH_MAX];
	uint8_t *buf;
	ssize_t n = 0;
	uLong c = crc32(0, NULL, 0);
	int fd;

	if (!realpath(path, abs))
		return err__sys(errno, "%s %s", what, path);
	if (strlen(abs) >= SNAP_GUEST_PATH_MAX)
		return err__set(ENAMETOOLONG, "%s path %s is longer than %d "
				"bytes", what, abs, SNAP_GUEST_PATH_MAX - 1);
	fd = regfile__open(abs, NULL); /* never blocks on a FIFO */
	if (fd == -EINVAL)
		return err__set(EINVAL, "%s %s is not a regular file", what,
				abs);
	if (fd < 0)
		return err__sys(-fd, "%s %s", what, abs);
	buf = malloc(READ_CHUNK);
	*bytes = 0;
	while (buf && (n = read(fd, buf, READ_CHUNK)) > 0) {
		c = crc32(c, buf, (uInt)n);
		*bytes += (uint64_t)n;
	}
	close(fd);
	free(buf);
	if (!buf)
		return err__set(ENOMEM, "reading %s %s", what, abs);
	if (n < 0)
		return err__sys(errno, "reading %s %s", what, abs);
	*crc = (uint32_t)c;
	memcpy(out, abs, strlen(abs) + 1);
	return 0;
}

int snapguest__describe(struct snap_guest_rec *g, uint32_t kind,
			const char *kernel, const char *initrd,
			const char *cmdline)
{
	int ret;

	memset(g, 0, sizeof(*g));
	g->kind = kind;
	if (strlen(cmdline) >= sizeof(g->cmdline))
		return err__set(ENAMETOOLONG, "command line of %zu bytes is too "
				"long to record (at most %zu)", strlen(cmdline),
				sizeof(g->cmdline) - 1);
	memcpy(g->cmdline, cmdline, strlen(cmdline) + 1);
	ret = describe_file("kernel", kernel, g->kernel, &g->kernel_bytes,
			    &g->kernel_crc32);
	if (ret == 0 && initrd)
		ret = describe_file("initrd", initrd, g->initrd,
				    &g->initrd_bytes, &g->initrd_crc32);
	return ret;
}

static bool terminated(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

int snapguest__parse(const void *payload, size_t len,
		     struct snap_guest_rec *out)
{
	if (len != sizeof(*out))
		return err__set(EINVAL, "section vm.guest has %zu bytes, "
				"expected %zu", len, sizeof(*out));
	memcpy(out, payload, sizeof(*out));
	if (!terminated(out->kernel, sizeof(out->kernel)) ||
	    !terminated(out->initrd, sizeof(out->initrd)) ||
	    !terminated(out->cmdline, sizeof(out->cmdline)))
		return err__set(EINVAL, "section vm.guest has an unterminated "
				"string");
	if (out->kind != SNAP_GUEST_LINUX)
		return err__set(EINVAL, "section vm.guest describes guest kind "
				"%u; this coldstart knows %u (linux)", out->kind,
				SNAP_GUEST_LINUX);
	return 0;
}

static uint64_t mtime_ns(const struct stat *st)
{
	return (uint64_t)st->st_mtim.tv_sec * 1000000000ull +
	       (uint64_t)st->st_mtim.tv_nsec;
}

int snapguest__describe_drive(struct snap_drive_rec *d, const char *path,
			      enum snap_drive_mode mode)
{
	struct stat st;
	int ret;

	memset(d, 0, sizeof(*d));
	d->mode = mode;
	ret = describe_file("drive", path, d->path, &d->bytes, &d->crc32);
	if (ret < 0)
		return ret;
	if (stat(d->path, &st) < 0)
		return err__sys(errno, "drive %s", d->path);
	d->mtime_ns = mtime_ns(&st);
	return 0;
}

int snapguest__check_drive(const struct snap_drive_rec *d,
			   unsigned int index)
{
	struct snap_drive_rec now;
	struct stat st;
	int ret;

	if (stat(d->path, &st) < 0)
		return err__sys(errno, "the snapshot's drive %u, %s", index,
				d->path);
	if (!S_ISREG(st.st_mode))
		return err__set(EINVAL, "the snapshot's drive %u, %s, is not a "
				"regular file", index, d->path);
	if ((uint64_t)st.st_size != d->bytes)
		return err__set(EINVAL, "the snapshot's drive %u, %s, has %llu "
				"bytes; it had %llu when the snapshot was "
				"taken: another image", index, d->path,
				(unsigned long long)st.st_size,
				(unsigned long long)d->bytes);
	if (mtime_ns(&st) == d->mtime_ns)
		return 0;
	/* touched, or copied from another host: the contents decide */
	ret = snapguest__describe_drive(&now, d->path,
					(enum snap_drive_mode)d->mode);
	if (ret == 0 && now.crc32 != d->crc32)
		ret = err__set(EINVAL, "the snapshot's drive %u, %s, changed "
			       "since the snapshot was taken (CRC-32 %08x, "
			       "then %08x): the guest's files would not be "
			       "what it remembers", index, d->path,
			       now.crc32, d->crc32);
	return ret;
}

int snapguest__parse_virtio(const void *payload, size_t len,
			    struct snap_virtio_rec *out)
{
	if (len != sizeof(*out))
		return err__set(EINVAL, "section vm.virtio has %zu bytes, "
				"expected %zu", len, sizeof(*out));
	memcpy(out, payload, sizeof(*out));
	if (out->version != SNAP_VIRTIO_VERSION &&
	    out->version != SNAP_VIRTIO_VERSION_NOFLAGS)
		return err__set(EINVAL, "section vm.virtio is version %u; this "
				"coldstart reads %u and %u", out->version,
				SNAP_VIRTIO_VERSION_NOFLAGS, SNAP_VIRTIO_VERSION);
	if (out->version == SNAP_VIRTIO_VERSION_NOFLAGS)
		out->flags = 0; /* reserved then, and never read */
	if (out->flags & ~SNAP_VIRTIO_AGENT ||
	    (out->flags & SNAP_VIRTIO_AGENT && !out->vsock))
		return err__set(EINVAL, "section vm.virtio has flags 0x%x "
				"(known: 0x%x, the agent's, which needs a vsock "
				"device)", out->flags, SNAP_VIRTIO_AGENT);
	if (out->nr_drives > SNAP_MAX_DRIVES || out->vsock > 1)
		return err__set(EINVAL, "section vm.virtio names %u drives and "
				"vsock %u (at most %d drives, vsock 0 or 1)",
				out->nr_drives, out->vsock, SNAP_MAX_DRIVES);
	if (out->vsock && (out->vsock_cid < 3 || out->vsock_cid >= UINT32_MAX))
		return err__set(EINVAL, "section vm.virtio: vsock guest CID "
				"%llu (3 to 2^32 - 2)",
				(unsigned long long)out->vsock_cid);
	for (uint32_t i = 0; i < out->nr_drives; i++) {
		const struct snap_drive_rec *d = &out->drive[i];

		if (!terminated(d->path, sizeof(d->path)) || d->path[0] != '/')
			return err__set(EINVAL, "section vm.virtio: drive %u's "
					"path is not an absolute, terminated "
					"string", i);
		if (d->mode != SNAP_DRIVE_RO && d->mode != SNAP_DRIVE_OVERLAY)
			return err__set(EINVAL, "section vm.virtio: drive %u "
					"has mode %u (1 ro, 2 overlay)", i,
					d->mode);
		if (!d->bytes || d->bytes % 512 || d->layer_bytes > d->bytes ||
		    (d->mode == SNAP_DRIVE_RO && d->layer_bytes))
			return err__set(EINVAL, "section vm.virtio: drive %u "
					"has %llu bytes, %llu in its layer",
					i, (unsigned long long)d->bytes,
					(unsigned long long)d->layer_bytes);
	}
	return 0;
}

bool snapguest__has_agent(const struct snap_virtio_rec *v)
{
	if (!v->vsock)
		return false;
	return v->version == SNAP_VIRTIO_VERSION_NOFLAGS ||
	       (v->flags & SNAP_VIRTIO_AGENT);
}
