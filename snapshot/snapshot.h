/* Snapshots of a paused VM running the probe guest: a directory holding
 * `state` (vCPU, VM and device state; format.h) and `memory` (raw guest
 * memory, page-aligned, sparse where the guest has only zeros).
 * Calls go one way: snapshot.c (save, restore) -> diff.c (diffs, merges,
 * snapshot__open) -> snapdir.c (directory writes, opening one layer). */
#ifndef COLDSTART_SNAPSHOT_H
#define COLDSTART_SNAPSHOT_H

#include "format.h"
#include "guest.h"
#include "probe.h"
#include "zmem.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

struct vm;
struct vm_config;
struct kvm_host;
struct guest_mem_ops;
struct timeline;

#define SNAPSHOT_STATE_FILE "state"
#define SNAPSHOT_MEMORY_FILE "memory"
/* The working set the prefetch strategy recorded (first-touch order). */
#define SNAPSHOT_WSET_FILE "wset"
/* Drive N's written blocks (guest.h, vm.virtio). */
#define SNAPSHOT_DISK_FILE_FMT "disk.%u"

/* The names of the files a snapshot directory may hold: i from 0 while
 * not NULL (state, memory, wset, disk.0 ... disk.7). */
const char *snapshot__file_name(unsigned int i);
/* Whether `name` is one of them. */
bool snapshot__is_file(const char *name);

/* The VM's shape as saved (section vm.config). */
struct snap_vm_config {
	uint64_t mem_size;
	uint32_t nr_vcpus;
	uint32_t cpuid;     /* enum vm_cpuid */
	uint32_t strict_io;
	uint32_t guest;     /* enum snap_guest */
	uint32_t irqchip;   /* 1: in-kernel PIC, IOAPIC, LAPICs and PIT */
	uint32_t reserved;
};
/* The first layout (24 bytes) had no irqchip field: read as irqchip 0. */
#define SNAP_VM_CONFIG_V1_SIZE 24

enum snap_guest {
	SNAP_GUEST_PROBE = 1,
	SNAP_GUEST_LINUX = 2,
};

/* The memory file as saved (section memory). */
struct snap_memory {
	uint64_t size;       /* bytes, = mem_size */
	uint64_t data_bytes; /* bytes written (non-zero pages) */
	uint32_t page_size;
	uint32_t compression; /* 0: raw, 1: zstd chunks (zmem.h) */
};

/* The probe device as saved (section device.probe): fixed-width fields,
 * independent of the in-memory structs' layout. */
struct snap_probe {
	uint64_t init_bytes, ws_bytes, compute_iters, seed;
	uint32_t pattern, op, stride, misbehave;
	uint32_t ready, done;
	uint64_t checksum, pages, ucalls;
	uint32_t phase[PROBE_MAX_VCPUS];
};
_Static_assert(sizeof(struct snap_probe) == 80 + 4 * PROBE_MAX_VCPUS,
	       "probe record layout");

struct snapshot_stats {
	uint64_t state_bytes;
	uint64_t mem_size;
	uint64_t mem_data_bytes;
	uint64_t mem_file_bytes; /* on disk: data, or compressed size */
	uint64_t disk_bytes; /* the disks' written blocks (disk.N files) */
	uint64_t ns; /* wall time of snapshot__save */
};

/* snapshot__save flags. */
#define SNAPSHOT_REPLACE 1u  /* swap out an existing snapshot at dir */
#define SNAPSHOT_COMPRESS 2u /* zstd-chunked memory file (zmem.h) */

/* Saves the paused `vm` and its probe device into `dir`, atomically: the
 * files are written and fsynced in a temporary directory next to `dir`,
 * which is then renamed into place (exchanged with an existing snapshot
 * at `dir` under SNAPSHOT_REPLACE; otherwise an existing `dir` is
 * -EEXIST). */
int snapshot__save(struct vm *vm, const struct probe *probe, const char *dir,
		   unsigned int flags, struct snapshot_stats *st);

