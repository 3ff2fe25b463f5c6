/* VM lifecycle: creation with rollback, start, pause, wait and teardown. */
#include "vm.h"

#include "vcpu.h"

#include "cpu_x86.h"
#include "err.h"
#include "io_thread.h"
#include "jail.h"
#include "seccomp.h"

#include <linux/kvm.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define WAIT_POLL_NS 10000000ull /* how often vm__wait checks for signals */
/* How often a wait for vCPUs to park or finish kicks them again: a kick
 * is idempotent, and one can be lost (nested KVM under an emulated CPU
 * was seen to drop them, leaving a vCPU in a guest loop for minutes). */
#define REKICK_NS 100000000ull

const char *vm__outcome_name(enum vm_outcome outcome)
{
	static const char *const names[] = {
		[VM_RUNNING] = "running", [VM_COMPLETED] = "completed",
		[VM_FAILED] = "failed",   [VM_STOPPED] = "stopped",
	};

	return names[outcome];
}

/* The waits' re-kick: the vCPUs are kicked again once the last kick
 * (*kicked, ns) is REKICK_NS old. */
static void rekick(struct vm *vm, uint64_t *kicked)
{
	uint64_t now = timeline__now();

	if (now - *kicked >= REKICK_NS) {
		vcpu__kick_all(vm);
		*kicked = now;
	}
}

void vm__interrupt(struct vm *vm)
{
	vm->interrupted = 1;
}

static void deadline_after(struct timespec *ts, uint64_t ns)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ns += (uint64_t)ts->tv_nsec;
	ts->tv_sec += (time_t)(ns / 1000000000ull);
	ts->tv_nsec = (long)(ns % 1000000000ull);
}

void vm__request_pause_locked(struct vm *vm)
{
	if (!vm->ending && !vm->pause_req) {
		vm->pause_req = 1;
		vcpu__kick_all(vm);
	}
}

void vm__request_pause(struct vm *vm)
{
	pthread_mutex_lock(&vm->lock);
	vm__request_pause_locked(vm);
	pthread_mutex_unlock(&vm->lock);
}

static int paused(const struct vm *vm)
{
	return vm->pause_req && vm->parked == vm->running;
}

int vm__wait_paused(struct vm *vm, uint64_t timeout_ns)
{
	uint64_t start = timeline__now(), kicked = start;
	struct timespec poll;
	int ret = 0;

	pthread_mutex_lock(&vm->lock);
	while (!paused(vm) && !vm->ending) {
		uint64_t now = timeline__now();

		if (timeout_ns && now - start >= timeout_ns) {
			ret = -ETIMEDOUT;
			break;
		}
		/* before the request (a guest that pauses itself at READY)
		 * a kick would only spin the vCPUs on immediate_exit */
		if (vm->pause_req)
			rekick(vm, &kicked);
		deadline_after(&poll, WAIT_POLL_NS);
		pthread_cond_timedwait(&vm->cond, &vm->lock, &poll);
	}
	if (ret == 0 && vm->ending)
		ret = -ECANCELED;
	pthread_mutex_unlock(&vm->lock);
	if (ret == -ETIMEDOUT)
		return err__set(ETIMEDOUT, "vCPUs did not pause within %.3f s",
				(double)timeout_ns / 1e9);
	if (ret == -ECANCELED)
		return err__set(ECANCELED, "the VM ended before it paused: %s",
				vm->reason);
	return 0;
}

int vm__pause(struct vm *vm, uint64_t timeout_ns)
{
	vm__request_pause(vm);
	return vm__wait_paused(vm, timeout_ns);
}

void vm__resume(struct vm *vm)
{
	pthread_mutex_lock(&vm->lock);
	vm->pause_req = 0;
	pthread_cond_broadcast(&vm->cond);
	pthread_mutex_unlock(&vm->lock);
}
static int create_vcpu(struct vm *vm, unsigned int id)
{
	struct vcpu *vcpu = &vm->vcpus[id];
	void *run;
	int ret;

	vcpu->fd = KVM_IOCTL(vm->fd, KVM_CREATE_VCPU, (void *)(uintptr_t)id);
	if (vcpu->fd < 0)
		return vcpu->fd;
	run = mmap(NULL, vm->kvm->vcpu_mmap_size, PROT_READ | PROT_WRITE,
		   MAP_SHARED, vcpu->fd, 0);
	if (run == MAP_FAILED) {
		ret = err__sys(errno, "mmap of vCPU %u's kvm_run", id);
		goto err_close;
	}
	vcpu->run = run;
	if (vm->cpuid == VM_CPUID_HOST) {
		ret = x86__vcpu_set_cpuid(vcpu);
		if (ret < 0)
			goto err_unmap;
	}
	return 0;

err_unmap:
	munmap(vcpu->run, vm->kvm->vcpu_mmap_size);
	vcpu->run = NULL;
err_close:
	close(vcpu->fd);
	vcpu->fd = -1;
	return ret;
}

