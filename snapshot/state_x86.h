/* Saving and restoring KVM's x86 vCPU and VM state as snapshot sections,
 * in the orders KVM requires. The VM must be paused (vm__pause). */
#ifndef COLDSTART_STATE_X86_H
#define COLDSTART_STATE_X86_H

#include "format.h"

#include <stdbool.h>

struct vm;
struct vcpu;
struct kvm_host;

int state__save_vcpu(struct vcpu *vcpu, struct snap_writer *w);
int state__save_vm(struct vm *vm, struct snap_writer *w);

/* Checks that this host can run the saved vCPU: CPUID features the
 * snapshot's guest was given must be supported here, and the XSAVE area
 * size must match. -ENOTSUP naming what is missing. */
int state__check_host(struct kvm_host *kvm, const struct snap_reader *r);

/* Checks the in-kernel irqchip sections against the VM config: with
 * `irqchip`, PICs, IOAPIC, PIT and every vCPU's LAPIC at their exact
 * sizes; without, none of them. -EINVAL naming the section. */
int state__check_irqchip(const struct snap_reader *r, bool irqchip,
			 unsigned int nr_vcpus);

int state__restore_vcpu(struct vcpu *vcpu, const struct snap_reader *r);
int state__restore_vm(struct vm *vm, const struct snap_reader *r);

/* The CPU vendor string of this host (CPUID leaf 0), NUL-terminated. */
void state__cpu_vendor(char vendor[16]);

#endif
