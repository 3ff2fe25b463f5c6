/* The warm pool's VMs: one made (booted or a shell), filled and run. */
#include "pool.h"
#include "pool_int.h"

#include "err.h"
#include "kvm.h"
#include "snapshot.h"
#include "timeline.h"
#include "vm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- making and running one VM ---- */

/* Restores the snapshot into the held shell; its timeline starts here. */
static int fill(struct pool *p, struct held *h)
{
	int ret;

	memset(&h->tl, 0, sizeof(h->tl));
	timeline__mark(&h->tl, TL_RESTORE_START);
	ret = snapshot__restore_into(h->vm, &p->snap, p->cfg.strategy, &h->tl,
				     &h->probe);
	h->filled = ret == 0;
	return ret;
}

/* Starts the VM's vCPU threads parked before their first
 * KVM_RUN, so a request only wakes them: thread creation is off the
 * request's path. */
static int start_parked(struct pool *p, struct held *h)
{
	int ret;

	vm__request_pause(h->vm);
	ret = vm__start(h->vm);
	if (ret == 0)
		ret = vm__wait_paused(h->vm, p->cfg.timeout_ns);
	return ret;
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

/* A VM as the pool holds it; NULL with an error set on failure. seq
 * numbers the refill threads' VMs (for abort_every); -1 for a VM a
 * request makes for itself, which is never made to fail. */
struct held *pool__make(struct pool *p, int64_t seq)
{
	struct held *h = calloc(1, sizeof(*h));
	struct vm_config vc;
	int ret;

	if (!h) {
		err__set(ENOMEM, "allocating a pool entry");
		return NULL;
	}
	if (p->cfg.source == POOL_FROM_PROBE) {
		ret = boot(p, h, seq);
	} else {
		snapshot__shell_config(&p->snap, &vc);
		/* shells too hold their vCPU threads, parked before they
		 * ever enter KVM_RUN: a request restores and wakes them */
		ret = vm__create_shell(p->cfg.kvm, &vc, NULL, &h->vm);
		if (ret == 0)
			ret = start_parked(p, h);
		if (ret == 0 && p->cfg.hold == POOL_HOLD_WARM)
			ret = fill(p, h);
	}
	if (ret < 0) {
		destroy(h);
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

/* Runs the held VM's request phase to DONE; fills in req's times. */
int pool__run(struct pool *p, struct held *h, struct pool_request *req)
{
	struct probe_state ps;
	int ret = 0;

	if (p->cfg.source == POOL_FROM_PROBE) {
		/* parked at READY: the request's times start afresh */
		memset(&h->tl, 0, sizeof(h->tl));
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
	vm__wait(h->vm, p->cfg.timeout_ns);
	probe__save_state(&h->probe, &ps);
	req->first_run_ns = h->tl.t[TL_FIRST_RUN];
	req->done_ns = h->tl.t[TL_GUEST_DONE];
	req->checksum = ps.checksum;
	if (h->vm->outcome != VM_COMPLETED)
		return err__set(EIO, "the guest did not complete: %s",
				h->vm->reason);
	if (ps.checksum != p->expected)
		return err__set(EIO, "the guest reported a wrong checksum");
	if (!req->done_ns)
		return err__set(EIO, "the guest completed without DONE");
	return 0;
}

