/* The held children of `bench density`: one VMM process per VM, which
 * announces "held ADDR WHERE DISK_FD" on stdout once its guest is alive
 * (ADDR: the host address of its guest memory, which the parent finds in
 * smaps; WHERE: the point it was held at; DISK_FD: its root disk's
 * overlay, or -1) and keeps it until its stdin closes.
 *
 *   probe guest, fresh   run to DONE, vCPUs halted            "done"
 *   probe guest, clone   restored (mmap), run to DONE         "done"
 *   Linux guest, fresh   booted to boot complete, paused      "boot"
 *   Linux guest, clone   restored (mmap) from its boot-complete snapshot,
 *                        resumed until its done signal ("done") or for
 *                        the settle time ("settle"), then paused
 *   --rootfs, fresh      booted until its agent answered and --exec ran,
 *                        paused                        "agent" or "exec"
 *   --rootfs, clone      restored (mmap) from its snapshot taken when the
 *                        agent listened, the same       "agent" or "exec"
 *
 * A restored Linux guest is resumed before it is held so that what is
 * measured is a guest that ran again, faulting in what it touches, not a
 * mapping nothing has read; it is paused at its done signal because a
 * guest may exit right after it (the ring-0 test kernel resets). */
#include "density.h"
#include "density_int.h"

#include "args.h"
#include "child.h"
#include "cli.h"
#include "run_opts.h"
#include "err.h"
#include "linux_x86.h"
#include "mem_restore.h"
#include "run_linux.h"
#include "runner.h"
#include "snap_linux.h"
#include "snapshot.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SECOND 1000000000ull
/* The probe clone's run to DONE, and parking running vCPUs. */
#define CLONE_TIMEOUT_NS (30 * SECOND)
#define PAUSE_TIMEOUT_NS (10 * SECOND)

static void hold(struct vm *vm, const char *where)
{
	density__hold(vm, where, -1);
}

static void hold_probe(struct vm *vm)
{
	hold(vm, "done");
}

/* Boots the Linux guest, pauses it at boot complete and holds it there;
 * its console is discarded (stdout carries the announcement). */
static int hold_linux_fresh(struct kvm_host *kvm, const struct run_cli *o)
{
	struct linux_boot b = { .initrd_fd = -1 };
	struct timeline tl = { 0 };
	struct linux_machine m;
	struct linux_kernel k;
	struct vm *vm;
	char *cmdline = NULL;
	int ret = linux__open_kernel(&k, o->kernel);

	if (ret == 0)
		ret = run_linux__plan(&b, &k, o, NULL, &cmdline);
	if (ret == 0)
		ret = density__boot_paused(kvm, o, &b, "it is held there", &tl,
					   &vm, &m);
	if (ret == 0) {
		hold(vm, "boot");
		vm__end(vm, VM_STOPPED, "released");
		vm__destroy(vm);
		linux_machine__destroy(&m);
	}
	linux__plan_free(&b);
	free(cmdline);
	linux__close_kernel(&k);
	return ret;
}

static int hold_fresh(struct kvm_host *kvm, int argc, char **argv)
{
	struct run_cli o;
	struct run_result res = { 0 };
	int ret = run_opts__parse(argc, argv, &o);

	if (ret < 0)
		return ret;
	if (o.kernel && o.has_rootfs)
		return density__hold_root_fresh(kvm, &o);
	if (o.kernel)
		return hold_linux_fresh(kvm, &o);
	o.cfg.before_teardown = hold_probe;
	ret = runner__probe(kvm, &o.cfg, &res);
	if (ret == 0 && !runner__succeeded(&o.cfg, &res))
		ret = err__set(EIO, "the guest failed: %s", res.reason);
	return ret;
}

static int hold_probe_clone(struct kvm_host *kvm, struct snapshot *snap)
{
	struct timeline tl = { 0 };
	struct probe probe;
	struct vm *vm = NULL;
	int ret = snapshot__restore(kvm, snap, mem_restore__strategy("mmap"),
				    &tl, &vm, &probe);

	if (ret == 0)
		ret = vm__start(vm);
	if (ret == 0 && vm__wait(vm, CLONE_TIMEOUT_NS) != VM_COMPLETED)
		ret = err__set(EIO, "the clone failed: %s", vm->reason);
	if (ret == 0)
		hold(vm, "done");
	vm__destroy(vm);
	return ret;
}

