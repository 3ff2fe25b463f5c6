/* Timeline marks and their names. */
#include "timeline.h"

#include <stddef.h>
#include <time.h>

static const struct {
	const char *name, *key;
} events[TL_COUNT] = {
	[TL_PROCESS_START] = { "process start", "process_start" },
	[TL_KVM_OPENED] = { "/dev/kvm opened", "kvm_opened" },
	[TL_VM_CREATED] = { "VM created", "vm_created" },
	[TL_MEM_READY] = { "memory ready", "memory_ready" },
	[TL_VCPU_READY] = { "vCPUs ready", "vcpu_ready" },
	[TL_FIRST_RUN] = { "first KVM_RUN", "first_run" },
	[TL_GUEST_READY] = { "guest READY", "ready" },
	[TL_GUEST_DONE] = { "guest DONE", "done" },
	[TL_TEARDOWN_DONE] = { "teardown done", "teardown_done" },
};

uint64_t timeline__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void timeline__mark(struct timeline *tl, enum tl_event ev)
{
	uint64_t expected = 0;

	if (!tl || __atomic_load_n(&tl->t[ev], __ATOMIC_RELAXED))
		return;
	__atomic_compare_exchange_n(&tl->t[ev], &expected, timeline__now(), 0,
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

const char *timeline__name(enum tl_event ev)
{
	return events[ev].name;
}

const char *timeline__key(enum tl_event ev)
{
	return events[ev].key;
}
