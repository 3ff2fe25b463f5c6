/* Not a test by itself: writes a probe-guest snapshot directory without a
 * VM, for tests of the commands that read snapshots (inspect, merge,
 * restore's file checks) on hosts without KVM, and hostile variants of
 * it. Usage: snapforge DIR [--mem MIB] [--vendor HEX] [--compress]
 * [--diff-of BASE] [--data-bytes N] [--zmem-bad oversize|overlap].
 * --data-bytes: what the memory record says its data is (default 0).
 * snapforge DIR --virtio v1|agent|none rewrites instead the vm.virtio
 * record of the Linux guest's snapshot in DIR: a version 1 record (no
 * flags, as older coldstarts wrote), or version 2 with or without the
 * agent's flag (which a test kernel's snapshot cannot get otherwise). */
#include "diff.h"
#include "err.h"
#include "format.h"
#include "guest.h"
#include "snapshot.h"
#include "units.h"
#include "zmem.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE 4096u

struct forge {
	uint64_t mem;
	char vendor[16];
	bool compress;
	uint64_t data_bytes;
	const char *diff_of, *zmem_bad;
	const char *virtio; /* v1, agent or none: DIR's record rewritten */
};

static int hex_vendor(const char *hex, char v[16])
{
	unsigned int byte;

	memset(v, 0, 16);
	for (size_t i = 0; i < 16 && hex[2 * i]; i++) {
		if (sscanf(hex + 2 * i, "%2x", &byte) != 1)
			return -1;
		v[i] = (char)byte;
	}
	return 0;
}

/* Every chunk non-zero, so each has a frame; then the damage asked for. */
static int write_zmem(int fd, const struct forge *f)
{
	uint8_t *mem = calloc(1, f->mem);
	struct zmem_chunk c[2];
	uint64_t data, file;
	int ret;

	if (!mem)
		return -ENOMEM;
	for (uint64_t off = 0; off < f->mem; off += PAGE)
		mem[off] = (uint8_t)(off / PAGE + 1);
	ret = zmem__write(mem, f->mem, NULL, fd, &data, &file);
	free(mem);
	if (ret < 0 || !f->zmem_bad)
		return ret;
	if (pread(fd, c, sizeof(c), sizeof(struct zmem_header)) != sizeof(c))
		return -EIO;
	if (!strcmp(f->zmem_bad, "oversize")) {
		/* Larger than any frame of a 64 KiB chunk, inside the file. */
		c[0].csize = (uint32_t)(ZMEM_CHUNK * 2);
		if (ftruncate(fd, (off_t)(c[0].offset + c[0].csize)) < 0)
			return -errno;
	} else {
		c[1].offset = c[0].offset;
	}
	return pwrite(fd, c, sizeof(c), sizeof(struct zmem_header)) ==
		       sizeof(c) ? 0 : -EIO;
}

static int write_memory(const char *dir, const struct forge *f)
{
	int fd = snapshot__new_file(dir, SNAPSHOT_MEMORY_FILE), ret;

	if (fd < 0)
		return fd;
	ret = f->compress ? write_zmem(fd, f)
			  : ftruncate(fd, (off_t)f->mem) < 0 ? -errno : 0;
	close(fd);
	return ret;
}

/* A diff's section: every page dirty, taken against `base`. */
static int add_diff(struct snap_writer *w, const struct forge *f)
{
	struct snapshot base;
	struct snapshot_id id;
	uint64_t *bitmap = malloc(f->mem / PAGE / 8);
	int ret = bitmap ? snapshot__open(&base, f->diff_of) : -ENOMEM;

	if (ret < 0) {
		free(bitmap);
		return ret;
	}
	memset(bitmap, 0xff, f->mem / PAGE / 8);
	ret = snapdiff__identity(&base, &id);
	if (ret == 0)
		snapdiff__add_section(w, &id, bitmap, f->mem);
	snapshot__close(&base);
	free(bitmap);
	return ret;
}

static int forge(const char *dir, const struct forge *f)
{
	struct snap_header h = { .mem_size = f->mem, .nr_vcpus = 1,
				 .created_ns = 1 };
	struct snap_vm_config cfg = { .mem_size = f->mem, .nr_vcpus = 1,
				      .guest = SNAP_GUEST_PROBE };
	struct snap_memory mem = { .size = f->mem, .page_size = PAGE,
				   .compression = f->compress,
				   .data_bytes = f->data_bytes };
	uint8_t probe[80 + 4 * PROBE_MAX_VCPUS] = { 0 }; /* all valid */
	struct snap_writer w;
	int ret;

	memcpy(h.cpu_vendor, f->vendor, sizeof(h.cpu_vendor));
	if (mkdir(dir, 0755) < 0)
		return err__sys(errno, "mkdir %s", dir);
	snap__begin(&w, &h);
	snap__add(&w, SNAP_VM_CONFIG, 0, &cfg, sizeof(cfg));
	snap__add(&w, SNAP_MEMORY, 0, &mem, sizeof(mem));
	snap__add(&w, SNAP_DEV_PROBE, 0, probe, sizeof(probe));
	ret = f->diff_of ? add_diff(&w, f) : 0;
	if (ret == 0)
		ret = snap__finish(&w);
	if (ret == 0)
		ret = snapshot__write_file(dir, SNAPSHOT_STATE_FILE, w.buf,
					   w.len);
	if (ret == 0)
		ret = write_memory(dir, f);
	free(w.buf);
	return ret;
}