static void destroy_vcpu(struct vm *vm, struct vcpu *vcpu)
{
	if (vcpu->run)
		munmap(vcpu->run, vm->kvm->vcpu_mmap_size);
	if (vcpu->fd >= 0)
		close(vcpu->fd);
}

static void mem_failed(void *ctx, const char *reason)
{
	vm__end(ctx, VM_FAILED, "guest memory: %s", reason);
}

static int set_memory(struct vm *vm)
{
	struct kvm_userspace_memory_region region = {
		.slot = 0,
		.flags = vm->dirty_log ? KVM_MEM_LOG_DIRTY_PAGES : 0,
		.guest_phys_addr = 0,
		.memory_size = vm->mem.size,
		.userspace_addr = (uintptr_t)vm->mem.host,
	};

	return KVM_IOCTL(vm->fd, KVM_SET_USER_MEMORY_REGION, &region);
}

int vm__dirty_log_start(struct vm *vm)
{
	int ret;

	if (vm->dirty_log)
		return 0;
	if (!vm->mem.ops)
		return err__set(EINVAL, "the VM has no guest memory to track");
	if (!vm->mem.written) {
		uint64_t *w = calloc((vm->mem.size / 4096 + 63) / 64, 8);

		if (!w)
			return err__set(ENOMEM, "tracking the devices' writes");
		__atomic_store_n(&vm->mem.written, w, __ATOMIC_RELEASE);
	}
	vm->dirty_log = true;
	ret = set_memory(vm);
	if (ret < 0)
		vm->dirty_log = false;
	return ret;
}

int vm__dirty_log_get(struct vm *vm, uint64_t *bitmap)
{
	struct kvm_dirty_log log = { .slot = 0, .dirty_bitmap = bitmap };
	int ret;

	if (!vm->dirty_log)
		return err__set(EINVAL, "dirty-page tracking was not started");
	ret = KVM_IOCTL(vm->fd, KVM_GET_DIRTY_LOG, &log);
	if (ret < 0)
		return ret;
	for (uint64_t i = 0; i < (vm->mem.size / 4096 + 63) / 64; i++)
		bitmap[i] |= __atomic_exchange_n(&vm->mem.written[i], 0,
						 __ATOMIC_RELAXED);
	return 0;
}

static int check_config(const struct kvm_host *kvm,
			const struct vm_config *cfg)
{
	int max = kvm__check_cap(kvm, KVM_CAP_MAX_VCPUS);

	if (max <= 0)
		max = kvm__check_cap(kvm, KVM_CAP_NR_VCPUS);
	if (cfg->nr_vcpus == 0 || (max > 0 && cfg->nr_vcpus > (unsigned)max))
		return err__set(EINVAL, "%u vCPUs requested; this host allows "
				"1 to %d", cfg->nr_vcpus, max);
	return 0;
}

/* Memory a VM does not have yet: nothing to unmap, no source file. */
static void mem_none(struct guest_mem *m)
{
	memset(m, 0, sizeof(*m));
	m->fd = -1;
	m->src_fd = -1;
}

static struct vm *vm_alloc(struct kvm_host *kvm, const struct vm_config *cfg,
			   struct timeline *tl)
{
	struct vm *vm = calloc(1, sizeof(*vm));
	pthread_condattr_t attr;

	if (!vm)
		return NULL;
	vm->vcpus = calloc(cfg->nr_vcpus, sizeof(vm->vcpus[0]));
	if (!vm->vcpus) {
		free(vm);
		return NULL;
	}
	for (unsigned int i = 0; i < cfg->nr_vcpus; i++) {
		vm->vcpus[i].vm = vm;
		vm->vcpus[i].id = i;
	}
	vm->max_vcpus = cfg->nr_vcpus;
	vm->kvm = kvm;
	vm->tl = tl;
	vm->cpuid = cfg->cpuid;
	vm->fd = -1;
	vm->mem_size = cfg->mem_size;
	mem_none(&vm->mem);
	for (unsigned int i = 0; i < cfg->nr_vcpus; i++)
		vm->vcpus[i].fd = -1;
	iotrap__init(&vm->io, cfg->strict_io);
	pthread_mutex_init(&vm->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&vm->cond, &attr);
	pthread_condattr_destroy(&attr);
	return vm;
}

