/* Renders what the eBPF probes saw: a human breakdown and a JSON object,
 * each probe's section from its row of the probe table (probe_row.h)
 * around what they share: tracepoints, threads and the fault timeline
 * split into the caller's phases (for example a run's setup, boot to
 * READY, workload and teardown). Anything whose tracepoint never fired
 * reads "not observed on this host" (JSON: null), never a measured zero. */
#ifndef COLDSTART_PROBE_REPORT_H
#define COLDSTART_PROBE_REPORT_H

#include "probe_row.h"
#include "timeline.h"

#include <jansson.h>
#include <stdio.h>

/* Phases of one run from its timeline: setup (KVM opened to first
 * KVM_RUN) or, for a snapshot restore, restore (restore start to first
 * KVM_RUN); boot (to every vCPU READY); workload (to DONE); teardown.
 * Phases whose ends did not happen are left out. */
void probe_report__run_phases(const struct timeline *tl,
			      struct probe_report_opts *o);

void probe_report__print(FILE *out, const struct probes_report *r,
			 const struct probe_report_opts *o);

/* A new JSON object (schema in docs/commands.md); NULL on -ENOMEM. */
json_t *probe_report__json(const struct probes_report *r,
			   const struct probe_report_opts *o);

/* The fault timeline as CSV (time_ms,kind,tid,addr,dur_us), times from
 * o->origin_ns, for plots. -errno on a write error. */
int probe_report__write_csv(FILE *out, const struct probes_report *r,
			    const struct probe_report_opts *o);

#endif
