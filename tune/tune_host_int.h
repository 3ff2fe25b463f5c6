/* What tune_host.c (the run: sweep and memory searches) and
 * tune_host_report.c (the report, the JSON document, the files) share.
 * Not for use outside them. */
#ifndef COLDSTART_TUNE_HOST_INT_H
#define COLDSTART_TUNE_HOST_INT_H

#include "tune_host.h"

#include "arrivals_functions.h"
#include "hostsim.h"

#include <jansson.h>

/* The least budget at which a policy reaches a number of cold starts
 * (mib < 0: not even with every function's VM held), the peak memory
 * it used there (above the budget when busy VMs overflow it) and, for
 * ours, the price. */
struct th_need {
	double mib, peak_mib, price;
};

/* A policy at the budget, and what it needs to reach the cold starts of
 * ours at the budget. */
struct th_pol {
	double price; /* ours: the price swept to */
	struct hostsim_result r;
	struct th_need need;
};

struct th_run {
	const struct th_opts *o;
	struct fn_trace t;
	struct hostsim_guests gs;
	double budget_mib;
	double all_mib;	 /* every function's VM at once */
	double busy_mib; /* the busy VMs of the busiest minute */
	struct th_pol pol[HOSTSIM_POLICIES];
	struct hostsim_fn *per;	 /* ours at the budget, per function */
	struct th_need ours_for_gd; /* for greedy-dual's cold starts at
				     * the budget */
	unsigned long sims;
	double elapsed_s;
};

/* The price grid ours is swept over (cold starts per idle GiB-minute). */
#define TH_PRICES 29
double tune_host__price(int k);

json_t *tune_host__json(const struct th_run *run);
int tune_host__markdown(const struct th_run *run, FILE *f);
int tune_host__outputs(const struct th_run *run);

#endif
