/* Runs one probe-guest VM from creation to teardown and gathers what
 * happened: outcome, timeline, checksum verdict, memory. Used by
 * `coldstart run` and by the in-process benchmark drivers. */
#ifndef COLDSTART_RUNNER_H
#define COLDSTART_RUNNER_H

#include "memstat.h"
#include "probe.h"
#include "timeline.h"
#include "vm.h"

#include <stdbool.h>

struct run_config {
	uint64_t mem_size;
	unsigned int nr_vcpus;
	const struct guest_mem_ops *mem_ops; /* NULL: anonymous */
	enum vm_cpuid cpuid;  /* the probe guest needs none */
	struct probe_params probe;
	uint64_t timeout_ns;  /* 0: none */
	bool measure_memory;  /* read /proc/self/smaps before teardown */
	bool verify;          /* compute the expected checksum */
	/* Called once the VM stopped, before teardown (NULL: none): keeps
	 * the VM and its memory alive for as long as it runs (bench
	 * density's held VMs). */
	void (*before_teardown)(struct vm *vm);
};

struct run_result {
	enum vm_outcome outcome;
	char reason[512];
	struct timeline tl;   /* caller may pre-set TL_PROCESS_START etc. */
	struct probe_state probe;
	uint64_t exits;       /* KVM_RUN returns, all vCPUs */
	uint64_t expected_checksum;
	bool checksum_ok;     /* meaningful when verify and all vCPUs DONE */
	bool have_memory;
	struct memstat memory;
};

/* The smallest guest memory that fits the workload: 2 MiB of system area
 * plus the larger of init and working set, rounded up to 2 MiB. */
uint64_t runner__min_mem(const struct probe_params *p);

/* The VM a run config asks for (strict I/O: the probe guest claims all
 * its ports). */
struct vm_config runner__vm_config(const struct run_config *cfg);

/* Creates, runs and destroys one VM. Returns 0 when the VM ran (whatever
 * its outcome: see res->outcome) or -errno when it could not be set up. */
int runner__probe(struct kvm_host *kvm, const struct run_config *cfg,
		  struct run_result *res);

/* Whether the run did what was asked: completed and, when it reached
 * DONE and verification was requested, with the predicted checksum. */
bool runner__succeeded(const struct run_config *cfg,
		       const struct run_result *res);

/* Async-signal-safe: asks the VM currently running in this process to
 * stop (for SIGINT/SIGTERM handlers). */
void runner__interrupt(void);

#endif
