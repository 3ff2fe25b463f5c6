/* Probe faults: guest and host fault counts, the guest fault handling
 * histogram, and the timeline ring buffer (drained by the aggregator),
 * from which per-thread counts are derived. Its row, its report section
 * and, with BPF, its loader. */
#include "probe_row.h"

#include <inttypes.h>
#include <string.h>

#define MAX_RATE_BINS 40

/* ---- report ---- */

struct rate {
	uint64_t first_ns, bin_ns;
	size_t nr;
	uint64_t guest[MAX_RATE_BINS], host[MAX_RATE_BINS];
};

/* Faults per bin, with the smallest 1-2-5 bin width (at least 100 us)
 * that fits the timeline's span into MAX_RATE_BINS bins. */
static bool fault_rate(const struct probes_report *r, struct rate *rate)
{
	static const uint64_t steps[] = { 1, 2, 5 };
	uint64_t span;

	memset(rate, 0, sizeof(*rate));
	if (!r->nr_timeline)
		return false;
	rate->first_ns = r->timeline[0].ts;
	span = r->timeline[r->nr_timeline - 1].ts - rate->first_ns + 1;
	for (uint64_t scale = 100000; !rate->bin_ns; scale *= 10)
		for (int i = 0; i < 3 && !rate->bin_ns; i++)
			if (span <= steps[i] * scale * MAX_RATE_BINS)
				rate->bin_ns = steps[i] * scale;
	rate->nr = (size_t)((span + rate->bin_ns - 1) / rate->bin_ns);
	for (size_t i = 0; i < r->nr_timeline; i++) {
		const struct faults_event *e = &r->timeline[i];
		size_t bin = (size_t)((e->ts - rate->first_ns) / rate->bin_ns);

		if (bin >= MAX_RATE_BINS)
			bin = MAX_RATE_BINS - 1;
		if (e->kind == FAULTS_GUEST)
			rate->guest[bin]++;
		else
			rate->host[bin]++;
	}
	return true;
}

static void print_rate(FILE *out, const struct probes_report *r,
		       const struct probe_report_opts *o)
{
	struct rate rate;
	char bin[24];

	if (!fault_rate(r, &rate))
		return;
	fprintf(out, "  guest faults per %s from +%.3f ms:",
		probes__fmt_ns(bin, sizeof(bin), (double)rate.bin_ns),
		(double)(rate.first_ns - o->origin_ns) / 1e6);
	for (size_t i = 0; i < rate.nr; i++)
		fprintf(out, " %" PRIu64, rate.guest[i]);
	fputc('\n', out);
}

static uint64_t guest_writes(const struct probes_report *r)
{
	uint64_t writes = 0;

	for (size_t i = 0; i < r->nr_threads; i++)
		writes += r->threads[i].guest_write_faults;
	return writes;
}

static void print_guest(FILE *out, const struct probes_report *r,
			const struct probe_report_opts *o)
{
	fputs("guest memory faults (kvmmmu:kvm_mmu_spte_requested): ", out);
	if (!probes__observed(r, PEV_MMU_SPTE_REQUESTED)) {
		fputs(PROBES_NOT_OBSERVED "\n", out);
	} else {
		fprintf(out, "%" PRIu64 " (%" PRIu64 " writes)",
			(uint64_t)r->events[PEV_MMU_SPTE_REQUESTED],
			guest_writes(r));
		if (probes__observed(r, PEV_MMU_GET_PAGE))
			fprintf(out, ", %" PRIu64 " shadow pages allocated",
				(uint64_t)r->events[PEV_MMU_GET_PAGE]);
		fputc('\n', out);
	}
	if (probes__observed(r, PEV_MMU_SET_SPTE) && r->guest_fault.count) {
		fputs("  handling (fault start to SPTE set): ", out);
		probes__print_hist(out, &r->guest_fault);
		fputc('\n', out);
	} else if (probes__observed(r, PEV_MMU_SPTE_REQUESTED) &&
		   !(r->set & PROBES_FAULTTIME)) {
		fputs("  (handling times: --probes=all or add faulttime)\n",
		      out);
	}
	if (probes__observed(r, PEV_MMU_SPTE_REQUESTED))
		print_rate(out, r, o);
}

static void print(FILE *out, const struct probes_report *r,
		  const struct probe_report_opts *o)
{
	print_guest(out, r, o);
	fputs("host page faults of the process: ", out);
	if (probes__observed(r, PEV_PAGE_FAULT_USER))
		fprintf(out, "%" PRIu64 " in user mode",
			(uint64_t)r->events[PEV_PAGE_FAULT_USER]);
	else
		fputs("user mode " PROBES_NOT_OBSERVED, out);
	if (probes__observed(r, PEV_PAGE_FAULT_KERNEL))
		fprintf(out, ", %" PRIu64 " in kernel mode\n",
			(uint64_t)r->events[PEV_PAGE_FAULT_KERNEL]);
	else
		fputs(", kernel mode " PROBES_NOT_OBSERVED "\n", out);
	if (r->timeline_lost)
		fprintf(out, "  (the fault timeline lost %" PRIu64
			" records)\n", r->timeline_lost);
}

static json_t *rate_json(const struct probes_report *r,
			 const struct probe_report_opts *o)
{
	json_t *guest = json_array(), *host = json_array();
	struct rate rate;

	if (!fault_rate(r, &rate)) {
		json_decref(guest);
		json_decref(host);
		return json_null();
	}
	for (size_t i = 0; i < rate.nr; i++) {
		json_array_append_new(guest, json_integer(
			(json_int_t)rate.guest[i]));
		json_array_append_new(host, json_integer(
			(json_int_t)rate.host[i]));
	}
	return json_pack("{s:I, s:I, s:o, s:o}", "start_ns",
			 (json_int_t)(rate.first_ns - o->origin_ns), "bin_ns",
			 (json_int_t)rate.bin_ns, "guest", guest, "host",
			 host);
}

