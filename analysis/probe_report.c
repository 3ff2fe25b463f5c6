/* Human and JSON renderings of a probes report: the probes' sections
 * through the probe table, and what they share (tracepoints, threads,
 * per-phase fault statistics from the fault timeline). */
#include "probe_report.h"

#include "stats.h"
#include "units.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NOT_OBSERVED PROBES_NOT_OBSERVED

/* ---- phases from the timeline ---- */

struct phase_stats {
	uint64_t guest, host_user, host_kernel;
	double fault_ns; /* summed over threads */
	double p50_ns, p99_ns;
};

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

static void print_phases(FILE *out, const struct probes_report *r,
			 const struct probe_report_opts *o)
{
	bool guest = probes__observed(r, PEV_MMU_SPTE_REQUESTED);
	bool timed = probes__observed(r, PEV_MMU_SET_SPTE);

	/* Only probe faults fills the timeline. */
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
	for (unsigned int i = 0; i < PROBES_NR; i++) {
		if (r->set & probes__row(i)->bit)
			continue;
		fprintf(out, "%s%s", any ? ", " : "not probed (see --probes): ",
			probes__row(i)->name);
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
	for (unsigned int i = 0; i < PROBES_NR; i++) {
		const struct probe_row *row = probes__row(i);

		if ((r->set & row->bit) && row->print)
			row->print(out, r, o);
	}
	print_phases(out, r, o);
	print_unseen(out, r);
	if (r->threads_dropped)
		fprintf(out, "(per-thread tables were full: %" PRIu64
			" events are in the totals only)\n",
			r->threads_dropped);
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
			"count", probes__count_json(r, ev, r->events[ev]),
			"status", status));
	}
	return obj;
}

static json_t *thread_json(const struct probes_report *r,
			   const struct probes_thread *t)
{
	json_t *exits = json_object();

	for (int k = 0; k < KVMEXIT_NR_KINDS; k++)
		json_object_set_new(exits, probes__exit_kind_key(k),
				    probes__count_json(r,
					probes__exit_kind_event(k),
					t->exits[k]));
	return json_pack(
		"{s:I, s:b, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:o, s:o}",
		"tid", (json_int_t)t->tid, "vcpu", t->vcpu, "exits", exits,
		"guest_faults", probes__count_json(r, PEV_MMU_SPTE_REQUESTED,
						   t->guest_faults),
		"host_faults_user", probes__count_json(r, PEV_PAGE_FAULT_USER,
						       t->host_faults_user),
		"host_faults_kernel",
		probes__count_json(r, PEV_PAGE_FAULT_KERNEL,
				   t->host_faults_kernel),
		"kvm_runs", probes__count_json(r, PEV_SYS_EXIT_IOCTL,
					       t->kvm_runs),
		"kvm_run_ns", (json_int_t)t->kvm_run_ns, "sched_waits",
		(json_int_t)t->sched_waits, "sched_delay_ns",
		probes__count_json(r, PEV_SCHED_SWITCH, t->sched_delay_ns),
		"sched_delay_max_ns", probes__count_json(r, PEV_SCHED_SWITCH,
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
			"guest_faults", probes__count_json(r,
				PEV_MMU_SPTE_REQUESTED, s.guest),
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

	for (unsigned int i = 0; i < PROBES_NR; i++)
		if (set & probes__row(i)->bit)
			json_array_append_new(arr,
				json_string(probes__row(i)->name));
	return arr;
}

/* Each probe's member, in table order, whether it ran or not. */
static int add_sections(json_t *obj, const struct probes_report *r,
			const struct probe_report_opts *o)
{
	for (unsigned int i = 0; i < PROBES_NR; i++) {
		const struct probe_row *row = probes__row(i);

		if (row->json &&
		    json_object_set_new(obj, row->json_key, row->json(r, o)))
			return -ENOMEM;
	}
	return 0;
}

static json_t *threads_json(const struct probes_report *r)
{
	json_t *threads = json_array();

	for (size_t i = 0; i < r->nr_threads; i++)
		json_array_append_new(threads, thread_json(r, &r->threads[i]));
	return threads;
}

json_t *probe_report__json(const struct probes_report *r,
			   const struct probe_report_opts *o)
{
	json_t *obj = json_pack("{s:i, s:I, s:o, s:I, s:I, s:o}", "schema", 1,
			"tgid", (json_int_t)r->tgid,
			"probes", set_json(r->set),
			"start_ns", (json_int_t)(r->start_ns - o->origin_ns),
			"end_ns", (json_int_t)(r->end_ns - o->origin_ns),
			"tracepoints", tracepoints_json(r));
	if (!obj || add_sections(obj, r, o) < 0 ||
	    json_object_set_new(obj, "threads", threads_json(r)) ||
	    json_object_set_new(obj, "phases", phases_json(r, o)) ||
	    json_object_set_new(obj, "threads_dropped", json_integer(
		    (json_int_t)r->threads_dropped))) {
		json_decref(obj);
		return NULL;
	}
	return obj;
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