/* The state file `buf` again, its vm.virtio record as `how` says. */
static int retag(const uint8_t *buf, size_t len, const char *how,
		 struct snap_writer *w)
{
	struct snap_virtio_rec v;
	struct snap_section sec;
	struct snap_reader r;
	const void *payload;
	size_t cursor = 0;
	int ret = snap__parse(&r, buf, len);

	if (ret < 0)
		return ret;
	snap__begin(w, &r.hdr);
	while (snap__next(&r, &cursor, &sec, &payload)) {
		if (sec.type != SNAP_VM_VIRTIO || sec.len != sizeof(v)) {
			snap__add(w, sec.type, sec.index, payload, sec.len);
			continue;
		}
		memcpy(&v, payload, sizeof(v));
		v.version = strcmp(how, "v1") ? SNAP_VIRTIO_VERSION
					      : SNAP_VIRTIO_VERSION_NOFLAGS;
		v.flags = strcmp(how, "agent") ? 0 : SNAP_VIRTIO_AGENT;
		snap__add(w, sec.type, sec.index, &v, sizeof(v));
	}
	return snap__finish(w);
}

static int rewrite_virtio(const char *dir, const char *how)
{
	struct snap_writer w = { 0 };
	char path[PATH_MAX];
	uint8_t *buf = NULL;
	size_t len = 0;
	FILE *f;
	int ret = snapshot__join(path, dir, SNAPSHOT_STATE_FILE);

	if (ret < 0)
		return ret;
	f = fopen(path, "rb");
	if (!f)
		return err__sys(errno, "opening %s", path);
	if (fseek(f, 0, SEEK_END) == 0 && ftell(f) > 0) {
		len = (size_t)ftell(f);
		buf = malloc(len);
		rewind(f);
		if (buf && fread(buf, 1, len, f) != len)
			len = 0;
	}
	fclose(f);
	ret = buf && len ? retag(buf, len, how, &w)
			 : err__set(EIO, "reading %s", path);
	if (ret == 0 && unlink(path) < 0)
		ret = err__sys(errno, "removing %s", path);
	if (ret == 0)
		ret = snapshot__write_file(dir, SNAPSHOT_STATE_FILE, w.buf,
					   w.len);
	free(w.buf);
	free(buf);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mem", required_argument, NULL, 'm' },
		{ "vendor", required_argument, NULL, 'v' },
		{ "compress", no_argument, NULL, 'c' },
		{ "diff-of", required_argument, NULL, 'd' },
		{ "zmem-bad", required_argument, NULL, 'z' },
		{ "data-bytes", required_argument, NULL, 'b' },
		{ "virtio", required_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct forge f = { .mem = 2 * MiB, .vendor = "GenuineIntel" };
	int c, ret;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'm')
			f.mem = strtoull(optarg, NULL, 10) * MiB;
		else if (c == 'v' && hex_vendor(optarg, f.vendor) == 0)
			continue;
		else if (c == 'c')
			f.compress = true;
		else if (c == 'd')
			f.diff_of = optarg;
		else if (c == 'z')
			f.zmem_bad = optarg;
		else if (c == 'b')
			f.data_bytes = strtoull(optarg, NULL, 10);
		else if (c == 'V' && (!strcmp(optarg, "v1") ||
				      !strcmp(optarg, "agent") ||
				      !strcmp(optarg, "none")))
			f.virtio = optarg;
		else
			optind = argc + 1;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: snapforge DIR [--mem MIB] [--vendor HEX]"
			" [--compress] [--diff-of BASE] [--data-bytes N] "
			"[--zmem-bad oversize|overlap] | snapforge DIR --virtio "
			"v1|agent|none\n");
		return 2;
	}
	ret = f.virtio ? rewrite_virtio(argv[optind], f.virtio)
		       : forge(argv[optind], &f);
	if (ret < 0)
		fprintf(stderr, "snapforge: %s (%s)\n", err__last(),
			strerror(-ret));
	return ret < 0;
}
