/* The VMM side of the built-in probe guest: loads the embedded image, lays
 * out memory and page tables, starts every vCPU in ring 3, and serves the
 * ucall port. Its state lives in struct probe, one per VM. */
#ifndef COLDSTART_PROBE_H
#define COLDSTART_PROBE_H

#include "guest/probe_abi.h"

#include <stdbool.h>
#include <stdint.h>

struct vm;

struct probe_params {
	uint64_t init_bytes;    /* F */
	uint64_t ws_bytes;      /* W */
	uint64_t compute_iters; /* C */
	uint64_t seed;
	enum probe_pattern pattern;
	enum probe_op op;
	uint32_t stride; /* pages */
	enum probe_misbehave misbehave;
	bool stop_at_ready; /* end the VM (completed) once all vCPUs are READY */
	bool pause_at_ready; /* pause the VM (for a snapshot) at READY */
	/* Pause the VM once every vCPU reported this PHASE (enum
	 * probe_phase; 0: never), e.g. for a diff snapshot after the
	 * request phase. */
	uint32_t pause_at_phase;
};

/* The device's state, complete enough to save and restore a VM mid-run. */
struct probe_state {
	uint32_t ready;  /* vCPUs that reported READY */
	uint32_t done;   /* vCPUs that reported DONE */
	uint64_t checksum; /* sum of the per-vCPU DONE checksums */
	uint64_t pages;    /* pages the request phase touched, all vCPUs */
	uint64_t ucalls;   /* ucalls served */
	uint32_t phase[PROBE_MAX_VCPUS]; /* last PHASE each vCPU reported */
};

struct probe {
	struct vm *vm;
	struct probe_params params;
	struct probe_state state;
	uint32_t at_pause_phase; /* vCPUs that reported pause_at_phase */
};

/* Checks params against the VM's shape; -EINVAL with a message naming the
 * offending value. */
int probe__validate(const struct probe_params *p, uint64_t mem_size,
		    unsigned int nr_vcpus);

/* Loads the guest into `vm` (created, not started) and registers the ucall
 * trap with `probe` as its state. */
int probe__setup(struct probe *probe, struct vm *vm,
		 const struct probe_params *p);

/* Re-attaches the device to a VM restored from a snapshot: memory and
 * registers come from the snapshot; the device resumes from `state`. */
int probe__attach(struct probe *probe, struct vm *vm,
		  const struct probe_params *p, const struct probe_state *state);

/* Pauses the VM once every vCPU reported PHASE `phase` (0: never), from
 * now on; any thread, e.g. while the VM is paused before a resume. */
void probe__pause_at(struct probe *probe, uint32_t phase);

/* The checksum a correct run must report, computed on the host. */
uint64_t probe__expected_checksum(const struct probe_params *p,
				  unsigned int nr_vcpus);

void probe__save_state(const struct probe *probe, struct probe_state *out);
void probe__load_state(struct probe *probe, const struct probe_state *in);

/* The embedded guest image (vmm/guest/probe, linked in by the build). */
extern const uint8_t probe_image_start[];
extern const uint8_t probe_image_end[];

#endif