static void vm_free(struct vm *vm)
{
	vcpu__join_threads(vm);
	io_thread__drop_spares();
	pthread_cond_destroy(&vm->cond);
	pthread_mutex_destroy(&vm->lock);
	free(vm->vcpus);
	free(vm);
}

/* KVM_CREATE_VM, then the in-kernel irqchip when asked: it must precede
 * the vCPUs (KVM gives a vCPU its LAPIC only when the irqchip exists, and
 * refuses the identity-map address once a vCPU exists). */
static int create_vm_fd(struct vm *vm, bool irqchip)
{
	int ret;

	vm->fd = KVM_IOCTL(vm->kvm->fd, KVM_CREATE_VM, NULL);
	if (vm->fd < 0)
		return vm->fd;
	timeline__mark(vm->tl, TL_VM_CREATED);
	if (!irqchip)
		return 0;
	ret = x86__vm_create_irqchip(vm);
	if (ret < 0) {
		close(vm->fd);
		vm->fd = -1;
		return ret;
	}
	vm->irqchip = true;
	return 0;
}

/* All `n` vCPUs, or none. None of it touches guest memory, so a shell
 * creates them before it has any. */
static int create_vcpus(struct vm *vm, unsigned int n)
{
	int ret;

	for (; vm->nr_vcpus < n; vm->nr_vcpus++) {
		ret = create_vcpu(vm, vm->nr_vcpus);
		if (ret < 0) {
			while (vm->nr_vcpus--)
				destroy_vcpu(vm, &vm->vcpus[vm->nr_vcpus]);
			vm->nr_vcpus = 0;
			return ret;
		}
	}
	timeline__mark(vm->tl, TL_VCPU_READY);
	return 0;
}

/* Guest memory of vm->mem_size bytes as slot 0; on failure the VM has
 * none, as before. */
static int fill_memory(struct vm *vm, const struct guest_mem_ops *ops,
		       const struct mem_source *src)
{
	int ret = mem__create_from(&vm->mem, ops ? ops : mem__backend("anon"),
				   vm->mem_size, src);

	if (ret < 0) {
		mem_none(&vm->mem);
		return ret;
	}
	mem__on_failure(&vm->mem, mem_failed, vm);
	ret = set_memory(vm);
	if (ret < 0) {
		mem__destroy(&vm->mem);
		mem_none(&vm->mem);
		return ret;
	}
	timeline__mark(vm->tl, TL_MEM_READY);
	return 0;
}

static int check_mem_size(uint64_t size)
{
	if (size == 0 || size % MEM_ALIGN)
		return err__set(EINVAL, "guest memory size %llu is not a "
				"positive multiple of 2 MiB",
				(unsigned long long)size);
	return 0;
}

/* Memory between the irqchip and the vCPUs, as VMs always were made (the
 * timeline's VM_CREATED, MEM_READY, VCPU_READY order). */
int vm__create(struct kvm_host *kvm, const struct vm_config *cfg,
	       struct timeline *tl, struct vm **out)
{
	struct vm *vm;
	int ret = check_config(kvm, cfg);

	if (ret < 0)
		return ret;
	vm = vm_alloc(kvm, cfg, tl);
	if (!vm)
		return err__set(ENOMEM, "allocating a VM");
	vcpu__make_threads_early(vm);
	/* spares that cannot be made now are made by the devices */
	if (cfg->io_threads && !jail__pending())
		io_thread__prestart(cfg->io_threads);
	ret = create_vm_fd(vm, cfg->irqchip);
	if (ret < 0)
		goto err_free;
	ret = fill_memory(vm, cfg->mem_ops, cfg->mem_src);
	if (ret < 0)
		goto err_close;
	ret = create_vcpus(vm, cfg->nr_vcpus);
	if (ret < 0)
		goto err_mem;
	*out = vm;
	return 0;

err_mem:
	mem__destroy(&vm->mem);
err_close:
	close(vm->fd);
err_free:
	vm_free(vm);
	return ret;
}

int vm__create_shell(struct kvm_host *kvm, const struct vm_config *cfg,
		     struct timeline *tl, struct vm **out)
{
	struct vm *vm;
	int ret = check_config(kvm, cfg);

	if (ret == 0)
		ret = check_mem_size(cfg->mem_size);
	if (ret < 0)
		return ret;
	vm = vm_alloc(kvm, cfg, tl);
	if (!vm)
		return err__set(ENOMEM, "allocating a VM");
	vcpu__make_threads_early(vm);
	ret = create_vm_fd(vm, cfg->irqchip);
	if (ret < 0)
		goto err_free;
	ret = create_vcpus(vm, cfg->nr_vcpus);
	if (ret < 0)
		goto err_close;
	*out = vm;
	return 0;

err_close:
	close(vm->fd);
err_free:
	vm_free(vm);
	return ret;
}

