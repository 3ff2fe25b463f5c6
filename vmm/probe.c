/* Probe guest loader and ucall device. */
#include "probe.h"

#include "cpu_x86.h"
#include "err.h"
#include "guest/probe_work.h"
#include "pagetable_x86.h"
#include "units.h"
#include "vm.h"

#include <pthread.h>
#include <string.h>

#define GDT_SLOTS 16u

int probe__validate(const struct probe_params *p, uint64_t mem_size,
		    unsigned int nr_vcpus)
{
	uint64_t room = mem_size > PROBE_WORK_GPA ? mem_size - PROBE_WORK_GPA
						  : 0;

	if (nr_vcpus == 0 || nr_vcpus > PROBE_MAX_VCPUS)
		return err__set(EINVAL, "the probe guest runs 1 to %u vCPUs, "
				"not %u", PROBE_MAX_VCPUS, nr_vcpus);
	if (p->init_bytes % PROBE_PAGE_SIZE || p->ws_bytes % PROBE_PAGE_SIZE)
		return err__set(EINVAL, "init and working-set sizes must be "
				"multiples of 4 KiB");
	if (p->init_bytes > room || p->ws_bytes > room)
		return err__set(EINVAL, "init (%llu MiB) and working set (%llu "
				"MiB) must each fit in the %llu MiB above the "
				"first 2 MiB of guest memory; raise --mem",
				(unsigned long long)(p->init_bytes / MiB),
				(unsigned long long)(p->ws_bytes / MiB),
				(unsigned long long)(room / MiB));
	if (p->pattern > PROBE_PATTERN_STRIDE || p->op > PROBE_OP_WRITE ||
	    p->misbehave > PROBE_MISBEHAVE_HANG)
		return err__set(EINVAL, "unknown probe pattern, op or "
				"misbehaviour");
	return 0;
}

static void fill_boot_info(struct probe_boot_info *bi,
			   const struct probe_params *p, uint64_t mem_size,
			   unsigned int nr_vcpus)
{
	*bi = (struct probe_boot_info){
		.magic = PROBE_BOOT_MAGIC,
		.abi_version = PROBE_ABI_VERSION,
		.nr_vcpus = nr_vcpus,
		.mem_size = mem_size,
		.work_gpa = PROBE_WORK_GPA,
		.init_bytes = p->init_bytes,
		.ws_bytes = p->ws_bytes,
		.compute_iters = p->compute_iters,
		.seed = p->seed,
		.pattern = p->pattern,
		.op = p->op,
		.stride = p->stride,
		.misbehave = p->misbehave,
	};
}

static uint64_t stack_top(unsigned int cpu)
{
	return PROBE_STACK_GPA + (cpu + 1ull) * PROBE_STACK_SIZE;
}

/* The layout of probe_abi.h, as page-table mappings. */
static int map_guest(struct pt_builder *pt, uint8_t *mem, uint64_t mem_size,
		     unsigned int nr_vcpus)
{
	const unsigned int ro = PT_USER | PT_NX, rw = PT_USER | PT_WRITE | PT_NX;
	int ret = pt__init(pt, mem, mem_size, PROBE_PT_GPA, PROBE_PT_END);

	if (ret == 0)
		ret = pt__map(pt, PROBE_GDT_GPA, PROBE_GDT_GPA, PT_PAGE_4K,
			      PT_NX);
	if (ret == 0)
		ret = pt__map(pt, PROBE_BOOT_INFO_GPA, PROBE_BOOT_INFO_GPA,
			      PT_PAGE_4K, ro);
	if (ret == 0)
		ret = pt__map(pt, PROBE_TSS_GPA, PROBE_TSS_GPA, PROBE_TSS_SIZE,
			      PT_NX);
	if (ret == 0)
		ret = pt__map(pt, PROBE_IMAGE_GPA, PROBE_IMAGE_GPA,
			      PROBE_IMAGE_MAX, PT_USER | PT_WRITE | PT_4K);
	/* Each stack keeps its lowest page unmapped as a guard. */
	for (unsigned int i = 0; ret == 0 && i < nr_vcpus; i++)
		ret = pt__map(pt, stack_top(i) - PROBE_STACK_SIZE + PT_PAGE_4K,
			      stack_top(i) - PROBE_STACK_SIZE + PT_PAGE_4K,
			      PROBE_STACK_SIZE - PT_PAGE_4K, rw | PT_4K);
	if (ret == 0 && mem_size > PROBE_WORK_GPA)
		ret = pt__map(pt, PROBE_WORK_GPA, PROBE_WORK_GPA,
			      mem_size - PROBE_WORK_GPA, rw);
	return ret;
}

