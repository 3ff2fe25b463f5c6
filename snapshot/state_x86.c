/* x86 vCPU and VM state through KVM's get/set ioctls. */
#include "state_x86.h"

#include "err.h"
#include "vm.h"

#include <cpuid.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#define MAX_MSRS 512
#define MAX_CPUID 256

struct msr_buf {
	struct kvm_msrs head;
	struct kvm_msr_entry e[MAX_MSRS];
};

struct cpuid_buf {
	struct kvm_cpuid2 head;
	struct kvm_cpuid_entry2 e[MAX_CPUID];
};

void state__cpu_vendor(char vendor[16])
{
	unsigned int a, b, c, d;

	memset(vendor, 0, 16);
	if (!__get_cpuid(0, &a, &b, &c, &d))
		return;
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
}

/* Saves one fixed-size struct read by `req`. */
static int save_struct(struct vcpu *vcpu, struct snap_writer *w,
		       unsigned long req, const char *name, uint32_t type,
		       void *buf, size_t size)
{
	int ret = kvm__ioctl(vcpu->fd, req, buf, name);

	if (ret < 0)
		return ret;
	snap__add(w, type, vcpu->id, buf, size);
	return 0;
}

/* The XSAVE area KVM exchanges: KVM_CAP_XSAVE2's size where larger. */
static size_t xsave_size(const struct kvm_host *kvm)
{
	int size = kvm__check_cap(kvm, KVM_CAP_XSAVE2);

	return size > (int)sizeof(struct kvm_xsave) ? (size_t)size
						    : sizeof(struct kvm_xsave);
}

static int save_xsave(struct vcpu *vcpu, struct snap_writer *w)
{
	size_t size = xsave_size(vcpu->vm->kvm);
	void *buf = calloc(1, size);
	int ret;

	if (!buf)
		return err__set(ENOMEM, "allocating the XSAVE area");
	if (size > sizeof(struct kvm_xsave))
		ret = KVM_IOCTL(vcpu->fd, KVM_GET_XSAVE2, buf);
	else
		ret = KVM_IOCTL(vcpu->fd, KVM_GET_XSAVE, buf);
	if (ret >= 0)
		snap__add(w, SNAP_VCPU_XSAVE, vcpu->id, buf, size);
	free(buf);
	return ret < 0 ? ret : 0;
}

/* Reads every MSR KVM lists; an MSR this vCPU cannot read is skipped (KVM
 * stops a batch at the first failure, so retry from the next one). */
static int save_msrs(struct vcpu *vcpu, struct snap_writer *w)
{
	struct {
		struct kvm_msr_list head;
		uint32_t idx[MAX_MSRS];
	} list = { .head.nmsrs = MAX_MSRS };
	struct msr_buf *out = calloc(1, sizeof(*out)), batch;
	int ret = KVM_IOCTL(vcpu->vm->kvm->fd, KVM_GET_MSR_INDEX_LIST, &list);

	if (!out)
		return err__set(ENOMEM, "allocating MSRs");
	for (uint32_t i = 0; ret >= 0 && i < list.head.nmsrs;) {
		memset(&batch, 0, sizeof(batch));
		batch.head.nmsrs = list.head.nmsrs - i;
		for (uint32_t k = 0; k < batch.head.nmsrs; k++)
			batch.e[k].index = list.idx[i + k];
		ret = KVM_IOCTL(vcpu->fd, KVM_GET_MSRS, &batch);
		for (int k = 0; k < ret; k++)
			out->e[out->head.nmsrs++] = batch.e[k];
		if (ret >= 0)
			i += (uint32_t)ret + 1; /* skip the unreadable one */
	}
	if (ret >= 0)
		snap__add(w, SNAP_VCPU_MSRS, vcpu->id, out,
			  sizeof(out->head) +
				  out->head.nmsrs * sizeof(out->e[0]));
	free(out);
	return ret < 0 ? ret : 0;
}

