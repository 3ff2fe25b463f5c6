/* What hostsim.c (the minute loop, memory and eviction) and
 * hostsim_policy.c (each policy's windows and priorities) share. Not for
 * use outside them. */
#ifndef COLDSTART_HOSTSIM_INT_H
#define COLDSTART_HOSTSIM_INT_H

#include "hostsim.h"

#include <stdbool.h>
#include <stdint.h>

/* A function's state. Windows are minutes after its last busy one: its
 * VM is to be loaded from last + lo to last + hi; lo 0 keeps none. */
struct hfn {
	uint32_t hist[HOSTSIM_RANGE + 1]; /* idle times 1..RANGE */
	/* ge[j]: the in-range idle times >= j (ge[RANGE + 1] is 0), kept
	 * with hist so that what a VM is worth costs no scan */
	uint32_t ge[HOSTSIM_RANGE + 2];
	uint64_t in, oob, sumsq;	  /* sumsq: of the bin counts */
	int64_t last;			  /* -1 before its first busy minute */
	unsigned int lo, hi;
	bool loaded, busy, over;
	uint64_t freq; /* GREEDY_DUAL: invocations since its last eviction */
	double prio;
	uint64_t changed; /* OURS: idle times since the window was chosen */
};

struct hsim {
	const struct fn_trace *t;
	const struct hostsim_guest *g;
	const struct hostsim_config *cfg;
	struct hfn *f;
	struct hostsim_fn *per;
	struct hostsim_result *out;
	double used_mib;
	double clock; /* GREEDY_DUAL */
	int64_t now;
};

/* After function i's busy minute: its idle time goes into the histogram
 * and its policy picks the next window (and priority). */
void hostsim__after_busy(struct hsim *s, size_t i, uint32_t count);

/* Function i's worth of staying loaded at minute s->now: idle VMs of the
 * least worth are evicted first. */
double hostsim__worth(const struct hsim *s, size_t i);

/* Function i's worth when it is pre-warmed (before it is loaded). */
double hostsim__prewarm_worth(const struct hsim *s, size_t i);

#endif
