/* CPUID and long-mode register state for x86-64 vCPUs. */
#include "cpu_x86.h"

#include "err.h"
#include "vm.h"

#include <asm/kvm_para.h>
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
#define CPUID1_ECX_HYPERVISOR (1u << 31)
#define KVM_LEAVES 2 /* 0x40000000 and 0x40000001, appended if missing */

#define MSR_IA32_SYSENTER_CS 0x174
#define MSR_IA32_SYSENTER_ESP 0x175
#define MSR_IA32_SYSENTER_EIP 0x176
#define MSR_IA32_TSC 0x10
#define MSR_IA32_MISC_ENABLE 0x1a0
#define MSR_MTRR_DEF_TYPE 0x2ff
#define MSR_STAR 0xc0000081
#define MSR_LSTAR 0xc0000082
#define MSR_CSTAR 0xc0000083
#define MSR_SYSCALL_MASK 0xc0000084
#define MSR_KERNEL_GS_BASE 0xc0000102
#define MISC_ENABLE_FAST_STRING (1ull << 0)
#define MTRR_ENABLE (1ull << 11)
#define MTRR_TYPE_WB 6ull

#define APIC_LVT_LINT0 0x350
#define APIC_LVT_LINT1 0x360
#define APIC_MODE_MASK (7u << 8)
#define APIC_MODE_NMI (4u << 8)
#define APIC_MODE_EXTINT (7u << 8)
#define APIC_LVT_MASKED (1u << 16)

const struct x86_segment x86_user_code = {
	.selector = 0x33, .type = X86_SEG_TYPE_CODE_XR, .s = 1, .dpl = 3,
	.present = 1, .l = 1, .g = 1, .limit = 0xfffff,
};

const struct x86_segment x86_user_data = {
	.selector = 0x2b, .type = X86_SEG_TYPE_DATA_RW, .s = 1, .dpl = 3,
	.present = 1, .db = 1, .g = 1, .limit = 0xfffff,
};

const struct x86_segment x86_kernel_code = {
	.selector = 0x10, .type = X86_SEG_TYPE_CODE_XR, .s = 1, .present = 1,
	.l = 1, .g = 1, .limit = 0xfffff,
};

