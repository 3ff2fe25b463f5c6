/* KVM tests of machine state in snapshots: the probe guest on a VM with
 * the in-kernel irqchip (PICs, IOAPIC, LAPICs, PIT) saved, destroyed,
 * restored and compared (KVM selftests' state_test shape), its checksum
 * exact after restore; registered devices travel in their own sections.
 * Exits 77 without /dev/kvm. */
#include "devstate.h"
#include "err.h"
#include "mem_restore.h"
#include "probe.h"
#include "snapshot.h"
#include "snaptest.h"
#include "state_x86.h"
#include "units.h"
#include "vm.h"

#include <linux/kvm.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cmocka.h>

#define SECOND 1000000000ull
#define APIC_TPR 0x80
#define APIC_SPIV 0xf0
#define APIC_LVT0 0x350
#define APIC_LVTERR 0x370
#define APIC_TMCCT 0x390 /* current count: computed on read */

static struct probe_params workload(void)
{
	return (struct probe_params){ .init_bytes = 2 * MiB,
				      .ws_bytes = 3 * MiB,
				      .pattern = PROBE_PATTERN_RANDOM,
				      .op = PROBE_OP_WRITE, .seed = 5,
				      .compute_iters = 2000 };
}

static void lapic_set32(struct kvm_lapic_state *l, unsigned int off,
			uint32_t v)
{
	memcpy(&l->regs[off], &v, sizeof(v));
}

/* Gives every chip distinctive, harmless state (the guest runs with
 * interrupts off, every input masked and no PIT channel counting), so a
 * restore that skipped any of them cannot compare equal. */
static void scribble(struct vm *vm)
{
	struct kvm_irqchip chip = { .chip_id = KVM_IRQCHIP_PIC_MASTER };
	struct kvm_pit_state2 pit;
	struct kvm_lapic_state lapic;

	assert_int_equal(ioctl(vm->fd, KVM_GET_IRQCHIP, &chip), 0);
	chip.chip.pic.imr = 0xfb;
	chip.chip.pic.irq_base = 0x20;
	assert_int_equal(ioctl(vm->fd, KVM_SET_IRQCHIP, &chip), 0);
	chip = (struct kvm_irqchip){ .chip_id = KVM_IRQCHIP_PIC_SLAVE };
	assert_int_equal(ioctl(vm->fd, KVM_GET_IRQCHIP, &chip), 0);
	chip.chip.pic.imr = 0xff;
	chip.chip.pic.irq_base = 0x28;
	assert_int_equal(ioctl(vm->fd, KVM_SET_IRQCHIP, &chip), 0);
	chip = (struct kvm_irqchip){ .chip_id = KVM_IRQCHIP_IOAPIC };
	assert_int_equal(ioctl(vm->fd, KVM_GET_IRQCHIP, &chip), 0);
	for (int i = 0; i < KVM_IOAPIC_NUM_PINS; i++)
		chip.chip.ioapic.redirtbl[i].bits = (0x30u + (unsigned)i) |
						    (1ull << 16); /* masked */
	chip.chip.ioapic.ioregsel = 0x12;
	assert_int_equal(ioctl(vm->fd, KVM_SET_IRQCHIP, &chip), 0);
	assert_int_equal(ioctl(vm->fd, KVM_GET_PIT2, &pit), 0);
	pit.channels[2].count = 0x1234; /* gate off: never counts */
	pit.channels[2].mode = 3;
	pit.channels[2].rw_mode = 3;
	pit.channels[1].mode = 2;
	pit.channels[1].count = 0x4321;
	assert_int_equal(ioctl(vm->fd, KVM_SET_PIT2, &pit), 0);
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		assert_int_equal(ioctl(vm->vcpus[i].fd, KVM_GET_LAPIC, &lapic),
				 0);
		lapic_set32(&lapic, APIC_SPIV, 0x1ff); /* enabled, vector ff */
		lapic_set32(&lapic, APIC_LVT0, 0x10700); /* ExtINT, masked */
		lapic_set32(&lapic, APIC_LVTERR, 0x100fe);
		lapic_set32(&lapic, APIC_TPR, 0x10 + i);
		assert_int_equal(ioctl(vm->vcpus[i].fd, KVM_SET_LAPIC, &lapic),
				 0);
	}
}

/* With the in-kernel LAPIC, KVM parks every vCPU but 0 until an INIT and
 * SIPI that the probe guest never sends: start them directly. */
static void make_aps_runnable(struct vm *vm)
{
	struct kvm_mp_state mp = { .mp_state = KVM_MP_STATE_RUNNABLE };

	for (unsigned int i = 1; i < vm->nr_vcpus; i++)
		assert_int_equal(ioctl(vm->vcpus[i].fd, KVM_SET_MP_STATE, &mp),
				 0);
}

