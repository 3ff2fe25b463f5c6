/* One timed restore and the snapshot files' page-cache state (restore.h). */
#include "restore.h"
#include "restore_int.h"

#include "err.h"
#include "regfile.h"
#include "memstat.h"
#include "snapshot.h"
#include "vm.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* ---- page-cache state ---- */

static int for_each_file(const char *dir, int (*fn)(int fd, const char *path))
{
	char path[PATH_MAX];
	const char *file;
	int ret = 0;

	/* a snapshot's disk.N are read by a restore as its memory is */
	for (unsigned int i = 0; ret == 0 && (file = snapshot__file_name(i));
	     i++) {
		int fd;

		join(path, dir, file);
		fd = regfile__open(path, NULL); /* a FIFO must not block */
		if (fd == -ENOENT)
			continue;
		if (fd < 0)
			return fd;
		ret = fn(fd, path);
		close(fd);
	}
	return ret;
}

static int evict_file(int fd, const char *path)
{
	int ret;

	if (fsync(fd) < 0)
		return err__sys(errno, "fsync of %s", path);
	ret = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	return ret ? err__sys(ret, "posix_fadvise(DONTNEED) of %s", path) : 0;
}

static int read_file(int fd, const char *path)
{
	static char buf[1 << 20];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	return n < 0 ? err__sys(errno, "reading %s", path) : 0;
}

static int drop_caches(void)
{
	int fd, ret = 0;

	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return err__sys(errno, "--drop-caches: opening "
				"/proc/sys/vm/drop_caches (needs root)");
	if (write(fd, "1", 1) != 1)
		ret = err__sys(errno, "--drop-caches: writing "
			       "/proc/sys/vm/drop_caches");
	close(fd);
	return ret;
}

double restore__resident_share(const char *dir)
{
	char path[PATH_MAX];
	struct stat st;
	unsigned char *vec;
	size_t pages, in = 0;
	void *p;
	int fd;

	join(path, dir, SNAPSHOT_MEMORY_FILE);
	fd = regfile__open(path, NULL);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	pages = ((size_t)st.st_size + 4095) / 4096;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	vec = malloc(pages);
	if (p != MAP_FAILED && vec && mincore(p, (size_t)st.st_size, vec) == 0)
		for (size_t i = 0; i < pages; i++)
			in += vec[i] & 1;
	free(vec);
	if (p != MAP_FAILED)
		munmap(p, (size_t)st.st_size);
	return (double)in / (double)pages;
}

int restore__cache(const char *dir, enum restore_cache c)
{
	if (c == RESTORE_WARM)
		return for_each_file(dir, read_file);
	return c == RESTORE_COLD_DROP ? drop_caches()
				      : for_each_file(dir, evict_file);
}

bool restore__in_memory(const char *dir)
{
	struct statfs sf;

	return statfs(dir, &sf) == 0 && (sf.f_type == TMPFS_MAGIC ||
					 sf.f_type == RAMFS_MAGIC);
}

/* ---- one restore ---- */

static uint64_t io_read_bytes(void)
{
	long long v = memstat__file_number("/proc/self/io", "read_bytes:");

	return v < 0 ? RESTORE_NO_IO : (uint64_t)v;
}

void restore__work_begin(struct restore_work *w)
{
	struct rusage ru = { 0 };

	getrusage(RUSAGE_SELF, &ru);
	w->major = (uint64_t)ru.ru_majflt;
	w->faults = (uint64_t)ru.ru_minflt + w->major;
	w->disk_read = io_read_bytes();
}

/* *w = now - *w: the host's work since restore__work_begin(w). */
static void work_since(struct restore_work *w)
{
	struct restore_work now;

	restore__work_begin(&now);
	w->faults = now.faults - w->faults;
	w->major = now.major - w->major;
	w->disk_read = now.disk_read == RESTORE_NO_IO ||
				       w->disk_read == RESTORE_NO_IO
			       ? RESTORE_NO_IO
			       : now.disk_read - w->disk_read;
}

int restore__finish(struct vm *vm, unsigned int flags,
		    struct restore_sample *out)
{
	work_since(&out->host);
	/* a uffd handler may still be accounting its last fault */
	mem__settle(&vm->mem);
	out->mem = vm->mem.stats;
	if (!(flags & RESTORE_HELD))
		return 0;
	return memstat__self(&out->held, vm->mem.host);
}

void restore__spans(const struct timeline *tl, struct restore_sample *out)
{
	out->ns[RESTORE_FIRST_RUN] = timeline__span_ns(tl, TL_RESTORE_START, TL_FIRST_RUN);
	out->ns[RESTORE_FIRST_PROGRESS] = timeline__span_ns(tl, TL_RESTORE_START,
					       TL_FIRST_PROGRESS);
	out->ns[RESTORE_DONE] = timeline__span_ns(tl, TL_RESTORE_START, TL_GUEST_DONE);
	out->ns[RESTORE_REQUEST] = timeline__span_ns(tl, TL_FIRST_RUN, TL_GUEST_DONE);
}

static int check_outcome(const struct vm *vm, const struct probe *probe,
			 const struct snapshot *snap)
{
	struct probe_state ps;

	probe__save_state(probe, &ps);
	if (vm->outcome != VM_COMPLETED)
		return err__set(EIO, "restored guest did not complete: %s",
				vm->reason);
	if (ps.checksum != probe__expected_checksum(&snap->params,
						    snap->cfg.nr_vcpus))
		return err__set(EIO, "restored guest reported a wrong "
				"checksum");
	return 0;
}

/* The host's work is counted from just before restore start to the VM's
 * end right after DONE, before its memory is freed. */
int restore__once(struct kvm_host *kvm, const char *dir, const char *exec,
		  const struct guest_mem_ops *ops, unsigned int flags,
		  struct restore_sample *out)
{
	struct timeline tl = { 0 };
	struct snapshot snap;
	struct probe probe;
	struct vm *vm = NULL;
	int ret;

	*out = (struct restore_sample){ 0 };
	if (exec) /* restore__agent_exec gives the probe guest none */
		return err__set(EINVAL, "the probe guest runs no commands");
	restore__work_begin(&out->host);
	timeline__mark(&tl, TL_RESTORE_START);
	ret = snapshot__open(&snap, dir);
	if (ret < 0)
		return ret;
	ret = snapshot__restore(kvm, &snap, ops, &tl, &vm, &probe);
	if (ret == 0)
		ret = vm__start(vm);
	if (ret == 0) {
		vm__wait(vm, TIMEOUT_NS);
		ret = restore__finish(vm, flags, out);
		if (ret == 0)
			ret = check_outcome(vm, &probe, &snap);
	}
	vm__destroy(vm);
	snapshot__close(&snap);
	restore__spans(&tl, out);
	if (ret == 0 && out->ns[RESTORE_DONE] < 0)
		ret = err__set(EIO, "restore with %s: no DONE timestamp",
			       ops->name);
	return ret;
}