const struct x86_segment x86_kernel_data = {
	.selector = 0x18, .type = X86_SEG_TYPE_DATA_RW, .s = 1, .present = 1,
	.db = 1, .g = 1, .limit = 0xfffff,
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

static struct kvm_cpuid_entry2 *find_leaf(struct kvm_cpuid2 *cpuid,
					  uint32_t function)
{
	for (uint32_t i = 0; i < cpuid->nent; i++)
		if (cpuid->entries[i].function == function)
			return &cpuid->entries[i];
	return NULL;
}

/* Guests detect KVM (and its paravirt clock, EOI, ...) through these
 * leaves; `cpuid` has room for KVM_LEAVES more entries. */
static void set_kvm_leaves(struct kvm_cpuid2 *cpuid)
{
	struct kvm_cpuid_entry2 *sig = find_leaf(cpuid, KVM_CPUID_SIGNATURE);
	struct kvm_cpuid_entry2 *leaf1 = find_leaf(cpuid, 1);

	if (leaf1)
		leaf1->ecx |= CPUID1_ECX_HYPERVISOR;
	if (!sig) {
		sig = &cpuid->entries[cpuid->nent++];
		*sig = (struct kvm_cpuid_entry2){ .function =
							  KVM_CPUID_SIGNATURE };
	}
	if (sig->eax < KVM_CPUID_FEATURES)
		sig->eax = KVM_CPUID_FEATURES;
	memcpy(&sig->ebx, KVM_SIGNATURE, 4);
	memcpy(&sig->ecx, KVM_SIGNATURE + 4, 4);
	memcpy(&sig->edx, KVM_SIGNATURE + 8, 4);
	/* Without the host's feature leaf there is nothing to advertise. */
	if (!find_leaf(cpuid, KVM_CPUID_FEATURES))
		cpuid->entries[cpuid->nent++] = (struct kvm_cpuid_entry2){
			.function = KVM_CPUID_FEATURES };
}

int x86__vm_create_irqchip(struct vm *vm)
{
	uint64_t idmap = X86_KVM_IDENTITY_MAP_ADDR;
	struct kvm_pit_config pit = { .flags = KVM_PIT_SPEAKER_DUMMY };
	struct kvm_reinject_control reinject = { .pit_reinject = 0 };
	int ret;

	ret = KVM_IOCTL(vm->fd, KVM_SET_IDENTITY_MAP_ADDR, &idmap);
	if (ret >= 0)
		ret = KVM_IOCTL(vm->fd, KVM_SET_TSS_ADDR,
				(void *)(uintptr_t)X86_KVM_TSS_ADDR);
	if (ret >= 0)
		ret = KVM_IOCTL(vm->fd, KVM_CREATE_IRQCHIP, NULL);
	if (ret >= 0)
		ret = KVM_IOCTL(vm->fd, KVM_CREATE_PIT2, &pit);
	/* Missed PIT ticks are dropped, not replayed: a host that stalls the
	 * VMM (a loaded or emulated one) otherwise gets a PIT thread that
	 * spins re-injecting the backlog, and Linux keeps time from its
	 * clocksource, not from counting ticks. */
	if (ret >= 0)
		ret = KVM_IOCTL(vm->fd, KVM_REINJECT_CONTROL, &reinject);
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
	cpuid = malloc(size + KVM_LEAVES * sizeof(host->entries[0]));
	if (!cpuid)
		return err__set(ENOMEM, "allocating CPUID for vCPU %u",
				vcpu->id);
	memcpy(cpuid, host, size);
	set_apic_id(cpuid, vcpu->id);
	set_kvm_leaves(cpuid);
	ret = KVM_IOCTL(vcpu->fd, KVM_SET_CPUID2, cpuid);
	free(cpuid);
	return ret < 0 ? ret : 0;
}

/* What differs between entering long mode in ring 3 (the probe guest) and
 * in ring 0 (a Linux kernel): segments, control bits and RFLAGS. */
struct x86_ring {
	const struct x86_segment *code, *data;
	uint64_t cr0, cr4, rflags;
};

static const struct x86_ring ring3 = {
	&x86_user_code, &x86_user_data,
	CR0_PE | CR0_MP | CR0_ET | CR0_NE | CR0_WP | CR0_AM | CR0_PG,
	CR4_PAE | CR4_OSFXSR | CR4_OSXMMEXCPT,
	RFLAGS_RESERVED | RFLAGS_IOPL3,
};

static const struct x86_ring ring0 = {
	&x86_kernel_code, &x86_kernel_data,
	CR0_PE | CR0_MP | CR0_ET | CR0_NE | CR0_PG,
	CR4_PAE,
	RFLAGS_RESERVED,
};

static void set_sregs(struct kvm_sregs *s, const struct x86_long_mode *lm,
		      const struct x86_ring *ring)
{
	x86__seg_to_kvm(ring->code, &s->cs);
	x86__seg_to_kvm(ring->data, &s->ds);
	s->es = s->fs = s->gs = s->ss = s->ds;
	x86__seg_to_kvm(&lm->tss, &s->tr);
	memset(&s->ldt, 0, sizeof(s->ldt));
	s->ldt.unusable = 1;
	s->gdt.base = lm->gdt_base;
	s->gdt.limit = lm->gdt_limit;
	s->idt.base = 0;
	s->idt.limit = 0;
	s->cr0 = ring->cr0;
	s->cr3 = lm->cr3;
	s->cr4 = ring->cr4;
	s->efer = EFER_LME | EFER_LMA | (lm->nx ? EFER_NXE : 0);
}

static int enter_long_mode(struct vcpu *vcpu, const struct x86_long_mode *lm,
			   const struct x86_ring *ring)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs = {
		.rip = lm->rip,
		.rsp = lm->rsp,
		.rdi = lm->rdi,
		.rsi = lm->rsi,
		.rflags = ring->rflags,
	};
	int ret = KVM_IOCTL(vcpu->fd, KVM_GET_SREGS, &sregs);

	if (ret < 0)
		return ret;
	set_sregs(&sregs, lm, ring);
	ret = KVM_IOCTL(vcpu->fd, KVM_SET_SREGS, &sregs);
	if (ret < 0)
		return ret;
	ret = KVM_IOCTL(vcpu->fd, KVM_SET_REGS, &regs);
	return ret < 0 ? ret : 0;
}

