/* Human and JSON renderings of a probes report, with per-phase fault
 * statistics computed from the fault timeline. */
#include "probe_report.h"

#include "stats.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NOT_OBSERVED "not observed on this host"
#define MAX_RATE_BINS 40

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

static const char *const mmap_keys[MMAPLOCK_NR_HISTS] = {
	[MMAPLOCK_WAIT_READ] = "read_wait",
	[MMAPLOCK_WAIT_WRITE] = "write_wait",
	[MMAPLOCK_HOLD_WRITE] = "write_hold",
};

/* ---- phases and rates from the timeline ---- */

struct phase_stats {
	uint64_t guest, host_user, host_kernel;
	double fault_ns; /* summed over threads */
	double p50_ns, p99_ns;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void phase_stats(const struct probes_report *r,
			const struct report_phase *ph, struct phase_stats *s)
{
	double *dur = malloc((r->nr_timeline + 1) * sizeof(*dur));
	size_t n = 0;

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < r->nr_timeline; i++) {
		const struct faults_event *e = &r->timeline[i];

		if (e->ts < ph->start_ns || e->ts >= ph->end_ns)
			continue;
		if (e->kind == FAULTS_HOST_USER)
			s->host_user++;
		else if (e->kind == FAULTS_HOST_KERNEL)
			s->host_kernel++;
		else if (e->kind == FAULTS_GUEST) {
			s->guest++;
			s->fault_ns += e->dur_ns;
			if (dur)
				dur[n++] = e->dur_ns;
		}
	}
	if (dur && n) {
		qsort(dur, n, sizeof(*dur), cmp_double);
		s->p50_ns = stats__percentile_sorted(dur, n, 50);
		s->p99_ns = stats__percentile_sorted(dur, n, 99);
	}
	free(dur);
}

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

/* Appends [from, to) as a phase when both ends happened in order. */
static void add_phase(struct probe_report_opts *o, const char *name,
		      uint64_t from, uint64_t to)
{
	if (from && to && to >= from && o->nr_phases < PROBE_REPORT_MAX_PHASES)
		o->phases[o->nr_phases++] = (struct report_phase){ name, from,
								    to };
}

void probe_report__run_phases(const struct timeline *tl,
			      struct probe_report_opts *o)
{
	const uint64_t *t = tl->t;

	o->origin_ns = t[TL_PROCESS_START];
	o->nr_phases = 0;
	if (t[TL_RESTORE_START]) /* a snapshot restore: no boot */
		add_phase(o, "restore", t[TL_RESTORE_START], t[TL_FIRST_RUN]);
	else
		add_phase(o, "setup", t[TL_KVM_OPENED], t[TL_FIRST_RUN]);
	if (t[TL_GUEST_READY] && !t[TL_RESTORE_START]) {
		add_phase(o, "boot", t[TL_FIRST_RUN], t[TL_GUEST_READY]);
		add_phase(o, "workload", t[TL_GUEST_READY], t[TL_GUEST_DONE]);
	} else {
		add_phase(o, "workload", t[TL_FIRST_RUN], t[TL_GUEST_DONE]);
	}
	/* A run stopped at READY goes straight to teardown. */
	add_phase(o, "teardown", t[TL_GUEST_DONE] ? t[TL_GUEST_DONE]
						  : t[TL_GUEST_READY],
		  t[TL_TEARDOWN_DONE]);
}

/* ---- human output ---- */

