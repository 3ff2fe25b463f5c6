/* `bench density --rootfs`'s disk: the shared image (checked before the
 * first VM and found unchanged after the last), each held VM's overlay
 * measured through its VMM's descriptor, and the snapshot's disk layer
 * the clones share. Disk is what a file holds allocated (st_blocks), not
 * its sparse size. */
#include "density_int.h"

#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int density__image_open(struct density_image *img, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return err__sys(errno, "--rootfs %s", path);
	if (fstat(fd, &st) < 0) {
		close(fd);
		return err__sys(errno, "--rootfs %s", path);
	}
	close(fd);
	if (!S_ISREG(st.st_mode))
		return err__set(EINVAL, "--rootfs %s: not a regular file (an "
				"image such as `coldstart image build "
				"--rootfs` makes)", path);
	if (st.st_size == 0 || st.st_size % 512)
		return err__set(EINVAL, "--rootfs %s: %lld bytes is not a "
				"disk (a non-zero multiple of 512 bytes)",
				path, (long long)st.st_size);
	*img = (struct density_image){
		.path = path, .bytes = (uint64_t)st.st_size,
		.allocated = (uint64_t)st.st_blocks * 512, .dev = st.st_dev,
		.ino = st.st_ino, .mtime = st.st_mtim,
	};
	return 0;
}

int density__image_unchanged(const struct density_image *img)
{
	struct stat st;

	if (stat(img->path, &st) < 0)
		return err__sys(errno, "the image %s after the run", img->path);
	if (st.st_dev != img->dev || st.st_ino != img->ino ||
	    (uint64_t)st.st_size != img->bytes ||
	    st.st_mtim.tv_sec != img->mtime.tv_sec ||
	    st.st_mtim.tv_nsec != img->mtime.tv_nsec)
		return err__set(EIO, "the image %s changed during the run "
				"(another file, size or modification time): "
				"the VMs must only have read it", img->path);
	return 0;
}

/* Allocated bytes of what `path` names, or -errno. */
static int64_t allocated(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	return (int64_t)st.st_blocks * 512;
}

int64_t density__overlay_bytes(pid_t pid, int fd)
{
	char path[64];
	int64_t n;

	/* an unnamed overlay has no name but its descriptor's */
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
	n = allocated(path);
	if (n < 0)
		return err__sys((int)-n, "the overlay of VMM %d (%s)",
				(int)pid, path);
	return n;
}

int64_t density__snapshot_disk_bytes(const char *snap_dir)
{
	char path[PATH_MAX];
	int64_t n;

	snprintf(path, sizeof(path), "%s/disk.0", snap_dir);
	n = allocated(path);
	if (n == -ENOENT) /* the guest wrote nothing before the snapshot */
		return 0;
	if (n < 0)
		return err__sys((int)-n, "the snapshot's disk %s", path);
	return n;
}

json_t *density__image_json(const struct density_image *img)
{
	return json_pack("{s:s, s:I, s:I}", "path", img->path, "size_bytes",
			 (json_int_t)img->bytes, "allocated_bytes",
			 (json_int_t)img->allocated);
}
