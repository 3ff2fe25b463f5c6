/* `coldstart tune host`: many guests' warm VMs in one host's memory
 * budget, simulated over a multi-function trace (hostsim.h): our
 * per-function windows priced by the cold starts they save per MiB,
 * against the hybrid histogram, Greedy-Dual keep-alive and a fixed
 * keep-alive, each at the budget and at the memory it needs to reach our
 * cold starts. No KVM. The command: cli/cmd_tune_host.c. */
#ifndef COLDSTART_TUNE_HOST_H
#define COLDSTART_TUNE_HOST_H

#include "arrivals.h"
#include "hostsim.h"

#include <stdbool.h>
#include <stdint.h>

struct th_opts {
	const char *trace, *guests, *out_dir;
	enum arrivals_format format;
	uint64_t budget;  /* bytes */
	uint64_t minutes; /* 0: the whole trace */
	struct hostsim_guest guest; /* every function's, without --guests */
	unsigned int keepalive;	   /* the fixed keep-alive's minutes */
	double price;		   /* ours's, when price_set; else swept */
	bool price_set;
	bool json;
};

void tune_host__defaults(struct th_opts *o);

/* Reads, sweeps, compares and writes what o asks for: 0, or -errno with
 * a message and *code the exit status for it (2 bad inputs, 1 a
 * failure). */
int tune_host__run(const struct th_opts *o, int *code);

#endif
