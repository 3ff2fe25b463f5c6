/* `bench density`'s options, shared by its driver (density.c) and
 * their parsing and checks (density_opts.c). */
#ifndef COLDSTART_DENSITY_INT_H
#define COLDSTART_DENSITY_INT_H

#include "driver.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#define DENSITY_MAX_VMS 4096
/* --exec's command, passed on to each held child */
#define DENSITY_MAX_EXEC 4096
/* --timeout's defaults: `coldstart run`'s; a rootfs guest's boot mounts
 * its disk and starts the agent, which inside the emulated host, with
 * VMs held beside it, took more than 60 s */
#define DENSITY_BOOT_TIMEOUT_NS (60 * 1000000000ull)
#define DENSITY_ROOTFS_BOOT_TIMEOUT_NS (180 * 1000000000ull)

struct density_opts {
	struct bench_common c; /* count: VMs to start */
	uint64_t budget, init, ws;
	bool fresh, clone;
	/* A Linux guest (c.kernel...) instead of the probe guest: its
	 * memory and vCPUs from c.mem and c.vcpus, and settle. */
	uint64_t mem, vcpus, settle_ns;
	/* --timeout: the longest a Linux guest may take to signal boot
	 * complete, fresh or in the clones' snapshot (0 until checked:
	 * DENSITY_BOOT_TIMEOUT_NS, or DENSITY_ROOTFS_BOOT_TIMEOUT_NS) */
	uint64_t timeout_ns;
	/* --rootfs: one image every VM's root disk shows through an overlay
	 * of its own, the VMs held once their agent answers, after --exec
	 * ran there (NULL: none). */
	const char *rootfs, *exec;
	bool settle_given, timeout_given;
	const char *probe_opt, *linux_opt; /* the first given, for refusals */
};

/* The shared root disk of --rootfs (density_disk.c), as found before the
 * first VM. */
struct density_image {
	const char *path;
	uint64_t bytes, allocated; /* its size, and what it holds on disk */
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
};

/* Checks that `path` is a disk image (a regular file, a non-zero
 * multiple of 512 bytes) and notes what it is. 0, or -errno with a
 * message naming --rootfs. */
int density__image_open(struct density_image *img, const char *path);

/* 0 when the image is the same file, of the same size and modification
 * time, as density__image_open found; -EIO with a message otherwise. */
int density__image_unchanged(const struct density_image *img);

/* {"path", "size_bytes", "allocated_bytes"} of the image. */
json_t *density__image_json(const struct density_image *img);

/* The allocated bytes of the overlay VMM `pid` holds open as `fd`, or
 * -errno with a message. */
int64_t density__overlay_bytes(pid_t pid, int fd);

/* The allocated bytes of the root disk's layer in a snapshot directory
 * (0 when it has none), or -errno with a message. */
int64_t density__snapshot_disk_bytes(const char *snap_dir);

/* The driver's options table, defaults and checks (density_opts.c). */
extern const struct opt density__options[];
void density__init(void *opts);
int density__check(void *opts);

/* Runs the driver with its parsed options (density_driver's run). */
int density__run(void *opts);

/* A Linux guest's inputs, checked as `coldstart run --kernel` checks
 * them (kernel, initrd, command line against guest memory) before any
 * VM; then the host: PVM cannot boot an ordinary kernel (exit 77 unless
 * --allow-pvm). An enum cli_exit, the error printed. CLI_OK for the
 * probe guest. */
int density__check_guest(const struct density_opts *o);

/* Appends the Linux guest's options for a `coldstart run`-style command
 * line to argv from *n; `mem` and `vcpus` (size bytes each) and `rootfs`
 * (rootfs_size) hold the text of three of them. */
void density__linux_args(const struct density_opts *o, char **argv, int *n,
			 char *mem, char *vcpus, size_t size, char *rootfs,
			 size_t rootfs_size);

/* The result document's config: every option, the guest's files (which
 * result__new names by sha256) and where VMs are held. */
json_t *density__config_json(const struct density_opts *o);

/* The held child's announcement, "held ADDR WHERE DISK_FD" (density.h),
 * then the wait for its release; disk_fd -1: no overlay to measure
 * (density_root.c). */
struct vm;
void density__hold(struct vm *vm, const char *where, int disk_fd);

/* run_linux__boot_paused for a held child, its console discarded; a
 * guest out of time names --timeout (density_root.c). */
struct kvm_host;
struct run_cli;
struct linux_boot;
struct linux_machine;
struct timeline;
int density__boot_paused(struct kvm_host *kvm, const struct run_cli *o,
			 const struct linux_boot *b, const char *why,
			 struct timeline *tl, struct vm **vm,
			 struct linux_machine *m);

/* The held children of a --rootfs guest (density_root.c): booted, or
 * restored from `snap` with the vsock device on `vsock`, then held
 * paused once the agent answered and `exec` (NULL: none) exited 0.
 * 0 once released, or -errno with a message. */
struct snapshot;
int density__hold_root_fresh(struct kvm_host *kvm, const struct run_cli *o);
int density__hold_root_clone(struct kvm_host *kvm, struct snapshot *snap,
			     const char *vsock, const char *exec);

#endif
