/* Port I/O and MMIO trap registry: a sorted array, binary-searched. */
#include "iotrap.h"

#include "err.h"

#include <stdio.h>
#include <string.h>

#define LENIENT_LOG_LIMIT 16

void iotrap__init(struct iotrap_table *t, bool strict)
{
	memset(t, 0, sizeof(*t));
	t->strict = strict;
}

static int key_cmp(enum io_space sa, uint64_t a, enum io_space sb, uint64_t b)
{
	if (sa != sb)
		return sa < sb ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* Index of the first trap whose (space, base) is greater than the key. */
static unsigned int upper_bound(const struct iotrap_table *t,
				enum io_space space, uint64_t addr)
{
	unsigned int lo = 0, hi = t->count;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;
		const struct iotrap *m = &t->traps[mid];

		if (key_cmp(m->space, m->base, space, addr) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool covers(const struct iotrap *trap, uint64_t addr, uint64_t len)
{
	return addr >= trap->base && addr - trap->base < trap->len &&
	       len <= trap->len - (addr - trap->base);
}

const struct iotrap *iotrap__find(const struct iotrap_table *t,
				  enum io_space space, uint64_t addr,
				  uint32_t len)
{
	unsigned int i = upper_bound(t, space, addr);
	const struct iotrap *trap;

	if (i == 0)
		return NULL;
	trap = &t->traps[i - 1];
	if (trap->space != space || !covers(trap, addr, len ? len : 1))
		return NULL;
	return trap;
}

static const char *space_name(enum io_space space)
{
	return space == IO_SPACE_PIO ? "port" : "MMIO address";
}

int iotrap__register(struct iotrap_table *t, enum io_space space,
		     uint64_t base, uint64_t len, iotrap_fn fn, void *opaque,
		     const char *name)
{
	unsigned int i;

	if (len == 0 || base + len < base)
		return err__set(EINVAL, "trap %s: empty or wrapping range",
				name);
	if (t->count == IOTRAP_MAX)
		return err__set(ENOSPC, "trap %s: table full", name);
	i = upper_bound(t, space, base);
	if ((i > 0 && t->traps[i - 1].space == space &&
	     base - t->traps[i - 1].base < t->traps[i - 1].len) ||
	    (i < t->count && t->traps[i].space == space &&
	     t->traps[i].base - base < len))
		return err__set(EEXIST, "trap %s: %s 0x%llx overlaps another",
				name, space_name(space),
				(unsigned long long)base);
	memmove(&t->traps[i + 1], &t->traps[i],
		(t->count - i) * sizeof(t->traps[0]));
	t->traps[i] = (struct iotrap){ space, base, len, fn, opaque, name };
	t->count++;
	return 0;
}

int iotrap__dispatch(struct iotrap_table *t, struct vcpu *vcpu,
		     const struct io_access *access)
{
	const struct iotrap *trap = iotrap__find(t, access->space,
						 access->addr, access->len);

	if (trap)
		return trap->fn(vcpu, access, trap->opaque);
	if (t->strict)
		return err__set(EFAULT, "unclaimed %u-byte %s of %s 0x%llx",
				access->len, access->is_write ? "write" : "read",
				space_name(access->space),
				(unsigned long long)access->addr);
	if (!access->is_write)
		memset(access->data, 0xff, access->len);
	/* Lenient: tolerate, but leave a trace of the first few. */
	if (__atomic_fetch_add(&t->unclaimed, 1, __ATOMIC_RELAXED) <
	    LENIENT_LOG_LIMIT)
		fprintf(stderr, "coldstart: ignored %s of %s 0x%llx\n",
			access->is_write ? "write" : "read",
			space_name(access->space),
			(unsigned long long)access->addr);
	return IOTRAP_CONTINUE;
}
