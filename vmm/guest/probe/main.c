/* Probe guest: a synthetic workload that runs in ring 3 with no kernel,
 * reporting progress to the VMM through ucalls on one I/O port. */
#include "../probe_work.h"

static inline void outl(uint16_t port, uint32_t value)
{
	__asm__ volatile("outl %0, %1" : : "a"(value), "Nd"(port) : "memory");
}

static void ucall(uint32_t cpu, uint32_t cmd, uint64_t a0, uint64_t a1)
{
	/* Lives on this vCPU's stack, which is identity-mapped below 4 GiB. */
	volatile struct probe_ucall uc = {
		.cmd = cmd, .vcpu = cpu, .args = { a0, a1 },
	};

	outl(PROBE_UCALL_PORT, (uint32_t)(uintptr_t)&uc);
}

static void init_phase(const struct probe_boot_info *bi, uint32_t cpu)
{
	uint8_t *base = (uint8_t *)(uintptr_t)bi->work_gpa;
	uint64_t lo, hi;

	probe__slice(bi->init_bytes / PROBE_PAGE_SIZE, cpu, bi->nr_vcpus, &lo,
		     &hi);
	for (uint64_t page = lo; page < hi; page++) {
		uint64_t off = probe__word_offset(page);

		*(volatile uint64_t *)(base + off) = probe__init_value(off);
	}
}

static uint64_t request_phase(const struct probe_boot_info *bi, uint32_t cpu,
			      uint64_t *touched)
{
	uint8_t *base = (uint8_t *)(uintptr_t)bi->work_gpa;
	uint64_t n = bi->ws_bytes / PROBE_PAGE_SIZE, lo, hi, sum = cpu;
	struct probe_order order =
		probe__order(bi->pattern, n, bi->seed, bi->stride);

	probe__slice(n, cpu, bi->nr_vcpus, &lo, &hi);
	for (uint64_t i = lo; i < hi; i++) {
		uint64_t off = probe__word_offset(probe__page_at(&order, i));
		volatile uint64_t *word = (volatile uint64_t *)(base + off);
		uint64_t value;

		if (bi->op == PROBE_OP_WRITE) {
			value = probe__write_value(off, bi->seed);
			*word = value;
		} else {
			value = *word;
		}
		sum = probe__fold(sum, value);
	}
	*touched = hi - lo;
	return sum;
}

static void misbehave(const struct probe_boot_info *bi, uint32_t cpu)
{
	switch (bi->misbehave) {
	case PROBE_MISBEHAVE_ABORT:
		ucall(cpu, PROBE_UCALL_ABORT, PROBE_ABORT_TEST_CODE, 0);
		break;
	case PROBE_MISBEHAVE_BAD_PORT:
		outl(PROBE_BAD_PORT, 0);
		break;
	case PROBE_MISBEHAVE_FAULT:
		/* The boot info page is mapped read-only: this must fault. */
		*(volatile uint64_t *)&bi->magic = 0;
		break;
	case PROBE_MISBEHAVE_HANG:
		for (;;)
			__asm__ volatile("pause");
	}
}

void probe_main(uint32_t cpu, const struct probe_boot_info *bi);

void probe_main(uint32_t cpu, const struct probe_boot_info *bi)
{
	uint64_t sum, touched;

	if (bi->magic != PROBE_BOOT_MAGIC || bi->abi_version != PROBE_ABI_VERSION)
		ucall(cpu, PROBE_UCALL_ABORT, 1, bi->abi_version);
	ucall(cpu, PROBE_UCALL_PHASE, PROBE_PHASE_INIT, 0);
	init_phase(bi, cpu);
	ucall(cpu, PROBE_UCALL_READY, 0, 0);
	misbehave(bi, cpu);
	ucall(cpu, PROBE_UCALL_PHASE, PROBE_PHASE_REQUEST, 0);
	sum = request_phase(bi, cpu, &touched);
	ucall(cpu, PROBE_UCALL_PHASE, PROBE_PHASE_COMPUTE, 0);
	sum = probe__compute(sum, bi->compute_iters);
	ucall(cpu, PROBE_UCALL_DONE, sum, touched);
	for (;;)
		ucall(cpu, PROBE_UCALL_ABORT, 2, 0);
}
