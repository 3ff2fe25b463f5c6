/* Diff snapshots against a base, resolving a diff chain for a restore,
 * and merging a base plus diffs into a full snapshot. */
#include "diff.h"

#include "err.h"
#include "guest_devices.h"
#include "fileio.h"
#include "mem_source.h"
#include "snapshot.h"
#include "timeline.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096u
#define RUN_PAGES 256u /* pages per read while merging: 1 MiB */
#define ALIGN8(x) (((x) + 7) & ~(uint64_t)7)

/* Page sources while merging: none (zero), the base, or diff i at i+2. */
#define SRC_ZERO 0
#define SRC_BASE 1

static int page_dirty(const uint64_t *bitmap, uint64_t p)
{
	return (bitmap[p / 64] >> (p % 64)) & 1;
}

int snapdiff__identity(const struct snapshot *s, struct snapshot_id *id)
{
	struct snap_trailer t;

	memcpy(&t, s->state + s->state_len - sizeof(t), sizeof(t));
	memset(id, 0, sizeof(*id));
	id->crc32 = t.crc32;
	id->mem_size = s->r.hdr.mem_size;
	id->created_ns = s->r.hdr.created_ns;
	if (!realpath(s->dir, id->path))
		return err__sys(errno, "resolving the path of %s", s->dir);
	return 0;
}

void snapdiff__add_section(struct snap_writer *w, const struct snapshot_id *base,
			   const uint64_t *bitmap, uint64_t mem_size)
{
	uint64_t pages = mem_size / PAGE, dirty = 0;
	uint32_t path_len = (uint32_t)strlen(base->path) + 1;
	struct snap_mem_diff h = {
		.base_crc32 = base->crc32, .path_len = path_len,
		.base_mem_size = base->mem_size,
		.base_created_ns = base->created_ns,
		.bitmap_bytes = pages / 8,
	};
	size_t len = sizeof(h) + ALIGN8(path_len) + pages / 8;
	uint8_t *buf = calloc(1, len);

	for (uint64_t p = 0; p < pages; p++)
		dirty += (uint64_t)page_dirty(bitmap, p);
	h.dirty_pages = dirty;
	if (!buf) {
		w->err = -ENOMEM;
		return;
	}
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), base->path, path_len);
	memcpy(buf + sizeof(h) + ALIGN8(path_len), bitmap, pages / 8);
	snap__add(w, SNAP_MEMORY_DIFF, 0, buf, len);
	free(buf);
}

int snapdiff__parse(const struct snapshot *s, struct snapdiff *d)
{
	size_t len;
	const uint8_t *p = snap__find(&s->r, SNAP_MEMORY_DIFF, 0, &len);
	uint64_t pages = s->r.hdr.mem_size / PAGE;

	if (!p)
		return 0;
	if (len < sizeof(d->hdr))
		goto bad;
	memcpy(&d->hdr, p, sizeof(d->hdr));
	if (d->hdr.path_len < 2 || d->hdr.path_len > PATH_MAX ||
	    d->hdr.bitmap_bytes != pages / 8 ||
	    len != sizeof(d->hdr) + ALIGN8(d->hdr.path_len) + pages / 8 ||
	    p[sizeof(d->hdr) + d->hdr.path_len - 1] != '\0')
		goto bad;
	/* Sections are 8-byte aligned in the image, so is the bitmap. */
	d->base_path = (const char *)p + sizeof(d->hdr);
	d->bitmap = (const uint64_t *)(const void *)(p + sizeof(d->hdr) +
						     ALIGN8(d->hdr.path_len));
	if (s->mem.compression)
		return err__set(EINVAL, "%s: a diff snapshot's memory must be "
				"raw", s->dir);
	return 1;
bad:
	return err__set(EINVAL, "%s: section memory.diff is malformed (%zu "
			"bytes for %llu pages)", s->dir, len,
			(unsigned long long)pages);
}

