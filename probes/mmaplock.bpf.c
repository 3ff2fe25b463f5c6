/* Probe mmaplock: how long the target's threads wait for its mmap_lock
 * (read and write) and how long they hold it for writing. Every guest
 * fault takes the lock, so waits use per-CPU slots, not hash maps. */
#include "vmlinux.h"

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bits.bpf.h"
#include "mmaplock.h"
#include "target.bpf.h"

struct probes_hist hists[MMAPLOCK_NR_HISTS] = {};
__u64 acquired[2] = {}; /* read, write */
__u64 failed = 0;       /* trylock failures and killable waits cut short */

/* The wait each CPU is timing: start, thread, write. */
struct target_slot waiting[TARGET_MAX_CPUS] = {};

/* Write holds may sleep and migrate: those are timed by thread. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MMAPLOCK_MAX_THREADS);
	__type(key, __u32);
	__type(value, __u64);
} holding SEC(".maps");

SEC("tp_btf/mmap_lock_start_locking")
int BPF_PROG(mmaplock_start, struct mm_struct *mm, bool write)
{
	__u32 tid;

	if (!target__current(&tid))
		return 0;
	target__count(PEV_MMAP_LOCK_START);
	target__slot_start(waiting, tid, write);
	return 0;
}

SEC("tp_btf/mmap_lock_acquire_returned")
int BPF_PROG(mmaplock_acquired, struct mm_struct *mm, bool write,
	     bool success)
{
	struct target_slot *s;
	__u64 now;
	__u32 tid;

	if (!target__current(&tid))
		return 0;
	target__count(PEV_MMAP_LOCK_ACQUIRED);
	s = target__slot_end(waiting, tid);
	if (!success) {
		__sync_fetch_and_add(&failed, 1);
		return 0;
	}
	__sync_fetch_and_add(&acquired[write ? 1 : 0], 1);
	now = bpf_ktime_get_ns();
	if (s)
		bits__hist_add(&hists[write ? MMAPLOCK_WAIT_WRITE
					    : MMAPLOCK_WAIT_READ],
			       now - s->ts);
	if (write)
		bpf_map_update_elem(&holding, &tid, &now, BPF_ANY);
	return 0;
}

SEC("tp_btf/mmap_lock_released")
int BPF_PROG(mmaplock_released, struct mm_struct *mm, bool write)
{
	__u64 *t0;
	__u32 tid;

	if (!target__current(&tid))
		return 0;
	target__count(PEV_MMAP_LOCK_RELEASED);
	if (!write)
		return 0;
	t0 = bpf_map_lookup_elem(&holding, &tid);
	if (!t0)
		return 0;
	bits__hist_add(&hists[MMAPLOCK_HOLD_WRITE], bpf_ktime_get_ns() - *t0);
	bpf_map_delete_elem(&holding, &tid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
