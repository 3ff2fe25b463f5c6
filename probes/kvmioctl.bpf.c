/* Probe kvmioctl: times every KVM ioctl of the target from syscall entry
 * to exit, into one log2 histogram per command; counts failures; sums the
 * time each thread spends inside KVM_RUN. */
#include "vmlinux.h"

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bits.bpf.h"
#include "kvmioctl.h"
#include "target.bpf.h"

#define NR_IOCTL 16 /* x86-64 */

/* Request numbers by enum kvmioctl_cmd (0: match by type only). */
const volatile __u32 cmds[KVMIOCTL_NR] = {};

__u64 errors[KVMIOCTL_NR] = {};
__u64 threads_full = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, KVMIOCTL_NR);
	__type(key, __u32);
	__type(value, struct probes_hist);
} latency SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KVMIOCTL_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct kvmioctl_pending);
} pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KVMIOCTL_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct kvmioctl_thread);
} threads SEC(".maps");

static const struct kvmioctl_thread zero_thread;

static __always_inline int classify(__u32 cmd)
{
	for (int i = 0; i < KVMIOCTL_NR; i++)
		if (cmds[i] && cmds[i] == cmd)
			return i;
	if (((cmd >> 8) & 0xff) == KVMIOCTL_TYPE_KVM)
		return KVMIOCTL_OTHER_KVM;
	return -1;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(kvmioctl_enter, struct pt_regs *regs, long id)
{
	struct kvmioctl_pending p = { 0 };
	__u32 tid;
	int cmd;

	if (id != NR_IOCTL || !target__current(&tid))
		return 0;
	cmd = classify((__u32)regs->si);
	if (cmd < 0)
		return 0;
	target__count(PEV_SYS_ENTER_IOCTL);
	p.cmd = cmd;
	p.ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&pending, &tid, &p, BPF_ANY);
	return 0;
}

static __always_inline void thread_run(__u32 tid, __u64 ns)
{
	struct kvmioctl_thread *t;

	t = target__thread_value(&threads, tid, &zero_thread);
	if (!t) {
		__sync_fetch_and_add(&threads_full, 1);
		return;
	}
	__sync_fetch_and_add(&t->runs, 1);
	__sync_fetch_and_add(&t->run_ns, ns);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(kvmioctl_exit, struct pt_regs *regs, long ret)
{
	struct kvmioctl_pending *p;
	struct probes_hist *h;
	__u64 ns;
	__u32 tid, cmd;

	if (!target__current(&tid))
		return 0;
	p = bpf_map_lookup_elem(&pending, &tid);
	if (!p)
		return 0;
	target__count(PEV_SYS_EXIT_IOCTL);
	ns = bpf_ktime_get_ns() - p->ts;
	cmd = p->cmd;
	bpf_map_delete_elem(&pending, &tid);
	h = bpf_map_lookup_elem(&latency, &cmd);
	if (h)
		bits__hist_add(h, ns);
	if (ret < 0 && cmd < KVMIOCTL_NR)
		__sync_fetch_and_add(&errors[cmd], 1);
	if (cmd == KVMIOCTL_RUN)
		thread_run(tid, ns);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