int snapdiff__check_base(const struct snapdiff *d, const char *diff_dir,
			 const struct snapshot *base)
{
	struct snap_trailer t;

	memcpy(&t, base->state + base->state_len - sizeof(t), sizeof(t));
	/* The merge walks the base's pages through the diff's bitmap and
	 * file, which snapdiff__parse sized by the diff's own memory. */
	if (d->hdr.bitmap_bytes * 8 * PAGE != base->r.hdr.mem_size)
		return err__set(EINVAL, "%s has %llu bytes of memory, its base "
				"%s %llu: a diff keeps its base's memory size",
				diff_dir,
				(unsigned long long)(d->hdr.bitmap_bytes * 8 *
						     PAGE),
				base->dir,
				(unsigned long long)base->r.hdr.mem_size);
	if (d->hdr.base_mem_size != base->r.hdr.mem_size)
		return err__set(EINVAL, "%s is a diff of a %llu-byte snapshot; "
				"%s has %llu bytes of memory", diff_dir,
				(unsigned long long)d->hdr.base_mem_size,
				base->dir,
				(unsigned long long)base->r.hdr.mem_size);
	if (d->hdr.base_crc32 != t.crc32 ||
	    d->hdr.base_created_ns != base->r.hdr.created_ns)
		return err__set(EINVAL, "%s was not taken against %s (its base "
				"has state CRC 0x%08x, created %llu; %s has "
				"0x%08x, created %llu)", diff_dir, base->dir,
				d->hdr.base_crc32,
				(unsigned long long)d->hdr.base_created_ns,
				base->dir, t.crc32,
				(unsigned long long)base->r.hdr.created_ns);
	return 0;
}

static int is_zero_page(const uint8_t *p)
{
	const uint64_t *w = (const uint64_t *)(const void *)p;

	for (size_t i = 0; i < PAGE / 8; i++)
		if (w[i])
			return 0;
	return 1;
}

int snapdiff__write_pages(int fd, const uint8_t *src, uint64_t off,
			  size_t len, uint64_t *data)
{
	size_t start = 0, run = 0;

	for (size_t at = 0; at <= len; at += PAGE) {
		int keep = at < len && !is_zero_page(src + at);

		if (keep && !run)
			start = at;
		if (keep) {
			run += PAGE;
			continue;
		}
		if (!run)
			continue;
		int ret = fileio__pwrite_all(fd, src + start, run, off + start);

		if (ret < 0)
			return err__sys(-ret, "writing the memory file");
		*data += run;
		run = 0;
	}
	return 0;
}

/* The layers being merged: a full base and diffs above it, in order. */
struct merge {
	uint64_t size;
	int base_fd;
	unsigned int n;
	const int *diff_fds;
	const struct snapdiff *diffs;
	uint8_t *src; /* per page: SRC_ZERO, SRC_BASE or 2 + diff index */
};

static int mark_base(void *ctx, uint64_t start, uint64_t end)
{
	struct merge *m = ctx;

	for (uint64_t p = start / PAGE; p < (end + PAGE - 1) / PAGE; p++)
		m->src[p] = SRC_BASE;
	return 0;
}

/* Which layer each page comes from: the last diff that wrote it, else the
 * base where its file has data, else zero. */
static int plan(struct merge *m)
{
	uint64_t pages = m->size / PAGE;
	int ret;

	m->src = calloc(pages, 1);
	if (!m->src)
		return err__set(ENOMEM, "planning a merge of %llu pages",
				(unsigned long long)pages);
	ret = mem_source__for_each_extent(m->base_fd, m->size, mark_base, m);
	for (unsigned int i = 0; ret == 0 && i < m->n; i++)
		for (uint64_t p = 0; p < pages; p++)
			if (page_dirty(m->diffs[i].bitmap, p))
				m->src[p] = (uint8_t)(2 + i);
	return ret;
}

static int read_run(const struct merge *m, uint8_t src, uint8_t *buf,
		    uint64_t off, size_t len)
{
	int fd = src == SRC_BASE ? m->base_fd : m->diff_fds[src - 2];

	if (src == SRC_ZERO) {
		memset(buf, 0, len);
		return 0;
	}
	for (size_t at = 0; at < len;) {
		ssize_t n = pread(fd, buf + at, len - at, (off_t)(off + at));

		if (n <= 0)
			return err__sys(n < 0 ? errno : EIO, "reading %s memory "
					"at offset %llu", src == SRC_BASE
					? "the base's" : "a diff's",
					(unsigned long long)(off + at));
		at += (size_t)n;
	}
	return 0;
}

/* Writes the merged image into `out` (sized here); *data gets the bytes
 * written (non-zero pages). */
static int merge_into(struct merge *m, int out, uint64_t *data)
{
	uint64_t pages = m->size / PAGE;
	uint8_t *buf = aligned_alloc(PAGE, (size_t)RUN_PAGES * PAGE);
	int ret = buf ? plan(m) : err__set(ENOMEM, "allocating a merge buffer");

	*data = 0;
	if (ret == 0 && ftruncate(out, (off_t)m->size) < 0)
		ret = err__sys(errno, "sizing the merged memory file");
	for (uint64_t p = 0; ret == 0 && p < pages;) {
		uint64_t q = p + 1;

		while (q < pages && q - p < RUN_PAGES && m->src[q] == m->src[p])
			q++;
		size_t len = (size_t)(q - p) * PAGE;
		if (m->src[p] != SRC_ZERO) {
			ret = read_run(m, m->src[p], buf, p * PAGE, len);
			if (ret == 0)
				ret = snapdiff__write_pages(out, buf, p * PAGE,
							    len, data);
		}
		p = q;
	}
	free(m->src);
	m->src = NULL;
	free(buf);
	return ret;
}