/* An OS guest's virtio devices for its snapshot: their record (the save
 * fills in each drive's layer_bytes), and how drive i's written blocks
 * reach the file `fd` (new and empty) as disk.i, with *bytes the data
 * written: with `all` every block the disk holds apart from its image (a
 * full snapshot), else those written since the VM was restored (a diff
 * against the snapshot it was restored from). */
struct snap_guest_virtio {
	struct snap_virtio_rec *rec;
	int (*save_disk)(void *ctx, unsigned int i, int fd, bool all,
			 uint64_t *bytes);
	void *ctx;
};

/* The same for a VM running an OS guest (enum snap_guest) described by
 * `os`: no probe section; the guest's devices, registered with the VM,
 * are saved like any device, held still (device_ops.hold) from before
 * memory is read until the files are written; with `virtio` (NULL:
 * none) the record and each drive's disk.N as well. The VM needs the
 * in-kernel irqchip. */
int snapshot__save_guest(struct vm *vm, const struct snap_guest_rec *os,
			 const struct snap_guest_virtio *virtio,
			 const char *dir, unsigned int flags,
			 struct snapshot_stats *st);

/* The same for a diff (diff.h): only the pages set in `dirty` (from
 * vm__dirty_log_get since `base` was taken or restored) are written, and
 * the state records `base`. SNAPSHOT_COMPRESS is refused. */
struct snapshot_id;
int snapshot__save_diff(struct vm *vm, const struct probe *probe,
			const char *dir, unsigned int flags,
			const struct snapshot_id *base, const uint64_t *dirty,
			struct snapshot_stats *st);

/* The diff of an OS guest restored from `base`: the pages in `dirty` and
 * each overlay drive's blocks written since the restore. */
int snapshot__save_guest_diff(struct vm *vm, const struct snap_guest_rec *os,
			      const struct snap_guest_virtio *virtio,
			      const char *dir, unsigned int flags,
			      const struct snapshot_id *base,
			      const uint64_t *dirty, struct snapshot_stats *st);

/* The atomic directory writes behind snapshot__save (snapdir.c), for
 * other writers (merge): begin_dir makes a temporary directory next to
 * `dir`, named DIR.tmp.PID.XXXXXX (tmpdir.h; -EEXIST unless `dir` is
 * absent, or a snapshot and `replace`), new_file and write_file create
 * files in it, commit_dir renames it to `dir`, abort_dir removes it
 * (after a failure; also any snapshot directory a driver made for
 * itself: the files a snapshot has, then the directory if empty). */
int snapshot__begin_dir(const char *dir, bool replace, char tmp[PATH_MAX]);
int snapshot__new_file(const char *tmp, const char *name);
int snapshot__write_file(const char *tmp, const char *name, const void *data,
			 size_t len);
int snapshot__commit_dir(const char *tmp, const char *dir, bool replace);
void snapshot__abort_dir(const char *tmp);
/* dir/name into out (PATH_MAX bytes); -ENAMETOOLONG when it does not fit. */
int snapshot__join(char *out, const char *dir, const char *name);

struct snapshot {
	char dir[PATH_MAX];
	uint8_t *state;    /* the state file's image */
	size_t state_len;
	struct snap_reader r;
	int mem_fd;
	uint64_t mem_file_bytes; /* mem_fd's size when it was validated */
	struct snap_vm_config cfg;
	struct snap_memory mem;
	struct probe_params params;      /* cfg.guest == SNAP_GUEST_PROBE */
	struct probe_state probe_state;
	struct snap_guest_rec guest;     /* cfg.guest == SNAP_GUEST_LINUX */
	struct snap_virtio_rec virtio;   /* zeros when it had none */
	bool compressed;
	struct zmem zmem; /* when compressed */
	bool diff_base; /* a diff: mem_fd is base + diff merged (memfd) */
	/* A diff's chain below it, the full snapshot first (absolute
	 * paths; heap, NULL for a full snapshot): where its disks' lower
	 * layers are. */
	char (*chain)[PATH_MAX];
	unsigned int chain_len;
};

/* Reads and validates a snapshot (state file, memory file's size);
 * -errno with a message naming the problem. Nothing is modified. A diff
 * is resolved against its base chain (diff.c), so mem_fd holds its full
 * memory. */