static int write_gdt(uint8_t *mem, struct x86_segment *tss)
{
	const struct x86_segment *segs[] = { &x86_user_data, &x86_user_code,
					     tss };
	uint64_t gdt[GDT_SLOTS] = { 0 };
	int ret;

	_Static_assert(X86_TSS_IOMAP_SIZE <= PROBE_TSS_SIZE, "TSS fits");
	*tss = x86__tss_open_iomap(mem + PROBE_TSS_GPA, PROBE_TSS_GPA,
				   PROBE_SEL_TSS);
	ret = x86__gdt_fill(gdt, GDT_SLOTS, segs, 3);
	if (ret == 0)
		memcpy(mem + PROBE_GDT_GPA, gdt, sizeof(gdt));
	return ret;
}

static int ucall_trap(struct vcpu *vcpu, const struct io_access *a,
		      void *opaque);

static int start_vcpus(struct vm *vm, const struct pt_builder *pt,
		       const struct x86_segment *tss)
{
	struct x86_long_mode lm = {
		.cr3 = pt->root,
		.rip = PROBE_IMAGE_GPA,
		.rsi = PROBE_BOOT_INFO_GPA,
		.gdt_base = PROBE_GDT_GPA,
		.gdt_limit = GDT_SLOTS * 8 - 1,
		.tss = *tss,
		.nx = true,
	};
	int ret = 0;

	for (unsigned int i = 0; ret == 0 && i < vm->nr_vcpus; i++) {
		lm.rsp = stack_top(i);
		lm.rdi = i;
		ret = x86__vcpu_long_mode_user(&vm->vcpus[i], &lm);
	}
	return ret;
}

int probe__setup(struct probe *probe, struct vm *vm,
		 const struct probe_params *p)
{
	size_t image_size = (size_t)(probe_image_end - probe_image_start);
	uint8_t *mem = vm->mem.host;
	struct x86_segment tss;
	struct pt_builder pt;
	int ret = probe__validate(p, vm->mem.size, vm->nr_vcpus);

	if (ret < 0)
		return ret;
	if (image_size > PROBE_IMAGE_MAX)
		return err__set(E2BIG, "probe image of %zu bytes exceeds %llu",
				image_size, (unsigned long long)PROBE_IMAGE_MAX);
	memset(probe, 0, sizeof(*probe));
	probe->vm = vm;
	probe->params = *p;
	memcpy(mem + PROBE_IMAGE_GPA, probe_image_start, image_size);
	fill_boot_info((struct probe_boot_info *)(mem + PROBE_BOOT_INFO_GPA), p,
		       vm->mem.size, vm->nr_vcpus);
	ret = write_gdt(mem, &tss);
	if (ret == 0)
		ret = map_guest(&pt, mem, vm->mem.size, vm->nr_vcpus);
	if (ret == 0)
		ret = start_vcpus(vm, &pt, &tss);
	if (ret == 0)
		ret = iotrap__register(&vm->io, IO_SPACE_PIO, PROBE_UCALL_PORT, 4,
				       ucall_trap, probe, "probe-ucall");
	return ret;
}

int probe__attach(struct probe *probe, struct vm *vm,
		  const struct probe_params *p, const struct probe_state *state)
{
	int ret = probe__validate(p, vm->mem.size, vm->nr_vcpus);

	if (ret < 0)
		return ret;
	memset(probe, 0, sizeof(*probe));
	probe->vm = vm;
	probe->params = *p;
	probe->params.pause_at_ready = false;
	probe->params.stop_at_ready = false;
	probe->params.pause_at_phase = 0;
	probe->state = *state;
	return iotrap__register(&vm->io, IO_SPACE_PIO, PROBE_UCALL_PORT, 4,
				ucall_trap, probe, "probe-ucall");
}

/* READY is a barrier: each vCPU waits until all have reported it, so the
 * request phase starts from a fully initialised memory image. */
static int on_ready(struct probe *probe, struct vcpu *vcpu)
{
	struct vm *vm = probe->vm;
	int ret = IOTRAP_CONTINUE;

	pthread_mutex_lock(&vm->lock);
	if (++probe->state.ready == vm->nr_vcpus) {
		timeline__mark(vm->tl, TL_GUEST_READY);
		/* Before the waiters wake, so none re-enters the guest. */
		if (probe->params.pause_at_ready)
			vm__request_pause_locked(vm);
		pthread_cond_broadcast(&vm->cond);
		if (probe->params.stop_at_ready) {
			pthread_mutex_unlock(&vm->lock);
			vm__end(vm, VM_COMPLETED, "stopped at READY");
			return IOTRAP_STOP;
		}
	}
	while (probe->state.ready < vm->nr_vcpus && !vm->ending)
		pthread_cond_wait(&vm->cond, &vm->lock);
	if (vm->ending)
		ret = IOTRAP_STOP;
	pthread_mutex_unlock(&vm->lock);
	(void)vcpu;
	return ret;
}

/* A PHASE report; the phase chosen by pause_at_phase is a barrier like
 * READY whose last vCPU requests the pause, so all park at the same
 * point of the program. */