int vm__fill_shell(struct vm *vm, const struct guest_mem_ops *ops,
		   const struct mem_source *src)
{
	if (vm->mem.ops)
		return err__set(EBUSY, "the VM already has guest memory (%s)",
				vm->mem.ops->name);
	return fill_memory(vm, ops, src);
}

void vm__set_timeline(struct vm *vm, struct timeline *tl)
{
	vm->tl = tl;
}

struct device *vm__find_device(struct vm *vm, const char *name)
{
	for (unsigned int i = 0; i < vm->nr_devices; i++)
		if (!strcmp(vm->devices[i].ops->name, name))
			return &vm->devices[i];
	return NULL;
}

int vm__add_device(struct vm *vm, const struct device_ops *ops, void *dev)
{
	if (vm__find_device(vm, ops->name))
		return err__set(EEXIST, "device '%s' registered twice",
				ops->name);
	if (vm->nr_devices == VM_MAX_DEVICES)
		return err__set(ENOSPC, "more than %d devices",
				VM_MAX_DEVICES);
	vm->devices[vm->nr_devices++] = (struct device){ ops, dev };
	return 0;
}

/* Devices whose threads were set up alongside the VM: each must be
 * ready before the guest's first instruction. */
static int devices_ready(struct vm *vm)
{
	for (unsigned int i = 0; i < vm->nr_devices; i++) {
		const struct device *d = &vm->devices[i];
		int ret = d->ops->ready ? d->ops->ready(d->dev) : 0;

		if (ret < 0)
			return ret;
	}
	return 0;
}

int vm__start(struct vm *vm)
{
	int ret = 0;

	if (!vm->mem.ops && !vm->pause_req)
		return err__set(EINVAL, "the VM has no guest memory (a shell "
				"not filled yet; request a pause to start its "
				"threads parked)");
	/* setup is done: a jail comes before the first vCPU and device
	 * thread (and before the filters, which forbid what it does) */
	ret = jail__enter_pending();
	if (ret == 0)
		ret = devices_ready(vm);
	if (ret < 0) {
		vm__end(vm, VM_FAILED, "%s", err__last());
		return ret;
	}
	pthread_mutex_lock(&vm->lock);
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		struct vcpu *vcpu = &vm->vcpus[i];

		if (!vcpu->early)
			ret = vcpu__make_thread(vcpu);
		if (ret < 0)
			break;
		vcpu->early = false;
		vm->running++;
	}
	pthread_cond_broadcast(&vm->cond);
	pthread_mutex_unlock(&vm->lock);
	if (ret < 0) {
		vm__end(vm, VM_FAILED, "%s", err__last());
		return ret;
	}
	jail__selftest_threads(); /* the test hook: every thread is made */
	/* the control thread's setup ends with its first VM started */
	ret = seccomp__enter_main();
	if (ret < 0)
		vm__end(vm, VM_FAILED, "%s", err__last());
	return ret;
}

enum vm_outcome vm__wait(struct vm *vm, uint64_t timeout_ns)
{
	uint64_t start = timeline__now(), kicked = 0;
	struct timespec poll;

	pthread_mutex_lock(&vm->lock);
	while (vm->running > 0) {
		if (vm->ending)
			rekick(vm, &kicked);
		if (vm->interrupted && !vm->ending) {
			pthread_mutex_unlock(&vm->lock);
			vm__end(vm, VM_STOPPED, "interrupted by a signal");
			pthread_mutex_lock(&vm->lock);
		}
		if (timeout_ns && !vm->ending &&
		    timeline__now() - start >= timeout_ns) {
			pthread_mutex_unlock(&vm->lock);
			vm__end(vm, VM_STOPPED, "timed out after %.3f s",
				(double)timeout_ns / 1e9);
			pthread_mutex_lock(&vm->lock);
		}
		deadline_after(&poll, WAIT_POLL_NS);
		pthread_cond_timedwait(&vm->cond, &vm->lock, &poll);
	}
	pthread_mutex_unlock(&vm->lock);
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		if (vm->vcpus[i].started)
			pthread_join(vm->vcpus[i].thread, NULL);
		vm->vcpus[i].started = false;
	}
	return vm->outcome;
}

void vm__stop(struct vm *vm)
{
	if (vm->running) {
		vm__end(vm, VM_STOPPED, "destroyed while running");
		vm__wait(vm, 0);
	}
}

void vm__destroy(struct vm *vm)
{
	if (!vm)
		return;
	vm__stop(vm);
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		destroy_vcpu(vm, &vm->vcpus[i]);
	mem__destroy(&vm->mem);
	close(vm->fd);
	vm_free(vm);
}