/* Resumes the restored guest until its done signal (which parks its
 * vCPUs) or `settle_ns`, whichever comes first, and holds it paused
 * there. */
static int hold_linux_clone(struct kvm_host *kvm, struct snapshot *snap,
			    uint64_t settle_ns)
{
	struct linux_machine m;
	struct linux_restore lr = { .m = &m, .at_done = BOOTTIMER_PAUSE };
	struct timeline tl = { 0 };
	struct vm *vm = NULL;
	int ret = snapshot__restore_guest(kvm, snap,
					  mem_restore__strategy("mmap"), &tl,
					  linux_machine__restore_setup, &lr,
					  &vm);

	if (ret < 0) {
		if (lr.made) /* the restore destroyed its VM already */
			linux_machine__destroy(&m);
		return ret;
	}
	ret = vm__start(vm);
	if (ret == 0) {
		ret = vm__wait_paused(vm, settle_ns);
		if (ret == -ETIMEDOUT) /* no done signal: the settle time */
			ret = vm__pause(vm, PAUSE_TIMEOUT_NS);
		if (ret == -ECANCELED)
			ret = err__set(EIO, "the restored guest ended before "
				       "its done signal and before the settle "
				       "time, so it cannot be held: %s",
				       vm->reason);
	}
	/* parked: no vCPU writes the registers now */
	if (ret == 0)
		hold(vm, m.timer.regs.done ? "done" : "settle");
	vm__end(vm, VM_STOPPED, "released");
	vm__destroy(vm);
	linux_machine__destroy(&m);
	return ret;
}

/* argv: "--hold-clone" DIR, then --settle=DUR for a Linux snapshot, or
 * --vsock=PATH [--exec=CMD] for one of a --rootfs guest. */
struct clone_args {
	uint64_t settle_ns;
	const char *vsock, *exec;
};

static int clone_args(int argc, char **argv, struct clone_args *a)
{
	int ret = 0;

	*a = (struct clone_args){ 0 };
	for (int i = 2; ret == 0 && i < argc; i++)
		if (!strncmp(argv[i], "--settle=", 9))
			ret = args__duration("--settle", argv[i] + 9,
					     &a->settle_ns);
		else if (!strncmp(argv[i], "--vsock=", 8))
			a->vsock = argv[i] + 8;
		else if (!strncmp(argv[i], "--exec=", 7))
			a->exec = argv[i] + 7;
		else
			ret = -EINVAL;
	if (ret == 0 && argc >= 2 && (!a->exec || a->vsock))
		return 0;
	return err__set(EINVAL, "usage: --hold-clone DIR [--settle=DUR | "
			"--vsock=PATH [--exec=CMD]]");
}

static int hold_clone(struct kvm_host *kvm, int argc, char **argv)
{
	struct clone_args a;
	struct snapshot snap;
	int ret = clone_args(argc, argv, &a);

	if (ret < 0)
		return ret;
	if (snap_linux__is_linux(argv[1]) && !a.settle_ns && !a.vsock)
		return err__set(EINVAL, "a Linux clone needs --settle or "
				"--vsock");
	ret = snapshot__open(&snap, argv[1]);
	if (ret < 0)
		return ret;
	if (a.vsock)
		ret = density__hold_root_clone(kvm, &snap, a.vsock, a.exec);
	else
		ret = snap_linux__is_linux(argv[1])
			      ? hold_linux_clone(kvm, &snap, a.settle_ns)
			      : hold_probe_clone(kvm, &snap);
	snapshot__close(&snap); /* mmap clones map its memory until here */
	return ret;
}

int density__hold_child(int argc, char **argv)
{
	struct kvm_host kvm;
	int ret = kvm__open(&kvm, NULL);

	if (ret == 0) {
		ret = !strcmp(argv[1], "--hold-clone")
			? hold_clone(&kvm, argc - 1, argv + 1)
			: hold_fresh(&kvm, argc - 1, argv + 1);
		kvm__close(&kvm);
	}
	if (ret < 0)
		return cli__error(cli__exit_for(ret), "bench density: %s",
				  err__last());
	return CLI_OK;
}
