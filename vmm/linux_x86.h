/* Linux guests: the machine they run on and how they are booted, in two
 * separate steps so a snapshot restore can rebuild the machine without
 * loading a kernel.
 *
 * Boot:    linux__open_kernel -> linux__plan (no KVM needed: every input
 *          error shows up here) -> vm__create(linux__vm_config()) ->
 *          linux_machine__create -> linux__load -> vm__start
 *          (linux_machine__boot_paused: load, start, and wait for the
 *          guest's pause at boot complete).
 * Restore: vm__create(linux__vm_config()) -> linux_machine__create ->
 *          restore memory, vCPU and irqchip state, then the devices'
 *          states through vm->devices -> vm__start.
 *
 * linux_machine__create() sets up only what lives outside guest memory
 * and vCPU state: the devices (COM1, i8042, boot timer, CMOS RTC, ACPI PM
 * registers, legacy sinks) and their traps. linux__load() writes guest
 * memory (kernel, initrd, command line, zero page, MP table, ACPI tables,
 * GDT, page tables) and sets
 * every vCPU's boot state (registers, MSRs, LAPIC LINT0/LINT1, MP state);
 * a snapshot carries all of that already. */
#ifndef COLDSTART_LINUX_X86_H
#define COLDSTART_LINUX_X86_H

#include "boottimer.h"
#include "bootparams_x86.h"
#include "i8042.h"
#include "legacy_x86.h"
#include "pm_x86.h"
#include "acpi_x86.h"
#include "serial.h"
#include "virtio_blk.h"
#include "virtio_vsock.h"
#include "vm.h"

#include <stdint.h>
#include <stdio.h>

#define LINUX_MAX_SEGMENTS 8

enum linux_format {
	LINUX_BZIMAGE, /* 64-bit boot protocol, entry at load address + 0x200 */
	LINUX_ELF,     /* uncompressed vmlinux, PT_LOAD at physical addresses */
};

struct linux_segment {
	uint64_t offset; /* in the file */
	uint64_t gpa;
	uint64_t filesz, memsz;
};

/* An opened and validated kernel image. */
struct linux_kernel {
	int fd;
	uint64_t file_size;
	enum linux_format format;
	struct bz_info bz;                /* LINUX_BZIMAGE */
	uint8_t head[BZ_HEAD_SIZE];       /* LINUX_BZIMAGE: its setup header */
	struct linux_segment segs[LINUX_MAX_SEGMENTS];
	unsigned int nr_segs;
	uint64_t entry;                   /* GPA of the 64-bit entry */
	uint64_t start, end;              /* guest memory it occupies */
};

/* Opens `path` and recognises a bzImage or an ELF64 x86-64 vmlinux.
 * -ENOENT/-EACCES naming the file, -ENOEXEC naming the failed check
 * (corrupt or unsupported header). */
int linux__open_kernel(struct linux_kernel *k, const char *path);
void linux__close_kernel(struct linux_kernel *k);

/* Devices on virtio-mmio (linux_virtio.c): slot i's register window is
 * at LINUX_VIRTIO_GPA + i * LINUX_VIRTIO_STRIDE, above guest RAM and the
 * boot timer, with the i-th of LINUX_VIRTIO_IRQS. Drives take the first
 * slots, the vsock device the last. */
#define LINUX_MAX_DRIVES 4
#define LINUX_VIRTIO_SLOTS (LINUX_MAX_DRIVES + 1)
#define LINUX_VSOCK_SLOT LINUX_MAX_DRIVES
#define LINUX_VIRTIO_GPA 0xd0000000ull
#define LINUX_VIRTIO_STRIDE 0x1000ull
#define LINUX_VIRTIO_IRQS { 5, 6, 7, 10, 11 }

struct linux_drive {
	const char *path; /* borrowed */
	enum vblk_mode mode;
	const char *own; /* overlay= or reflink='s file; NULL otherwise */
	/* VBLK_OVERLAY: a snapshot's disk layers under its own overlay,
	 * lowest first (vblk__add_lower); none when nr_lower is 0 */
	const char *const *lower;
	unsigned int nr_lower;
};

/* Which virtio devices a machine has, as the guest is told of them. */
struct linux_virtio {
	unsigned int nr_drives; /* at most LINUX_MAX_DRIVES */
	bool vsock;
};

/* What a kernel built with CONFIG_VIRTIO_MMIO_CMDLINE_DEVICES needs on its
 * command line to find the devices: "virtio_mmio.device=SIZE@ADDR:IRQ"
 * for each, separated by spaces, into buf. Returns what snprintf
 * returns. */
int linux__virtio_cmdline(const struct linux_virtio *v, char *buf,
			  size_t size);

/* The devices as the DSDT describes them, into out (LINUX_VIRTIO_SLOTS
 * entries): how many, or -EINVAL with a message for too many drives. */
int linux__virtio_acpi(const struct linux_virtio *v, struct acpi_virtio *out);