int snapshot__open(struct snapshot *s, const char *dir);
/* snapshot__open() of a directory a user named: the errors say what
 * DIR is instead (missing, not a directory, not a snapshot coldstart can
 * restore: why), -errno (-EINVAL for the last two). */
int snapshot__open_named(struct snapshot *s, const char *dir);
/* The same without resolving a diff: mem_fd is the diff's own file
 * (this and the next two: snapdir.c). */
int snapshot__open_layer(struct snapshot *s, const char *dir);
void snapshot__close(struct snapshot *s);
/* Validates `dir` as snapshot__open_layer does and closes it again: what
 * a restore checks before it opens /dev/kvm, so a bad file is reported
 * as such on any host. */
int snapshot__check(const char *dir);

/* Creates a VM from the snapshot with memory restore `strategy`, its
 * vCPU, VM and probe state restored, ready for vm__start: a shell
 * (snapshot__shell_config) restored into at once, so the timeline has
 * VM_CREATED, VCPU_READY, then MEM_READY. */
int snapshot__restore(struct kvm_host *kvm, struct snapshot *s,
		      const struct guest_mem_ops *strategy,
		      struct timeline *tl, struct vm **out,
		      struct probe *probe);

/* The vm_config of a shell (vm__create_shell) the snapshot can be restored
 * into: its memory size, vCPUs, irqchip and strict_io, an I/O thread per
 * virtio device; CPUID none, since the saved CPUID is restored; no
 * memory ops or source. */
void snapshot__shell_config(const struct snapshot *s, struct vm_config *cfg);

/* Restores `s` into `shell` (from vm__create_shell with a config matching
 * snapshot__shell_config: -EINVAL naming the mismatch otherwise; -EBUSY
 * if it has memory already) with memory `strategy`; the probe device is
 * attached as snapshot__restore does, and `tl` becomes the VM's timeline
 * (MEM_READY is marked in it; VM_CREATED and VCPU_READY are not). Ready
 * for vm__start. On failure the caller still owns the shell and must
 * vm__destroy it (it may hold the probe's trap and vCPU state).
 *
 * Threads: one open snapshot may be restored into many VMs at once, from
 * any threads (snapshot__restore too), with `s` and `kvm` shared; each
 * call needs its own shell, timeline and probe. Restoring only reads `s`
 * (its parsed state image, zmem index and paths); the memory file is read
 * with pread, mapped MAP_PRIVATE, or walked with SEEK_DATA/SEEK_HOLE
 * lseeks that name absolute offsets, so the shared file offset they move
 * never changes a result. The host's CPUID table in `kvm` is loaded
 * once, race-free (kvm__supported_cpuid); a prefetch restore that records
 * a working set writes it through its own temporary file, the last one
 * renamed wins. Opening and closing are not concurrent with anything:
 * snapshot__close only once every VM restored from `s` is destroyed (lazy
 * strategies serve faults from its memory file and zmem index). */
int snapshot__restore_into(struct vm *shell, struct snapshot *s,
			   const struct guest_mem_ops *strategy,
			   struct timeline *tl, struct probe *probe);

/* The same for an OS guest: `setup` rebuilds the guest's machine on the
 * new VM (its traps and devices, e.g. linux_machine__create; no kernel
 * is loaded) before vCPU, irqchip and device state are restored. The
 * snapshot's devices and those `setup` registers must match. */
int snapshot__restore_guest(struct kvm_host *kvm, struct snapshot *s,
			    const struct guest_mem_ops *strategy,
			    struct timeline *tl,
			    int (*setup)(struct vm *vm, void *ctx), void *ctx,
			    struct vm **out);

/* The same into a shell, as snapshot__restore_into does for the probe
 * guest (the same threads rules; on failure the caller destroys the
 * shell, then what `setup` made). */
int snapshot__restore_guest_into(struct vm *shell, struct snapshot *s,
				 const struct guest_mem_ops *strategy,
				 struct timeline *tl,
				 int (*setup)(struct vm *vm, void *ctx),
				 void *ctx);

#endif
