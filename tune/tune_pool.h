/* `coldstart tune pool --host RESULTS_DIR`: which warm-pool policy and
 * parameters meet a start-latency SLO at the least idle VM-seconds, for
 * an arrival process, simulated (poolsim.h) with the costs a `bench
 * suite` measured on a host. No KVM needed, except by --validate, which
 * replays the arrivals through real fixed pools (`bench pool` children)
 * and puts measured beside simulated hit ratio and p99. The command:
 * cli/cmd_tune_pool.c. */
#ifndef COLDSTART_TUNE_POOL_H
#define COLDSTART_TUNE_POOL_H

#include "arrivals.h"
#include "poolsim.h"

#include <stdbool.h>
#include <stdint.h>

#define MAX_VALIDATE 8

struct slo {
	bool hits;   /* hits=PCT%, else a latency percentile */
	double pct;  /* above 0, below 100: 50, 95, 99, 99.9... */
	double goal; /* seconds, or a hit percentage */
	char text[64];
};

struct tp_opts {
	const char *host, *arrivals_text, *out_dir;
	struct arrivals_spec spec;
	double duration_s, time_scale;
	bool duration_set, json, budget_set;
	uint64_t seed, budget;
	unsigned int workers; /* 0: pool.json's */
	unsigned int max_vms; /* the largest pool swept */
	double holdout;       /* the share of arrivals held out; 0: none */
	/* what-if costs instead of --host: a file, or --cost's text */
	const char *costs_file, *cost_text;
	struct slo slo;
	bool slo_set;
	bool policy_on[POOLSIM_POLICIES];
	bool validate;
	const char *kvm_path; /* --validate's KVM device, NULL: /dev/kvm */
	unsigned int nvsizes, vsizes[MAX_VALIDATE]; /* 0: around the rec. */
};

/* --max-vms's default: the largest pool swept unless a memory budget
 * is smaller. */
#define TP_MAX_VMS 4096

/* The options: 1 for --help, 0, or -EINVAL with a message. */
int tune_pool__parse(int argc, char **argv, struct tp_opts *o);

/* Sweeps, recommends and writes what o asks for: 1 when a configuration
 * meets the SLO, 0 when none does (the report and files are still
 * written), or -errno with a message and *code the exit status for it
 * (2 bad inputs, 1 a failure, 77 --validate on a host that cannot run
 * VMs; validation results never change the status). */
int tune_pool__run(const struct tp_opts *o, int *code);

#endif
