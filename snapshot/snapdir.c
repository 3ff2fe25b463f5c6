/* Snapshot directories: written atomically (a temporary directory renamed
 * into place), and read back one layer at a time, validated. The layer
 * below diffs (diff.c) and saves (snapshot.c): it calls neither. */
#include "snapshot.h"

#include "devstate.h"
#include "err.h"
#include "fileio.h"
#include "guest.h"
#include "mem.h"
#include "output.h"
#include "regfile.h"
#include "state_x86.h"
#include "tmpdir.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE 4096u
#define MAX_STATE_BYTES (64u << 20)

int snapshot__join(char *out, const char *dir, const char *name)
{
	if (snprintf(out, PATH_MAX, "%s/%s", dir, name) >= PATH_MAX)
		return err__set(ENAMETOOLONG, "path %s/%s is too long", dir,
				name);
	return 0;
}

int snapshot__write_file(const char *dir, const char *name, const void *data,
			 size_t len)
{
	char path[PATH_MAX];
	int fd, ret = snapshot__join(path, dir, name);

	if (ret < 0)
		return ret;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0)
		return err__sys(errno, "creating %s", path);
	ret = fileio__pwrite_all(fd, data, len, 0);
	if (ret == 0 && fsync(fd) < 0)
		ret = -errno;
	close(fd);
	return ret < 0 ? err__sys(-ret, "writing %s", path) : 0;
}

int snapshot__new_file(const char *dir, const char *name)
{
	char path[PATH_MAX];
	int fd = snapshot__join(path, dir, name);

	if (fd < 0)
		return fd;
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	return fd < 0 ? err__sys(errno, "creating %s", path) : fd;
}

void snapshot__abort_dir(const char *dir)
{
	char path[PATH_MAX];
	const char *n;

	for (unsigned int i = 0; (n = snapshot__file_name(i)); i++)
		if (snapshot__join(path, dir, n) == 0)
			unlink(path);
	rmdir(dir);
}

static void fsync_parent(const char *dir)
{
	char parent[PATH_MAX];
	char *slash;
	int fd;

	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (!slash)
		snprintf(parent, sizeof(parent), ".");
	else if (slash == parent)
		parent[1] = '\0';
	else
		*slash = '\0';
	fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

/* Opens a snapshot file for reading; never blocks (a FIFO planted in a
 * snapshot directory must not hang us) and accepts regular files only. */
static int open_regular(const char *path)
{
	return regfile__open(path, NULL);
}

/* Whether `dir` is a directory holding nothing but snapshot files, with a
 * state file that starts with our magic: the only thing --force replaces. */
static bool is_snapshot_dir(const char *dir)
{
	char path[PATH_MAX], magic[sizeof(SNAP_MAGIC) - 1];
	struct dirent *e;
	bool ok = true;
	DIR *d = opendir(dir);
	int fd;

	if (!d)
		return false;
	while (ok && (e = readdir(d)))
		ok = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		     snapshot__is_file(e->d_name);
	closedir(d);
	if (!ok || snapshot__join(path, dir, SNAPSHOT_STATE_FILE) < 0)
		return false;
	fd = open_regular(path);
	if (fd < 0)
		return false;
	ok = pread(fd, magic, sizeof(magic), 0) == (ssize_t)sizeof(magic) &&
	     !memcmp(magic, SNAP_MAGIC, sizeof(magic));
	close(fd);
	return ok;
}

int snapshot__commit_dir(const char *tmp, const char *dir, bool replace)
{
	struct stat st;

	if (lstat(dir, &st) == 0) {
		if (!replace)
			return err__set(EEXIST, "%s exists (replace it with "
					"--force)", dir);
		if (!is_snapshot_dir(dir))
			return err__set(EEXIST, "%s exists and is not a "
					"coldstart snapshot; not replacing it",
					dir);
		if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dir, RENAME_EXCHANGE) < 0)
			return err__sys(errno, "replacing %s", dir);
		snapshot__abort_dir(tmp); /* now holds the old snapshot */
	} else if (rename(tmp, dir) < 0) {
		return err__sys(errno, "renaming %s to %s", tmp, dir);
	}
	fsync_parent(dir);
	return 0;
}

