/* The state of a VM and its vCPUs, shared by the VM's lifecycle (vm.c)
 * and its vCPU threads (vcpu.c), and what a vCPU thread may call to end
 * the VM. Everything else goes through vm.h, which includes this. */
#ifndef COLDSTART_VM_STATE_H
#define COLDSTART_VM_STATE_H

#include "device.h"
#include "iotrap.h"
#include "kvm.h"
#include "mem.h"
#include "timeline.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* The signal that kicks a vCPU thread out of KVM_RUN. Its handler is
 * installed (empty, without SA_RESTART) the first time a VM starts. */
#define VCPU_KICK_SIGNAL SIGUSR1

struct kvm_run;

struct vcpu {
	struct vm *vm;
	unsigned int id;
	int fd;
	struct kvm_run *run;
	pthread_t thread;
	bool started; /* the thread exists (joined by vm__wait or vm_free) */
	bool early;   /* made with the VM, it waits for vm__start */
	bool entered; /* KVM_RUN was called (vCPU thread only) */
	uint64_t exits; /* KVM_RUN returns handled */
};

enum vm_outcome {
	VM_RUNNING = 0,
	VM_COMPLETED, /* the guest reached the goal (all vCPUs finished) */
	VM_FAILED,    /* guest misbehaviour or a VMM error; see reason */
	VM_STOPPED,   /* stopped from outside: timeout, signal, request */
};

/* What CPUID vCPUs get. Guests that never execute CPUID (the probe
 * guest) need none; an OS needs the host-supported table. */
enum vm_cpuid {
	VM_CPUID_NONE = 0,
	VM_CPUID_HOST, /* KVM_GET_SUPPORTED_CPUID, per-vCPU APIC IDs */
};

struct vm {
	struct kvm_host *kvm; /* borrowed */
	int fd;
	uint64_t mem_size;    /* as configured, also before a shell is filled */
	struct guest_mem mem; /* ops NULL: none yet (a shell) */
	struct iotrap_table io;
	unsigned int nr_vcpus;
	unsigned int max_vcpus; /* vcpus[] entries: the configured count */
	struct vcpu *vcpus;
	struct timeline *tl; /* borrowed, may be NULL */
	enum vm_cpuid cpuid;
	bool irqchip;         /* in-kernel irqchip and PIT exist */
	bool dirty_log;       /* KVM_MEM_LOG_DIRTY_PAGES on guest memory */
	struct device devices[VM_MAX_DEVICES]; /* with state to snapshot */
	unsigned int nr_devices;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int running; /* vCPU threads not yet finished */
	int ending;           /* set once an outcome is chosen */
	int pause_req;        /* vCPUs should park at the next exit */
	unsigned int parked;  /* vCPU threads parked */
	volatile int interrupted; /* set by vm__interrupt() */
	enum vm_outcome outcome;
	char reason[512];
};

/* Chooses the outcome (first caller wins) and kicks every vCPU out of
 * KVM_RUN. Safe from any thread, including vCPU threads and trap
 * handlers. */
void vm__end(struct vm *vm, enum vm_outcome outcome, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* KVM's name of an exit reason ("IO", "SHUTDOWN"), or "(unnamed)". */
const char *vm__exit_reason_name(uint32_t reason);

#endif
