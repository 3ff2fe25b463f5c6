/* vCPU threads: made with their VM or when it starts, the run loop that
 * dispatches exits to the trap registry, and parking. */
#include "vcpu.h"

#include "err.h"
#include "jail.h"
#include "seccomp.h"

#include <linux/kvm.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define VCPU_STACK_SIZE (256u << 10) /* the run loop needs little */

static pthread_once_t kick_once = PTHREAD_ONCE_INIT;

static void kick_handler(int sig)
{
	(void)sig;
}

static void install_kick_handler(void)
{
	struct sigaction sa = { .sa_handler = kick_handler };

	sigemptyset(&sa.sa_mask);
	sigaction(VCPU_KICK_SIGNAL, &sa, NULL);
}

void vcpu__kick_all(struct vm *vm)
{
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		struct vcpu *vcpu = &vm->vcpus[i];

		__atomic_store_n(&vcpu->run->immediate_exit, 1,
				 __ATOMIC_SEQ_CST);
		if (vcpu->started)
			pthread_kill(vcpu->thread, VCPU_KICK_SIGNAL);
	}
}

static void vm_vend(struct vm *vm, enum vm_outcome outcome, const char *fmt,
		    va_list ap)
{
	pthread_mutex_lock(&vm->lock);
	if (!vm->ending) {
		vm->ending = 1;
		vm->outcome = outcome;
		vsnprintf(vm->reason, sizeof(vm->reason), fmt, ap);
		vcpu__kick_all(vm);
	}
	pthread_cond_broadcast(&vm->cond);
	pthread_mutex_unlock(&vm->lock);
}

void vm__end(struct vm *vm, enum vm_outcome outcome, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vm_vend(vm, outcome, fmt, ap);
	va_end(ap);
}

static const char *const exit_names[] = {
	[KVM_EXIT_UNKNOWN] = "UNKNOWN",
	[KVM_EXIT_EXCEPTION] = "EXCEPTION",
	[KVM_EXIT_IO] = "IO",
	[KVM_EXIT_HYPERCALL] = "HYPERCALL",
	[KVM_EXIT_DEBUG] = "DEBUG",
	[KVM_EXIT_HLT] = "HLT",
	[KVM_EXIT_MMIO] = "MMIO",
	[KVM_EXIT_IRQ_WINDOW_OPEN] = "IRQ_WINDOW_OPEN",
	[KVM_EXIT_SHUTDOWN] = "SHUTDOWN",
	[KVM_EXIT_FAIL_ENTRY] = "FAIL_ENTRY",
	[KVM_EXIT_INTR] = "INTR",
	[KVM_EXIT_SET_TPR] = "SET_TPR",
	[KVM_EXIT_TPR_ACCESS] = "TPR_ACCESS",
	[KVM_EXIT_NMI] = "NMI",
	[KVM_EXIT_INTERNAL_ERROR] = "INTERNAL_ERROR",
	[KVM_EXIT_SYSTEM_EVENT] = "SYSTEM_EVENT",
	[KVM_EXIT_X86_RDMSR] = "X86_RDMSR",
	[KVM_EXIT_X86_WRMSR] = "X86_WRMSR",
};

const char *vm__exit_reason_name(uint32_t reason)
{
	if (reason < sizeof(exit_names) / sizeof(exit_names[0]) &&
	    exit_names[reason])
		return exit_names[reason];
	return "(unnamed)";
}

static int handle_io(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	uint8_t *data = (uint8_t *)run + run->io.data_offset;
	int ret = IOTRAP_CONTINUE;

	for (uint32_t i = 0; i < run->io.count && ret == IOTRAP_CONTINUE; i++) {
		struct io_access a = {
			.space = IO_SPACE_PIO,
			.addr = run->io.port,
			.len = run->io.size,
			.is_write = run->io.direction == KVM_EXIT_IO_OUT,
			.data = data + (size_t)i * run->io.size,
		};

		ret = iotrap__dispatch(&vcpu->vm->io, vcpu, &a);
	}
	return ret;
}