static int on_phase(struct probe *probe, struct vcpu *vcpu, uint64_t phase)
{
	struct vm *vm = probe->vm;
	int ret = IOTRAP_CONTINUE;

	pthread_mutex_lock(&vm->lock);
	probe->state.phase[vcpu->id] = (uint32_t)phase;
	if (!probe->params.pause_at_phase ||
	    phase != probe->params.pause_at_phase) {
		pthread_mutex_unlock(&vm->lock);
		return IOTRAP_CONTINUE;
	}
	if (++probe->at_pause_phase == vm->nr_vcpus) {
		vm__request_pause_locked(vm);
		pthread_cond_broadcast(&vm->cond);
	}
	while (probe->at_pause_phase < vm->nr_vcpus && !vm->ending)
		pthread_cond_wait(&vm->cond, &vm->lock);
	if (vm->ending)
		ret = IOTRAP_STOP;
	pthread_mutex_unlock(&vm->lock);
	return ret;
}

void probe__pause_at(struct probe *probe, uint32_t phase)
{
	pthread_mutex_lock(&probe->vm->lock);
	probe->params.pause_at_phase = phase;
	probe->at_pause_phase = 0;
	pthread_mutex_unlock(&probe->vm->lock);
}

static int on_done(struct probe *probe, const struct probe_ucall *uc)
{
	struct vm *vm = probe->vm;

	pthread_mutex_lock(&vm->lock);
	probe->state.checksum += uc->args[0];
	probe->state.pages += uc->args[1];
	if (++probe->state.done == vm->nr_vcpus)
		timeline__mark(vm->tl, TL_GUEST_DONE);
	pthread_mutex_unlock(&vm->lock);
	return IOTRAP_STOP;
}

static int ucall_trap(struct vcpu *vcpu, const struct io_access *a,
		      void *opaque)
{
	struct probe *probe = opaque;
	const void *src;
	struct probe_ucall uc;
	uint32_t gpa;

	if (!a->is_write || a->len != 4)
		return err__set(EFAULT, "vCPU %u: ucall port 0x%x needs a 4-byte "
				"write", vcpu->id, PROBE_UCALL_PORT);
	memcpy(&gpa, a->data, sizeof(gpa));
	src = mem__gpa_to_host(&vcpu->vm->mem, gpa, sizeof(uc));
	if (!src)
		return err__set(EFAULT, "vCPU %u: ucall block at 0x%x lies "
				"outside guest memory", vcpu->id, gpa);
	/* One copy: the guest cannot change what we validated. */
	memcpy(&uc, src, sizeof(uc));
	__atomic_fetch_add(&probe->state.ucalls, 1, __ATOMIC_RELAXED);
	timeline__mark(vcpu->vm->tl, TL_FIRST_PROGRESS);
	switch (uc.cmd) {
	case PROBE_UCALL_READY:
		return on_ready(probe, vcpu);
	case PROBE_UCALL_PHASE:
		return on_phase(probe, vcpu, uc.args[0]);
	case PROBE_UCALL_DONE:
		return on_done(probe, &uc);
	case PROBE_UCALL_ABORT:
		vm__end(vcpu->vm, VM_FAILED,
			"guest aborted on vCPU %u with code %llu", vcpu->id,
			(unsigned long long)uc.args[0]);
		return IOTRAP_STOP;
	default:
		return err__set(EPROTO, "vCPU %u: unknown ucall %u", vcpu->id,
				uc.cmd);
	}
}

static uint64_t expected_vcpu(const struct probe_params *p, uint32_t cpu,
			      uint32_t ncpus)
{
	uint64_t n = p->ws_bytes / PROBE_PAGE_SIZE;
	uint64_t init_pages = p->init_bytes / PROBE_PAGE_SIZE;
	struct probe_order order = probe__order(p->pattern, n, p->seed,
						p->stride);
	uint64_t lo, hi, sum = cpu;

	probe__slice(n, cpu, ncpus, &lo, &hi);
	for (uint64_t i = lo; i < hi; i++) {
		uint64_t page = probe__page_at(&order, i);
		uint64_t off = probe__word_offset(page), value;

		if (p->op == PROBE_OP_WRITE)
			value = probe__write_value(off, p->seed);
		else
			value = page < init_pages ? probe__init_value(off) : 0;
		sum = probe__fold(sum, value);
	}
	return probe__compute(sum, p->compute_iters);
}

uint64_t probe__expected_checksum(const struct probe_params *p,
				  unsigned int nr_vcpus)
{
	uint64_t total = 0;

	for (uint32_t cpu = 0; cpu < nr_vcpus; cpu++)
		total += expected_vcpu(p, cpu, nr_vcpus);
	return total;
}

void probe__save_state(const struct probe *probe, struct probe_state *out)
{
	pthread_mutex_lock(&probe->vm->lock);
	*out = probe->state;
	pthread_mutex_unlock(&probe->vm->lock);
}

void probe__load_state(struct probe *probe, const struct probe_state *in)
{
	pthread_mutex_lock(&probe->vm->lock);
	probe->state = *in;
	pthread_mutex_unlock(&probe->vm->lock);
}