/* A diff's devices must be its base's: the same drives on the same
 * images (its disk.N lie on the base's) and vsock or not. */
static int same_devices(const struct snapshot *base,
			const struct snapshot *diff)
{
	const struct snap_virtio_rec *a = &base->virtio, *b = &diff->virtio;

	if (a->nr_drives != b->nr_drives || a->vsock != b->vsock ||
	    a->vsock_cid != b->vsock_cid)
		return err__set(EINVAL, "%s: its base %s has other virtio "
				"devices (%u drives%s, it %u%s)", diff->dir,
				base->dir, a->nr_drives, a->vsock ? ", vsock"
				: "", b->nr_drives, b->vsock ? ", vsock" : "");
	for (uint32_t i = 0; i < a->nr_drives; i++) {
		const struct snap_drive_rec *x = &a->drive[i], *y = &b->drive[i];

		if (strcmp(x->path, y->path) || x->bytes != y->bytes ||
		    x->crc32 != y->crc32 || x->mode != y->mode)
			return err__set(EINVAL, "%s: drive %u is %s, its base "
					"%s's is %s (or another image at that "
					"path)", diff->dir, i, y->path,
					base->dir, x->path);
	}
	return 0;
}

/* The diff's chain: its base's, then its base. */
static int extend_chain(struct snapshot *s, struct snapshot *base)
{
	char (*c)[PATH_MAX] = realloc(base->chain, (base->chain_len + 1) *
						       sizeof(*c));

	if (!c)
		return err__set(ENOMEM, "%s: its chain of snapshots", s->dir);
	memcpy(c[base->chain_len], base->dir, sizeof(c[0]));
	s->chain = c;
	s->chain_len = base->chain_len + 1;
	base->chain = NULL; /* now s's */
	base->chain_len = 0;
	return 0;
}

/* Opens the base a diff names and checks it is the diff's base. */
static int open_base(const struct snapdiff *d, const struct snapshot *diff,
		     unsigned int depth, struct snapshot *base)
{
	const char *diff_dir = diff->dir;
	int ret;

	if (depth >= SNAPDIFF_MAX_CHAIN)
		return err__set(ELOOP, "%s: more than %u diffs above a full "
				"snapshot (or a loop)", diff_dir,
				SNAPDIFF_MAX_CHAIN);
	ret = snapshot__open_layer(base, d->base_path);
	if (ret < 0) {
		char why[512];

		snprintf(why, sizeof(why), "%s", err__last());
		return err__set(-ret, "%s is a diff whose base %s cannot be "
				"used: %s", diff_dir, d->base_path, why);
	}
	ret = snapdiff__check_base(d, diff_dir, base);
	if (ret == 0)
		ret = same_devices(base, diff);
	if (ret == 0)
		ret = snapdiff__materialize(base, depth + 1);
	if (ret == 0 && base->compressed)
		ret = err__set(EINVAL, "%s: its base %s is compressed; diffs "
			       "need a raw base", diff_dir, base->dir);
	if (ret < 0)
		snapshot__close(base);
	return ret;
}

/* The pages a diff wrote, written over a materialized base's memfd in
 * place (a dirty page the diff holds as a hole is zeros): what a chain
 * costs is then its dirty pages, not a full copy of memory per link. */
static int apply_in_place(int fd, const struct snapdiff *d, int diff_fd,
			  uint64_t size)
{
	uint64_t pages = size / PAGE;
	uint8_t *buf = aligned_alloc(PAGE, (size_t)RUN_PAGES * PAGE);
	struct merge m = { .size = size, .diff_fds = &diff_fd };
	int ret = buf ? 0 : err__set(ENOMEM, "allocating a merge buffer");

	for (uint64_t p = 0; ret == 0 && p < pages;) {
		uint64_t q = p;

		if (!page_dirty(d->bitmap, p)) {
			p++;
			continue;
		}
		while (q < pages && q - p < RUN_PAGES && page_dirty(d->bitmap, q))
			q++;
		ret = read_run(&m, 2, buf, p * PAGE, (size_t)(q - p) * PAGE);
		if (ret == 0 &&
		    (ret = fileio__pwrite_all(fd, buf, (size_t)(q - p) * PAGE,
					      p * PAGE)) < 0)
			ret = err__sys(-ret, "writing the merged memory");
		p = q;
	}
	free(buf);
	return ret;
}

