/* The warm pool's VMs: one made (booted or a shell), filled and run. */
#include "pool.h"
#include "pool_int.h"

#include "agent_client.h"
#include "err.h"
#include "guest_devices.h"
#include "kvm.h"
#include "snapshot.h"
#include "timeline.h"
#include "vm.h"
#include "vm_state.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- making and running one VM ---- */

/* Restores the snapshot into the held shell, in h's timeline; a guest
 * with drives or vsock gets them anew (the vsock device without a
 * socket file). */
static int fill_from(struct snapshot *snap,
		     const struct guest_mem_ops *strategy, struct held *h)
{
	/* a Linux guest's console is discarded, and its done signal ends
	 * its run, as DONE ends the probe's */
	struct linux_restore lr = { .m = &h->machine, .at_done = BOOTTIMER_STOP };
	int ret = 0;

	if (snap->virtio.nr_drives || snap->virtio.vsock)
		ret = guestdev__restore(snap, &h->devs, NULL, &lr);
	if (ret < 0)
		return ret;
	if (snap->cfg.guest == SNAP_GUEST_PROBE)
		ret = snapshot__restore_into(h->vm, snap, strategy, &h->tl,
					     &h->probe);
	else
		ret = snapshot__restore_guest_into(h->vm, snap, strategy,
						   &h->tl,
						   linux_machine__restore_setup,
						   &lr);
	/* the drives have their layers open (the restore's, or none) */
	guestdev__restore_free(&h->devs);
	h->machine_made = lr.made;
	h->filled = ret == 0;
	return ret;
}

/* The same for a pool's VM: its timeline starts here. It is parked
 * before its guest handles the vsock transport reset, which the request
 * then waits for: running it to the reset first made refills slower and
 * hits no faster in the emulated host (docs/commands.md). */
static int fill(struct pool *p, struct held *h)
{
	memset(&h->tl, 0, sizeof(h->tl));
	timeline__mark(&h->tl, TL_RESTORE_START);
	return fill_from(&p->snap, p->cfg.strategy, h);
}

/* Starts the VM's vCPU threads parked before their first
 * KVM_RUN, so a request only wakes them: thread creation is off the
 * request's path. */
static int start_parked(struct held *h, uint64_t timeout_ns)
{
	int ret;

	vm__request_pause(h->vm);
	ret = vm__start(h->vm);
	if (ret == 0)
		ret = vm__wait_paused(h->vm, timeout_ns);
	return ret;
}

/* A shell for the snapshot with its vCPU threads parked. */
static int make_shell(struct kvm_host *kvm, struct snapshot *snap,
		      struct held *h, uint64_t timeout_ns)
{
	struct vm_config vc;
	int ret;

	snapshot__shell_config(snap, &vc);
	ret = vm__create_shell(kvm, &vc, NULL, &h->vm);
	return ret < 0 ? ret : start_parked(h, timeout_ns);
}

/* The probe guest booted to READY and paused there. */
static int boot(struct pool *p, struct held *h, int64_t seq)
{
	struct vm_config vc = {
		.mem_size = p->cfg.mem_size,
		.nr_vcpus = p->cfg.nr_vcpus,
		.strict_io = true,
	};
	struct probe_params pp = p->cfg.probe;
	int ret;

	pp.pause_at_ready = true;
	pp.stop_at_ready = false;
	if (p->cfg.abort_every && seq >= 0 &&
	    (uint64_t)seq % p->cfg.abort_every == p->cfg.abort_every - 1)
		pp.misbehave = PROBE_MISBEHAVE_ABORT;
	ret = vm__create(p->cfg.kvm, &vc, &h->tl, &h->vm);
	if (ret < 0)
		return ret;
	ret = probe__setup(&h->probe, h->vm, &pp);
	if (ret == 0)
		ret = vm__start(h->vm);
	if (ret == 0)
		ret = vm__wait_paused(h->vm, p->cfg.timeout_ns);
	if (ret == -ECANCELED || ret == -ETIMEDOUT)
		ret = err__set(EIO, "the probe guest did not reach READY: %s",
			       ret == -ETIMEDOUT ? "timed out" : h->vm->reason);
	h->filled = ret == 0;
	return ret;
}