static const char *fmt_ns(char *buf, size_t size, double ns)
{
	if (ns < 1e3)
		snprintf(buf, size, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(buf, size, "%.1f us", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, size, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, size, "%.3f s", ns / 1e9);
	return buf;
}

/* "n, total T, mean M, p50 P, p99 Q, max X" of a histogram. */
static void print_hist(FILE *out, const struct probes_hist *h)
{
	char a[24], b[24], c[24], d[24], e[24];

	fprintf(out, "%" PRIu64 ", total %s, mean %s, p50 %s, p99 %s, max %s",
		(uint64_t)h->count, fmt_ns(a, sizeof(a), (double)h->sum_ns),
		fmt_ns(b, sizeof(b), h->count ? (double)h->sum_ns /
				     (double)h->count : 0),
		fmt_ns(c, sizeof(c), probes__hist_percentile(h, 50)),
		fmt_ns(d, sizeof(d), probes__hist_percentile(h, 99)),
		fmt_ns(e, sizeof(e), (double)h->max_ns));
}

static void print_exits(FILE *out, const struct probes_report *r)
{
	bool any = false;

	fputs("VM exits (kvm tracepoints):", out);
	for (int k = 0; k < KVMEXIT_NR_KINDS; k++) {
		if (!probes__observed(r, probes__exit_kind_event(k)) ||
		    !r->exits[k])
			continue;
		fprintf(out, "%s %" PRIu64 " %s", any ? "," : "",
			(uint64_t)r->exits[k], probes__exit_kind_name(k));
		any = true;
	}
	fprintf(out, "%s\n", any ? "" : " " NOT_OBSERVED);
	for (size_t i = 0; i < r->nr_threads; i++) {
		const struct probes_thread *t = &r->threads[i];

		if (!t->vcpu)
			continue;
		fprintf(out, "  vCPU thread %u:", t->tid);
		any = false;
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
	if (!probes__observed(r, PEV_KVM_USERSPACE_EXIT))
		return;
	fputs("  VMM handling of exits to user space (exit to next KVM_RUN), "
	      "by reason:\n", out);
	for (unsigned int i = 0; i < KVMEXIT_NR_REASONS; i++) {
		if (!r->exit_reasons[i])
			continue;
		fprintf(out, "    %-22s %" PRIu64 " exits; handled ",
			probes__exit_reason_name(i),
			(uint64_t)r->exit_reasons[i]);
		print_hist(out, &r->exit_handling[i]);
		fputc('\n', out);
	}
}

static void print_rate(FILE *out, const struct probes_report *r,
		       const struct probe_report_opts *o)
{
	struct rate rate;
	char bin[24];

	if (!fault_rate(r, &rate))
		return;
	fprintf(out, "  guest faults per %s from +%.3f ms:",
		fmt_ns(bin, sizeof(bin), (double)rate.bin_ns),
		(double)(rate.first_ns - o->origin_ns) / 1e6);
	for (size_t i = 0; i < rate.nr; i++)
		fprintf(out, " %" PRIu64, rate.guest[i]);
	fputc('\n', out);
}

static void print_faults(FILE *out, const struct probes_report *r,
			 const struct probe_report_opts *o)
{
	uint64_t writes = 0;

	for (size_t i = 0; i < r->nr_threads; i++)
		writes += r->threads[i].guest_write_faults;
	fputs("guest memory faults (kvmmmu:kvm_mmu_spte_requested): ", out);
	if (!probes__observed(r, PEV_MMU_SPTE_REQUESTED)) {
		fputs(NOT_OBSERVED "\n", out);
	} else {
		fprintf(out, "%" PRIu64 " (%" PRIu64 " writes)",
			(uint64_t)r->events[PEV_MMU_SPTE_REQUESTED], writes);
		if (probes__observed(r, PEV_MMU_GET_PAGE))
			fprintf(out, ", %" PRIu64 " shadow pages allocated",
				(uint64_t)r->events[PEV_MMU_GET_PAGE]);
		fputc('\n', out);
	}
	if (probes__observed(r, PEV_MMU_SET_SPTE) && r->guest_fault.count) {
		fputs("  handling (fault start to SPTE set): ", out);
		print_hist(out, &r->guest_fault);
		fputc('\n', out);
	} else if (probes__observed(r, PEV_MMU_SPTE_REQUESTED) &&
		   !(r->set & PROBES_FAULTTIME)) {
		fputs("  (handling times: --probes=all or add faulttime)\n",
		      out);
	}
	if (probes__observed(r, PEV_MMU_SPTE_REQUESTED))
		print_rate(out, r, o);
	fputs("host page faults of the process: ", out);
	if (probes__observed(r, PEV_PAGE_FAULT_USER))
		fprintf(out, "%" PRIu64 " in user mode",
			(uint64_t)r->events[PEV_PAGE_FAULT_USER]);
	else
		fputs("user mode " NOT_OBSERVED, out);
	if (probes__observed(r, PEV_PAGE_FAULT_KERNEL))
		fprintf(out, ", %" PRIu64 " in kernel mode\n",
			(uint64_t)r->events[PEV_PAGE_FAULT_KERNEL]);
	else
		fputs(", kernel mode " NOT_OBSERVED "\n", out);
	if (r->timeline_lost)
		fprintf(out, "  (the fault timeline lost %" PRIu64
			" records)\n", r->timeline_lost);
}

static void print_ioctls(FILE *out, const struct probes_report *r)
{
	fputs("KVM ioctls (syscall entry to exit):", out);
	if (!probes__observed(r, PEV_SYS_EXIT_IOCTL)) {
		fputs(" " NOT_OBSERVED "\n", out);
		return;
	}
	fputc('\n', out);
	for (int i = 0; i < KVMIOCTL_NR; i++) {
		if (!r->ioctl[i].count)
			continue;
		fprintf(out, "  %-28s ", probes__ioctl_name(i));
		print_hist(out, &r->ioctl[i]);
		if (r->ioctl_errors[i])
			fprintf(out, "; %" PRIu64 " failed",
				(uint64_t)r->ioctl_errors[i]);
		fputc('\n', out);
	}
}

static void print_sched(FILE *out, const struct probes_report *r)
{
	uint64_t waits = 0, sum = 0, max = 0;
	unsigned int vcpus = 0;
	char a[24], b[24];

	fputs("scheduling delay (runnable to running): ", out);
	if (!probes__observed(r, PEV_SCHED_SWITCH) || !r->sched_delay.count) {
		fputs(NOT_OBSERVED "\n", out);
		return;
	}
	for (size_t i = 0; i < r->nr_threads; i++) {
		const struct probes_thread *t = &r->threads[i];

		if (!t->vcpu)
			continue;
		vcpus++;
		waits += t->sched_waits;
		sum += t->sched_delay_ns;
		if (t->sched_delay_max_ns > max)
			max = t->sched_delay_max_ns;
	}
	if (vcpus)
		fprintf(out, "%u vCPU threads %" PRIu64 " waits, total %s, "
			"max %s; ", vcpus, waits, fmt_ns(a, sizeof(a),
							 (double)sum),
			fmt_ns(b, sizeof(b), (double)max));
	else
		fputs("no vCPU thread seen; ", out);
	fputs("all threads ", out);
	print_hist(out, &r->sched_delay);
	fputc('\n', out);
}

static void print_mmap_lock(FILE *out, const struct probes_report *r)
{
	static const char *const what[MMAPLOCK_NR_HISTS] = {
		"read waits", "write waits", "write holds" };

	fputs("mmap_lock:", out);
	if (!probes__observed(r, PEV_MMAP_LOCK_ACQUIRED)) {
		fputs(" " NOT_OBSERVED "\n", out);
		return;
	}
	fputc('\n', out);
	for (int i = 0; i < MMAPLOCK_NR_HISTS; i++) {
		fprintf(out, "  %-12s ", what[i]);
		print_hist(out, &r->mmap_lock[i]);
		fputc('\n', out);
	}
	if (r->mmap_lock_failed)
		fprintf(out, "  %" PRIu64 " acquisitions failed (trylock or "
			"killed)\n", (uint64_t)r->mmap_lock_failed);
}

static void print_phases(FILE *out, const struct probes_report *r,
			 const struct probe_report_opts *o)
{
	bool guest = probes__observed(r, PEV_MMU_SPTE_REQUESTED);
	bool timed = probes__observed(r, PEV_MMU_SET_SPTE);

	if (!o->nr_phases || !r->nr_timeline)
		return;
	fprintf(out, "by phase:  %-10s %10s %10s %10s", "phase", "ms",
		"host flt", "guest flt");
	if (timed)
		fprintf(out, " %10s %10s %10s", "fault ms", "% of phase",
			"p99 us");
	fputc('\n', out);
	for (size_t i = 0; i < o->nr_phases; i++) {
		const struct report_phase *ph = &o->phases[i];
		double ms = (double)(ph->end_ns - ph->start_ns) / 1e6;
		struct phase_stats s;

		phase_stats(r, ph, &s);
		fprintf(out, "           %-10s %10.3f %10" PRIu64, ph->name, ms,
			s.host_user + s.host_kernel);
		if (guest)
			fprintf(out, " %10" PRIu64, s.guest);
		else
			fprintf(out, " %10s", "-");
		if (timed)
			fprintf(out, " %10.3f %9.1f%% %10.1f", s.fault_ns / 1e6,
				ms > 0 ? s.fault_ns / 1e6 / ms * 100 : 0,
				s.p99_ns / 1e3);
		fputc('\n', out);
	}
	if (timed)
		fputs("  (fault time is summed over vCPU threads, so it can "
		      "exceed 100 % with several vCPUs)\n", out);
}

static void print_unseen(FILE *out, const struct probes_report *r)
{
	bool any = false;

	for (int ev = 0; ev < PEV_COUNT; ev++) {
		if (!r->attached[ev] || r->events[ev])
			continue;
		fprintf(out, "%s%s", any ? ", " : NOT_OBSERVED ": ",
			probes__event_name(ev));
		any = true;
	}
	if (any)
		fputc('\n', out);
	any = false;
	for (int ev = 0; ev < PEV_COUNT; ev++) {
		if (r->attached[ev] || !r->probed[ev])
			continue;
		fprintf(out, "%s%s", any ? ", " : "not available on this "
			"kernel: ", probes__event_name(ev));
		any = true;
	}
	if (any)
		fputc('\n', out);
	any = false;
	for (unsigned int bit = 1; bit & PROBES_ALL; bit <<= 1) {
		if (r->set & bit)
			continue;
		fprintf(out, "%s%s", any ? ", " : "not probed (see --probes): ",
			probes__probe_name(bit));
		any = true;
	}
	if (any)
		fputc('\n', out);
}

void probe_report__print(FILE *out, const struct probes_report *r,
			 const struct probe_report_opts *o)
{
	int attached = 0, probed = 0;

	/* A probe's helper programs may attach to another probe's events
	 * (kvmexit watches sys_enter): count only the events asked for. */
	for (int ev = 0; ev < PEV_COUNT; ev++) {
		attached += r->attached[ev] && r->probed[ev];
		probed += r->probed[ev];
	}
	fprintf(out, "probes: process %u observed for %.3f ms (%d of %d "
		"tracepoints attached)\n", r->tgid,
		(double)(r->end_ns - r->start_ns) / 1e6, attached, probed);
	if (r->set & PROBES_KVMEXIT)
		print_exits(out, r);
	if (r->set & PROBES_FAULTS)
		print_faults(out, r, o);
	if (r->set & PROBES_KVMIOCTL)
		print_ioctls(out, r);
	if (r->set & PROBES_SCHEDLAT)
		print_sched(out, r);
	if (r->set & PROBES_MMAPLOCK)
		print_mmap_lock(out, r);
	if (r->set & PROBES_FAULTS)
		print_phases(out, r, o);
	print_unseen(out, r);
	if (r->threads_dropped)
		fprintf(out, "(per-thread tables were full: %" PRIu64
			" events are in the totals only)\n",
			r->threads_dropped);
}

/* ---- JSON ---- */

static json_t *hist_json(const struct probes_hist *h)
{
	json_t *slots = json_array();

	for (int i = 0; i < PROBES_HIST_SLOTS; i++)
		if (h->slots[i])
			json_array_append_new(slots, json_pack(
				"{s:I, s:I}", "from_ns",
				(json_int_t)(i ? 1ull << i : 0), "count",
				(json_int_t)h->slots[i]));
	return json_pack("{s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:o}", "count",
			 (json_int_t)h->count, "sum_ns", (json_int_t)h->sum_ns,
			 "max_ns", (json_int_t)h->max_ns,
			 "mean_ns", h->count ? (double)h->sum_ns /
				    (double)h->count : 0.0,
			 "p50_ns", probes__hist_percentile(h, 50), "p90_ns",
			 probes__hist_percentile(h, 90), "p99_ns",
			 probes__hist_percentile(h, 99), "log2_ns", slots);
}

/* A count, or null when its tracepoint never fired. */
static json_t *count_json(const struct probes_report *r, enum probes_ev ev,
			  uint64_t n)
{
	return probes__observed(r, ev) ? json_integer((json_int_t)n)
				       : json_null();
}

static json_t *hist_or_null(const struct probes_report *r,
			    enum probes_ev ev, const struct probes_hist *h)
{
	return probes__observed(r, ev) ? hist_json(h) : json_null();
}

static json_t *tracepoints_json(const struct probes_report *r)
{
	json_t *obj = json_object();

	for (int ev = 0; ev < PEV_COUNT; ev++) {
		const char *status = !r->probed[ev] ? "not probed"
				     : !r->attached[ev] ? "not available on "
							  "this kernel"
				     : r->events[ev] ? "observed"
						     : NOT_OBSERVED;

		json_object_set_new(obj, probes__event_name(ev), json_pack(
			"{s:b, s:o, s:s}", "attached", r->attached[ev],
			"count", count_json(r, ev, r->events[ev]), "status",
			status));
	}
	return obj;
}

static json_t *exits_json(const struct probes_report *r)
{
	json_t *kinds = json_object(), *reasons = json_object();

	for (int k = 0; k < KVMEXIT_NR_KINDS; k++)
		json_object_set_new(kinds, kind_keys[k], count_json(r,
				    probes__exit_kind_event(k), r->exits[k]));
	for (unsigned int i = 0; i < KVMEXIT_NR_REASONS; i++)
		if (r->exit_reasons[i])
			json_object_set_new(reasons,
				probes__exit_reason_name(i), json_pack(
				"{s:I, s:o}", "count",
				(json_int_t)r->exit_reasons[i], "handling",
				hist_json(&r->exit_handling[i])));
	if (!probes__observed(r, PEV_KVM_USERSPACE_EXIT)) {
		json_decref(reasons);
		reasons = json_null();
	}
	return json_pack("{s:o, s:o}", "by_kind", kinds,
			 "userspace_by_reason", reasons);
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

static json_t *faults_json(const struct probes_report *r,
			   const struct probe_report_opts *o)
{
	uint64_t writes = 0;

	for (size_t i = 0; i < r->nr_threads; i++)
		writes += r->threads[i].guest_write_faults;
	return json_pack(
		"{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I}", "guest",
		count_json(r, PEV_MMU_SPTE_REQUESTED,
			   r->events[PEV_MMU_SPTE_REQUESTED]),
		"guest_writes", count_json(r, PEV_MMU_SPTE_REQUESTED, writes),
		"guest_handling", hist_or_null(r, PEV_MMU_SET_SPTE,
					       &r->guest_fault),
		"shadow_pages", count_json(r, PEV_MMU_GET_PAGE,
					   r->events[PEV_MMU_GET_PAGE]),
		"host_user", count_json(r, PEV_PAGE_FAULT_USER,
					r->events[PEV_PAGE_FAULT_USER]),
		"host_kernel", count_json(r, PEV_PAGE_FAULT_KERNEL,
					  r->events[PEV_PAGE_FAULT_KERNEL]),
		"rate", rate_json(r, o), "timeline_records",
		(json_int_t)r->nr_timeline, "timeline_lost",
		(json_int_t)r->timeline_lost);
}

static json_t *ioctls_json(const struct probes_report *r)
{
	json_t *obj;

	if (!probes__observed(r, PEV_SYS_EXIT_IOCTL))
		return json_null();
	obj = json_object();
	for (int i = 0; i < KVMIOCTL_NR; i++) {
		json_t *h = hist_json(&r->ioctl[i]);

		json_object_set_new(h, "errors",
				    json_integer((json_int_t)r->ioctl_errors[i]));
		json_object_set_new(obj, probes__ioctl_name(i), h);
	}
	return obj;
}

static json_t *mmap_lock_json(const struct probes_report *r)
{
	json_t *obj;

	if (!probes__observed(r, PEV_MMAP_LOCK_ACQUIRED))
		return json_null();
	obj = json_pack("{s:I, s:I, s:I}", "read_acquired",
			(json_int_t)r->mmap_lock_acquired[0], "write_acquired",
			(json_int_t)r->mmap_lock_acquired[1], "failed",
			(json_int_t)r->mmap_lock_failed);
	for (int i = 0; i < MMAPLOCK_NR_HISTS; i++)
		json_object_set_new(obj, mmap_keys[i],
				    hist_json(&r->mmap_lock[i]));
	return obj;
}

static json_t *thread_json(const struct probes_report *r,
			   const struct probes_thread *t)
{
	json_t *exits = json_object();

	for (int k = 0; k < KVMEXIT_NR_KINDS; k++)
		json_object_set_new(exits, kind_keys[k], count_json(r,
				    probes__exit_kind_event(k), t->exits[k]));
	return json_pack(
		"{s:I, s:b, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:o, s:o}",
		"tid", (json_int_t)t->tid, "vcpu", t->vcpu, "exits",
		exits, "guest_faults", count_json(r, PEV_MMU_SPTE_REQUESTED,
						  t->guest_faults),
		"host_faults_user", count_json(r, PEV_PAGE_FAULT_USER,
					       t->host_faults_user),
		"host_faults_kernel", count_json(r, PEV_PAGE_FAULT_KERNEL,
						 t->host_faults_kernel),
		"kvm_runs", count_json(r, PEV_SYS_EXIT_IOCTL, t->kvm_runs),
		"kvm_run_ns", (json_int_t)t->kvm_run_ns, "sched_waits",
		(json_int_t)t->sched_waits, "sched_delay_ns",
		count_json(r, PEV_SCHED_SWITCH, t->sched_delay_ns),
		"sched_delay_max_ns", count_json(r, PEV_SCHED_SWITCH,
						 t->sched_delay_max_ns));
}

static json_t *phases_json(const struct probes_report *r,
			   const struct probe_report_opts *o)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < o->nr_phases; i++) {
		const struct report_phase *ph = &o->phases[i];
		double ns = (double)(ph->end_ns - ph->start_ns);
		bool guest = probes__observed(r, PEV_MMU_SET_SPTE);
		struct phase_stats s;

		/* guest: handling times exist (faulttime) */

		phase_stats(r, ph, &s);
		json_array_append_new(arr, json_pack(
			"{s:s, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:I}",
			"name", ph->name, "start_ns",
			(json_int_t)(ph->start_ns - o->origin_ns), "end_ns",
			(json_int_t)(ph->end_ns - o->origin_ns),
			"guest_faults", count_json(r, PEV_MMU_SPTE_REQUESTED,
						   s.guest),
			"guest_fault_ns", guest ? json_real(s.fault_ns)
						: json_null(),
			"guest_fault_share", guest && ns > 0
				? json_real(s.fault_ns / ns) : json_null(),
			"guest_fault_p50_ns", guest && s.guest
				? json_real(s.p50_ns) : json_null(),
			"guest_fault_p99_ns", guest && s.guest
				? json_real(s.p99_ns) : json_null(),
			"host_faults", (json_int_t)(s.host_user +
						    s.host_kernel)));
	}
	return arr;
}

static json_t *set_json(unsigned int set)
{
	json_t *arr = json_array();

	for (unsigned int bit = 1; bit & PROBES_ALL; bit <<= 1)
		if (set & bit)
			json_array_append_new(arr,
				json_string(probes__probe_name(bit)));
	return arr;
}

json_t *probe_report__json(const struct probes_report *r,
			   const struct probe_report_opts *o)
{
	json_t *threads = json_array();

	for (size_t i = 0; i < r->nr_threads; i++)
		json_array_append_new(threads, thread_json(r, &r->threads[i]));
	return json_pack(
		"{s:i, s:I, s:o, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
		"s:o, s:I}", "schema", 1, "tgid", (json_int_t)r->tgid,
		"probes", set_json(r->set),
		"start_ns", (json_int_t)(r->start_ns - o->origin_ns),
		"end_ns", (json_int_t)(r->end_ns - o->origin_ns),
		"tracepoints", tracepoints_json(r), "exits", exits_json(r),
		"faults", faults_json(r, o), "ioctls", ioctls_json(r),
		"sched_delay", hist_or_null(r, PEV_SCHED_SWITCH,
					    &r->sched_delay),
		"mmap_lock", mmap_lock_json(r), "threads", threads,
		"phases", phases_json(r, o), "threads_dropped",
		(json_int_t)r->threads_dropped);
}

int probe_report__write_csv(FILE *out, const struct probes_report *r,
			    const struct probe_report_opts *o)
{
	static const char *const kinds[] = { "?", "guest", "host_user",
					     "host_kernel" };

	fputs("time_ms,kind,tid,addr,dur_us\n", out);
	for (size_t i = 0; i < r->nr_timeline; i++) {
		const struct faults_event *e = &r->timeline[i];

		fprintf(out, "%.6f,%s,%u,0x%" PRIx64 ",%.3f\n",
			((double)e->ts - (double)o->origin_ns) / 1e6,
			kinds[e->kind < 4 ? e->kind : 0], e->tid,
			(uint64_t)e->addr, (double)e->dur_ns / 1e3);
	}
	return ferror(out) ? -EIO : 0;
}