static int save_tsc_khz(struct vcpu *vcpu, struct snap_writer *w)
{
	int ret = KVM_IOCTL(vcpu->fd, KVM_GET_TSC_KHZ, NULL);
	uint32_t khz = (uint32_t)ret;

	if (ret > 0)
		snap__add(w, SNAP_VCPU_TSC_KHZ, vcpu->id, &khz, sizeof(khz));
	return ret < 0 ? ret : 0;
}

static int save_cpuid(struct vcpu *vcpu, struct snap_writer *w)
{
	struct cpuid_buf *c = calloc(1, sizeof(*c));
	int ret;

	if (!c)
		return err__set(ENOMEM, "allocating CPUID");
	c->head.nent = MAX_CPUID;
	ret = KVM_IOCTL(vcpu->fd, KVM_GET_CPUID2, c);
	/* A vCPU never given CPUID (the probe guest) has none to save. */
	if (ret >= 0 && c->head.nent)
		snap__add(w, SNAP_VCPU_CPUID, vcpu->id, c,
			  sizeof(c->head) + c->head.nent * sizeof(c->e[0]));
	free(c);
	return ret < 0 ? ret : 0;
}

/* Order (as other VMMs do it): MP state first, since KVM_GET_MP_STATE
 * lets the LAPIC accept pending INIT/SIPI and so changes other state;
 * vCPU events last, since the other GETs may change pending events. */
int state__save_vcpu(struct vcpu *vcpu, struct snap_writer *w)
{
	union {
		struct kvm_regs regs;
		struct kvm_sregs sregs;
		struct kvm_xcrs xcrs;
		struct kvm_mp_state mp;
		struct kvm_vcpu_events ev;
		struct kvm_debugregs dr;
		struct kvm_lapic_state lapic;
	} u;
	int ret;

	memset(&u, 0, sizeof(u));
	ret = save_struct(vcpu, w, KVM_GET_MP_STATE, "KVM_GET_MP_STATE",
			  SNAP_VCPU_MP_STATE, &u.mp, sizeof(u.mp));
	if (ret == 0)
		ret = save_cpuid(vcpu, w);
	if (ret == 0)
		ret = save_struct(vcpu, w, KVM_GET_REGS, "KVM_GET_REGS",
				  SNAP_VCPU_REGS, &u.regs, sizeof(u.regs));
	if (ret == 0)
		ret = save_struct(vcpu, w, KVM_GET_SREGS, "KVM_GET_SREGS",
				  SNAP_VCPU_SREGS, &u.sregs, sizeof(u.sregs));
	if (ret == 0)
		ret = save_xsave(vcpu, w);
	if (ret == 0)
		ret = save_struct(vcpu, w, KVM_GET_XCRS, "KVM_GET_XCRS",
				  SNAP_VCPU_XCRS, &u.xcrs, sizeof(u.xcrs));
	if (ret == 0)
		ret = save_struct(vcpu, w, KVM_GET_DEBUGREGS, "KVM_GET_DEBUGREGS",
				  SNAP_VCPU_DEBUGREGS, &u.dr, sizeof(u.dr));
	if (ret == 0 && vcpu->vm->irqchip)
		ret = save_struct(vcpu, w, KVM_GET_LAPIC, "KVM_GET_LAPIC",
				  SNAP_VCPU_LAPIC, &u.lapic, sizeof(u.lapic));
	if (ret == 0)
		ret = save_tsc_khz(vcpu, w);
	if (ret == 0)
		ret = save_msrs(vcpu, w);
	if (ret == 0)
		ret = save_struct(vcpu, w, KVM_GET_VCPU_EVENTS,
				  "KVM_GET_VCPU_EVENTS", SNAP_VCPU_EVENTS, &u.ev,
				  sizeof(u.ev));
	return ret;
}