int snapdiff__materialize(struct snapshot *s, unsigned int depth)
{
	struct snapshot base;
	struct snapdiff d;
	uint64_t data;
	int fd, ret = snapdiff__parse(s, &d);

	if (ret <= 0)
		return ret;
	ret = open_base(&d, s, depth, &base);
	if (ret < 0)
		return ret;
	ret = extend_chain(s, &base);
	if (ret < 0) {
		snapshot__close(&base);
		return ret;
	}
	if (base.diff_base) { /* its memfd is ours: the diff goes on it */
		ret = apply_in_place(base.mem_fd, &d, s->mem_fd,
				     s->r.hdr.mem_size);
		fd = base.mem_fd;
		base.mem_fd = -1;
	} else if ((fd = memfd_create("coldstart-merged", MFD_CLOEXEC)) < 0) {
		ret = err__sys(errno, "memfd_create for the merged memory");
	} else {
		struct merge m = { .size = s->r.hdr.mem_size,
				   .base_fd = base.mem_fd, .n = 1,
				   .diff_fds = &s->mem_fd, .diffs = &d };

		ret = merge_into(&m, fd, &data);
	}
	snapshot__close(&base);
	if (ret < 0) {
		if (fd >= 0)
			close(fd);
		return ret;
	}
	close(s->mem_fd);
	s->mem_fd = fd;
	s->mem_file_bytes = s->r.hdr.mem_size;
	s->diff_base = true;
	return 0;
}

int snapshot__open(struct snapshot *s, const char *dir)
{
	int ret = snapshot__open_layer(s, dir);

	if (ret == 0)
		ret = snapdiff__materialize(s, 0);
	if (ret < 0)
		snapshot__close(s);
	return ret;
}

/* Opens every diff as a layer and checks that each was taken against the
 * one before it (the first against `base`). */
static int open_diffs(const struct snapshot *base, char *const *dirs,
		      unsigned int n, struct snapshot *s, struct snapdiff *d)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; ret == 0 && i < n; i++) {
		ret = snapshot__open_layer(&s[i], dirs[i]);
		if (ret < 0)
			break;
		ret = snapdiff__parse(&s[i], &d[i]);
		if (ret == 0)
			ret = err__set(EINVAL, "%s is a full snapshot, not a "
				       "diff", dirs[i]);
		if (ret > 0)
			ret = snapdiff__check_base(&d[i], dirs[i],
						   i ? &s[i - 1] : base);
		if (ret < 0)
			snapshot__close(&s[i]);
	}
	if (ret < 0)
		while (i-- > 0)
			snapshot__close(&s[i]);
	return ret < 0 ? ret : 0;
}

/* The last diff's state without its memory.diff section, with the memory
 * section describing the merged file. */
static int merged_state(const struct snapshot *top, uint64_t data,
			const struct snap_virtio_rec *virtio,
			struct snap_writer *w)
{
	struct snap_header hdr = top->r.hdr;
	struct snap_section sec;
	struct timespec now;
	const void *payload;
	size_t cursor = 0;

	clock_gettime(CLOCK_REALTIME, &now);
	hdr.created_ns = (uint64_t)now.tv_sec * 1000000000ull +
			 (uint64_t)now.tv_nsec;
	snap__begin(w, &hdr);
	while (snap__next(&top->r, &cursor, &sec, &payload)) {
		struct snap_memory mem = top->mem;

		if (sec.type == SNAP_MEMORY_DIFF)
			continue;
		if (sec.type == SNAP_MEMORY && sec.index == 0) {
			mem.data_bytes = data;
			snap__add(w, sec.type, 0, &mem, sizeof(mem));
			continue;
		}
		if (sec.type == SNAP_VM_VIRTIO && sec.index == 0) {
			snap__add(w, sec.type, 0, virtio, sizeof(*virtio));
			continue;
		}
		snap__add(w, sec.type, sec.index, payload, (size_t)sec.len);
	}
	return snap__finish(w);
}

/* The disks of the merged snapshot: the base's chain, the base and the
 * diffs, each diff's devices checked against the base's. */
