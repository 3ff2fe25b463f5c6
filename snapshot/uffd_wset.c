/* The working-set file the prefetch strategies record and replay. */
#include "mem_uffd.h"

#include "err.h"
#include "output.h"
#include "regfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WSET_MAGIC "CSWSET01"

struct wset_header {
	char magic[8];
	uint32_t count;
	uint32_t reserved;
};

/* Reads a working-set file: its pages, or -errno with a message. A
 * missing file is -ENOENT with no message (record one instead). */
static int wset_read(const char *path, uint64_t pages, uint32_t **out,
		     uint32_t *count)
{
	struct wset_header h;
	uint64_t size;
	uint32_t *v = NULL;
	ssize_t n;
	int ret = 0, fd = regfile__open(path, &size);

	if (fd < 0)
		return fd;
	/* A log names each page once: more entries than pages is not one
	 * of ours (and would size the allocation by the file alone). */
	if (pread(fd, &h, sizeof(h), 0) != sizeof(h) ||
	    memcmp(h.magic, WSET_MAGIC, 8) || h.count > pages ||
	    size != sizeof(h) + (uint64_t)h.count * 4)
		ret = err__set(EINVAL, "%s is not a valid working-set file "
			       "(delete it to record a new one)", path);
	if (ret == 0 && !(v = malloc((h.count ? h.count : 1) * 4ull)))
		ret = err__set(ENOMEM, "reading %s", path);
	if (ret == 0 && (n = pread(fd, v, h.count * 4ull, sizeof(h))) !=
				(ssize_t)(h.count * 4ull))
		ret = err__sys(n < 0 ? errno : EIO, "reading %s", path);
	for (uint32_t i = 0; ret == 0 && i < h.count; i++)
		if (v[i] >= pages)
			ret = err__set(EINVAL, "%s names page %u beyond guest "
				       "memory (delete it to record again)",
				       path, v[i]);
	close(fd);
	if (ret < 0) {
		free(v);
		return ret;
	}
	*out = v;
	*count = h.count;
	return 0;
}

int mem_uffd__wset_write(const char *path, const uint32_t *pages, uint32_t n)
{
	struct wset_header h = { .count = n };
	struct output_file f;
	int ret = output__file_open(&f, path, 0644);

	if (ret < 0)
		return ret;
	memcpy(h.magic, WSET_MAGIC, 8);
	ret = output__write_all(f.fd, &h, sizeof(h));
	if (ret == 0)
		ret = output__write_all(f.fd, pages, n * 4ull);
	if (ret < 0) {
		output__file_abort(&f);
		return ret;
	}
	return output__file_commit(&f, true);
}

int mem_uffd__wset_read(const char *path, uint64_t pages, uint32_t **out,
			uint32_t *count)
{
	return wset_read(path, pages, out, count);
}