/* A Linux guest booted fresh and paused at its boot-complete signal. */
static int boot_linux(struct pool *p, struct held *h)
{
	const struct linux_boot *b = p->cfg.linux_boot;
	struct vm_config vc = linux__vm_config(b->mem_size, b->nr_vcpus);
	struct linux_machine_opts mo = { NULL, BOOTTIMER_PAUSE };
	int ret = vm__create(p->cfg.kvm, &vc, &h->tl, &h->vm);

	if (ret < 0)
		return ret;
	ret = linux_machine__create(&h->machine, h->vm, &mo);
	h->machine_made = ret == 0;
	if (ret == 0)
		ret = linux_machine__boot_paused(h->vm, &h->machine, b,
						 p->cfg.timeout_ns, NULL);
	h->filled = ret == 0;
	return ret;
}

/* A VM as the pool holds it; NULL with an error set on failure. seq
 * numbers the refill threads' VMs (for abort_every); -1 for a VM a
 * request makes for itself, which is never made to fail. */
struct held *pool__make(struct pool *p, int64_t seq)
{
	struct held *h = calloc(1, sizeof(*h));
	int ret;

	if (!h) {
		err__set(ENOMEM, "allocating a pool entry");
		return NULL;
	}
	if (p->cfg.source == POOL_FROM_PROBE) {
		ret = boot(p, h, seq);
	} else if (p->cfg.source == POOL_FROM_LINUX) {
		ret = boot_linux(p, h);
	} else {
		/* shells too hold their vCPU threads, parked before they
		 * ever enter KVM_RUN: a request restores and wakes them */
		ret = make_shell(p->cfg.kvm, &p->snap, h, p->cfg.timeout_ns);
		if (ret == 0 && p->cfg.hold == POOL_HOLD_WARM)
			ret = fill(p, h);
	}
	if (ret < 0) {
		held__destroy(h);
		return NULL;
	}
	return h;
}

static void refill_due(struct pool *p)
{
	pthread_mutex_lock(&p->lock);
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
}

/* Whether the held VM's guest completed its request: the probe guest
 * with DONE and the checksum `expected`, a Linux guest with its done
 * signal (which stopped it). */
static int check_run(struct held *h, bool linux_guest, uint64_t expected,
		     uint64_t *checksum)
{
	struct probe_state ps;

	*checksum = 0;
	if (h->vm->outcome != VM_COMPLETED)
		return err__set(EIO, "the guest did not complete: %s",
				h->vm->reason);
	if (linux_guest)
		return h->machine.timer.regs.done
			       ? 0
			       : err__set(EIO, "the guest completed without "
					  "its done signal");
	probe__save_state(&h->probe, &ps);
	*checksum = ps.checksum;
	if (ps.checksum != expected)
		return err__set(EIO, "the guest reported a wrong checksum");
	if (!h->tl.t[TL_GUEST_DONE])
		return err__set(EIO, "the guest completed without DONE");
	return 0;
}

void pool__request_release(struct pool_request *req)
{
	for (int i = 0; i < 2; i++) {
		free(req->output[i].buf);
		req->output[i] = (struct agent_capture){ .max = POOL_OUTPUT_MAX };
	}
}

/* Runs the request's command through the running guest's agent and ends
 * the VM: completed when the command ran (whatever its status), failed
 * with the reason when the agent did not answer or broke off. */
static void exec_request(struct pool *p, struct held *h,
			 struct pool_request *req)
{
	uint64_t deadline = timeline__now() + p->cfg.timeout_ns;
	struct agent_times t = { 0 };
	int fd, ret;