static int merge_disks(const struct snapshot *base, const struct snapshot *s,
		       unsigned int n, const char *tmp,
		       struct snap_virtio_rec *virtio, uint64_t *bytes)
{
	const char *dirs[2 * SNAPDIFF_MAX_CHAIN + 1];
	unsigned int k = 0;
	int ret = 0;

	for (unsigned int i = 0; ret == 0 && i < n; i++)
		ret = same_devices(base, &s[i]);
	if (ret < 0 || !virtio->nr_drives)
		return ret;
	for (unsigned int i = 0; i < base->chain_len; i++)
		dirs[k++] = base->chain[i];
	dirs[k++] = base->dir;
	for (unsigned int i = 0; i < n; i++)
		dirs[k++] = s[i].dir;
	return guestdev__merge_disks(virtio, dirs, k, tmp, bytes);
}

static int merge_write(const struct snapshot *base, const struct snapshot *s,
		       const struct snapdiff *d, unsigned int n,
		       const char *out, bool replace,
		       struct snapshot_stats *st)
{
	struct snap_writer w = { 0 };
	struct snap_virtio_rec virtio = s[n - 1].virtio;
	char tmp[PATH_MAX];
	int fds[SNAPDIFF_MAX_CHAIN];
	struct merge m = { .size = base->r.hdr.mem_size,
			   .base_fd = base->mem_fd, .n = n, .diff_fds = fds,
			   .diffs = d };
	int fd, ret = snapshot__begin_dir(out, replace, tmp);

	if (ret < 0)
		return ret;
	for (unsigned int i = 0; i < n; i++)
		fds[i] = s[i].mem_fd;
	fd = snapshot__new_file(tmp, SNAPSHOT_MEMORY_FILE);
	ret = fd < 0 ? fd : merge_into(&m, fd, &st->mem_data_bytes);
	if (ret == 0 && fsync(fd) < 0)
		ret = err__sys(errno, "fsync of the merged memory file");
	if (fd >= 0)
		close(fd);
	if (ret == 0)
		ret = merge_disks(base, s, n, tmp, &virtio, &st->disk_bytes);
	if (ret == 0)
		ret = merged_state(&s[n - 1], st->mem_data_bytes, &virtio, &w);
	if (ret == 0)
		ret = snapshot__write_file(tmp, SNAPSHOT_STATE_FILE, w.buf,
					   w.len);
	if (ret == 0)
		ret = snapshot__commit_dir(tmp, out, replace);
	if (ret < 0)
		snapshot__abort_dir(tmp);
	st->state_bytes = w.len;
	free(w.buf);
	return ret;
}

int snapshot__merge(const char *base_dir, char *const *diffs, unsigned int n,
		    const char *out, unsigned int flags,
		    struct snapshot_stats *st)
{
	struct snapshot base, s[SNAPDIFF_MAX_CHAIN];
	struct snapdiff d[SNAPDIFF_MAX_CHAIN];
	uint64_t t0 = timeline__now();
	int ret;

	memset(st, 0, sizeof(*st));
	if (n == 0 || n > SNAPDIFF_MAX_CHAIN)
		return err__set(EINVAL, "merge takes 1 to %u diffs, not %u",
				SNAPDIFF_MAX_CHAIN, n);
	ret = snapshot__open(&base, base_dir);
	if (ret < 0)
		return ret;
	if (base.compressed) {
		snapshot__close(&base);
		return err__set(EINVAL, "%s is compressed; a merge needs a raw "
				"base", base_dir);
	}
	ret = open_diffs(&base, diffs, n, s, d);
	if (ret == 0) {
		ret = merge_write(&base, s, d, n, out, flags & SNAPSHOT_REPLACE,
				  st);
		for (unsigned int i = 0; i < n; i++)
			snapshot__close(&s[i]);
	}
	st->mem_size = base.r.hdr.mem_size;
	st->mem_file_bytes = st->mem_data_bytes;
	st->ns = timeline__now() - t0;
	snapshot__close(&base);
	return ret;
}

int snapshot__open_named(struct snapshot *s, const char *dir)
{
	struct stat st;
	char why[512];
	int ret;

	if (stat(dir, &st) < 0)
		return err__sys(errno, "snapshot directory %s", dir);
	if (!S_ISDIR(st.st_mode))
		return err__set(EINVAL, "%s is not a directory (a snapshot is "
				"a directory made by `coldstart snapshot "
				"create`)", dir);
	ret = snapshot__open(s, dir);
	if (ret < 0) {
		snprintf(why, sizeof(why), "%s", err__last());
		return err__set(EINVAL, "%s is not a snapshot coldstart can "
				"restore: %s", dir, why);
	}
	return 0;
}