/* Runs to READY on an irqchip VM, optionally scribbles, saves. */
static void take(const char *name, unsigned int vcpus, bool scribbled)
{
	struct vm_config cfg = { .mem_size = 8 * MiB, .nr_vcpus = vcpus,
				 .strict_io = true, .irqchip = true };
	struct probe_params p = workload();
	struct snapshot_stats st;
	struct probe probe;
	struct vm *vm;
	char dir[256];

	snaptest__path(dir, sizeof(dir), name);
	p.pause_at_ready = true;
	if (vm__create(&kvm, &cfg, NULL, &vm) < 0)
		fail_msg("create: %s", err__last());
	assert_true(vm->irqchip);
	assert_int_equal(probe__setup(&probe, vm, &p), 0);
	make_aps_runnable(vm);
	assert_int_equal(vm__start(vm), 0);
	assert_int_equal(vm__wait_paused(vm, 30 * SECOND), 0);
	if (scribbled)
		scribble(vm);
	if (snapshot__save(vm, &probe, dir, 0, &st) < 0)
		fail_msg("save: %s", err__last());
	vm__destroy(vm);
}

static void run_to_done(struct snapshot *snap, struct vm *vm,
			struct probe *probe)
{
	assert_int_equal(vm__start(vm), 0);
	if (vm__wait(vm, 30 * SECOND) != VM_COMPLETED)
		fail_msg("restored guest: %s", vm->reason);
	assert_int_equal(probe->state.done, snap->cfg.nr_vcpus);
	assert_int_equal(probe->state.checksum,
			 probe__expected_checksum(&snap->params,
						  snap->cfg.nr_vcpus));
}

static void restore_and_finish(const char *name, const char *strategy)
{
	struct snapshot snap;
	struct probe probe;
	struct vm *vm;
	char dir[256];

	snaptest__path(dir, sizeof(dir), name);
	if (snapshot__open(&snap, dir) < 0)
		fail_msg("open: %s", err__last());
	assert_int_equal(snap.cfg.irqchip, 1);
	if (snapshot__restore(&kvm, &snap, mem_restore__strategy(strategy),
			      NULL, &vm, &probe) < 0)
		fail_msg("restore (%s): %s", strategy, err__last());
	assert_true(vm->irqchip);
	run_to_done(&snap, vm, &probe);
	vm__destroy(vm);
	snapshot__close(&snap);
}

static void test_irqchip_checksum(void **state)
{
	(void)state;
	take("irq1", 1, false);
	take("irq3", 3, false);
	for (const char *const *s = (const char *const[]){ "eager", "mmap",
							  "uffd", NULL };
	     *s; s++) {
		restore_and_finish("irq1", *s);
		restore_and_finish("irq3", *s);
	}
}

/* The saved section `type` (index idx) of `size` bytes. */
static const void *saved(const struct snapshot *s, uint32_t type,
			 uint32_t idx, size_t size)
{
	size_t len;
	const void *p = snap__find(&s->r, type, idx, &len);

	assert_non_null(p);
	assert_int_equal(len, size);
	return p;
}

static void compare_chip(struct vm *vm, const struct snapshot *s,
			 uint32_t type, uint32_t id)
{
	struct kvm_irqchip now = { .chip_id = id }, then;

	memcpy(&then, saved(s, type, 0, sizeof(then)), sizeof(then));
	assert_int_equal(ioctl(vm->fd, KVM_GET_IRQCHIP, &now), 0);
	assert_memory_equal(&now, &then, sizeof(now));
}

static void compare_pit(struct vm *vm, const struct snapshot *s)
{
	struct kvm_pit_state2 now, then;

	memcpy(&then, saved(s, SNAP_VM_PIT, 0, sizeof(then)), sizeof(then));
	assert_int_equal(then.channels[2].count, 0x1234);
	assert_int_equal(ioctl(vm->fd, KVM_GET_PIT2, &now), 0);
	/* count_load_time is the host time of the (re)load. */
	for (int i = 0; i < 3; i++)
		assert_memory_equal(&now.channels[i], &then.channels[i],
				    offsetof(struct kvm_pit_channel_state,
					     count_load_time));
	assert_int_equal(now.flags, then.flags);
}

static void compare_lapic(struct vcpu *vcpu, const struct snapshot *s)
{
	struct kvm_lapic_state now, then;
	uint32_t tpr;

	memcpy(&then, saved(s, SNAP_VCPU_LAPIC, vcpu->id, sizeof(then)),
	       sizeof(then));
	memcpy(&tpr, &then.regs[APIC_TPR], sizeof(tpr));
	assert_int_equal(tpr, 0x10 + vcpu->id);
	assert_int_equal(ioctl(vcpu->fd, KVM_GET_LAPIC, &now), 0);
	memset(&now.regs[APIC_TMCCT], 0, 4);
	memset(&then.regs[APIC_TMCCT], 0, 4);
	assert_memory_equal(&now, &then, sizeof(now));
}