/* The in-kernel irqchip's three chips and the PIT (VM-wide state). */
static int save_irqchip(struct vm *vm, struct snap_writer *w)
{
	static const uint32_t types[] = { SNAP_VM_PIC_MASTER,
					  SNAP_VM_PIC_SLAVE, SNAP_VM_IOAPIC };
	struct kvm_irqchip chip;
	struct kvm_pit_state2 pit;
	int ret = 0;

	for (uint32_t id = 0; ret == 0 && id < 3; id++) {
		memset(&chip, 0, sizeof(chip));
		chip.chip_id = id;
		ret = KVM_IOCTL(vm->fd, KVM_GET_IRQCHIP, &chip);
		if (ret >= 0)
			snap__add(w, types[id], 0, &chip, sizeof(chip));
	}
	memset(&pit, 0, sizeof(pit));
	if (ret >= 0)
		ret = KVM_IOCTL(vm->fd, KVM_GET_PIT2, &pit);
	if (ret >= 0)
		snap__add(w, SNAP_VM_PIT, 0, &pit, sizeof(pit));
	return ret < 0 ? ret : 0;
}

int state__save_vm(struct vm *vm, struct snap_writer *w)
{
	struct kvm_clock_data clock = { 0 };
	int ret = vm->irqchip ? save_irqchip(vm, w) : 0;

	for (unsigned int i = 0; ret == 0 && i < vm->nr_vcpus; i++)
		ret = state__save_vcpu(&vm->vcpus[i], w);
	if (ret == 0)
		ret = KVM_IOCTL(vm->fd, KVM_GET_CLOCK, &clock);
	if (ret < 0)
		return ret;
	snap__add(w, SNAP_VM_CLOCK, 0, &clock, sizeof(clock));
	return 0;
}

/* Section (type, vCPU idx) of exactly `size` bytes (any size when 0),
 * or -EINVAL. */
/* Returns the payload's length (sections are far below INT_MAX: the
 * state file is capped at 64 MiB). */
static int need(const struct snap_reader *r, uint32_t type, uint32_t idx,
		size_t size, const void **out)
{
	size_t len;
	const void *p = snap__find(r, type, idx, &len);

	if (!p)
		return err__set(EINVAL, "snapshot lacks section %s for vCPU %u",
				snap__type_name(type), idx);
	if (size && len != size)
		return err__set(EINVAL, "section %s for vCPU %u has %zu bytes, "
				"expected %zu", snap__type_name(type), idx, len,
				size);
	*out = p;
	return (int)len;
}

/* Sets one fixed-size struct; the payload is copied so KVM never sees
 * a pointer into the (read-only, possibly unaligned) file image. */
static int restore_struct(struct vcpu *vcpu, const struct snap_reader *r,
			  uint32_t type, unsigned long req, const char *name,
			  size_t size)
{
	const void *p = NULL;
	void *copy;
	int ret = need(r, type, vcpu->id, size, &p);

	if (ret < 0)
		return ret;
	copy = malloc(size);
	if (!copy)
		return err__set(ENOMEM, "restoring %s", name);
	memcpy(copy, p, size);
	ret = kvm__ioctl(vcpu->fd, req, copy, name);
	free(copy);
	return ret < 0 ? ret : 0;
}

static int restore_cpuid(struct vcpu *vcpu, const struct snap_reader *r)
{
	struct cpuid_buf *c;
	size_t len;
	const void *p = snap__find(r, SNAP_VCPU_CPUID, vcpu->id, &len);
	int ret;

	if (!p)
		return 0; /* saved without CPUID */
	if (len < sizeof(c->head) || len > sizeof(*c))
		return err__set(EINVAL, "section vcpu.cpuid has a bad size");
	c = calloc(1, sizeof(*c));
	if (!c)
		return err__set(ENOMEM, "restoring CPUID");
	memcpy(c, p, len);
	if (len != sizeof(c->head) + c->head.nent * sizeof(c->e[0]))
		ret = err__set(EINVAL, "section vcpu.cpuid: %u entries do not "
			       "fit its %zu bytes", c->head.nent, len);
	else
		ret = KVM_IOCTL(vcpu->fd, KVM_SET_CPUID2, c);
	free(c);
	return ret < 0 ? ret : 0;
}