int x86__vcpu_long_mode_user(struct vcpu *vcpu, const struct x86_long_mode *lm)
{
	return enter_long_mode(vcpu, lm, &ring3);
}

int x86__vcpu_long_mode_kernel(struct vcpu *vcpu,
			       const struct x86_long_mode *lm)
{
	return enter_long_mode(vcpu, lm, &ring0);
}

int x86__vcpu_set_msr_defaults(struct vcpu *vcpu)
{
	static const struct { uint32_t index; uint64_t value; } defaults[] = {
		{ MSR_IA32_SYSENTER_CS, 0 },  { MSR_IA32_SYSENTER_ESP, 0 },
		{ MSR_IA32_SYSENTER_EIP, 0 }, { MSR_STAR, 0 },
		{ MSR_LSTAR, 0 },             { MSR_CSTAR, 0 },
		{ MSR_SYSCALL_MASK, 0 },      { MSR_KERNEL_GS_BASE, 0 },
		{ MSR_IA32_TSC, 0 },
		{ MSR_IA32_MISC_ENABLE, MISC_ENABLE_FAST_STRING },
		{ MSR_MTRR_DEF_TYPE, MTRR_ENABLE | MTRR_TYPE_WB },
	};
	enum { N = sizeof(defaults) / sizeof(defaults[0]) };
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry entries[N];
	} msrs = { .hdr.nmsrs = N };
	int ret;

	for (unsigned int i = 0; i < N; i++) {
		msrs.entries[i].index = defaults[i].index;
		msrs.entries[i].data = defaults[i].value;
	}
	ret = KVM_IOCTL(vcpu->fd, KVM_SET_MSRS, &msrs);
	if (ret >= 0 && ret < N)
		return err__set(EINVAL, "KVM_SET_MSRS: vCPU %u refused MSR "
				"0x%x", vcpu->id, defaults[ret].index);
	return ret < 0 ? ret : 0;
}

static void set_lvt(struct kvm_lapic_state *lapic, unsigned int reg,
		    uint32_t mode)
{
	uint32_t v;

	memcpy(&v, lapic->regs + reg, sizeof(v));
	v = (v & ~(APIC_MODE_MASK | APIC_LVT_MASKED)) | mode;
	memcpy(lapic->regs + reg, &v, sizeof(v));
}

int x86__vcpu_set_lint(struct vcpu *vcpu)
{
	struct kvm_lapic_state lapic;
	int ret = KVM_IOCTL(vcpu->fd, KVM_GET_LAPIC, &lapic);

	if (ret < 0)
		return ret;
	set_lvt(&lapic, APIC_LVT_LINT0, APIC_MODE_EXTINT);
	set_lvt(&lapic, APIC_LVT_LINT1, APIC_MODE_NMI);
	ret = KVM_IOCTL(vcpu->fd, KVM_SET_LAPIC, &lapic);
	return ret < 0 ? ret : 0;
}

int x86__vcpu_set_mp_state(struct vcpu *vcpu, bool runnable)
{
	struct kvm_mp_state mp = {
		.mp_state = runnable ? KVM_MP_STATE_RUNNABLE
				     : KVM_MP_STATE_UNINITIALIZED,
	};
	int ret = KVM_IOCTL(vcpu->fd, KVM_SET_MP_STATE, &mp);

	return ret < 0 ? ret : 0;
}
