/* A VM and its vCPUs as handles: creation with rollback, one thread per
 * vCPU, a run loop that dispatches I/O exits to the trap registry, and a
 * clean stop from any thread (immediate_exit plus a signal). */
#ifndef COLDSTART_VM_H
#define COLDSTART_VM_H

#include "device.h"
#include "iotrap.h"
#include "kvm.h"
#include "mem.h"
#include "timeline.h"
#include "vm_state.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct vm_config {
	uint64_t mem_size; /* multiple of 2 MiB */
	unsigned int nr_vcpus;
	const struct guest_mem_ops *mem_ops; /* NULL: anonymous */
	bool strict_io;    /* unclaimed I/O stops the VM */
	enum vm_cpuid cpuid;
	const struct mem_source *mem_src; /* restore strategies only */
	bool irqchip; /* in-kernel PIC, IOAPIC, LAPICs and PIT (OS guests) */
	/* Devices with an I/O thread the VM will have: their threads are
	 * made with the vCPU threads (io_thread__prestart), unless a jail
	 * is pending. */
	unsigned int io_threads;
};


/* Creates the VM, its memory (registered as slot 0 at GPA 0) and its vCPUs
 * (with CPUID as configured). Marks VM_CREATED, MEM_READY and VCPU_READY in tl.
 * Unless a jail is pending, the vCPU threads are made first and load
 * their seccomp filters meanwhile; they wait for vm__start. On failure
 * nothing is left behind. */
int vm__create(struct kvm_host *kvm, const struct vm_config *cfg,
	       struct timeline *tl, struct vm **out);

/* A shell: the VM, its irqchip (cfg->irqchip) and cfg->nr_vcpus vCPUs
 * (cfg->cpuid), without guest memory; cfg->mem_size and strict_io are
 * recorded, cfg->mem_ops and mem_src ignored. Marks VM_CREATED and
 * VCPU_READY in tl (may be NULL). Nothing needs memory first: KVM takes a
 * memory slot at any time, and a vCPU's kvm_run page, CPUID and (PVM)
 * per-vCPU state belong to the vCPU, not to guest memory. On failure
 * nothing is left behind. */
int vm__create_shell(struct kvm_host *kvm, const struct vm_config *cfg,
		     struct timeline *tl, struct vm **out);

/* Gives a shell its guest memory: backend `ops` (a restore strategy or a
 * plain backend; NULL = anon) filled from `src` (may be NULL for plain
 * backends), registered as slot 0 at GPA 0; marks MEM_READY in the VM's
 * timeline. Before any vCPU state is set: some of it (KVM's paravirtual
 * MSRs) names guest memory. -EBUSY with a message if the VM already has
 * memory. On failure the shell has no memory and may be filled again or
 * destroyed. */
int vm__fill_shell(struct vm *vm, const struct guest_mem_ops *ops,
		   const struct mem_source *src);

/* Points the VM's timeline at tl (may be NULL): a shell made ahead of
 * time gets the request's timeline just before it is filled or started.
 * Not while vCPU threads run. */
void vm__set_timeline(struct vm *vm, struct timeline *tl);

/* Registers a device whose state snapshots save and restore (device.h);
 * `dev` is borrowed and must outlive the VM. -EEXIST for a name already
 * registered, -ENOSPC past VM_MAX_DEVICES. */
int vm__add_device(struct vm *vm, const struct device_ops *ops, void *dev);

/* The registered device named `name`, or NULL. */
struct device *vm__find_device(struct vm *vm, const char *name);

/* Runs one thread per vCPU: the threads vm__create or vm__create_shell
 * made (each has loaded its seccomp filter while the VM was set up), or
 * new ones when there are none (a jail was pending, or the VM ran
 * before). Register traps and set registers first;
 * or, for a shell without memory, request a pause first (else -EINVAL):
 * its threads then park before they ever enter KVM_RUN, and the shell is
 * filled and restored while they wait; vm__resume lets them run. */
int vm__start(struct vm *vm);

/* Waits until the VM ends or `timeout_ns` passes (0 = no limit); on timeout
 * stops it with VM_STOPPED. Joins every vCPU thread. Returns the outcome. */
enum vm_outcome vm__wait(struct vm *vm, uint64_t timeout_ns);

/* vm__end, which any thread may call (vCPU threads too), is in
 * vm_state.h. */

/* Asks every vCPU to park outside KVM_RUN with pending I/O completed, so
 * the VM's state is consistent. Returns at once; safe from trap handlers. */
void vm__request_pause(struct vm *vm);
/* The same with vm->lock held (device handlers that hold it already). */
void vm__request_pause_locked(struct vm *vm);

/* Waits until every running vCPU is parked (0), the VM ended (-ECANCELED)
 * or `timeout_ns` passed (-ETIMEDOUT; 0 = no limit). */
int vm__wait_paused(struct vm *vm, uint64_t timeout_ns);

/* Exits the vCPUs have handled so far, summed (read while they run: a
 * sign of life for error messages, not a measurement). */
static inline uint64_t vm__exits(const struct vm *vm)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		n += __atomic_load_n(&vm->vcpus[i].exits, __ATOMIC_RELAXED);
	return n;
}

/* vm__request_pause() then vm__wait_paused(). */
int vm__pause(struct vm *vm, uint64_t timeout_ns);

/* Starts tracking the pages the guest writes (KVM_MEM_LOG_DIRTY_PAGES on
 * guest memory) and those its virtio devices may write (the buffers they
 * are given to fill, their used rings: mem__mark_written), for diff
 * snapshots; the VM must be paused or not yet started. */
int vm__dirty_log_start(struct vm *vm);

/* Fills `bitmap` (one bit per 4 KiB page of guest memory, in 64-bit words)
 * with the pages the guest or a device wrote since tracking started or
 * since the last call, and re-arms tracking (KVM_GET_DIRTY_LOG). */
int vm__dirty_log_get(struct vm *vm, uint64_t *bitmap);

/* Lets parked vCPUs run again. */
void vm__resume(struct vm *vm);

/* Async-signal-safe request to stop (VM_STOPPED, "interrupted"). */
void vm__interrupt(struct vm *vm);

/* Ends a VM still running ("destroyed while running") and waits for its
 * vCPU threads: what vm__destroy does first, for a caller that must stop
 * its devices between the two. */
void vm__stop(struct vm *vm);

/* Stops if needed, joins threads, frees everything; NULL is a no-op. */
void vm__destroy(struct vm *vm);

const char *vm__outcome_name(enum vm_outcome outcome);

#endif