/* Whether the vCPU already holds `e`'s value (so refusing it is moot). */
static int msr_holds(struct vcpu *vcpu, const struct kvm_msr_entry *e)
{
	struct {
		struct kvm_msrs head;
		struct kvm_msr_entry e;
	} one = { .head.nmsrs = 1, .e.index = e->index };

	return ioctl(vcpu->fd, KVM_GET_MSRS, &one) == 1 && one.e.data == e->data;
}

/* KVM stops a batch at the first MSR it refuses. Some it refuses only
 * because of guest CPUID (KVM's paravirtual MSRs on a vCPU without KVM
 * leaves): those are skipped when the vCPU already holds the saved value;
 * any other refusal is an error naming the MSR. */
static int set_msrs(struct vcpu *vcpu, const struct msr_buf *m)
{
	struct msr_buf *batch = malloc(sizeof(*batch));
	int ret = 0;

	if (!batch)
		return err__set(ENOMEM, "restoring MSRs");
	for (uint32_t i = 0; ret >= 0 && i < m->head.nmsrs;) {
		batch->head.nmsrs = m->head.nmsrs - i;
		memcpy(batch->e, &m->e[i], batch->head.nmsrs * sizeof(m->e[0]));
		ret = KVM_IOCTL(vcpu->fd, KVM_SET_MSRS, batch);
		if (ret < 0 || (uint32_t)ret == batch->head.nmsrs)
			break;
		i += (uint32_t)ret;
		if (!msr_holds(vcpu, &m->e[i]))
			ret = err__set(EINVAL, "KVM_SET_MSRS refused MSR 0x%x "
				       "(value 0x%llx)", m->e[i].index,
				       (unsigned long long)m->e[i].data);
		i++;
	}
	free(batch);
	return ret < 0 ? ret : 0;
}

static int restore_msrs(struct vcpu *vcpu, const struct snap_reader *r)
{
	struct msr_buf *m;
	size_t len;
	const void *p = NULL;
	int ret = need(r, SNAP_VCPU_MSRS, vcpu->id, 0, &p);

	if (ret < 0)
		return ret;
	len = (size_t)ret;
	if (len < sizeof(m->head) || len > sizeof(*m))
		return err__set(EINVAL, "section vcpu.msrs has a bad size");
	m = calloc(1, sizeof(*m));
	if (!m)
		return err__set(ENOMEM, "restoring MSRs");
	memcpy(m, p, len);
	if (len != sizeof(m->head) + m->head.nmsrs * sizeof(m->e[0]))
		ret = err__set(EINVAL, "section vcpu.msrs: %u MSRs do not fit "
			       "its %zu bytes", m->head.nmsrs, len);
	else
		ret = set_msrs(vcpu, m);
	free(m);
	return ret;
}

static int restore_xsave(struct vcpu *vcpu, const struct snap_reader *r)
{
	size_t size = xsave_size(vcpu->vm->kvm);

	/* KVM_SET_XSAVE reads as much as KVM_CAP_XSAVE2 says. */
	return restore_struct(vcpu, r, SNAP_VCPU_XSAVE, KVM_SET_XSAVE,
			      "KVM_SET_XSAVE", size);
}

static int restore_tsc(struct vcpu *vcpu, const struct snap_reader *r)
{
	const void *p = NULL;
	uint32_t khz;
	int now;

	if (need(r, SNAP_VCPU_TSC_KHZ, vcpu->id, sizeof(khz), &p) < 0)
		return 0; /* the saving host did not report one */
	memcpy(&khz, p, sizeof(khz));
	now = KVM_IOCTL(vcpu->fd, KVM_GET_TSC_KHZ, NULL);
	if (now < 0 || (uint32_t)now == khz)
		return now < 0 ? now : 0;
	if (KVM_IOCTL(vcpu->fd, KVM_SET_TSC_KHZ, (void *)(uintptr_t)khz) < 0)
		return err__set(ENOTSUP, "the snapshot's TSC runs at %u kHz, "
				"this host at %d kHz and it cannot scale", khz,
				now);
	return 0;
}