	pool__request_release(req);
	req->ran = false;
	fd = agent__connect_dev(h->machine.vsock, p->agent_port, deadline,
				agent__vm_gone, h->vm);
	if (fd < 0) {
		vm__end(h->vm, VM_FAILED, "the guest's agent did not answer: "
			"%s", err__last());
		return;
	}
	ret = agent__exec(fd, req->exec ? req->exec : p->cfg.exec,
			  agent__sink_capture, req->output, deadline, &t, &req->status);
	close(fd);
	req->first_output_ns = t.first_output;
	req->exit_ns = t.exited;
	if (ret < 0) {
		vm__end(h->vm, VM_FAILED, "the guest's agent: %s", err__last());
		return;
	}
	req->ran = true;
	vm__end(h->vm, VM_COMPLETED, "the command exited with status %d",
		req->status);
}

/* Runs the held VM's request phase to DONE; fills in req's times. */
int pool__run(struct pool *p, struct held *h, struct pool_request *req)
{
	int ret = 0;

	if (p->cfg.source != POOL_FROM_SNAPSHOT) {
		/* parked at READY or boot complete: the request's times
		 * start afresh; a Linux guest's done signal ends it (no
		 * vCPU runs to read this before the resume) */
		memset(&h->tl, 0, sizeof(h->tl));
		if (p->cfg.source == POOL_FROM_LINUX)
			h->machine.timer.at_done = BOOTTIMER_STOP;
		vm__resume(h->vm);
	} else {
		if (!h->filled)
			ret = fill(p, h);
		if (ret < 0) {
			refill_due(p);
			return ret;
		}
		vm__resume(h->vm);
	}
	refill_due(p);
	if (p->agent)
		exec_request(p, h, req);
	vm__wait(h->vm, p->cfg.timeout_ns);
	req->first_run_ns = h->tl.t[TL_FIRST_RUN];
	if (p->agent) {
		req->done_ns = req->exit_ns;
		return h->vm->outcome == VM_COMPLETED && req->ran
			       ? 0
			       : err__set(EIO, "the guest failed: %s",
					  h->vm->reason);
	}
	req->done_ns = h->tl.t[TL_GUEST_DONE];
	return check_run(h, p->linux_guest, p->expected, &req->checksum);
}

int pool__restore_once(struct kvm_host *kvm, struct snapshot *snap,
		       const struct guest_mem_ops *strategy, bool shell,
		       uint64_t timeout_ns, double *ns)
{
	struct held *h = calloc(1, sizeof(*h));
	struct vm_config vc;
	uint64_t checksum;
	int ret = 0;

	*ns = 0;
	if (!h)
		return err__set(ENOMEM, "allocating a VM");
	/* a shell as the pool holds it: vCPU threads parked, no memory,
	 * made before the restore starts; else the VM is made within it */
	if (shell)
		ret = make_shell(kvm, snap, h, timeout_ns);
	timeline__mark(&h->tl, TL_RESTORE_START);
	if (ret == 0 && !shell) {
		snapshot__shell_config(snap, &vc);
		ret = vm__create_shell(kvm, &vc, &h->tl, &h->vm);
	}
	if (ret == 0)
		ret = fill_from(snap, strategy, h);
	if (ret == 0 && shell)
		vm__resume(h->vm);
	else if (ret == 0)
		ret = vm__start(h->vm);
	if (ret == 0) {
		vm__wait(h->vm, timeout_ns);
		ret = check_run(h, snap->cfg.guest != SNAP_GUEST_PROBE,
				probe__expected_checksum(&snap->params,
							 snap->cfg.nr_vcpus),
				&checksum);
	}
	if (ret == 0 && h->tl.t[TL_FIRST_RUN])
		*ns = (double)(h->tl.t[TL_FIRST_RUN] -
			       h->tl.t[TL_RESTORE_START]);
	held__destroy(h);
	return ret;
}