static int handle_mmio(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	struct io_access a = {
		.space = IO_SPACE_MMIO,
		.addr = run->mmio.phys_addr,
		.len = run->mmio.len,
		.is_write = run->mmio.is_write,
		.data = run->mmio.data,
	};

	return iotrap__dispatch(&vcpu->vm->io, vcpu, &a);
}

static int guest_stopped(struct vcpu *vcpu, const char *what)
{
	struct kvm_regs regs;

	if (ioctl(vcpu->fd, KVM_GET_REGS, &regs) < 0)
		return err__set(EFAULT, "vCPU %u: %s", vcpu->id, what);
	return err__set(EFAULT, "vCPU %u: %s (rip 0x%llx, rsp 0x%llx)",
			vcpu->id, what, (unsigned long long)regs.rip,
			(unsigned long long)regs.rsp);
}

/* IOTRAP_CONTINUE to run again, IOTRAP_STOP when the vCPU is finished,
 * -errno (message set) on failure. */
static int handle_exit(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;

	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		return handle_io(vcpu);
	case KVM_EXIT_MMIO:
		return handle_mmio(vcpu);
	case KVM_EXIT_INTR:
		return IOTRAP_CONTINUE;
	case KVM_EXIT_SHUTDOWN:
		return guest_stopped(vcpu, "guest shut down (an exception with "
				     "no handler, e.g. a page fault)");
	case KVM_EXIT_HLT:
		return guest_stopped(vcpu, "guest halted with no way to wake");
	case KVM_EXIT_INTERNAL_ERROR:
		return err__set(EIO, "vCPU %u: KVM internal error, suberror %u%s",
				vcpu->id, run->internal.suberror,
				run->internal.suberror ==
						KVM_INTERNAL_ERROR_EMULATION
					? " (instruction emulation failed)"
					: "");
	case KVM_EXIT_FAIL_ENTRY:
		return err__set(EIO, "vCPU %u: VM entry failed, hardware reason "
				"0x%llx", vcpu->id,
				(unsigned long long)run->fail_entry
					.hardware_entry_failure_reason);
	default:
		return err__set(EIO, "vCPU %u: unhandled exit %s (%u)", vcpu->id,
				vm__exit_reason_name(run->exit_reason),
				run->exit_reason);
	}
}

static void vcpu_finished(struct vcpu *vcpu)
{
	struct vm *vm = vcpu->vm;

	pthread_mutex_lock(&vm->lock);
	if (--vm->running == 0 && !vm->ending) {
		vm->ending = 1;
		vm->outcome = VM_COMPLETED;
	}
	pthread_cond_broadcast(&vm->cond);
	pthread_mutex_unlock(&vm->lock);
}


/* Parks the calling vCPU until resumed or the VM ends. A KVM_RUN with
 * immediate_exit set first completes an I/O instruction whose exit we just
 * handled (KVM finishes it, then returns EINTR without running the guest),
 * so the saved state is after the instruction. */
