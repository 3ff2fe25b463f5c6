/* Probe kvmexit: VM exits by kind and thread, and the VMM's time to
 * handle exits to user space. Its row, its report section and, with BPF,
 * its loader. */
#include "probe_row.h"

#include <inttypes.h>
#include <string.h>

static const char *const kind_names[KVMEXIT_NR_KINDS] = {
	[KVMEXIT_PIO_IN] = "port I/O in",
	[KVMEXIT_PIO_OUT] = "port I/O out",
	[KVMEXIT_MMIO_READ] = "MMIO read",
	[KVMEXIT_MMIO_DONE] = "MMIO read completed",
	[KVMEXIT_MMIO_WRITE] = "MMIO write",
	[KVMEXIT_FAST_MMIO] = "fast MMIO",
	[KVMEXIT_USERSPACE] = "exit to user space",
	[KVMEXIT_USER_ERROR] = "KVM_RUN error (EINTR)",
	[KVMEXIT_HW] = "kvm_exit",
	[KVMEXIT_ENTRY] = "kvm_entry",
	[KVMEXIT_EMULATE] = "instruction emulated",
};

static const char *const kind_keys[KVMEXIT_NR_KINDS] = {
	[KVMEXIT_PIO_IN] = "pio_in",
	[KVMEXIT_PIO_OUT] = "pio_out",
	[KVMEXIT_MMIO_READ] = "mmio_read",
	[KVMEXIT_MMIO_DONE] = "mmio_read_done",
	[KVMEXIT_MMIO_WRITE] = "mmio_write",
	[KVMEXIT_FAST_MMIO] = "fast_mmio",
	[KVMEXIT_USERSPACE] = "userspace",
	[KVMEXIT_USER_ERROR] = "userspace_error",
	[KVMEXIT_HW] = "kvm_exit",
	[KVMEXIT_ENTRY] = "kvm_entry",
	[KVMEXIT_EMULATE] = "emulated",
};

/* KVM_EXIT_* values as in <linux/kvm.h>. */
static const char *const reason_names[] = {
	"UNKNOWN", "EXCEPTION", "IO", "HYPERCALL", "DEBUG", "HLT", "MMIO",
	"IRQ_WINDOW_OPEN", "SHUTDOWN", "FAIL_ENTRY", "INTR", "SET_TPR",
	"TPR_ACCESS", "S390_SIEIC", "S390_RESET", "DCR", "NMI",
	"INTERNAL_ERROR", "OSI", "PAPR_HCALL", "S390_UCONTROL", "WATCHDOG",
	"S390_TSCH", "EPR", "SYSTEM_EVENT", "S390_STSI", "IOAPIC_EOI",
	"HYPERV", "ARM_NISV", "X86_RDMSR", "X86_WRMSR", "DIRTY_RING_FULL",
	"AP_RESET_HOLD", "X86_BUS_LOCK", "XEN", "RISCV_SBI", "RISCV_CSR",
	"NOTIFY", "LOONGARCH_IOCSR", "MEMORY_FAULT", "TDX", "ARM_SEA",
};

const char *probes__exit_kind_name(enum kvmexit_kind kind)
{
	return kind < KVMEXIT_NR_KINDS ? kind_names[kind] : "?";
}

const char *probes__exit_kind_key(enum kvmexit_kind kind)
{
	return kind < KVMEXIT_NR_KINDS ? kind_keys[kind] : "?";
}

const char *probes__exit_reason_name(unsigned int reason)
{
	static __thread char buf[24];

	if (reason == KVMEXIT_REASON_ERROR)
		return "KVM_RUN error (EINTR)";
	if (reason < sizeof(reason_names) / sizeof(reason_names[0]))
		return reason_names[reason];
	snprintf(buf, sizeof(buf), "reason %u", reason);
	return buf;
}

enum probes_ev probes__exit_kind_event(enum kvmexit_kind kind)
{
	static const enum probes_ev ev[KVMEXIT_NR_KINDS] = {
		[KVMEXIT_PIO_IN] = PEV_KVM_PIO,
		[KVMEXIT_PIO_OUT] = PEV_KVM_PIO,
		[KVMEXIT_MMIO_READ] = PEV_KVM_MMIO,
		[KVMEXIT_MMIO_DONE] = PEV_KVM_MMIO,
		[KVMEXIT_MMIO_WRITE] = PEV_KVM_MMIO,
		[KVMEXIT_FAST_MMIO] = PEV_KVM_FAST_MMIO,
		[KVMEXIT_USERSPACE] = PEV_KVM_USERSPACE_EXIT,
		[KVMEXIT_USER_ERROR] = PEV_KVM_USERSPACE_EXIT,
		[KVMEXIT_HW] = PEV_KVM_EXIT,
		[KVMEXIT_ENTRY] = PEV_KVM_ENTRY,
		[KVMEXIT_EMULATE] = PEV_KVM_EMULATE_INSN,
	};

	return kind < KVMEXIT_NR_KINDS ? ev[kind] : PEV_COUNT;
}

/* ---- report ---- */

static void print_thread(FILE *out, const struct probes_thread *t)
{
	bool any = false;

	fprintf(out, "  vCPU thread %u:", t->tid);
	for (int k = 0; k < KVMEXIT_NR_KINDS; k++) {
		if (!t->exits[k])
			continue;
		fprintf(out, "%s %" PRIu64 " %s", any ? "," : "",
			t->exits[k], probes__exit_kind_name(k));
		any = true;
	}
	if (t->kvm_runs)
		fprintf(out, "%s %" PRIu64 " KVM_RUN (%.3f ms inside)",
			any ? "," : "", t->kvm_runs,
			(double)t->kvm_run_ns / 1e6);
	fprintf(out, "%s %" PRIu64 " guest faults\n", any ? ";" : "",
		t->guest_faults);
}

