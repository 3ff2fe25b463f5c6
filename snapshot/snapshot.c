/* Saving and restoring snapshots: the VM and its guest into a snapshot
 * directory (snapdir.c writes it), and back into a new VM. */
#include "snapshot.h"

#include "devstate.h"
#include "diff.h"
#include "err.h"
#include "fileio.h"
#include "guest.h"
#include "mem.h"
#include "regfile.h"
#include "state_x86.h"
#include "tmpdir.h"
#include "vm.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096u
#define WRITE_CHUNK (1u << 20)

static int is_zero(const uint8_t *p, size_t len)
{
	const uint64_t *w = (const uint64_t *)p;

	for (size_t i = 0; i < len / 8; i++)
		if (w[i])
			return 0;
	return 1;
}

static int save_raw(const struct guest_mem *mem,
		    const unsigned char *resident, int fd, uint64_t *data);

/* Residency of every page, where a page that is not resident is known to
 * be zero (anonymous and memfd memory; not a lazily mapped file); else
 * NULL and every page is read. Skipping those pages also spares the reads
 * from faulting them in. */
static unsigned char *resident_pages(const struct guest_mem *mem)
{
	unsigned char *vec;

	if (mem->ops->file_pages)
		return NULL;
	vec = malloc(mem->size / PAGE);
	if (vec && mincore(mem->host, mem->size, vec) < 0) {
		free(vec);
		vec = NULL;
	}
	return vec;
}

/* Writes guest memory compressed, or raw with holes for zero pages. */
static int save_memory(const struct guest_mem *mem, int fd, bool compress,
		       uint64_t *data, uint64_t *file)
{
	unsigned char *resident = resident_pages(mem);
	int ret;

	if (compress) {
		ret = zmem__write(mem->host, mem->size, resident, fd, data,
				  file);
		free(resident);
		if (ret == 0 && fsync(fd) < 0)
			ret = err__sys(errno, "fsync of the memory file");
		return ret;
	}
	ret = save_raw(mem, resident, fd, data);
	free(resident);
	*file = *data;
	return ret;
}
static int save_raw(const struct guest_mem *mem,
		    const unsigned char *resident, int fd, uint64_t *data)
{
	size_t run = 0, start = 0;
	int ret = 0;

	if (ftruncate(fd, (off_t)mem->size) < 0)
		return err__sys(errno, "sizing the memory file");
	*data = 0;
	for (size_t off = 0; ret == 0 && off <= mem->size; off += PAGE) {
		int keep = off < mem->size &&
			   (!resident || (resident[off / PAGE] & 1)) &&
			   !is_zero(mem->host + off, PAGE);

		if (keep && run == 0)
			start = off;
		if (keep)
			run += PAGE;
		if (run && (!keep || run == WRITE_CHUNK)) {
			ret = fileio__pwrite_all(fd, mem->host + start, run,
						 start);
			*data += run;
			start += run;
			run = 0;
		}
	}
	if (ret < 0)
		return err__sys(-ret, "writing the memory file");
	if (fsync(fd) < 0)
		return err__sys(errno, "fsync of the memory file");
	return 0;
}

static void probe_record(const struct probe *probe, struct snap_probe *rec)
{
	const struct probe_params *p = &probe->params;
	struct probe_state st;

	probe__save_state(probe, &st);
	memset(rec, 0, sizeof(*rec));
	*rec = (struct snap_probe){
		.init_bytes = p->init_bytes, .ws_bytes = p->ws_bytes,
		.compute_iters = p->compute_iters, .seed = p->seed,
		.pattern = p->pattern, .op = p->op, .stride = p->stride,
		.misbehave = p->misbehave, .ready = st.ready, .done = st.done,
		.checksum = st.checksum, .pages = st.pages, .ucalls = st.ucalls,
	};
	memcpy(rec->phase, st.phase, sizeof(rec->phase));
}

