/* Probe faults: guest memory faults of the target's vCPUs (the kvmmmu
 * tracepoints) and host page faults of the target, as counts and a
 * timeline ring buffer of single faults. It runs on every guest fault,
 * so it keeps to per-CPU slots and one ring-buffer record per fault: no
 * hash maps, no histogram (the loader builds that from the timeline).
 *
 * Untimed (the default), the record is written when KVM requests the
 * SPTE: one program per fault. Timed, a fault starts with the walk of the
 * guest's page tables (shadow paging) or the TDP fault exit, and its
 * record is written with the handling time when the SPTE is set: three
 * programs per fault. (KVM requests the SPTE only after it has faulted
 * the host page in, so that is no start.) */
#include "vmlinux.h"

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "faults.h"
#include "target.bpf.h"

/* The fields used of KVM's fault descriptor, relocated at load time
 * (CO-RE): where KVM is a module, vmlinux.h does not describe it. */
struct kvm_page_fault___cs {
	__u64 addr;
	bool write;
} __attribute__((preserve_access_index));

/* Whether kvm_mmu_set_spte is attached to time each fault. */
const volatile bool timed = false;

__u64 lost = 0;      /* timeline records the ring buffer had no room for */
__u64 unmatched = 0; /* SPTEs set without a start on this CPU */

/* The guest fault each CPU is handling: start, thread, write flag. */
struct target_slot slots[TARGET_MAX_CPUS] = {};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, FAULTS_RINGBUF_BYTES);
} events SEC(".maps");

/* Tracepoint programs run with preemption off, so a CPU's stage has one
 * writer at a time and needs no atomics. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct faults_stage);
} stage SEC(".maps");

/* Stages the record; a full stage goes to the ring buffer. The reader is
 * woken only once the buffer is half full: waking it on every batch, or
 * letting it poll, preempts vCPUs when they fill every core. */
static __always_inline void emit(__u32 tid, enum faults_kind kind, __u64 ts,
				 __u64 addr, __u64 dur, __u32 flags)
{
	__u32 zero = 0, n;
	__u64 wake;
	struct faults_stage *st = bpf_map_lookup_elem(&stage, &zero);
	struct faults_event *e;

	if (!st)
		return;
	n = st->n & (FAULTS_BATCH - 1);
	e = &st->ev[n];
	e->ts = ts;
	e->addr = addr;
	e->dur_ns = dur > 0xffffffffull ? 0xffffffffu : (__u32)dur;
	e->tid = tid;
	e->kind = kind;
	e->flags = flags;
	e->pad = 0;
	if (++n < FAULTS_BATCH) {
		st->n = n;
		return;
	}
	st->n = 0;
	wake = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >
			       FAULTS_RINGBUF_BYTES / 2
		       ? BPF_RB_FORCE_WAKEUP
		       : BPF_RB_NO_WAKEUP;
	if (bpf_ringbuf_output(&events, st->ev, sizeof(st->ev), wake))
		__sync_fetch_and_add(&lost, FAULTS_BATCH);
}

/* A shadow-paging fault begins with the walk of the guest's page tables
 * (the emulator walks too; the next fault's walk overwrites those). */
SEC("tp_btf/kvm_mmu_pagetable_walk")
int BPF_PROG(faults_walk)
{
	__u32 tid;

	if (!target__current(&tid))
		return 0;
	target__count(PEV_MMU_PAGETABLE_WALK);
	target__slot_start(slots, tid, 0);
	return 0;
}

/* A TDP (EPT/NPT) fault begins with the hardware exit. */
SEC("tp_btf/kvm_page_fault")
int BPF_PROG(faults_tdp)
{
	__u32 tid;

	if (!target__current(&tid))
		return 0;
	target__count(PEV_KVM_PAGE_FAULT);
	if (timed)
		target__slot_start(slots, tid, 0);
	return 0;
}

/* Once per guest fault that maps memory, shadow or TDP. */
SEC("tp_btf/kvm_mmu_spte_requested")
int BPF_PROG(faults_spte_requested, struct kvm_page_fault___cs *fault)
{
	struct target_slot *s;
	__u32 flags;
	__u32 tid;

	if (!target__current(&tid))
		return 0;
	target__count(PEV_MMU_SPTE_REQUESTED);
	/* Direct loads: a tp_btf argument is a trusted kernel pointer. */
	flags = fault->write ? FAULTS_FLAG_WRITE : 0;
	if (!timed) {
		emit(tid, FAULTS_GUEST, bpf_ktime_get_ns(), fault->addr, 0,
		     flags);
		return 0;
	}
	s = &slots[target__cpu()];
	if (s->tid == tid)
		s->aux = flags;
	return 0;
}

SEC("tp_btf/kvm_mmu_set_spte")
int BPF_PROG(faults_set_spte, int level, gfn_t gfn)
{
	struct target_slot *s;
	__u64 now, dur;
	__u32 tid;

	if (!target__current(&tid))
		return 0;
	target__count(PEV_MMU_SET_SPTE);
	s = target__slot_end(slots, tid);
	if (!s) {
		__sync_fetch_and_add(&unmatched, 1);
		return 0;
	}
	now = bpf_ktime_get_ns();
	dur = now - s->ts;
	emit(tid, FAULTS_GUEST, s->ts, gfn << 12, dur, s->aux);
	return 0;
}

SEC("tp_btf/kvm_mmu_get_page")
int BPF_PROG(faults_get_page)
{
	__u32 tid;

	if (target__current(&tid))
		target__count(PEV_MMU_GET_PAGE);
	return 0;
}

SEC("tp_btf/kvm_mmu_prepare_zap_page")
int BPF_PROG(faults_zap_page)
{
	__u32 tid;

	if (target__current(&tid))
		target__count(PEV_MMU_PREPARE_ZAP_PAGE);
	return 0;
}

SEC("tp_btf/page_fault_user")
int BPF_PROG(faults_host_user, unsigned long address)
{
	__u32 tid;

	if (!target__current(&tid))
		return 0;
	target__count(PEV_PAGE_FAULT_USER);
	emit(tid, FAULTS_HOST_USER, bpf_ktime_get_ns(), address, 0, 0);
	return 0;
}

SEC("tp_btf/page_fault_kernel")
int BPF_PROG(faults_host_kernel, unsigned long address)
{
	__u32 tid;

	if (!target__current(&tid))
		return 0;
	target__count(PEV_PAGE_FAULT_KERNEL);
	emit(tid, FAULTS_HOST_KERNEL, bpf_ktime_get_ns(), address, 0, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
