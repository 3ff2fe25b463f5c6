/* Segment descriptor encoding (Intel SDM vol. 3, 3.4.5 and 7.2.3). */
#include "segment_x86.h"

#include "err.h"

#include <linux/kvm.h>
#include <string.h>

uint64_t x86__seg_to_gdt(const struct x86_segment *seg)
{
	uint64_t d = 0;

	d |= (uint64_t)(seg->limit & 0xffff);
	d |= (seg->base & 0xffffffull) << 16;
	d |= (uint64_t)(seg->type & 0xf) << 40;
	d |= (uint64_t)(seg->s & 1) << 44;
	d |= (uint64_t)(seg->dpl & 3) << 45;
	d |= (uint64_t)(seg->present & 1) << 47;
	d |= (uint64_t)((seg->limit >> 16) & 0xf) << 48;
	d |= (uint64_t)(seg->l & 1) << 53;
	d |= (uint64_t)(seg->db & 1) << 54;
	d |= (uint64_t)(seg->g & 1) << 55;
	d |= ((seg->base >> 24) & 0xffull) << 56;
	return d;
}

uint64_t x86__seg_to_gdt_high(const struct x86_segment *seg)
{
	return seg->base >> 32;
}

void x86__seg_to_kvm(const struct x86_segment *seg, struct kvm_segment *out)
{
	memset(out, 0, sizeof(*out));
	out->base = seg->base;
	/* KVM wants the effective byte limit. */
	out->limit = seg->g ? (seg->limit << 12) | 0xfff : seg->limit;
	out->selector = seg->selector;
	out->type = seg->type;
	out->present = seg->present;
	out->dpl = seg->dpl;
	out->db = seg->db;
	out->s = seg->s;
	out->l = seg->l;
	out->g = seg->g;
	out->unusable = !seg->present;
}

int x86__gdt_fill(uint64_t *gdt, unsigned int slots,
		  const struct x86_segment *const *segs, unsigned int count)
{
	for (unsigned int i = 0; i < count; i++) {
		unsigned int idx = segs[i]->selector >> 3;
		unsigned int need = segs[i]->s ? 1 : 2;

		if (idx == 0 || idx + need > slots)
			return err__set(ERANGE, "selector 0x%x outside a "
					"%u-entry GDT", segs[i]->selector,
					slots);
		gdt[idx] = x86__seg_to_gdt(segs[i]);
		if (need == 2)
			gdt[idx + 1] = x86__seg_to_gdt_high(segs[i]);
	}
	return 0;
}
