/* `coldstart run --kernel`: boots a Linux guest in one VM and reports its
 * timeline (boot complete, guest done, guest exit), outcome and console. */
#ifndef COLDSTART_RUN_LINUX_H
#define COLDSTART_RUN_LINUX_H

#include "run_opts.h"
#include "linux_x86.h"

#include <stdio.h>

/* What a Linux guest gets without --cmdline: the console on COM1, reset
 * through the i8042 on reboot and at once on panic (so the VM always
 * ends), no PCI or modules to probe, one UART, no keyboard or mouse
 * probing behind the i8042. */
#define LINUX_DEFAULT_CMDLINE                                               \
	"console=ttyS0 reboot=k panic=-1 pci=off nomodules 8250.nr_uarts=1 " \
	"i8042.noaux i8042.nomux i8042.nopnp i8042.dumbkbd"

#define LINUX_DEFAULT_MEM (256ull << 20)

/* Runs the parsed command line (o->kernel set); returns an enum cli_exit.
 * Input errors (missing or corrupt kernel, initrd too large) exit 1
 * before KVM is touched; a PVM host exits 77 unless o->allow_pvm. */
int run_linux(const struct run_cli *o);

/* --cmdline, or LINUX_DEFAULT_CMDLINE (with " quiet" for --exec without
 * --console). */
const char *run_linux__cmdline(const struct run_cli *o);

/* Why a Linux guest cannot run on a PVM host: the one text of every
 * refusal (exit 77) of one, by run --kernel, the drivers and a Linux
 * snapshot. */
const char *run_linux__pvm_refusal(void);

/* What a driver that runs the user's Linux guest checks before its first
 * VM, as every VM would fail on it alike: the kernel, the initrd and
 * whether they fit `mem_size` with `cmdline` (NULL: the default), exit 1
 * with "CMD: why"; then whether this host can boot it (PVM: exit 77
 * unless allow_pvm). Returns an enum cli_exit, CLI_OK to go on. */
int run_linux__check_guest(const char *cmd, const char *kernel,
			   const char *initrd, const char *cmdline,
			   uint64_t mem_size, unsigned int nr_vcpus,
			   bool allow_pvm);

/* The console for --console PATH: a line-buffered file, written in place
 * (it is read while the guest runs) and refused (-ELOOP) when PATH is a
 * symbolic link; for NULL or "-" stdout, stderr under `json`, nothing
 * (NULL) under `quiet`. 0, or -errno with a message. */
int run_linux__open_console(const char *path, bool json, bool quiet,
			    FILE **out);

/* Closes what run_linux__open_console() opened (not stdout or stderr). */
void run_linux__close_console(FILE *f);

/* linux__plan() for o's kernel: `base` (NULL: its --cmdline, or the
 * default) with the command-line form of its --drive and --vsock
 * devices after it, which the plan also names for the DSDT, and the
 * root disk's and agent's parameters with --rootfs. The plan borrows
 * the line, made in *cmdline (free() it after linux__plan_free, also on
 * failure). */
int run_linux__plan(struct linux_boot *b, const struct linux_kernel *k,
		    const struct run_cli *o, const char *base, char **cmdline);

/* Ends a VM made by run_linux__create: its vCPUs stopped, then the
 * devices' I/O threads (which may still write to the guest's rings),
 * then the VM destroyed (`tl`, if not NULL, marks it) and the machine. */
void run_linux__teardown(struct vm *vm, struct linux_machine *m,
			 struct timeline *tl);

/* Creates the VM for plan `b` (o's memory backend) and its machine with
 * `mo` and o's --drive and --vsock devices; the caller loads and starts
 * the guest, then destroys the VM before the machine. 0, or -errno with
 * nothing left. */
int run_linux__create(struct kvm_host *kvm, const struct run_cli *o,
		      const struct linux_boot *b,
		      const struct linux_machine_opts *mo, struct timeline *tl,
		      struct vm **vm, struct linux_machine *m);

/* Boots plan `b` on a new VM whose boot timer pauses it at the guest's
 * boot-complete signal, and waits for that, at most o->cfg.timeout_ns
 * (linux_machine__boot_paused: the errors say what did not happen, `why`
 * the guest is paused there, and how far it got). 0 with *vm and *m for
 * the caller to end and destroy (the VM first), or -errno with nothing
 * left. */
int run_linux__boot_paused(struct kvm_host *kvm, const struct run_cli *o,
			   const struct linux_boot *b, FILE *console,
			   const char *why, struct timeline *tl,
			   struct vm **vm, struct linux_machine *m);

#endif
