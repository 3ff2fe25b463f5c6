/* CPUID and long-mode register state for x86-64 vCPUs. */
#include "cpu_x86.h"

#include "err.h"
#include "vm.h"

#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>

#define CR0_PE (1ull << 0)
#define CR0_MP (1ull << 1)
#define CR0_ET (1ull << 4)
#define CR0_NE (1ull << 5)
#define CR0_WP (1ull << 16)
#define CR0_AM (1ull << 18)
#define CR0_PG (1ull << 31)
#define CR4_PAE (1ull << 5)
#define CR4_OSFXSR (1ull << 9)
#define CR4_OSXMMEXCPT (1ull << 10)
#define EFER_LME (1ull << 8)
#define EFER_LMA (1ull << 10)
#define EFER_NXE (1ull << 11)
#define RFLAGS_RESERVED (1ull << 1)
#define RFLAGS_IOPL3 (3ull << 12)

const struct x86_segment x86_user_code = {
	.selector = 0x33, .type = X86_SEG_TYPE_CODE_XR, .s = 1, .dpl = 3,
	.present = 1, .l = 1, .g = 1, .limit = 0xfffff,
};

const struct x86_segment x86_user_data = {
	.selector = 0x2b, .type = X86_SEG_TYPE_DATA_RW, .s = 1, .dpl = 3,
	.present = 1, .db = 1, .g = 1, .limit = 0xfffff,
};

struct x86_segment x86__tss_open_iomap(uint8_t *dst, uint64_t base,
				       uint16_t selector)
{
	const uint16_t iomap_base = 0x68;

	memset(dst, 0, X86_TSS_IOMAP_SIZE);
	memcpy(dst + 0x66, &iomap_base, sizeof(iomap_base));
	/* The byte after the bitmap must be all ones (SDM 19.5.2). */
	dst[X86_TSS_IOMAP_SIZE - 1] = 0xff;
	return (struct x86_segment){
		.base = base, .limit = X86_TSS_IOMAP_SIZE - 1,
		.selector = selector, .type = X86_SEG_TYPE_TSS64_BUSY,
		.present = 1,
	};
}

/* Gives the vCPU its own initial APIC ID in the leaves that report it. */
static void set_apic_id(struct kvm_cpuid2 *cpuid, uint32_t id)
{
	for (uint32_t i = 0; i < cpuid->nent; i++) {
		struct kvm_cpuid_entry2 *e = &cpuid->entries[i];

		if (e->function == 1)
			e->ebx = (e->ebx & 0x00ffffffu) | (id << 24);
		else if (e->function == 0xb || e->function == 0x1f)
			e->edx = id;
	}
}

int x86__vm_create_irqchip(struct vm *vm)
{
	uint64_t idmap = X86_KVM_IDENTITY_MAP_ADDR;
	struct kvm_pit_config pit = { .flags = KVM_PIT_SPEAKER_DUMMY };
	int ret;

	ret = KVM_IOCTL(vm->fd, KVM_SET_IDENTITY_MAP_ADDR, &idmap);
	if (ret >= 0)
		ret = KVM_IOCTL(vm->fd, KVM_SET_TSS_ADDR,
				(void *)(uintptr_t)X86_KVM_TSS_ADDR);
	if (ret >= 0)
		ret = KVM_IOCTL(vm->fd, KVM_CREATE_IRQCHIP, NULL);
	if (ret >= 0)
		ret = KVM_IOCTL(vm->fd, KVM_CREATE_PIT2, &pit);
	return ret < 0 ? ret : 0;
}

int x86__vcpu_set_cpuid(struct vcpu *vcpu)
{
	const struct kvm_cpuid2 *host;
	struct kvm_cpuid2 *cpuid;
	size_t size;
	int ret = kvm__supported_cpuid(vcpu->vm->kvm, &host);

	if (ret < 0)
		return ret;
	size = sizeof(*host) + host->nent * sizeof(host->entries[0]);
	cpuid = malloc(size);
	if (!cpuid)
		return err__set(ENOMEM, "allocating CPUID for vCPU %u",
				vcpu->id);
	memcpy(cpuid, host, size);
	set_apic_id(cpuid, vcpu->id);
	ret = KVM_IOCTL(vcpu->fd, KVM_SET_CPUID2, cpuid);
	free(cpuid);
	return ret < 0 ? ret : 0;
}

static void set_sregs_long_mode(struct kvm_sregs *s,
				const struct x86_long_mode *lm)
{
	x86__seg_to_kvm(&x86_user_code, &s->cs);
	x86__seg_to_kvm(&x86_user_data, &s->ds);
	s->es = s->fs = s->gs = s->ss = s->ds;
	x86__seg_to_kvm(&lm->tss, &s->tr);
	memset(&s->ldt, 0, sizeof(s->ldt));
	s->ldt.unusable = 1;
	s->gdt.base = lm->gdt_base;
	s->gdt.limit = lm->gdt_limit;
	s->idt.base = 0;
	s->idt.limit = 0;
	s->cr0 = CR0_PE | CR0_MP | CR0_ET | CR0_NE | CR0_WP | CR0_AM | CR0_PG;
	s->cr3 = lm->cr3;
	s->cr4 = CR4_PAE | CR4_OSFXSR | CR4_OSXMMEXCPT;
	s->efer = EFER_LME | EFER_LMA | (lm->nx ? EFER_NXE : 0);
}

int x86__vcpu_long_mode_user(struct vcpu *vcpu, const struct x86_long_mode *lm)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs = {
		.rip = lm->rip,
		.rsp = lm->rsp,
		.rdi = lm->rdi,
		.rsi = lm->rsi,
		.rflags = RFLAGS_RESERVED | RFLAGS_IOPL3,
	};
	int ret = KVM_IOCTL(vcpu->fd, KVM_GET_SREGS, &sregs);

	if (ret < 0)
		return ret;
	set_sregs_long_mode(&sregs, lm);
	ret = KVM_IOCTL(vcpu->fd, KVM_SET_SREGS, &sregs);
	if (ret < 0)
		return ret;
	ret = KVM_IOCTL(vcpu->fd, KVM_SET_REGS, &regs);
	return ret < 0 ? ret : 0;
}
