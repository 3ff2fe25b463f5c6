/* What the simulator's files share (poolsim.c: the event queue, the pool
 * and the run; poolsim_policy.c: the policies' targets; poolsim_check.c:
 * the inputs' checks): the simulation's state and the functions one file
 * calls in another. Not for use outside the simulator. */
#ifndef COLDSTART_POOLSIM_INT_H
#define COLDSTART_POOLSIM_INT_H

#include "poolsim.h"

#include "policy.h"
#include "stats.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Kinds in their order among events at the same time; arrivals come
 * from the sorted array, not the heap. */
enum ev_kind { EV_MADE, EV_DONE, EV_ARRIVAL, EV_TIMER };

struct event {
	double t;
	double dur;        /* EV_MADE: its making; EV_DONE: drawn latency */
	enum ev_kind kind;
	bool miss;         /* EV_DONE: the request made its own VM */
	uint64_t seq;      /* FIFO among equal times and kinds */
};

struct heap {
	struct event *e;
	size_t n, cap;
};

/* HYBRID's idle-time histogram: counts and a Fenwick tree over them, so a
 * percentile costs O(log bins), not a scan. */
struct hist {
	unsigned int nbins;
	uint32_t *count;
	uint32_t *tree; /* 1-based */
	uint64_t in, oob;
	double sumsq; /* sum of squared counts, for the CV */
	double win_start, win_end; /* the window after the last arrival */
};

struct sim {
	const struct arrivals *a;
	const struct poolsim_costs *c;
	const struct poolsim_config *cfg;
	struct poolsim_result *out;
	struct stats_rng rng_make, rng_lat, rng_service;
	struct heap q;
	uint64_t seq;
	double now, end, idle_at;
	unsigned int held, making, serving, target;
	size_t *waiting; /* FIFO of waiting requests: [wait_head, wait_tail) */
	size_t wait_head, wait_tail;
	double timer_at; /* the earliest policy timer queued, or INFINITY */

	/* the policies' state */
	bool arrived;
	double last; /* the last arrival */
	/* what the pool's policies see (policy.h): the rate estimates, the
	 * moving average of making times (0 unknown) and the mean and
	 * squared CV of make_s */
	struct policy_view view;
	struct hist hist;
};

/* poolsim_check.c: 0, or -EINVAL naming the offending input */
int poolsim__check_arrivals(const struct arrivals *a);
int poolsim__check_costs(const struct poolsim_costs *c);
int poolsim__check_config(const struct poolsim_config *cfg);

/* poolsim_policy.c: HYBRID's histogram; the policy's target at t, when
 * it may next change with no event, and what an arrival at t tells it;
 * the target's evaluation may update the policy's state (MARGINAL's peak) */
int poolsim__hist_init(struct hist *h, const struct poolsim_config *cfg);
unsigned int poolsim__policy_target(struct sim *s, double t);
double poolsim__policy_next(const struct sim *s, double t);
void poolsim__policy_arrival(struct sim *s, double t);

#endif
