/* What the warm pool's files share (pool.c: the pool, its refill threads
 * and the interface; pool_vm.c: making and running one VM; pool_target.c:
 * the arrival rate and the target it sets): the pool's structs and the
 * functions one file calls in another. Not for use outside the pool. */
#ifndef COLDSTART_POOL_INT_H
#define COLDSTART_POOL_INT_H

#include "pool.h"

#include "guest_devices.h"
#include "linux_x86.h"
#include "policy.h"
#include "probe.h"
#include "snapshot.h"
#include "timeline.h"
#include "vm.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define NS 1000000000.0
/* The refills' making times kept for pool__make_times (the newest). */
#define MAKE_TIMES_KEPT 4096

struct held {
	struct vm *vm;
	struct probe probe;   /* the probe guest's device; the VM points here */
	/* a Linux guest's machine (its devices), made by the restore or
	 * the boot: it must outlive the VM */
	struct linux_machine machine;
	bool machine_made;
	/* a snapshot with drives or vsock: the devices of its restore (the
	 * vsock device without a socket file: the pool reaches its agent
	 * from inside, as it must once jailed) */
	struct guestdev_restore devs;
	struct timeline tl;   /* the VM's timeline */
	bool filled;          /* memory and state restored (or booted) */
};

struct worker {
	struct pool *pool;
	pthread_t thread;
	bool started;
	double cpu_s; /* its CPU time so far */
};

struct pool {
	struct pool_config cfg;
	struct snapshot snap;
	bool snap_open;
	bool linux_guest;  /* a Linux guest: from the snapshot or booted */
	uint64_t expected; /* the probe's checksum a correct run reports */
	/* a snapshot's guest with drives or an agent (vm.virtio); its
	 * agent's port */
	bool devices, agent;
	uint32_t agent_port;

	pthread_mutex_t lock;
	pthread_cond_t wake;  /* refill threads: the target moved, or drain */
	pthread_cond_t ready; /* requests waiting for a VM, wait_filled */
	pthread_cond_t idle;  /* drain: the last request being served ended */
	struct held **held;   /* oldest first; capacity cfg.max */
	unsigned int nheld, making, serving, target;
	bool draining;
	uint64_t seq; /* VMs the refill threads started making */
	unsigned int failures_in_row;
	struct worker *workers;

	/* what the policy sees (policy.h): the arrival-rate estimates (fast:
	 * marginal's bursts; peak: marginal's highest rate planned for) */
	struct policy_view view;

	double make_times[MAKE_TIMES_KEPT]; /* ring of the refills' (s) */
	uint64_t make_times_n;               /* ever recorded */

	uint64_t idle_since; /* the VMs-held integral is current up to here */
	double idle_ns;
	struct pool_stats st;
};

/* The vCPUs stopped before the devices close (their I/O threads may
 * still write guest memory), and those before the memory goes. */
static inline void held__destroy(struct held *h)
{
	if (!h)
		return;
	if (h->vm && h->machine_made) {
		vm__stop(h->vm);
		linux_machine__close_virtio(&h->machine);
	}
	vm__destroy(h->vm);
	if (h->machine_made)
		linux_machine__destroy(&h->machine);
	free(h);
}

/* pool_vm.c: making a VM as the pool holds it, and running a request's */
struct held *pool__make(struct pool *p, int64_t seq);
int pool__run(struct pool *p, struct held *h, struct pool_request *req);

/* pool_target.c, under p->lock: the arrival rate (per second) at `now`,
 * counting an arrival at t (ns), and the target they set */
double pool__rate_at(const struct pool *p, uint64_t now);
void pool__note_arrival(struct pool *p, uint64_t t);
void pool__retarget(struct pool *p, uint64_t now);

#endif
