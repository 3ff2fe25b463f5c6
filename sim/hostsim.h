/* Many functions' warm VMs in one host's memory budget, simulated minute
 * by minute over a multi-function trace (arrivals_functions.h), under
 * one of four keep-alive policies. What `tune host` sweeps. Pure code:
 * no KVM, no global state, deterministic.
 *
 * The model, per function (as the hybrid-histogram paper's simulation,
 * one instance per function): a minute with invocations is served by
 * one VM. If the function's VM is loaded at the minute's start, every
 * invocation is warm; otherwise the first is a cold start (the VM is
 * made) and the rest of the minute's are warm. Loaded VMs hold their
 * guest's memory; a VM in a minute without invocations is idle. Busy
 * VMs always run: to make one, idle VMs are evicted (the policy says
 * which) until it fits the budget, and if it still does not, it runs
 * over the budget for its minute and is not kept (an overflow). After
 * each minute the policy says, per function, in which later minutes its
 * VM is to be loaded:
 *
 * KEEPALIVE window W [10]: loaded for the W minutes after each busy one;
 *   when memory is needed, the VM that expires first goes.
 * HYBRID: Shahrad et al., "Serverless in the Wild", USENIX ATC 2020,
 *   per function: idle times (minutes from one busy minute to the next)
 *   in 1-minute bins up to 240 (4 h); out-of-bound ones counted. With
 *   fewer than 10 idle times, a bin-count coefficient of variation
 *   below 2, or more than half of them out of bounds (where the paper
 *   forecasts with ARIMA, which is not done here), the standard
 *   keep-alive of 240 minutes. Else pre-warm at the 5th percentile's
 *   bin less 10 % and keep to the 99th's end plus 10 %: the VM is
 *   unloaded after the busy minute and loaded again at the pre-warm
 *   minute (kept on when that is the next minute). Eviction: earliest
 *   expiry first.
 * GREEDY_DUAL: FaasCache's Greedy-Dual keep-alive (Fuerst and Sharma,
 *   ASPLOS 2021): VMs are kept with no time limit; each has the
 *   priority clock + frequency x cost / size (frequency: its function's
 *   busy minutes since it was last evicted; cost: cold - warm start
 *   latency; size: memory). When memory is needed the lowest priority
 *   goes and the clock becomes its priority.
 * OURS, price P: per function the idle-time histogram of HYBRID (no
 *   fallback: from the first idle time on; before it, the 10-minute
 *   keep-alive), and the window [a, b] (a in {1, the 5th percentile's
 *   bin}, b >= a) that maximises hits(a, b) - P x weight x GiB x
 *   idle-minutes(a, b), both expected from the histogram: a cold start
 *   saved is worth P idle GiB-minutes, the same price for every
 *   function, so the budget goes where it saves the most cold starts
 *   per MiB. When memory is needed, the idle VM least likely to be used
 *   in the rest of its window per MiB goes first. P is the tuner's. */
#ifndef COLDSTART_HOSTSIM_H
#define COLDSTART_HOSTSIM_H

#include "arrivals_functions.h"

#include <jansson.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The hybrid histogram's bins (minutes) and the longest window. */
#define HOSTSIM_RANGE 240

enum hostsim_policy {
	HOSTSIM_OURS,
	HOSTSIM_HYBRID,
	HOSTSIM_GREEDY_DUAL,
	HOSTSIM_KEEPALIVE,
	HOSTSIM_POLICIES,
};

const char *hostsim__policy_name(enum hostsim_policy p);

/* A function's guest: what its VMs cost. */
struct hostsim_guest {
	double mem_mib;	    /* memory per VM, > 0 */
	double cold_s;	    /* a cold start's latency */
	double hit_s;	    /* a warm start's latency */
	double idle_weight; /* OURS: the price of its idle memory, x P */
};

struct hostsim_config {
	enum hostsim_policy policy;
	double budget_mib;	 /* > 0 */
	unsigned int keepalive;	 /* KEEPALIVE's window, minutes [10] */
	double price;		 /* OURS: cold starts per idle GiB-minute */
};

/* What a function saw, and the window its policy chose last (minutes
 * after a busy minute; 0 0 when it keeps nothing). */
struct hostsim_fn {
	uint64_t invocations, cold, evicted;
	double idle_mib_min;
	unsigned int win_lo, win_hi;
	bool histogram; /* HYBRID: the last window came from the histogram */
};

struct hostsim_result {
	uint64_t invocations, cold, overflow, evictions;
	double peak_mib;     /* most memory loaded in a minute */
	double idle_gib_s;   /* loaded VMs in minutes without invocations */
	double start_s;	     /* every invocation's start latency, summed */
};

void hostsim__defaults(struct hostsim_config *cfg);

/* The guest types of a --guests file and which one each function of a
 * trace runs in. */
#define HOSTSIM_MAX_TYPES 4096
struct hostsim_type {
	char name[64];
	struct hostsim_guest g;
	size_t nfn; /* the trace's functions it runs */
};
struct hostsim_guests {
	struct hostsim_type *type;
	size_t ntype;
	size_t *fn_type;	  /* per function of the trace */
	struct hostsim_guest *fn; /* per function: its type's guest */
	size_t absent;		  /* functions listed but not in the trace */
};

/* The guests file's document (docs/commands.md, `tune host`):
 * {"guests": [{"name": N, "mem_mib": M, "cold_ms": C, "hit_ms": H,
 * "idle_weight": W, "functions": [NAME, ...]}, ...]}; idle_weight is
 * optional [1]; the one guest without "functions" (at most one) runs
 * every function no list names. `what` names the file in messages. 0,
 * or -EINVAL naming the problem (an unknown key, a value out of range, a
 * function listed twice or in no guest with no default), -ENOMEM. */
int hostsim__guests_from_json(const json_t *root, const char *what,
			      const struct fn_trace *t,
			      struct hostsim_guests *out);

/* One guest for every function (named "default"). */
int hostsim__guests_one(const struct hostsim_guest *g,
			const struct fn_trace *t, struct hostsim_guests *out);

void hostsim__guests_free(struct hostsim_guests *gs);

/* Simulates trace t with guests g[0..t->nfn) (one per function) under
 * cfg; per_fn (may be NULL) gets t->nfn entries. 0, or -EINVAL with a
 * message for a bad configuration or guest, -ENOMEM. */
int hostsim__run(const struct fn_trace *t, const struct hostsim_guest *g,
		 const struct hostsim_config *cfg, struct hostsim_result *out,
		 struct hostsim_fn *per_fn);

#endif