static void test_irqchip_round_trip(void **state)
{
	/* Save, destroy, recreate, restore, read back, compare; then the
	 * guest still finishes exactly. */
	struct snapshot snap;
	struct probe probe;
	struct vm *vm;
	char dir[256];

	(void)state;
	take("scribbled", 2, true);
	snaptest__path(dir, sizeof(dir), "scribbled");
	assert_int_equal(snapshot__open(&snap, dir), 0);
	assert_int_equal(snapshot__restore(&kvm, &snap,
					   mem_restore__strategy("mmap"), NULL,
					   &vm, &probe), 0);
	compare_chip(vm, &snap, SNAP_VM_PIC_MASTER, KVM_IRQCHIP_PIC_MASTER);
	compare_chip(vm, &snap, SNAP_VM_PIC_SLAVE, KVM_IRQCHIP_PIC_SLAVE);
	compare_chip(vm, &snap, SNAP_VM_IOAPIC, KVM_IRQCHIP_IOAPIC);
	compare_pit(vm, &snap);
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		compare_lapic(&vm->vcpus[i], &snap);
	run_to_done(&snap, vm, &probe);
	vm__destroy(vm);
	snapshot__close(&snap);
}

static void test_no_irqchip_no_sections(void **state)
{
	/* A VM without the irqchip saves none of its sections. */
	struct vm_config cfg = { .mem_size = 8 * MiB, .nr_vcpus = 1,
				 .strict_io = true };
	struct probe_params p = workload();
	struct snapshot_stats st;
	struct snapshot snap;
	struct probe probe;
	struct vm *vm;
	char dir[256];
	size_t len;

	(void)state;
	snaptest__path(dir, sizeof(dir), "plain");
	snaptest__start_paused(&cfg, &p, &vm, &probe);
	assert_int_equal(snapshot__save(vm, &probe, dir, 0, &st), 0);
	vm__destroy(vm);
	assert_int_equal(snapshot__open(&snap, dir), 0);
	assert_int_equal(snap.cfg.irqchip, 0);
	assert_null(snap__find(&snap.r, SNAP_VM_PIT, 0, &len));
	assert_null(snap__find(&snap.r, SNAP_VCPU_LAPIC, 0, &len));
	snapshot__close(&snap);
}

/* Replaces dir/state with what `w` built, and frees it. */
static void write_state(const char *dir, struct snap_writer *w)
{
	char file[300];
	FILE *f;

	snprintf(file, sizeof(file), "%s/state", dir);
	f = fopen(file, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(w->buf, 1, w->len, f), w->len);
	fclose(f);
	free(w->buf);
}

/* How rewrite() changes one section: drop it, or a new length. */
struct edit {
	uint32_t type, index;
	long len; /* -1: drop; otherwise keep this many bytes (zero-padded) */
	uint32_t irqchip; /* for vm.config: the value to store, if set_irqchip */
	bool set_irqchip;
};

/* Rewrites tmpdir/name/state with one section edited (CRC recomputed), so
 * only the snapshot's own checks can object. */
static void rewrite(const char *name, const struct edit *e)
{
	char dir[256];
	struct snapshot snap;
	struct snap_writer w;
	struct snap_section sec;
	const void *payload;
	size_t cursor = 0;
	/* Sections are as large as the host's state: XSAVE alone is 8 KiB
	 * or more where the CPU has AVX-512 or AMX. */
	size_t size = (size_t)1 << 20;
	uint8_t *buf = malloc(size);

	assert_non_null(buf);
	snaptest__path(dir, sizeof(dir), name);
	assert_int_equal(snapshot__open(&snap, dir), 0);
	snap__begin(&w, &snap.r.hdr);
	while (snap__next(&snap.r, &cursor, &sec, &payload)) {
		size_t len = (size_t)sec.len;

		assert_true(len <= size);
		memset(buf, 0, size);
		memcpy(buf, payload, len);
		if (sec.type == e->type && sec.index == e->index) {
			if (e->len < 0)
				continue;
			len = (size_t)e->len;
			if (e->set_irqchip)
				memcpy(buf + offsetof(struct snap_vm_config,
						      irqchip),
				       &e->irqchip, sizeof(e->irqchip));
		}
		snap__add(&w, sec.type, sec.index, buf, len);
	}
	free(buf);
	assert_int_equal(snap__finish(&w), 0);
	snapshot__close(&snap);
	write_state(dir, &w);
}

