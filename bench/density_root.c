/* The held children's announcement (every guest's), and those of
 * `bench density --rootfs`: a guest whose root disk is the shared image
 * under an unnamed overlay of its own, held paused once its agent
 * answered (and --exec ran there), fresh or restored from a snapshot
 * taken when the agent listened. Their announcement adds the overlay's
 * descriptor, which the parent stats through /proc for the disk the VM
 * wrote. */
#include "density_int.h"

#include "agent_client.h"
#include "child.h"
#include "err.h"
#include "guest_devices.h"
#include "linux_x86.h"
#include "mem_restore.h"
#include "run_linux.h"
#include "snapshot.h"
#include "units.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SECOND 1000000000ull
/* The agent's answer and --exec's command: a Python import may take tens
 * of seconds inside the emulated host. */
#define AGENT_TIMEOUT_NS (120 * SECOND)
#define PAUSE_TIMEOUT_NS (10 * SECOND)
/* What of the command's stderr its failure shows. */
#define STDERR_SHOWN 200

/* Announces the held VM, then waits for stdin to close. */
void density__hold(struct vm *vm, const char *where, int disk_fd)
{
	printf("held %" PRIxPTR " %s %d\n", (uintptr_t)vm->mem.host, where,
	       disk_fd);
	fflush(stdout);
	child__await_release(STDIN_FILENO);
}

int density__boot_paused(struct kvm_host *kvm, const struct run_cli *o,
			 const struct linux_boot *b, const char *why,
			 struct timeline *tl, struct vm **vm,
			 struct linux_machine *m)
{
	char text[512];
	int ret = run_linux__boot_paused(kvm, o, b, NULL, why, tl, vm, m);

	if (ret != -ETIMEDOUT)
		return ret;
	snprintf(text, sizeof(text), "%s", err__last());
	return err__set(ETIMEDOUT, "%s; bench density's --timeout sets that "
			"limit", text);
}

/* The root disk's overlay, whose allocation is the disk this VM wrote. */
static int overlay_fd(const struct linux_machine *m)
{
	if (!m->nr_blk || !m->blk[0].ovl)
		return -1;
	return m->blk[0].ovl->file;
}

/* Waits for the agent, runs `exec` (NULL: none) there with its output
 * discarded but for a failure's stderr, and pauses the guest. */
static int agent_ready(struct vm *vm, const char *vsock, uint32_t port,
		       const char *exec)
{
	uint64_t deadline = now_ns() + AGENT_TIMEOUT_NS;
	struct agent_capture cap[2] = { { .max = STDERR_SHOWN },
					{ .max = STDERR_SHOWN } };
	struct agent_times t;
	int status = 0, ret = 0;
	int fd = agent__connect(vsock, port, false, deadline, agent__vm_gone,
				vm);

	if (fd < 0)
		return fd;
	if (exec)
		ret = agent__exec(fd, exec, agent__sink_capture, cap, deadline,
				  &t, &status);
	close(fd);
	while (cap[1].len && cap[1].buf[cap[1].len - 1] == '\n')
		cap[1].len--;
	if (ret == 0 && status)
		ret = err__set(EIO, "--exec: the command exited with status "
			       "%d%s%.*s", status, cap[1].len ? ": " : "",
			       (int)cap[1].len, cap[1].buf ? cap[1].buf : "");
	free(cap[0].buf);
	free(cap[1].buf);
	if (ret == 0)
		ret = vm__pause(vm, PAUSE_TIMEOUT_NS);
	return ret;
}

int density__hold_root_fresh(struct kvm_host *kvm, const struct run_cli *o)
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
		ret = density__boot_paused(kvm, o, &b,
					   "its agent is asked there", &tl, &vm,
					   &m);
	if (ret == 0) {
		vm__resume(vm);
		ret = agent_ready(vm, o->vsock, (uint32_t)o->agent_port,
				  o->exec);
		if (ret == 0)
			density__hold(vm, o->exec ? "exec" : "agent",
				      overlay_fd(&m));
		vm__end(vm, VM_STOPPED, "released");
		run_linux__teardown(vm, &m, NULL);
	}
	linux__plan_free(&b);
	free(cmdline);
	linux__close_kernel(&k);
	return ret;
}

/* The snapshot's devices made again: its disk layers under a new unnamed
 * overlay, its vsock device on `vsock`. The VM marks `tl` until it is
 * destroyed. */
static int restore_root(struct kvm_host *kvm, struct snapshot *snap,
			const char *vsock, struct linux_restore *lr,
			struct timeline *tl, struct vm **vm)
{
	struct guestdev_restore devs;
	int ret = guestdev__check(snap);

	if (ret == 0 && !snap->virtio.vsock)
		ret = err__set(EINVAL, "the snapshot holds a guest without a "
			       "vsock device");
	if (ret == 0)
		ret = guestdev__restore(snap, &devs, vsock, lr);
	if (ret < 0)
		return ret;
	ret = snapshot__restore_guest(kvm, snap, mem_restore__strategy("mmap"),
				      tl, linux_machine__restore_setup, lr,
				      vm);
	guestdev__restore_free(&devs); /* the drives have their layers open */
	return ret;
}

int density__hold_root_clone(struct kvm_host *kvm, struct snapshot *snap,
			     const char *vsock, const char *exec)
{
	struct linux_machine m;
	/* no done signal comes from the agent: it serves until released */
	struct linux_restore lr = { .m = &m, .at_done = BOOTTIMER_CONTINUE };
	struct timeline tl = { 0 };
	struct vm *vm = NULL;
	int ret = restore_root(kvm, snap, vsock, &lr, &tl, &vm);

	if (ret < 0) {
		if (lr.made) /* the restore destroyed its VM already */
			linux_machine__destroy(&m);
		return ret;
	}
	ret = vm__start(vm);
	if (ret == 0)
		ret = agent_ready(vm, vsock, guestdev__agent_port(snap), exec);
	if (ret == 0)
		density__hold(vm, exec ? "exec" : "agent", overlay_fd(&m));
	vm__end(vm, VM_STOPPED, "released");
	vm__stop(vm);
	linux_machine__close_virtio(&m);
	vm__destroy(vm);
	linux_machine__destroy(&m);
	return ret;
}