int state__restore_vcpu(struct vcpu *vcpu, const struct snap_reader *r)
{
	int ret = restore_cpuid(vcpu, r);

	if (ret == 0)
		ret = restore_tsc(vcpu, r);
	if (ret == 0)
		ret = restore_struct(vcpu, r, SNAP_VCPU_SREGS, KVM_SET_SREGS,
				     "KVM_SET_SREGS", sizeof(struct kvm_sregs));
	/* After SREGS (the APIC base MSR enables the LAPIC) and before MSRs
	 * (KVM drops a TSC deadline while the LVT timer is in another mode),
	 * vCPU events and MP state (both track LAPIC-delivered events). */
	if (ret == 0 && vcpu->vm->irqchip)
		ret = restore_struct(vcpu, r, SNAP_VCPU_LAPIC, KVM_SET_LAPIC,
				     "KVM_SET_LAPIC",
				     sizeof(struct kvm_lapic_state));
	if (ret == 0)
		ret = restore_msrs(vcpu, r);
	if (ret == 0)
		ret = restore_xsave(vcpu, r);
	if (ret == 0)
		ret = restore_struct(vcpu, r, SNAP_VCPU_XCRS, KVM_SET_XCRS,
				     "KVM_SET_XCRS", sizeof(struct kvm_xcrs));
	if (ret == 0)
		ret = restore_struct(vcpu, r, SNAP_VCPU_EVENTS,
				     KVM_SET_VCPU_EVENTS, "KVM_SET_VCPU_EVENTS",
				     sizeof(struct kvm_vcpu_events));
	if (ret == 0)
		ret = restore_struct(vcpu, r, SNAP_VCPU_MP_STATE,
				     KVM_SET_MP_STATE, "KVM_SET_MP_STATE",
				     sizeof(struct kvm_mp_state));
	if (ret == 0)
		ret = restore_struct(vcpu, r, SNAP_VCPU_DEBUGREGS,
				     KVM_SET_DEBUGREGS, "KVM_SET_DEBUGREGS",
				     sizeof(struct kvm_debugregs));
	if (ret == 0)
		ret = restore_struct(vcpu, r, SNAP_VCPU_REGS, KVM_SET_REGS,
				     "KVM_SET_REGS", sizeof(struct kvm_regs));
	return ret;
}

static const struct {
	uint32_t type;
	size_t size;
} irqchip_sections[] = {
	{ SNAP_VM_PIC_MASTER, sizeof(struct kvm_irqchip) },
	{ SNAP_VM_PIC_SLAVE, sizeof(struct kvm_irqchip) },
	{ SNAP_VM_IOAPIC, sizeof(struct kvm_irqchip) },
	{ SNAP_VM_PIT, sizeof(struct kvm_pit_state2) },
};
#define NR_IRQCHIP_SECTIONS \
	(sizeof(irqchip_sections) / sizeof(irqchip_sections[0]))

/* The PICs, IOAPIC and PIT: before any vCPU's LAPIC, so an interrupt the
 * restored LAPICs hold never meets routing in its reset state. */