/* Everything about one boot, checked before any VM exists. */
struct linux_boot {
	const struct linux_kernel *kernel; /* borrowed */
	const char *cmdline;               /* borrowed */
	int initrd_fd;                     /* -1: no initrd */
	uint64_t initrd_size, initrd_gpa;
	uint64_t mem_size;
	unsigned int nr_vcpus;
	/* The virtio devices the machine will have (none after
	 * linux__plan): the DSDT names them for kernels that do not read
	 * their command-line form. */
	struct linux_virtio virtio;
};

/* Checks memory size (a multiple of 2 MiB, room for the kernel, at most
 * 3 GiB), vCPU count (the MP table's limit), command line length (the
 * kernel's cmdline_size) and opens and places the initrd (NULL: none;
 * "initrd too large for guest memory" is -E2BIG). */
int linux__plan(struct linux_boot *b, const struct linux_kernel *k,
		const char *cmdline, const char *initrd, uint64_t mem_size,
		unsigned int nr_vcpus);
void linux__plan_free(struct linux_boot *b);

/* The VM a Linux guest needs: in-kernel irqchip and PIT, host CPUID,
 * lenient I/O (unknown ports read as all ones). */
struct vm_config linux__vm_config(uint64_t mem_size, unsigned int nr_vcpus);

struct linux_machine_opts {
	FILE *console;                  /* COM1 output; NULL discards it */
	enum boottimer_action at_boot;  /* at the boot-complete signal */
};

struct linux_machine {
	struct serial com1;
	struct i8042 kbc;
	struct boottimer timer;
	struct legacy_x86 legacy;
	struct acpi_pm pm;
	struct vblk blk[LINUX_MAX_DRIVES];
	unsigned int nr_blk;
	struct vsock *vsock; /* NULL: none */
};

/* Creates the devices on `vm` (created from linux__vm_config, vCPUs not
 * started) and registers them for snapshots. `m` must outlive the VM.
 * A "Kernel panic" line on the console ends the VM as failed with that
 * line as the reason: with panic=N the guest would then reset, which
 * must not pass for a clean exit. */
int linux_machine__create(struct linux_machine *m, struct vm *vm,
			  const struct linux_machine_opts *o);
/* Adds `n` drives (at most LINUX_MAX_DRIVES) to a machine just made,
 * before vm__start: each a virtio-blk device with its I/O thread, found
 * by the guest as linux__virtio_cmdline() says. -errno with a message
 * naming the drive; on failure none is added (the VM, whose traps may
 * name them, must then be destroyed, not started). */
int linux_machine__add_drives(struct linux_machine *m, struct vm *vm,
			      const struct linux_drive *drives,
			      unsigned int n);

/* Adds the vsock device: guest context ID `cid`, the host's side on the
 * Unix socket `path` (virtio_vsock.h). -errno with a message; as above
 * on failure. */
int linux_machine__add_vsock(struct linux_machine *m, struct vm *vm,
			     uint64_t cid, const char *path);

/* Closes the virtio devices (linux_machine__destroy does). */
void linux_machine__close_virtio(struct linux_machine *m);

/* After vm__destroy: closes the virtio devices, flushes the console,
 * frees device locks. */
void linux_machine__destroy(struct linux_machine *m);

/* A restore's machine (snapshot__restore_guest's `setup`, ctx a struct
 * linux_restore): the devices without a kernel, as the guest's boot
 * completed before its snapshot; the console, and what the guest's done
 * signal does. `made` says whether the caller must linux_machine__destroy
 * m after the VM (the restore destroys the VM itself when it fails). */
struct linux_restore {
	struct linux_machine *m;
	FILE *console; /* NULL discards it */
	enum boottimer_action at_done;
	bool made;
	/* The snapshot's virtio devices, made again: its drives (with
	 * their saved layers) and, with `vsock`, the vsock device on the
	 * socket vsock_path (NULL: without one). */
	const struct linux_drive *drives;
	unsigned int nr_drives;
	bool vsock;
	const char *vsock_path;
	uint64_t vsock_cid;
	/* Track the pages the guest and its devices write from here on
	 * (vm__dirty_log_start), for a diff of it: started before the
	 * devices' state is loaded, as a device may write at once. */
	bool track_writes;
};
int linux_machine__restore_setup(struct vm *vm, void *ctx);

/* Loads the planned boot into `vm` (shape as planned) and sets every
 * vCPU's boot state: vCPU 0 runs the kernel, the others wait for
 * INIT/SIPI. */
int linux__load(struct vm *vm, const struct linux_boot *b);

/* A fresh boot held at its boot-complete signal: loads the planned boot
 * into `vm` (its machine `m` made with at_boot BOOTTIMER_PAUSE), starts
 * its vCPUs and waits up to timeout_ns (0: no limit) for the guest to
 * pause itself there. `why` (NULL: none) says in the errors what the
 * pause is for. Errors: -ETIMEDOUT naming the timeout, the vCPUs' exits
 * and the console bytes written; -EIO when the guest ended first (a
 * panic, a reset), with the VM's reason. On failure the VM is ended but
 * not destroyed: the caller tears down the VM and machine it made. */
int linux_machine__boot_paused(struct vm *vm, struct linux_machine *m,
			       const struct linux_boot *b,
			       uint64_t timeout_ns, const char *why);

#endif
