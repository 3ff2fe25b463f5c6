/* The probe workload's access order and values, shared by the guest (which
 * touches real memory) and the host (which predicts the checksum the guest
 * must report). Freestanding: no libc, static inline only. */
#ifndef COLDSTART_PROBE_WORK_H
#define COLDSTART_PROBE_WORK_H

#include "probe_abi.h"

/* splitmix64 finalizer: a cheap bijective 64-bit mixer. */
static inline uint64_t probe__mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Each touched page is accessed at one 8-byte word; spreading the word over
 * the 64 cache lines of a page avoids piling every access on one set. */
static inline uint64_t probe__word_offset(uint64_t page)
{
	return page * PROBE_PAGE_SIZE + (page & 63) * 64;
}

static inline uint64_t probe__init_value(uint64_t offset)
{
	return probe__mix(offset ^ 0x696e6974ull);
}

static inline uint64_t probe__write_value(uint64_t offset, uint64_t seed)
{
	return probe__mix(offset + seed * 0x9e3779b97f4a7c15ull);
}

static inline uint64_t probe__gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* Precomputed parameters of one access order over n pages. */
struct probe_order {
	uint32_t pattern;
	uint64_t n;
	uint64_t mul, add;         /* random: page = (mul * i + add) mod n */
	uint64_t stride, q, r;     /* stride: n = q * stride + r */
};

static inline struct probe_order probe__order(uint32_t pattern, uint64_t n,
					      uint64_t seed, uint64_t stride)
{
	struct probe_order o = { .pattern = pattern, .n = n };

	if (n == 0)
		return o;
	if (pattern == PROBE_PATTERN_RANDOM) {
		/* The first multiplier in 1..n coprime with n (n = 1: 1). */
		o.mul = probe__mix(seed) % n;
		while (o.mul == 0 || probe__gcd(o.mul, n) != 1)
			o.mul = o.mul % n + 1;
		o.add = probe__mix(seed + 1) % n;
	} else if (pattern == PROBE_PATTERN_STRIDE) {
		o.stride = stride ? stride : 1;
		o.q = n / o.stride;
		o.r = n % o.stride;
	}
	return o;
}

/* The page visited by the i-th access (0 <= i < n); a permutation of 0..n-1
 * for every pattern, so the working set is exactly n pages. */
static inline uint64_t probe__page_at(const struct probe_order *o, uint64_t i)
{
	uint64_t lane, k, head;

	switch (o->pattern) {
	case PROBE_PATTERN_RANDOM:
		return (o->mul * i + o->add) % o->n;
	case PROBE_PATTERN_STRIDE:
		/* Lanes 0..r-1 hold q+1 pages, lanes r..stride-1 hold q. */
		head = o->r * (o->q + 1);
		if (i < head) {
			lane = i / (o->q + 1);
			k = i % (o->q + 1);
		} else {
			lane = o->r + (i - head) / o->q;
			k = (i - head) % o->q;
		}
		return lane + k * o->stride;
	default:
		return i;
	}
}

/* The slice [*lo, *hi) of n items that vCPU `cpu` of `ncpus` handles. */
static inline void probe__slice(uint64_t n, uint32_t cpu, uint32_t ncpus,
				uint64_t *lo, uint64_t *hi)
{
	*lo = n * cpu / ncpus;
	*hi = n * (cpu + 1) / ncpus;
}

static inline uint64_t probe__fold(uint64_t checksum, uint64_t value)
{
	return probe__mix(checksum + value);
}

/* xorshift64 spin: work the compiler cannot fold away. */
static inline uint64_t probe__compute(uint64_t x, uint64_t iters)
{
	x |= 1;
	for (uint64_t i = 0; i < iters; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

#endif