/* What makes a save a diff: the base and the pages written since. */
struct diff_of {
	const struct snapshot_id *base;
	const uint64_t *dirty;
};

/* The guest in the VM: the probe (device.probe) or an OS (vm.guest). */
struct guest_of {
	const struct probe *probe;
	const struct snap_guest_rec *os;
	const struct snap_guest_virtio *virtio;
};

static void add_guest(struct snap_writer *w, const struct guest_of *g)
{
	struct snap_probe rec;

	if (g->os) {
		snap__add(w, SNAP_VM_GUEST, 0, g->os, sizeof(*g->os));
		if (g->virtio)
			snap__add(w, SNAP_VM_VIRTIO, 0, g->virtio->rec,
				  sizeof(*g->virtio->rec));
		return;
	}
	probe_record(g->probe, &rec);
	snap__add(w, SNAP_DEV_PROBE, 0, &rec, sizeof(rec));
}

static int build_state(struct vm *vm, const struct guest_of *guest,
		       uint64_t data_bytes, bool compress,
		       const struct diff_of *diff, struct snap_writer *w)
{
	struct snap_header hdr = { .mem_size = vm->mem.size,
				   .nr_vcpus = vm->nr_vcpus,
				   .flavour = vm->kvm->flavour };
	struct snap_vm_config cfg = { .mem_size = vm->mem.size,
				      .nr_vcpus = vm->nr_vcpus,
				      .cpuid = vm->cpuid,
				      .strict_io = vm->io.strict,
				      .guest = guest->os ? guest->os->kind
							 : SNAP_GUEST_PROBE,
				      .irqchip = vm->irqchip };
	struct snap_memory mem = { .size = vm->mem.size,
				   .data_bytes = data_bytes,
				   .page_size = PAGE,
				   .compression = compress ? 1 : 0 };
	struct timespec now;
	int ret;

	clock_gettime(CLOCK_REALTIME, &now);
	hdr.created_ns = (uint64_t)now.tv_sec * 1000000000ull +
			 (uint64_t)now.tv_nsec;
	state__cpu_vendor(hdr.cpu_vendor);
	snap__begin(w, &hdr);
	snap__add(w, SNAP_VM_CONFIG, 0, &cfg, sizeof(cfg));
	snap__add(w, SNAP_MEMORY, 0, &mem, sizeof(mem));
	add_guest(w, guest);
	ret = state__save_vm(vm, w);
	if (ret == 0)
		ret = devstate__save(vm, w);
	if (ret == 0 && diff)
		snapdiff__add_section(w, diff->base, diff->dirty, vm->mem.size);
	if (ret == 0)
		ret = snap__finish(w);
	return ret;
}

/* The pages written since the base, non-zero ones only, as a diff's
 * memory file. */
static int save_dirty(const struct guest_mem *mem, const uint64_t *dirty,
		      int fd, uint64_t *data)
{
	uint64_t pages = mem->size / PAGE;
	int ret = 0;

	*data = 0;
	if (ftruncate(fd, (off_t)mem->size) < 0)
		return err__sys(errno, "sizing the memory file");
	for (uint64_t p = 0; ret == 0 && p < pages; p++) {
		uint64_t q = p;

		if (!(dirty[p / 64] & (1ull << (p % 64))))
			continue;
		while (q + 1 < pages && q + 1 - p < WRITE_CHUNK / PAGE &&
		       (dirty[(q + 1) / 64] & (1ull << ((q + 1) % 64))))
			q++;
		ret = snapdiff__write_pages(fd, mem->host + p * PAGE, p * PAGE,
					    (size_t)(q - p + 1) * PAGE, data);
		p = q;
	}
	if (ret == 0 && fsync(fd) < 0)
		ret = err__sys(errno, "fsync of the memory file");
	return ret;
}

