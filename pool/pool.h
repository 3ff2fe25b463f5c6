/* A warm pool of VMs in one VMM process: VMs made ahead of demand by K
 * refill threads, handed out one per request, each used once.
 *
 * What the pool holds (enum pool_hold):
 *   warm  - a snapshot already restored into its VM, its vCPU threads
 *           started and parked before their first KVM_RUN, or a fresh
 *           probe guest paused at READY: a request only wakes it;
 *   shell - a VM with its vCPUs (and irqchip), their threads parked, but
 *           no memory or state: the request restores the snapshot into it
 *           and wakes them (snapshot sources only).
 * A request takes the oldest VM held (a hit); when none is held it makes
 * one itself (a miss) or waits for a refill (POOL_WAIT; at most
 * timeout_ns, and only while a refill can come: a target above zero and
 * making not failing, else it makes its own as a miss). The guest then
 * runs its request phase to DONE (a Linux guest: to its done signal) and
 * the VM is destroyed. A VM that fails
 * before or while serving is counted and never handed out again; a request
 * whose VM failed is served once more by a VM made for it.
 *
 * How many VMs to hold (enum pool_policy, policy.h):
 *   fixed  - the target set by the config or pool__resize();
 *   follow - a target that follows the arrival rate: the rate is estimated
 *            as an exponentially decayed count of arrivals (half-life H:
 *            each arrival adds 1, the sum decays by 2^(-dt/H), and the rate
 *            is sum * ln 2 / H, unbiased for a steady Poisson stream); the
 *            target is ceil(rate * refill time * (1 + headroom)) held or
 *            being made, where the refill time is a moving average of how
 *            long one VM took to make, clamped to [min, max]; it is min
 *            once the decayed count is below one half (no arrival for
 *            about a half-life);
 *   marginal - the largest target whose every VM saves more misses (each
 *            worth miss_cost_s of idle time) than it idles, from the
 *            rate (as follow's, switching to a fast estimate in bursts,
 *            and at least the highest planned for, decaying, with a
 *            peak half-life) and the mean and variability of the
 *            refills' making times (policy.h); the first target (size)
 *            holds until the first arrival and the first VM made,
 *            clamped to [min, max];
 *   cover  - for batches: the cover_q quantile of the deficits requests
 *            met (arrivals since their burst began less the refills made
 *            meanwhile), by how long the pool had been quiet as their
 *            burst began, fading with a half-life (policy_cover.c).
 *   The simulator behind `coldstart tune pool` runs the same arithmetic. */
#ifndef COLDSTART_POOL_H
#define COLDSTART_POOL_H

#include "agent_client.h"
#include "pool_config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kvm_host;
struct pool;

/* What a request keeps of each stream of its command's output at most. */
#define POOL_OUTPUT_MAX (64u << 10)


/* One request: the caller sets arrival_ns (CLOCK_MONOTONIC, 0: now) and,
 * on a pool of a guest with an agent, may set exec (NULL: the pool's
 * cfg.exec); pool__serve fills in the rest. Times are CLOCK_MONOTONIC
 * ns. */
struct pool_request {
	uint64_t arrival_ns;
	const char *exec; /* borrowed until pool__serve returns */
	bool hit;    /* a VM was held when it arrived */
	bool waited; /* it waited for a refill (POOL_WAIT) */
	unsigned int failures; /* VMs that failed while serving it */
	uint64_t acquired_ns;  /* it had its VM */
	uint64_t first_run_ns; /* its guest's first instruction (KVM_RUN) */
	uint64_t done_ns;      /* its guest reported DONE */
	uint64_t checksum;
	/* a guest with an agent: the command ran (its exit status, or 128
	 * + the signal that killed it), its first output byte and its exit;
	 * done_ns is its exit too. A status other than 0 is still a
	 * request served. */
	bool ran;
	int status;
	uint64_t first_output_ns, exit_ns;
	/* stdout, stderr: the first POOL_OUTPUT_MAX bytes of each (freed
	 * by pool__request_release) */
	struct agent_capture output[2];
};

/* Frees what pool__serve captured of a request's output. */
void pool__request_release(struct pool_request *req);

struct pool_stats {
	uint64_t requests, hits, misses, waits;
	uint64_t made;          /* VMs the refill threads made */
	uint64_t made_on_demand; /* VMs requests made for themselves */
	uint64_t make_failures; /* VMs that could not be made */
	uint64_t guest_failures; /* VMs that failed while serving */
	uint64_t reaped;        /* held VMs destroyed above the target */
	unsigned int held, making, target;
	double idle_vm_s;       /* integral of the VMs held over time */
	double refill_cpu_s;    /* the refill threads' own CPU time */
	double rate;            /* the arrival-rate estimate (/s) */
	double make_s;          /* moving average of one VM's making */
	char last_error[256];   /* of the last failure, or "" */
};

/* Checks the config (-EINVAL naming the offending value), opens the
 * snapshot, starts the refill threads and returns at once: the pool fills
 * in the background (pool__wait_filled). */
int pool__start(const struct pool_config *cfg, struct pool **out);

/* Waits until the target is held or timeout_ns passes (-ETIMEDOUT; a pool
 * whose every VM fails to be made returns that error). */
int pool__wait_filled(struct pool *p, uint64_t timeout_ns);

/* Takes a VM for the request, runs it to DONE and checks its checksum
 * (a guest with an agent: runs the command through it, its output
 * captured; pool__request_release frees it); safe from any number of
 * threads. 0, or -errno: -ECANCELED once the pool
 * drains, else why the request could not be served (after one retry). */
int pool__serve(struct pool *p, struct pool_request *req);

/* A new fixed target (clamped to [min, max]); excess VMs are destroyed. */
void pool__resize(struct pool *p, unsigned int target);

void pool__stats(struct pool *p, struct pool_stats *out);

/* The refill threads' making times (seconds, the newest up to 4096,
 * oldest first) into out[max]; returns how many. With st, the counters
 * of the same instant (st->made matches while fewer than 4096). */
size_t pool__make_times(struct pool *p, double *out, size_t max,
			struct pool_stats *st);

/* Stops refilling, wakes waiting requests (-ECANCELED), joins the refill
 * threads and destroys every VM held; requests being served finish first.
 * Then frees the pool. NULL is a no-op. */
void pool__drain(struct pool *p);

/* A restore without a pool, as a snapshot pool's VMs are restored:
 * into a new VM (shell false) or into a shell with parked vCPU threads
 * made beforehand, run to DONE (a Linux guest: its done signal) at most
 * timeout_ns. *ns: restore start -> first KVM_RUN. 0, or -errno with a
 * message. */
struct snapshot;
struct guest_mem_ops;
int pool__restore_once(struct kvm_host *kvm, struct snapshot *snap,
		       const struct guest_mem_ops *strategy, bool shell,
		       uint64_t timeout_ns, double *ns);

const char *pool__hold_name(enum pool_hold h);

/* The command a request runs through the pool's guest's agent unless it
 * names its own, or NULL: the guest has no agent. */
const char *pool__exec(const struct pool *p);

#endif
