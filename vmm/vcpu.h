/* The vCPU side of a VM (vm.c's own): each vCPU's thread, the run loop
 * that dispatches its exits, and the kick that stops it; vm__end
 * (vm_state.h) is here too, as the vCPU threads end the VM. */
#ifndef COLDSTART_VCPU_H
#define COLDSTART_VCPU_H

#include "vm_state.h"

/* Makes every vCPU's thread before the VM itself (not under a pending
 * jail); each loads its seccomp filter and waits until vm__start clears
 * its `early` flag or the VM ends. */
void vcpu__make_threads_early(struct vm *vm);

/* Makes the vCPU's thread now; 0 or -errno with a message. */
int vcpu__make_thread(struct vcpu *vcpu);

/* Ends the threads still waiting for a start and joins every thread not
 * joined yet. */
void vcpu__join_threads(struct vm *vm);

/* Sets immediate_exit on every vCPU and signals its thread out of
 * KVM_RUN. Call with vm->lock held or from a vCPU thread. */
void vcpu__kick_all(struct vm *vm);

#endif
