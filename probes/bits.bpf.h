/* Log2 bucketing for BPF histograms (the shape of bcc libbpf-tools'
 * bits.bpf.h): branch-free integer log2 and an atomic histogram add. */
#ifndef COLDSTART_PROBES_BITS_BPF_H
#define COLDSTART_PROBES_BITS_BPF_H

#include "hist.h"

/* floor(log2(v)) for v > 0, 0 for v == 0: binary search on the bits. */
static __always_inline __u32 bits__log2_32(__u32 v)
{
	__u32 r, shift;

	r = (v > 0xffff) << 4;
	v >>= r;
	shift = (v > 0xff) << 3;
	v >>= shift;
	r |= shift;
	shift = (v > 0xf) << 2;
	v >>= shift;
	r |= shift;
	shift = (v > 0x3) << 1;
	v >>= shift;
	r |= shift;
	r |= (v >> 1);
	return r;
}

static __always_inline __u32 bits__log2_64(__u64 v)
{
	__u32 hi = v >> 32;

	return hi ? bits__log2_32(hi) + 32 : bits__log2_32((__u32)v);
}

/* Raises *max to v; a few compare-and-swap rounds settle any race. */
static __always_inline void bits__max(__u64 *max, __u64 v)
{
	__u64 old = *max;

	for (int i = 0; i < 4 && v > old; i++) {
		__u64 seen = __sync_val_compare_and_swap(max, old, v);

		if (seen == old)
			break;
		old = seen;
	}
}

/* Counts one value; atomic, so any number of CPUs may add at once. */
static __always_inline void bits__hist_add(struct probes_hist *h, __u64 ns)
{
	/* A 64-bit index bounded by a 64-bit compare: the verifier of
	 * Linux 6.1 does not carry a 32-bit compare's bounds over to the
	 * register, and refuses the pointer arithmetic ("unbounded min
	 * value"). The empty asm keeps clang from narrowing it again. */
	__u64 slot = bits__log2_64(ns);

	asm volatile("" : "+r"(slot));
	if (slot >= PROBES_HIST_SLOTS)
		slot = PROBES_HIST_SLOTS - 1;
	__sync_fetch_and_add(&h->slots[slot], 1);
	__sync_fetch_and_add(&h->count, 1);
	__sync_fetch_and_add(&h->sum_ns, ns);
	bits__max(&h->max_ns, ns);
}

#endif