static json_t *json(const struct probes_report *r,
		    const struct probe_report_opts *o)
{
	return json_pack(
		"{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I}", "guest",
		probes__count_json(r, PEV_MMU_SPTE_REQUESTED,
				   r->events[PEV_MMU_SPTE_REQUESTED]),
		"guest_writes", probes__count_json(r, PEV_MMU_SPTE_REQUESTED,
						   guest_writes(r)),
		"guest_handling", probes__hist_or_null(r, PEV_MMU_SET_SPTE,
						       &r->guest_fault),
		"shadow_pages", probes__count_json(r, PEV_MMU_GET_PAGE,
					r->events[PEV_MMU_GET_PAGE]),
		"host_user", probes__count_json(r, PEV_PAGE_FAULT_USER,
					r->events[PEV_PAGE_FAULT_USER]),
		"host_kernel", probes__count_json(r, PEV_PAGE_FAULT_KERNEL,
					r->events[PEV_PAGE_FAULT_KERNEL]),
		"rate", rate_json(r, o), "timeline_records",
		(json_int_t)r->nr_timeline, "timeline_lost",
		(json_int_t)r->timeline_lost);
}

/* ---- loader ---- */

#ifdef COLDSTART_PROBES_BPF
#include "loader.h"

#include "err.h"
#include "faults.skel.h"

#include <stdlib.h>

static void destroy(void *skel)
{
	faults_bpf__destroy(skel);
}

static int open_probe(struct loader *l, const struct probes_setup *s)
{
	struct faults_bpf *skel = faults_bpf__open();
	int ret;

	if (!skel)
		return loader__error(errno, "faults", "opening");
	l->skel = skel;
	l->destroy = destroy;
	skel->rodata->targ_tgid = (__u32)s->tgid;
	skel->rodata->timed = s->set & PROBES_FAULTTIME;
	if (!skel->rodata->timed) {
		bpf_program__set_autoload(skel->progs.faults_walk, false);
		bpf_program__set_autoload(skel->progs.faults_tdp, false);
		bpf_program__set_autoload(skel->progs.faults_set_spte, false);
	}
	ret = loader__load(l, skel->skeleton, skel->obj, s);
	if (ret < 0)
		return ret;
	l->skip_tid = &skel->bss->skip_tid;
	l->counts = &skel->bss->counts[0][0];
	l->ringbuf = skel->maps.events;
	return 0;
}

static int collect(const struct loader *l, struct probes_report *r)
{
	const struct faults_bpf *skel = l->skel;

	r->guest_fault_unmatched = skel->bss->unmatched;
	r->timeline_lost += skel->bss->lost;
	return 0;
}

/* Per-CPU map values are read as an array of 8-byte aligned slots. */
_Static_assert(sizeof(struct faults_stage) % 8 == 0,
	       "faults_stage must be a multiple of 8 bytes");

int faults__drain_stages(const struct loader *l,
			 void (*fn)(void *ctx, const struct faults_event *e),
			 void *ctx)
{
	const struct faults_bpf *skel = l->skel;
	int cpus = libbpf_num_possible_cpus();
	struct faults_stage *st;
	__u32 zero = 0;

	if (cpus <= 0)
		return err__sys(-cpus, "probe faults: counting CPUs");
	st = calloc((size_t)cpus, sizeof(*st));
	if (!st)
		return err__sys(ENOMEM, "probe faults: stages");
	if (bpf_map__lookup_elem(skel->maps.stage, &zero, sizeof(zero), st,
				 (size_t)cpus * sizeof(*st), 0)) {
		free(st);
		return err__sys(errno, "probe faults: reading stages");
	}
	for (int cpu = 0; cpu < cpus; cpu++)
		for (__u32 i = 0; i < st[cpu].n && i < FAULTS_BATCH; i++)
			fn(ctx, &st[cpu].ev[i]);
	free(st);
	return 0;
}

/* The user-space twin of bits__hist_add(). */
static void hist_add(struct probes_hist *h, __u64 ns)
{
	int slot = ns ? 63 - __builtin_clzll(ns) : 0;

	h->slots[slot < PROBES_HIST_SLOTS ? slot : PROBES_HIST_SLOTS - 1]++;
	h->count++;
	h->sum_ns += ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

/* Per-thread fault counts and the guest fault histogram, from the
 * timeline: the BPF side keeps neither, which would cost a hash lookup
 * and atomics per fault. */
int faults__threads_from_timeline(struct probes_report *r)
{
	for (size_t i = 0; i < r->nr_timeline; i++) {
		const struct faults_event *e = &r->timeline[i];
		struct probes_thread *t = loader__thread(r, e->tid);

		if (!t)
			return err__sys(ENOMEM, "probes: threads");
		if (e->kind == FAULTS_GUEST) {
			if (r->set & PROBES_FAULTTIME)
				hist_add(&r->guest_fault, e->dur_ns);
			t->guest_faults++;
			t->vcpu = true;
			if (e->flags & FAULTS_FLAG_WRITE)
				t->guest_write_faults++;
		} else if (e->kind == FAULTS_HOST_USER) {
			t->host_faults_user++;
		} else if (e->kind == FAULTS_HOST_KERNEL) {
			t->host_faults_kernel++;
		}
	}
	return 0;
}
#endif

const struct probe_row faults__row = {
	.name = "faults",
	.bit = PROBES_FAULTS,
	PROBE_ROW_LOADER(open_probe, collect),
	.print = print,
	.json_key = "faults",
	.json = json,
};
