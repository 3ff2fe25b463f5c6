/* Which process a probe observes, and the cheap per-CPU state every probe
 * shares. The target's tgid comes through rodata (set before load); the
 * observer's own helper thread, when it lives in the target (`coldstart
 * run --probes`), is excluded through bss. Every BPF program of every
 * probe includes this and filters first. */
#ifndef COLDSTART_PROBES_TARGET_BPF_H
#define COLDSTART_PROBES_TARGET_BPF_H

#include "events.h"
#include "target.h"

const volatile __u32 targ_tgid = 0;
__u32 skip_tid = 0;

/* Firings of each tracepoint for the target, one row per CPU so that
 * vCPUs on different CPUs never share a cache line; the loader sums
 * the rows. Only this probe's own entries move. */
__u64 counts[TARGET_MAX_CPUS][TARGET_COUNT_STRIDE] = {};

static __always_inline bool target__current(__u32 *tid)
{
	__u64 id = bpf_get_current_pid_tgid();

	*tid = (__u32)id;
	return (id >> 32) == targ_tgid && *tid != skip_tid;
}

static __always_inline bool target__task(const struct task_struct *t)
{
	return t->tgid == (int)targ_tgid && t->pid != (int)skip_tid;
}

static __always_inline __u32 target__cpu(void)
{
	return bpf_get_smp_processor_id() & (TARGET_MAX_CPUS - 1);
}

static __always_inline void target__count(enum probes_ev ev)
{
	__sync_fetch_and_add(&counts[target__cpu()][ev], 1);
}

/* A per-thread value of a hash map, created zeroed on first use; NULL
 * when the map is full. `zero` must point to a zeroed value (rodata). */
static __always_inline void *target__thread_value(void *map, __u32 tid,
						  const void *zero)
{
	void *v = bpf_map_lookup_elem(map, &tid);

	if (v)
		return v;
	bpf_map_update_elem(map, &tid, zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, &tid);
}

/* Slots (target.h) record the start of something a thread is doing on
 * this CPU (a fault, a lock wait): far cheaper than a hash map keyed by
 * thread. A thread that migrates, or is preempted by another target
 * thread that starts the same thing, loses that one sample: the tid no
 * longer matches at the end. */
static __always_inline void target__slot_start(struct target_slot *slots,
					       __u32 tid, __u32 aux)
{
	struct target_slot *s = &slots[target__cpu()];

	s->ts = bpf_ktime_get_ns();
	s->tid = tid;
	s->aux = aux;
}

/* The slot `tid` started on this CPU, now closed, or NULL. */
static __always_inline struct target_slot *
target__slot_end(struct target_slot *slots, __u32 tid)
{
	struct target_slot *s = &slots[target__cpu()];

	if (s->tid != tid || !s->ts)
		return NULL;
	s->tid = 0;
	return s;
}

#endif