/* Each overlay drive's written blocks as disk.N in `tmp`. */
static int save_disks(const struct snap_guest_virtio *v, const char *tmp,
		      bool all, uint64_t *bytes)
{
	*bytes = 0;
	for (uint32_t i = 0; v && i < v->rec->nr_drives; i++) {
		char name[32];
		uint64_t n = 0;
		int fd, ret;

		if (v->rec->drive[i].mode != SNAP_DRIVE_OVERLAY)
			continue;
		snprintf(name, sizeof(name), SNAPSHOT_DISK_FILE_FMT, i);
		fd = snapshot__new_file(tmp, name);
		if (fd < 0)
			return fd;
		ret = v->save_disk(v->ctx, i, fd, all, &n);
		if (ret == 0 && fsync(fd) < 0)
			ret = err__sys(errno, "fsync of %s", name);
		close(fd);
		if (ret < 0)
			return ret;
		/* the record, written after this, names what it holds */
		v->rec->drive[i].layer_bytes = n;
		*bytes += n;
	}
	return 0;
}

static void hold_devices(struct vm *vm, bool on)
{
	for (unsigned int i = 0; i < vm->nr_devices; i++)
		if (vm->devices[i].ops->hold)
			vm->devices[i].ops->hold(vm->devices[i].dev, on);
}

static int save_held(struct vm *vm, const struct guest_of *guest,
		     const char *dir, unsigned int flags,
		     const struct diff_of *diff, struct snapshot_stats *st);

static int save(struct vm *vm, const struct guest_of *guest,
		const char *dir, unsigned int flags, const struct diff_of *diff,
		struct snapshot_stats *st)
{
	int ret;

	hold_devices(vm, true);
	ret = save_held(vm, guest, dir, flags, diff, st);
	hold_devices(vm, false);
	return ret;
}

static int save_held(struct vm *vm, const struct guest_of *guest,
		     const char *dir, unsigned int flags,
		     const struct diff_of *diff, struct snapshot_stats *st)
{
	bool replace = flags & SNAPSHOT_REPLACE;
	bool compress = flags & SNAPSHOT_COMPRESS;
	char tmp[PATH_MAX];
	struct snap_writer w = { 0 };
	uint64_t t0 = timeline__now();
	int fd, ret;

	memset(st, 0, sizeof(*st));
	if (diff && compress)
		return err__set(EINVAL, "a diff snapshot cannot be compressed "
				"(merge it, then compress a full snapshot)");
	ret = snapshot__begin_dir(dir, replace, tmp);
	if (ret < 0)
		return ret;
	fd = snapshot__new_file(tmp, SNAPSHOT_MEMORY_FILE);
	if (fd >= 0 && diff) {
		ret = save_dirty(&vm->mem, diff->dirty, fd, &st->mem_data_bytes);
		st->mem_file_bytes = st->mem_data_bytes;
	} else if (fd >= 0) {
		ret = save_memory(&vm->mem, fd, compress, &st->mem_data_bytes,
				  &st->mem_file_bytes);
	} else {
		ret = fd;
	}
	if (fd >= 0)
		close(fd);
	if (ret == 0)
		ret = save_disks(guest->virtio, tmp, !diff, &st->disk_bytes);
	if (ret == 0)
		ret = build_state(vm, guest, st->mem_data_bytes, compress, diff,
				  &w);
	if (ret == 0)
		ret = snapshot__write_file(tmp, SNAPSHOT_STATE_FILE, w.buf,
					   w.len);
	if (ret == 0)
		ret = snapshot__commit_dir(tmp, dir, replace);
	if (ret < 0)
		snapshot__abort_dir(tmp);
	st->state_bytes = w.len;
	st->mem_size = vm->mem.size;
	st->ns = timeline__now() - t0;
	free(w.buf);
	return ret;
}

int snapshot__save(struct vm *vm, const struct probe *probe, const char *dir,
		   unsigned int flags, struct snapshot_stats *st)
{
	struct guest_of guest = { .probe = probe };

	return save(vm, &guest, dir, flags, NULL, st);
}

