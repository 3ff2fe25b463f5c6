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