static int restore_irqchip(struct vm *vm, const struct snap_reader *r)
{
	static const char *const set_names[] = {
		"KVM_SET_IRQCHIP (PIC master)", "KVM_SET_IRQCHIP (PIC slave)",
		"KVM_SET_IRQCHIP (IOAPIC)", "KVM_SET_PIT2" };
	union {
		struct kvm_irqchip chip;
		struct kvm_pit_state2 pit;
	} u;
	const void *p = NULL;
	int ret = 0;

	for (uint32_t i = 0; ret >= 0 && i < NR_IRQCHIP_SECTIONS; i++) {
		ret = need(r, irqchip_sections[i].type, 0,
			   irqchip_sections[i].size, &p);
		if (ret < 0)
			break;
		memcpy(&u, p, irqchip_sections[i].size);
		if (i < 3 && u.chip.chip_id != i)
			return err__set(EINVAL, "section %s holds chip %u",
					snap__type_name(irqchip_sections[i].type),
					u.chip.chip_id);
		ret = kvm__ioctl(vm->fd, i < 3 ? KVM_SET_IRQCHIP : KVM_SET_PIT2,
				 &u, set_names[i]);
	}
	return ret < 0 ? ret : 0;
}

/* Irqchip first, vCPUs next, kvmclock last: setting TSCs (MSRs) can make
 * KVM recompute its master clock, which would move a clock set earlier. */
int state__restore_vm(struct vm *vm, const struct snap_reader *r)
{
	struct kvm_clock_data clock;
	const void *p = NULL;
	int ret = need(r, SNAP_VM_CLOCK, 0, sizeof(clock), &p);

	if (ret < 0)
		return ret;
	memcpy(&clock, p, sizeof(clock));
	clock.flags = 0; /* only the clock value is settable */
	ret = vm->irqchip ? restore_irqchip(vm, r) : 0;
	for (unsigned int i = 0; ret >= 0 && i < vm->nr_vcpus; i++)
		ret = state__restore_vcpu(&vm->vcpus[i], r);
	if (ret >= 0)
		ret = KVM_IOCTL(vm->fd, KVM_SET_CLOCK, &clock);
	return ret < 0 ? ret : 0;
}

int state__check_irqchip(const struct snap_reader *r, bool irqchip,
			 unsigned int nr_vcpus)
{
	const void *p = NULL;
	size_t len;

	for (size_t i = 0; i < NR_IRQCHIP_SECTIONS; i++) {
		uint32_t type = irqchip_sections[i].type;

		p = snap__find(r, type, 0, &len);
		if (!irqchip && p)
			return err__set(EINVAL, "snapshot holds section %s but "
					"its VM config has no in-kernel irqchip",
					snap__type_name(type));
		if (irqchip && !p)
			return err__set(EINVAL, "snapshot's VM config has an "
					"in-kernel irqchip but it lacks section "
					"%s", snap__type_name(type));
		if (p && len != irqchip_sections[i].size)
			return err__set(EINVAL, "section %s has %zu bytes, "
					"expected %zu", snap__type_name(type),
					len, irqchip_sections[i].size);
	}
	for (unsigned int i = 0; i < nr_vcpus; i++) {
		p = snap__find(r, SNAP_VCPU_LAPIC, i, &len);
		if (!irqchip && p)
			return err__set(EINVAL, "snapshot holds vcpu.lapic for "
					"vCPU %u but its VM config has no "
					"in-kernel irqchip", i);
		if (irqchip &&
		    need(r, SNAP_VCPU_LAPIC, i, sizeof(struct kvm_lapic_state),
			 &p) < 0)
			return -EINVAL;
	}
	return 0;
}

/* Registers of the CPUID leaves whose feature bits a guest may rely on. */
static const struct {
	uint32_t function, index;
} feature_leaves[] = { { 1, 0 }, { 7, 0 }, { 0x80000001, 0 } };

static const struct kvm_cpuid_entry2 *
find_leaf(const struct kvm_cpuid_entry2 *e, uint32_t n, uint32_t fn,
	  uint32_t idx)
{
	for (uint32_t i = 0; i < n; i++)
		if (e[i].function == fn && e[i].index == idx)
			return &e[i];
	return NULL;
}

