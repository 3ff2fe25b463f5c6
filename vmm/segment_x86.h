/* x86 segments described once, converted both to GDT descriptors (what the
 * guest's GDT holds) and to struct kvm_segment (what KVM_SET_SREGS takes). */
#ifndef COLDSTART_SEGMENT_X86_H
#define COLDSTART_SEGMENT_X86_H

#include <stdint.h>

struct kvm_segment;

/* Descriptor type nibbles used here. */
#define X86_SEG_TYPE_DATA_RW 0x3   /* read/write, accessed */
#define X86_SEG_TYPE_CODE_XR 0xb   /* execute/read, accessed */
#define X86_SEG_TYPE_TSS64_BUSY 0xb

struct x86_segment {
	uint64_t base;
	uint32_t limit; /* 20 bits; in 4 KiB units when g is set */
	uint16_t selector;
	uint8_t type;
	uint8_t s;   /* 1 for code/data, 0 for system (TSS, LDT) */
	uint8_t dpl;
	uint8_t present;
	uint8_t l;   /* 64-bit code */
	uint8_t db;
	uint8_t g;
};

/* The 8-byte descriptor; system segments in long mode also need the high
 * half from x86__seg_to_gdt_high(), in the next GDT slot. */
uint64_t x86__seg_to_gdt(const struct x86_segment *seg);
uint64_t x86__seg_to_gdt_high(const struct x86_segment *seg);

void x86__seg_to_kvm(const struct x86_segment *seg, struct kvm_segment *out);

/* Writes every segment's descriptor(s) at its selector's index into `gdt`
 * of `slots` entries. -ERANGE if a selector does not fit. */
int x86__gdt_fill(uint64_t *gdt, unsigned int slots,
		  const struct x86_segment *const *segs, unsigned int count);

#endif
