/* Probe schedlat: run-queue delay of the target's threads (the shape of
 * bcc's runqlat): stamped at wakeup or at preemption, measured when
 * sched_switch picks the thread. */
#include "vmlinux.h"

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bits.bpf.h"
#include "schedlat.h"
#include "target.bpf.h"

#define TASK_RUNNING 0

struct probes_hist delay_hist = {};
__u64 threads_full = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SCHEDLAT_MAX_THREADS);
	__type(key, __u32);
	__type(value, __u64);
} queued SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SCHEDLAT_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct schedlat_thread);
} threads SEC(".maps");

static const struct schedlat_thread zero_thread;

static __always_inline void enqueue(const struct task_struct *p)
{
	__u32 tid = p->pid;
	__u64 now = bpf_ktime_get_ns();

	bpf_map_update_elem(&queued, &tid, &now, BPF_ANY);
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(schedlat_wakeup, struct task_struct *p)
{
	if (!target__task(p))
		return 0;
	target__count(PEV_SCHED_WAKEUP);
	enqueue(p);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(schedlat_wakeup_new, struct task_struct *p)
{
	if (!target__task(p))
		return 0;
	target__count(PEV_SCHED_WAKEUP_NEW);
	enqueue(p);
	return 0;
}

static __always_inline void ran(__u32 tid, __u64 ns)
{
	struct schedlat_thread *t;

	bits__hist_add(&delay_hist, ns);
	t = target__thread_value(&threads, tid, &zero_thread);
	if (!t) {
		__sync_fetch_and_add(&threads_full, 1);
		return;
	}
	t->waits++;
	t->delay_ns += ns;
	if (ns > t->max_ns)
		t->max_ns = ns;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(schedlat_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	__u64 *t0;
	__u32 tid;

	/* Preempted while runnable: it waits from now on. */
	if (prev_state == TASK_RUNNING && target__task(prev))
		enqueue(prev);
	if (!target__task(next))
		return 0;
	target__count(PEV_SCHED_SWITCH);
	tid = next->pid;
	t0 = bpf_map_lookup_elem(&queued, &tid);
	if (!t0)
		return 0;
	ran(tid, bpf_ktime_get_ns() - *t0);
	bpf_map_delete_elem(&queued, &tid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