/* Bits KVM sets in a vCPU's CPUID from guest state (CR4.OSXSAVE,
 * CR4.PKE) and the one a VMM sets itself (hypervisor present), never in
 * the supported table: no host feature. */
#define CPUID1_ECX_OSXSAVE (1u << 27)
#define CPUID1_ECX_HYPERVISOR (1u << 31)
#define CPUID7_ECX_OSPKE (1u << 4)

/* What this host offers for a leaf: KVM's supported table; on PVM also
 * the CPU's own bits, since PVM reports those in every vCPU's CPUID
 * whatever was set (and the guest's ring 3 runs on the CPU natively). */
static void host_leaf(const struct kvm_host *kvm,
		      const struct kvm_cpuid_entry2 *h, uint32_t fn,
		      uint32_t idx, struct kvm_cpuid_entry2 *out)
{
	unsigned int a = 0, b = 0, c = 0, d = 0;

	*out = *h;
	if (kvm->flavour == KVM_FLAVOUR_PVM &&
	    __get_cpuid_count(fn, idx, &a, &b, &c, &d)) {
		out->ebx |= b;
		out->ecx |= c;
		out->edx |= d;
	}
	if (fn == 1)
		out->ecx |= CPUID1_ECX_OSXSAVE | CPUID1_ECX_HYPERVISOR;
	if (fn == 7)
		out->ecx |= CPUID7_ECX_OSPKE;
}

static int check_features(const struct kvm_host *kvm,
			  const struct kvm_cpuid_entry2 *saved, uint32_t n,
			  const struct kvm_cpuid2 *host)
{
	for (size_t i = 0; i < sizeof(feature_leaves) / sizeof(feature_leaves[0]); i++) {
		const struct kvm_cpuid_entry2 *s, *found;
		struct kvm_cpuid_entry2 hl, *h = &hl;
		uint32_t fn = feature_leaves[i].function;

		s = find_leaf(saved, n, fn, feature_leaves[i].index);
		found = find_leaf(host->entries, host->nent, fn,
				  feature_leaves[i].index);
		if (!s)
			continue;
		if (!found)
			return err__set(ENOTSUP, "this host lacks CPUID leaf "
					"0x%x the snapshot's guest uses", fn);
		host_leaf(kvm, found, fn, feature_leaves[i].index, &hl);
		if ((s->ecx & ~h->ecx) || (s->edx & ~h->edx) ||
		    (fn == 7 && (s->ebx & ~h->ebx)))
			return err__set(ENOTSUP, "this host lacks CPU features "
					"the snapshot's guest was given: leaf "
					"0x%x ebx 0x%x ecx 0x%x edx 0x%x", fn,
					fn == 7 ? s->ebx & ~h->ebx : 0,
					s->ecx & ~h->ecx, s->edx & ~h->edx);
	}
	return 0;
}

int state__check_host(struct kvm_host *kvm, const struct snap_reader *r)
{
	const struct kvm_cpuid2 *host;
	struct cpuid_buf *c;
	size_t len;
	int ret;
	const void *p = snap__find(r, SNAP_VCPU_XSAVE, 0, &len);
	size_t want = xsave_size(kvm);

	if (p && len != want)
		return err__set(ENOTSUP, "the snapshot's XSAVE area is %zu "
				"bytes, this host's %zu", len, want);
	p = snap__find(r, SNAP_VCPU_CPUID, 0, &len);
	if (!p)
		return 0;
	if (len < sizeof(c->head) || len > sizeof(*c))
		return err__set(EINVAL, "section vcpu.cpuid has a bad size");
	ret = kvm__supported_cpuid(kvm, &host);
	if (ret < 0)
		return ret;
	c = calloc(1, sizeof(*c));
	if (!c)
		return err__set(ENOMEM, "checking CPUID");
	memcpy(c, p, len);
	ret = check_features(kvm, c->e, c->head.nent < MAX_CPUID ? c->head.nent
							    : MAX_CPUID, host);
	free(c);
	return ret;
}