int snapshot__begin_dir(const char *dir, bool replace, char tmp[PATH_MAX])
{
	int ret;

	if (!replace && access(dir, F_OK) == 0)
		return err__set(EEXIST, "%s exists (replace it with --force)",
				dir);
	if (replace && access(dir, F_OK) == 0 && !is_snapshot_dir(dir))
		return err__set(EEXIST, "%s exists and is not a coldstart "
				"snapshot; not replacing it", dir);
	ret = tmpdir__template(dir, tmp);
	if (ret < 0)
		return ret;
	/* not mkdtemp, whose 0700 would need a chmod by path: a snapshot
	 * is meant to be shared like any file the user creates */
	ret = output__mkdtemp(tmp);
	return ret < 0 ? err__sys(-ret, "creating a directory next to %s", dir)
		       : 0;
}

static int read_state(struct snapshot *s)
{
	char path[PATH_MAX];
	struct stat st;
	ssize_t n;
	int fd = snapshot__join(path, s->dir, SNAPSHOT_STATE_FILE);

	if (fd < 0)
		return fd;
	fd = open_regular(path);
	if (fd == -ENOENT)
		return err__sys(ENOENT, "%s is not a snapshot: cannot open its "
				"state file", s->dir);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || st.st_size > MAX_STATE_BYTES) {
		close(fd);
		return err__set(EINVAL, "%s: state file is larger than %u MiB",
				path, MAX_STATE_BYTES >> 20);
	}
	s->state_len = (size_t)st.st_size;
	s->state = malloc(s->state_len ? s->state_len : 1);
	n = s->state ? pread(fd, s->state, s->state_len, 0) : -1;
	close(fd);
	if (n != (ssize_t)s->state_len)
		return err__sys(n < 0 ? errno : EIO, "reading %s", path);
	return 0;
}

/* Copies section (type, 0) of exactly `size` bytes into `out`. */
static int copy_section(const struct snapshot *s, uint32_t type, void *out,
			size_t size)
{
	size_t len;
	const void *p = snap__find(&s->r, type, 0, &len);

	if (!p)
		return err__set(EINVAL, "snapshot lacks section %s",
				snap__type_name(type));
	if (len != size)
		return err__set(EINVAL, "section %s has %zu bytes, expected %zu",
				snap__type_name(type), len, size);
	memcpy(out, p, size);
	return 0;
}

/* vm.config in either layout (snapshot.h). */
static int read_vm_config(struct snapshot *s)
{
	size_t len;
	const void *p = snap__find(&s->r, SNAP_VM_CONFIG, 0, &len);

	if (p && len == SNAP_VM_CONFIG_V1_SIZE) {
		memcpy(&s->cfg, p, len);
		return 0;
	}
	return copy_section(s, SNAP_VM_CONFIG, &s->cfg, sizeof(s->cfg));
}

static void params_from(const struct snap_probe *rec, struct probe_params *p,
			struct probe_state *st)
{
	*p = (struct probe_params){
		.init_bytes = rec->init_bytes, .ws_bytes = rec->ws_bytes,
		.compute_iters = rec->compute_iters, .seed = rec->seed,
		.pattern = (enum probe_pattern)rec->pattern,
		.op = (enum probe_op)rec->op, .stride = rec->stride,
		.misbehave = (enum probe_misbehave)rec->misbehave,
	};
	*st = (struct probe_state){
		.ready = rec->ready, .done = rec->done,
		.checksum = rec->checksum, .pages = rec->pages,
		.ucalls = rec->ucalls,
	};
	memcpy(st->phase, rec->phase, sizeof(st->phase));
}