int snapshot__save_guest(struct vm *vm, const struct snap_guest_rec *os,
			 const struct snap_guest_virtio *virtio,
			 const char *dir, unsigned int flags,
			 struct snapshot_stats *st)
{
	struct guest_of guest = { .os = os, .virtio = virtio };

	if (!vm->irqchip)
		return err__set(EINVAL, "an OS guest's snapshot needs the "
				"in-kernel irqchip");
	return save(vm, &guest, dir, flags, NULL, st);
}

int snapshot__save_diff(struct vm *vm, const struct probe *probe,
			const char *dir, unsigned int flags,
			const struct snapshot_id *base, const uint64_t *dirty,
			struct snapshot_stats *st)
{
	struct diff_of diff = { .base = base, .dirty = dirty };
	struct guest_of guest = { .probe = probe };

	return save(vm, &guest, dir, flags, &diff, st);
}

int snapshot__save_guest_diff(struct vm *vm, const struct snap_guest_rec *os,
			      const struct snap_guest_virtio *virtio,
			      const char *dir, unsigned int flags,
			      const struct snapshot_id *base,
			      const uint64_t *dirty, struct snapshot_stats *st)
{
	struct diff_of diff = { .base = base, .dirty = dirty };
	struct guest_of guest = { .os = os, .virtio = virtio };

	if (!vm->irqchip)
		return err__set(EINVAL, "an OS guest's snapshot needs the "
				"in-kernel irqchip");
	return save(vm, &guest, dir, flags, &diff, st);
}

void snapshot__shell_config(const struct snapshot *s, struct vm_config *cfg)
{
	*cfg = (struct vm_config){
		.mem_size = s->cfg.mem_size,
		.nr_vcpus = s->cfg.nr_vcpus,
		.strict_io = s->cfg.strict_io,
		.cpuid = VM_CPUID_NONE, /* the saved CPUID is restored */
		.irqchip = s->cfg.irqchip,
		.io_threads = s->virtio.nr_drives + s->virtio.vsock,
	};
}

/* -EINVAL naming the first way `vm` is not the shell the snapshot needs. */
static int check_shell(const struct vm *vm, const struct snapshot *s)
{
	if (vm->mem_size != s->cfg.mem_size)
		return err__set(EINVAL, "the shell has %llu bytes of memory, the "
				"snapshot %llu",
				(unsigned long long)vm->mem_size,
				(unsigned long long)s->cfg.mem_size);
	if (vm->nr_vcpus != s->cfg.nr_vcpus)
		return err__set(EINVAL, "the shell has %u vCPUs, the snapshot "
				"%u", vm->nr_vcpus, s->cfg.nr_vcpus);
	if (vm->irqchip != (s->cfg.irqchip != 0))
		return err__set(EINVAL, "the shell %s the in-kernel irqchip, "
				"the snapshot %s", vm->irqchip ? "has" : "lacks",
				s->cfg.irqchip ? "has it" : "does not");
	if (vm->io.strict != (s->cfg.strict_io != 0))
		return err__set(EINVAL, "the shell's strict_io is %d, the "
				"snapshot's %u", vm->io.strict,
				s->cfg.strict_io);
	if (vm->cpuid != VM_CPUID_NONE)
		return err__set(EINVAL, "the shell's vCPUs were given CPUID; a "
				"restore sets the saved one (make the shell "
				"with VM_CPUID_NONE)");
	return 0;
}

/* The one restore sequence: the shell (VM, irqchip, vCPUs) gets its memory
 * first, as every VM state below may refer to it (KVM's paravirtual MSRs
 * name guest addresses, and PAE paging would read PDPTEs); then `setup`
 * rebuilds the guest's machine (traps and devices; no guest memory or vCPU
 * state), then vCPU, VM and device state are restored. */