static void park(struct vcpu *vcpu)
{
	struct vm *vm = vcpu->vm;

	__atomic_store_n(&vcpu->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
	/* completes I/O the last exit left pending; a vCPU that never
	 * entered has none (and may have no memory or state yet) */
	if (vcpu->entered)
		ioctl(vcpu->fd, KVM_RUN, 0); /* -EINTR by design */
	pthread_mutex_lock(&vm->lock);
	vm->parked++;
	pthread_cond_broadcast(&vm->cond);
	while (vm->pause_req && !vm->ending)
		pthread_cond_wait(&vm->cond, &vm->lock);
	vm->parked--;
	if (!vm->ending)
		__atomic_store_n(&vcpu->run->immediate_exit, 0,
				 __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&vm->lock);
}

/* Ends the VM with the vCPU's error (err__last()). A lazily restored
 * guest whose memory file was truncated under it fails with a shutdown or
 * an EFAULT; the lost file is named as the cause then. */
static void vcpu_failed(struct vm *vm)
{
	char what[sizeof(vm->reason)];

	snprintf(what, sizeof(what), "%s", err__last());
	if (mem__check_source(&vm->mem) < 0)
		vm__end(vm, VM_FAILED, "guest memory: %s (%s)", err__last(),
			what);
	else
		vm__end(vm, VM_FAILED, "%s", what);
}

/* Waits until vm__start hands the thread its vCPU (true) or the VM ends
 * unstarted (false); a thread made by vm__start passes at once. */
static bool wait_for_start(struct vcpu *vcpu)
{
	struct vm *vm = vcpu->vm;
	bool go;

	pthread_mutex_lock(&vm->lock);
	while (vcpu->early && !vm->ending)
		pthread_cond_wait(&vm->cond, &vm->lock);
	go = !vcpu->early;
	pthread_mutex_unlock(&vm->lock);
	return go;
}

static void *vcpu_thread(void *arg)
{
	struct vcpu *vcpu = arg;
	struct vm *vm = vcpu->vm;
	sigset_t kick;
	int ret;

	sigemptyset(&kick);
	sigaddset(&kick, VCPU_KICK_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &kick, NULL);
	/* the filter holds from before the guest's first instruction */
	ret = seccomp__install(SECCOMP_VCPU);
	if (!wait_for_start(vcpu))
		return NULL;
	if (ret < 0) {
		vcpu_failed(vm);
		vcpu_finished(vcpu);
		return NULL;
	}
	while (!__atomic_load_n(&vm->ending, __ATOMIC_ACQUIRE)) {
		if (__atomic_load_n(&vm->pause_req, __ATOMIC_ACQUIRE)) {
			park(vcpu);
			continue;
		}
		timeline__mark(vm->tl, TL_FIRST_RUN);
		vcpu->entered = true;
		if (ioctl(vcpu->fd, KVM_RUN, 0) < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			err__sys(errno, "vCPU %u: KVM_RUN", vcpu->id);
			vcpu_failed(vm);
			break;
		}
		vcpu->exits++;
		ret = handle_exit(vcpu);
		if (ret == IOTRAP_STOP)
			break;
		if (ret < 0) {
			vcpu_failed(vm);
			break;
		}
	}
	vcpu_finished(vcpu);
	return NULL;
}

/* Makes a vCPU's thread with every signal blocked: process signals such
 * as SIGINT go to the caller; the thread unblocks only the kick. */
int vcpu__make_thread(struct vcpu *vcpu)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int ret;

	pthread_once(&kick_once, install_kick_handler);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, VCPU_STACK_SIZE);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = pthread_create(&vcpu->thread, &attr, vcpu_thread, vcpu);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (ret)
		return err__sys(ret, "creating the thread of vCPU %u",
				vcpu->id);
	vcpu->started = true;
	return 0;
}

/* The vCPU threads, made before the VM itself: loading a thread's
 * seccomp filter costs about 0.1 ms, which they spend while this thread
 * sets the VM up instead of between vm__start and the guest's first
 * instruction. Not under a pending jail, which needs a single-threaded
 * process; a thread that cannot be made now is made by vm__start. */
void vcpu__make_threads_early(struct vm *vm)
{
	if (jail__pending())
		return;
	for (unsigned int i = 0; i < vm->max_vcpus; i++) {
		struct vcpu *vcpu = &vm->vcpus[i];

		vcpu->early = true;
		if (vcpu__make_thread(vcpu) < 0) {
			vcpu->early = false;
			return;
		}
	}
}

/* Ends the threads made early that never got their vCPU, and joins every
 * thread still unjoined. */
void vcpu__join_threads(struct vm *vm)
{
	pthread_mutex_lock(&vm->lock);
	vm->ending = 1;
	pthread_cond_broadcast(&vm->cond);
	pthread_mutex_unlock(&vm->lock);
	for (unsigned int i = 0; i < vm->max_vcpus; i++)
		if (vm->vcpus[i].started)
			pthread_join(vm->vcpus[i].thread, NULL);
}
