/* Probe kvmexit: counts VM exits of the target by kind and thread, and
 * times each exit to user space until the thread's next KVM_RUN (the
 * VMM's handling time), by exit reason. */
#include "vmlinux.h"

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bits.bpf.h"
#include "kvmexit.h"
#include "target.bpf.h"

#define NR_IOCTL 16 /* x86-64 */

/* KVM_RUN's ioctl number, from the loader's <linux/kvm.h>. */
const volatile __u32 kvm_run_cmd = 0;

__u64 kinds[KVMEXIT_KIND_SLOTS] = {};
__u64 reasons[KVMEXIT_NR_REASONS] = {};
__u64 threads_full = 0; /* exits not counted per thread: table full */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KVMEXIT_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct kvmexit_thread);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KVMEXIT_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct kvmexit_pending);
} pending SEC(".maps");

/* VMM time from an exit to user space to the next KVM_RUN, by reason. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KVMEXIT_NR_REASONS);
	__type(key, __u32);
	__type(value, struct probes_hist);
} handling SEC(".maps");

static const struct kvmexit_thread zero_thread;

static __always_inline void count_exit(__u32 tid, enum kvmexit_kind kind)
{
	struct kvmexit_thread *t;

	__u32 k = kind;

	/* Keep the mask: the compiler would drop it, the verifier needs it */
	barrier_var(k);
	k &= KVMEXIT_KIND_SLOTS - 1;
	__sync_fetch_and_add(&kinds[k], 1);
	t = target__thread_value(&threads, tid, &zero_thread);
	if (t)
		__sync_fetch_and_add(&t->kinds[k], 1);
	else
		__sync_fetch_and_add(&threads_full, 1);
}

SEC("tp_btf/kvm_pio")
int BPF_PROG(kvmexit_pio, unsigned int rw, unsigned int port)
{
	__u32 tid;

	if (!target__current(&tid))
		return 0;
	target__count(PEV_KVM_PIO);
	count_exit(tid, rw ? KVMEXIT_PIO_OUT : KVMEXIT_PIO_IN);
	return 0;
}

SEC("tp_btf/kvm_mmio")
int BPF_PROG(kvmexit_mmio, int type)
{
	__u32 tid;

	if (!target__current(&tid))
		return 0;
	target__count(PEV_KVM_MMIO);
	/* KVM_TRACE_MMIO_READ_UNSATISFIED, _READ, _WRITE in kind order */
	if (type >= 0 && type < 3)
		count_exit(tid, KVMEXIT_MMIO_READ + type);
	return 0;
}

SEC("tp_btf/kvm_fast_mmio")
int BPF_PROG(kvmexit_fast_mmio)
{
	__u32 tid;

	if (!target__current(&tid))
		return 0;
	target__count(PEV_KVM_FAST_MMIO);
	count_exit(tid, KVMEXIT_FAST_MMIO);
	return 0;
}

SEC("tp_btf/kvm_exit")
int BPF_PROG(kvmexit_hw)
{
	__u32 tid;

	if (!target__current(&tid))
		return 0;
	target__count(PEV_KVM_EXIT);
	count_exit(tid, KVMEXIT_HW);
	return 0;
}

SEC("tp_btf/kvm_entry")
int BPF_PROG(kvmexit_entry)
{
	__u32 tid;

	if (!target__current(&tid))
		return 0;
	target__count(PEV_KVM_ENTRY);
	count_exit(tid, KVMEXIT_ENTRY);
	return 0;
}

SEC("tp_btf/kvm_emulate_insn")
int BPF_PROG(kvmexit_emulate)
{
	__u32 tid;

	if (!target__current(&tid))
		return 0;
	target__count(PEV_KVM_EMULATE_INSN);
	count_exit(tid, KVMEXIT_EMULATE);
	return 0;
}

SEC("tp_btf/kvm_userspace_exit")
int BPF_PROG(kvmexit_userspace, __u32 reason, int err)
{
	struct kvmexit_pending p = { .ts = bpf_ktime_get_ns() };
	__u32 tid;

	if (!target__current(&tid))
		return 0;
	target__count(PEV_KVM_USERSPACE_EXIT);
	p.reason = err ? KVMEXIT_REASON_ERROR
		       : (reason < KVMEXIT_REASON_ERROR ? reason
							: KVMEXIT_REASON_ERROR);
	count_exit(tid, err ? KVMEXIT_USER_ERROR : KVMEXIT_USERSPACE);
	__sync_fetch_and_add(&reasons[p.reason & (KVMEXIT_NR_REASONS - 1)], 1);
	bpf_map_update_elem(&pending, &tid, &p, BPF_ANY);
	return 0;
}

/* The next KVM_RUN of a thread closes its pending exit. */
SEC("tp_btf/sys_enter")
int BPF_PROG(kvmexit_sys_enter, struct pt_regs *regs, long id)
{
	struct kvmexit_pending *p;
	struct probes_hist *h;
	__u32 tid;

	if (id != NR_IOCTL || !target__current(&tid))
		return 0;
	if ((__u32)regs->si != kvm_run_cmd)
		return 0;
	p = bpf_map_lookup_elem(&pending, &tid);
	if (!p)
		return 0;
	h = bpf_map_lookup_elem(&handling, &p->reason);
	if (h)
		bits__hist_add(h, bpf_ktime_get_ns() - p->ts);
	bpf_map_delete_elem(&pending, &tid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