static int restore_into(struct vm *vm, struct snapshot *s,
			const struct guest_mem_ops *strategy,
			struct timeline *tl,
			int (*setup)(struct vm *vm, void *ctx), void *ctx)
{
	char wset[PATH_MAX];
	struct mem_source src = { .fd = s->mem_fd,
				  .bytes = s->mem_file_bytes };
	int ret = check_shell(vm, s);

	if (ret == 0)
		ret = state__check_host(vm->kvm, &s->r);
	if (ret < 0)
		return ret;
	if (snapshot__join(wset, s->dir, SNAPSHOT_WSET_FILE) == 0)
		src.wset_path = wset;
	if (s->compressed)
		src.zmem = &s->zmem;
	vm__set_timeline(vm, tl);
	ret = vm__fill_shell(vm, strategy, &src);
	if (ret == 0)
		ret = setup(vm, ctx);
	if (ret == 0)
		ret = state__restore_vm(vm, &s->r);
	if (ret == 0)
		ret = devstate__restore(vm, &s->r);
	return ret;
}

/* A new shell for the snapshot, restored into at once. */
static int restore(struct kvm_host *kvm, struct snapshot *s,
		   const struct guest_mem_ops *strategy, struct timeline *tl,
		   int (*setup)(struct vm *vm, void *ctx), void *ctx,
		   struct vm **out)
{
	struct vm_config cfg;
	struct vm *vm;
	int ret;

	snapshot__shell_config(s, &cfg);
	ret = vm__create_shell(kvm, &cfg, tl, &vm);
	if (ret < 0)
		return ret;
	ret = restore_into(vm, s, strategy, tl, setup, ctx);
	if (ret < 0) {
		vm__destroy(vm);
		return ret;
	}
	*out = vm;
	return 0;
}

struct probe_setup {
	struct probe *probe;
	const struct snapshot *s;
};

static int attach_probe(struct vm *vm, void *ctx)
{
	struct probe_setup *ps = ctx;

	return probe__attach(ps->probe, vm, &ps->s->params,
			     &ps->s->probe_state);
}

static int need_probe(const struct snapshot *s)
{
	if (s->cfg.guest != SNAP_GUEST_PROBE)
		return err__set(EINVAL, "%s holds a Linux guest, not the probe "
				"guest", s->dir);
	return 0;
}

int snapshot__restore(struct kvm_host *kvm, struct snapshot *s,
		      const struct guest_mem_ops *strategy,
		      struct timeline *tl, struct vm **out,
		      struct probe *probe)
{
	struct probe_setup ps = { probe, s };
	int ret = need_probe(s);

	return ret < 0 ? ret
		       : restore(kvm, s, strategy, tl, attach_probe, &ps, out);
}

int snapshot__restore_into(struct vm *shell, struct snapshot *s,
			   const struct guest_mem_ops *strategy,
			   struct timeline *tl, struct probe *probe)
{
	struct probe_setup ps = { probe, s };
	int ret = need_probe(s);

	return ret < 0 ? ret
		       : restore_into(shell, s, strategy, tl, attach_probe,
				      &ps);
}

int snapshot__restore_guest(struct kvm_host *kvm, struct snapshot *s,
			    const struct guest_mem_ops *strategy,
			    struct timeline *tl,
			    int (*setup)(struct vm *vm, void *ctx), void *ctx,
			    struct vm **out)
{
	if (s->cfg.guest == SNAP_GUEST_PROBE)
		return err__set(EINVAL, "%s holds the probe guest, not an OS "
				"guest", s->dir);
	return restore(kvm, s, strategy, tl, setup, ctx, out);
}

int snapshot__restore_guest_into(struct vm *shell, struct snapshot *s,
				 const struct guest_mem_ops *strategy,
				 struct timeline *tl,
				 int (*setup)(struct vm *vm, void *ctx),
				 void *ctx)
{
	if (s->cfg.guest == SNAP_GUEST_PROBE)
		return err__set(EINVAL, "%s holds the probe guest, not an OS "
				"guest", s->dir);
	return restore_into(shell, s, strategy, tl, setup, ctx);
}
