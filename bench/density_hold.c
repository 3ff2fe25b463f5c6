/* The held children of `bench density`: one VMM process per VM, which
 * announces "held ADDR WHERE" on stdout once its guest is alive (ADDR:
 * the host address of its guest memory, which the parent finds in smaps;
 * WHERE: the point it was held at) and keeps it until its stdin closes.
 *
 *   probe guest, fresh   run to DONE, vCPUs halted            "done"
 *   probe guest, clone   restored (mmap), run to DONE         "done"
 *   Linux guest, fresh   booted to boot complete, paused      "boot"
 *   Linux guest, clone   restored (mmap) from its boot-complete snapshot,
 *                        resumed until its done signal ("done") or for
 *                        the settle time ("settle"), then paused
 *
 * A restored Linux guest is resumed before it is held so that what is
 * measured is a guest that ran again, faulting in what it touches, not a
 * mapping nothing has read; it is paused at its done signal because a
 * guest may exit right after it (the ring-0 test kernel resets). */
#include "density.h"

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

/* Announces the held VM, then waits for stdin to close. */
static void hold(struct vm *vm, const char *where)
{
	printf("held %" PRIxPTR " %s\n", (uintptr_t)vm->mem.host, where);
	fflush(stdout);
	child__await_release(STDIN_FILENO);
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
		ret = run_linux__boot_paused(kvm, o, &b, NULL,
					     "it is held there", &tl, &vm, &m);
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

/* argv: "--hold-clone" DIR [--settle=DUR] (the settle time applies to a
 * Linux snapshot). */
static int hold_clone(struct kvm_host *kvm, int argc, char **argv)
{
	uint64_t settle_ns = 0;
	struct snapshot snap;
	int ret = 0;

	if (argc == 3 && !strncmp(argv[2], "--settle=", 9))
		ret = args__duration("--settle", argv[2] + 9, &settle_ns);
	else if (argc != 2)
		ret = err__set(EINVAL, "usage: --hold-clone DIR "
			       "[--settle=DUR]");
	if (ret < 0)
		return ret;
	if (snap_linux__is_linux(argv[1]) && !settle_ns)
		return err__set(EINVAL, "a Linux clone needs --settle");
	ret = snapshot__open(&snap, argv[1]);
	if (ret < 0)
		return ret;
	ret = snap_linux__is_linux(argv[1])
		? hold_linux_clone(kvm, &snap, settle_ns)
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