static void expect_refused(const char *name, const char *what)
{
	struct snapshot snap;
	char dir[256];

	snaptest__path(dir, sizeof(dir), name);
	assert_int_equal(snapshot__open(&snap, dir), -EINVAL);
	if (!strstr(err__last(), what))
		fail_msg("message '%s' (want '%s')", err__last(), what);
}

static void test_mismatched_state_refused(void **state)
{
	static const struct {
		const char *name;
		struct edit e;
		const char *what;
	} cases[] = {
		{ "no-ioapic", { .type = SNAP_VM_IOAPIC, .len = -1 },
		  "has an in-kernel irqchip but it lacks section vm.ioapic" },
		{ "short-pit", { .type = SNAP_VM_PIT, .len = 100 },
		  "section vm.pit has 100 bytes, expected 112" },
		{ "short-lapic",
		  { .type = SNAP_VCPU_LAPIC, .index = 1, .len = 1000 },
		  "section vcpu.lapic for vCPU 1 has 1000 bytes, expected "
		  "1024" },
		{ "no-lapic", { .type = SNAP_VCPU_LAPIC, .len = -1 },
		  "lacks section vcpu.lapic for vCPU 0" },
		{ "cfg-off",
		  { .type = SNAP_VM_CONFIG, .len = sizeof(struct snap_vm_config),
		    .irqchip = 0, .set_irqchip = true },
		  "holds section vm.pic_master but its VM config has no "
		  "in-kernel irqchip" },
		{ "cfg-bad",
		  { .type = SNAP_VM_CONFIG, .len = sizeof(struct snap_vm_config),
		    .irqchip = 2, .set_irqchip = true },
		  "irqchip 2 (0 or 1)" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		take(cases[i].name, 2, false);
		rewrite(cases[i].name, &cases[i].e);
		expect_refused(cases[i].name, cases[i].what);
	}
}

/* Appends device sections named `names` (indexes 0, 1, ...; all with
 * `payload`) to dir's state. */
static void append_devices(const char *dir, const char *const *names,
			   const void *payload, size_t len)
{
	struct snapshot snap;
	struct snap_writer w;
	struct snap_section sec;
	const void *p;
	size_t cursor = 0;

	assert_int_equal(snapshot__open(&snap, dir), 0);
	snap__begin(&w, &snap.r.hdr);
	while (snap__next(&snap.r, &cursor, &sec, &p))
		snap__add(&w, sec.type, sec.index, p, (size_t)sec.len);
	for (uint32_t i = 0; names[i]; i++)
		snap__add_device(&w, i, names[i], payload, len);
	assert_int_equal(snap__finish(&w), 0);
	snapshot__close(&snap);
	write_state(dir, &w);
}

static void test_device_sections_validated(void **state)
{
	/* A device section twice, or with a broken name, is refused when
	 * the snapshot is opened, before any VM exists. */
	static const uint32_t fake = 7;
	struct snapshot snap;
	char dir[256];

	(void)state;
	take("devs", 1, false);
	snaptest__path(dir, sizeof(dir), "devs");
	append_devices(dir, (const char *const[]){ "fake", "fake", NULL },
		       &fake, sizeof(fake));
	assert_int_equal(snapshot__open(&snap, dir), -EINVAL);
	assert_non_null(strstr(err__last(), "device 'fake' twice"));
}

static void test_device_set_mismatch_on_restore(void **state)
{
	/* The probe VM registers no devices: a snapshot with one is refused
	 * on restore, naming it, and nothing is left behind. */
	static const uint32_t fake = 7;
	struct snapshot snap;
	struct probe probe;
	struct vm *vm = NULL;
	char dir[256];

	(void)state;
	take("devset", 1, false);
	snaptest__path(dir, sizeof(dir), "devset");
	append_devices(dir, (const char *const[]){ "serial.com1", NULL },
		       &fake, sizeof(fake));
	assert_int_equal(snapshot__open(&snap, dir), 0);
	assert_int_equal(snapshot__restore(&kvm, &snap,
					   mem_restore__strategy("mmap"), NULL,
					   &vm, &probe), -EINVAL);
	assert_non_null(strstr(err__last(), "device 'serial.com1', which the "
					    "restored VM does not have"));
	assert_null(vm);
	snapshot__close(&snap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_irqchip_checksum),
		cmocka_unit_test(test_irqchip_round_trip),
		cmocka_unit_test(test_no_irqchip_no_sections),
		cmocka_unit_test(test_mismatched_state_refused),
		cmocka_unit_test(test_device_sections_validated),
		cmocka_unit_test(test_device_set_mismatch_on_restore),
	};

	return snaptest__main("snapstate", tests, NULL);
}