static int check_config(const struct snapshot *s)
{
	const struct snap_header *h = &s->r.hdr;

	if (s->cfg.mem_size != h->mem_size || s->mem.size != h->mem_size ||
	    s->cfg.nr_vcpus != h->nr_vcpus)
		return err__set(EINVAL, "snapshot header and sections disagree "
				"on memory size or vCPU count");
	if (!h->mem_size || h->mem_size % MEM_ALIGN)
		return err__set(EINVAL, "snapshot memory size %llu is not a "
				"multiple of 2 MiB",
				(unsigned long long)h->mem_size);
	if (!h->nr_vcpus || h->nr_vcpus > PROBE_MAX_VCPUS ||
	    (s->cfg.guest != SNAP_GUEST_PROBE &&
	     s->cfg.guest != SNAP_GUEST_LINUX))
		return err__set(EINVAL, "snapshot has %u vCPUs of guest kind %u; "
				"this coldstart restores probe (1) and Linux (2) "
				"guests with 1 to %u", h->nr_vcpus, s->cfg.guest,
				PROBE_MAX_VCPUS);
	if (s->cfg.guest == SNAP_GUEST_LINUX && !s->cfg.irqchip)
		return err__set(EINVAL, "snapshot of a Linux guest without the "
				"in-kernel irqchip");
	if (s->cfg.irqchip > 1)
		return err__set(EINVAL, "snapshot VM config has irqchip %u "
				"(0 or 1)", s->cfg.irqchip);
	if (s->mem.compression > 1 || s->mem.page_size != PAGE)
		return err__set(ENOTSUP, "snapshot memory uses compression %u "
				"and page size %u; supported: raw or zstd, 4096",
				s->mem.compression, s->mem.page_size);
	return 0;
}

/* The probe's record, or the OS guest's vm.guest section; a snapshot
 * holding the other kind's section is refused. */
static int read_guest(struct snapshot *s, struct snap_probe *rec)
{
	bool probe = s->cfg.guest == SNAP_GUEST_PROBE;
	uint32_t other = probe ? SNAP_VM_GUEST : SNAP_DEV_PROBE;
	const void *p;
	size_t len;
	int ret;

	if (snap__find(&s->r, other, 0, &len))
		return err__set(EINVAL, "snapshot of a %s guest holds section "
				"%s", probe ? "probe" : "Linux",
				snap__type_name(other));
	if (probe)
		return copy_section(s, SNAP_DEV_PROBE, rec, sizeof(*rec));
	p = snap__find(&s->r, SNAP_VM_GUEST, 0, &len);
	if (!p)
		return err__set(EINVAL, "snapshot of a Linux guest lacks section "
				"vm.guest");
	ret = snapguest__parse(p, len, &s->guest);
	p = snap__find(&s->r, SNAP_VM_VIRTIO, 0, &len);
	if (ret == 0 && p)
		ret = snapguest__parse_virtio(p, len, &s->virtio);
	return ret;
}

/* Drive i's disk.N at `path`: a regular file of the drive's size, and
 * not a symbolic link, which the restore (blk_overlay__add_lower) would
 * not follow: refused here, before a VM is made. */
static int check_disk(const char *path, uint32_t i, uint64_t bytes)
{
	/* O_NONBLOCK: a FIFO opens without waiting for a writer */
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	int ret = 0;

	if (fd < 0)
		return err__sys(errno, "drive %u's written blocks, %s, %s", i,
				path, errno == ENOENT ? "are missing" :
				errno == ELOOP ? "are a symbolic link" :
				"cannot be opened");
	if (fstat(fd, &st) < 0)
		ret = err__sys(errno, "stat of %s", path);
	else if (!S_ISREG(st.st_mode))
		ret = err__set(EINVAL, "drive %u's written blocks, %s, are not "
			       "a regular file", i, path);
	else if ((uint64_t)st.st_size != bytes)
		ret = err__set(EINVAL, "drive %u's written blocks, %s, span "
			       "%llu bytes; the disk has %llu", i, path,
			       (unsigned long long)st.st_size,
			       (unsigned long long)bytes);
	close(fd);
	return ret;
}