static void print_handling(FILE *out, const struct probes_report *r)
{
	fputs("  VMM handling of exits to user space (exit to next KVM_RUN), "
	      "by reason:\n", out);
	for (unsigned int i = 0; i < KVMEXIT_NR_REASONS; i++) {
		if (!r->exit_reasons[i])
			continue;
		fprintf(out, "    %-22s %" PRIu64 " exits; handled ",
			probes__exit_reason_name(i),
			(uint64_t)r->exit_reasons[i]);
		probes__print_hist(out, &r->exit_handling[i]);
		fputc('\n', out);
	}
}

static void print(FILE *out, const struct probes_report *r,
		  const struct probe_report_opts *o)
{
	bool any = false;

	(void)o;
	fputs("VM exits (kvm tracepoints):", out);
	for (int k = 0; k < KVMEXIT_NR_KINDS; k++) {
		if (!probes__observed(r, probes__exit_kind_event(k)) ||
		    !r->exits[k])
			continue;
		fprintf(out, "%s %" PRIu64 " %s", any ? "," : "",
			(uint64_t)r->exits[k], probes__exit_kind_name(k));
		any = true;
	}
	fprintf(out, "%s\n", any ? "" : " " PROBES_NOT_OBSERVED);
	for (size_t i = 0; i < r->nr_threads; i++)
		if (r->threads[i].vcpu)
			print_thread(out, &r->threads[i]);
	if (probes__observed(r, PEV_KVM_USERSPACE_EXIT))
		print_handling(out, r);
}

static json_t *json(const struct probes_report *r,
		    const struct probe_report_opts *o)
{
	json_t *kinds = json_object(), *reasons = json_object();

	(void)o;
	for (int k = 0; k < KVMEXIT_NR_KINDS; k++)
		json_object_set_new(kinds, kind_keys[k], probes__count_json(r,
				    probes__exit_kind_event(k), r->exits[k]));
	for (unsigned int i = 0; i < KVMEXIT_NR_REASONS; i++)
		if (r->exit_reasons[i])
			json_object_set_new(reasons,
				probes__exit_reason_name(i), json_pack(
				"{s:I, s:o}", "count",
				(json_int_t)r->exit_reasons[i], "handling",
				probes__hist_json(&r->exit_handling[i])));
	if (!probes__observed(r, PEV_KVM_USERSPACE_EXIT)) {
		json_decref(reasons);
		reasons = json_null();
	}
	return json_pack("{s:o, s:o}", "by_kind", kinds,
			 "userspace_by_reason", reasons);
}

/* ---- loader ---- */

#ifdef COLDSTART_PROBES_BPF
#include "loader.h"

#include "err.h"
#include "kvmexit.skel.h"

#include <linux/kvm.h>

static void destroy(void *skel)
{
	kvmexit_bpf__destroy(skel);
}

static int open_probe(struct loader *l, const struct probes_setup *s)
{
	struct kvmexit_bpf *skel = kvmexit_bpf__open();
	int ret;

	if (!skel)
		return loader__error(errno, "kvmexit", "opening");
	l->skel = skel;
	l->destroy = destroy;
	skel->rodata->targ_tgid = (__u32)s->tgid;
	skel->rodata->kvm_run_cmd = KVM_RUN;
	ret = loader__load(l, skel->skeleton, skel->obj, s);
	if (ret < 0)
		return ret;
	l->skip_tid = &skel->bss->skip_tid;
	l->counts = &skel->bss->counts[0][0];
	return 0;
}

static void add_thread(void *ctx, __u32 tid, const void *v)
{
	const struct kvmexit_thread *kt = v;
	struct probes_report *r = ctx;
	struct probes_thread *t = loader__thread(r, tid);

	if (!t)
		return;
	for (int k = 0; k < KVMEXIT_NR_KINDS; k++) {
		t->exits[k] += kt->kinds[k];
		if (kt->kinds[k] && k != KVMEXIT_EMULATE)
			t->vcpu = true;
	}
}

static int collect(const struct loader *l, struct probes_report *r)
{
	const struct kvmexit_bpf *skel = l->skel;
	struct kvmexit_thread value;

	memcpy(r->exits, skel->bss->kinds, sizeof(r->exits));
	memcpy(r->exit_reasons, skel->bss->reasons, sizeof(r->exit_reasons));
	r->threads_dropped += skel->bss->threads_full;
	for (__u32 i = 0; i < KVMEXIT_NR_REASONS; i++)
		if (bpf_map__lookup_elem(skel->maps.handling, &i, sizeof(i),
					 &r->exit_handling[i],
					 sizeof(r->exit_handling[i]), 0))
			return err__sys(errno, "probe kvmexit: reading "
					"handling times");
	return loader__for_each_thread(skel->maps.threads, &value,
				       sizeof(value), add_thread, r);
}
#endif

const struct probe_row kvmexit__row = {
	.name = "kvmexit",
	.bit = PROBES_KVMEXIT,
	PROBE_ROW_LOADER(open_probe, collect),
	.print = print,
	.json_key = "exits",
	.json = json,
};