/* Each overlay drive's disk.N. */
static int check_disks(const struct snapshot *s)
{
	for (uint32_t i = 0; i < s->virtio.nr_drives; i++) {
		const struct snap_drive_rec *d = &s->virtio.drive[i];
		char name[32], path[PATH_MAX];
		int ret;

		if (d->mode != SNAP_DRIVE_OVERLAY)
			continue;
		snprintf(name, sizeof(name), SNAPSHOT_DISK_FILE_FMT, i);
		ret = snapshot__join(path, s->dir, name);
		if (ret == 0)
			ret = check_disk(path, i, d->bytes);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int open_memory(struct snapshot *s)
{
	char path[PATH_MAX];
	struct stat st;
	int ret = snapshot__join(path, s->dir, SNAPSHOT_MEMORY_FILE);

	if (ret < 0)
		return ret;
	s->mem_fd = open_regular(path);
	if (s->mem_fd == -ENOENT)
		return err__sys(ENOENT, "cannot open the memory file %s", path);
	if (s->mem_fd < 0)
		return s->mem_fd;
	if (fstat(s->mem_fd, &st) < 0)
		return err__sys(errno, "stat of %s", path);
	s->mem_file_bytes = (uint64_t)st.st_size;
	if (s->mem.compression) {
		ret = zmem__open(&s->zmem, s->mem_fd, s->r.hdr.mem_size);
		s->compressed = ret == 0;
		return ret;
	}
	if ((uint64_t)st.st_size != s->r.hdr.mem_size)
		return err__set(EINVAL, "memory file %s is %lld bytes, the "
				"state says %llu (truncated or mismatched)",
				path, (long long)st.st_size,
				(unsigned long long)s->r.hdr.mem_size);
	return 0;
}

int snapshot__open_layer(struct snapshot *s, const char *dir)
{
	struct snap_probe rec;
	int ret;

	memset(s, 0, sizeof(*s));
	s->mem_fd = -1;
	if (snprintf(s->dir, sizeof(s->dir), "%s", dir) >= (int)sizeof(s->dir))
		return err__set(ENAMETOOLONG, "snapshot path is too long");
	ret = read_state(s);
	if (ret == 0)
		ret = snap__parse(&s->r, s->state, s->state_len);
	if (ret == 0)
		ret = read_vm_config(s);
	if (ret == 0)
		ret = copy_section(s, SNAP_MEMORY, &s->mem, sizeof(s->mem));
	if (ret == 0)
		ret = check_config(s);
	if (ret == 0)
		ret = read_guest(s, &rec);
	if (ret == 0)
		ret = state__check_irqchip(&s->r, s->cfg.irqchip,
					   s->cfg.nr_vcpus);
	if (ret == 0)
		ret = devstate__check(&s->r);
	if (ret == 0 && s->cfg.guest == SNAP_GUEST_PROBE) {
		params_from(&rec, &s->params, &s->probe_state);
		ret = probe__validate(&s->params, s->cfg.mem_size,
				      s->cfg.nr_vcpus);
	}
	if (ret == 0)
		ret = open_memory(s);
	if (ret == 0)
		ret = check_disks(s);
	if (ret < 0)
		snapshot__close(s);
	return ret;
}

int snapshot__check(const char *dir)
{
	struct snapshot s;
	int ret = snapshot__open_layer(&s, dir);

	if (ret == 0)
		snapshot__close(&s);
	return ret;
}

void snapshot__close(struct snapshot *s)
{
	if (s->compressed)
		zmem__close(&s->zmem);
	s->compressed = false;
	free(s->state);
	s->state = NULL;
	if (s->mem_fd >= 0)
		close(s->mem_fd);
	s->mem_fd = -1;
	free(s->chain);
	s->chain = NULL;
	s->chain_len = 0;
}
