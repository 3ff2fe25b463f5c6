/* The probe table: one row per probe, defined in the probe's NAME.c and
 * listed through probes_list.h (from COLDSTART_PROBES). The option
 * parser, the help texts, the loading and the report all go through it,
 * and so does whatever writes a report section, with the helpers below.
 * Names and report sections exist in every build; the loader hooks only
 * where BPF was built (COLDSTART_PROBES_BPF). */
#ifndef COLDSTART_PROBES_PROBE_ROW_H
#define COLDSTART_PROBES_PROBE_ROW_H

#include "probes.h"

#include <jansson.h>
#include <stdio.h>

#define PROBES_NOT_OBSERVED "not observed on this host"

struct report_phase {
	const char *name;
	uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
};

#define PROBE_REPORT_MAX_PHASES 8

/* How the caller wants a report: its time origin and its phases (for
 * example a run's setup, boot to READY, workload and teardown). */
struct probe_report_opts {
	uint64_t origin_ns; /* times are printed relative to this */
	struct report_phase phases[PROBE_REPORT_MAX_PHASES];
	size_t nr_phases;
};

struct loader;
struct probes_setup;

struct probe_row {
	const char *name; /* in --probes, the help and the report */
	unsigned int bit; /* enum probes_set */
	bool costly;      /* left out of the set `default` */
	unsigned int needs; /* probes it runs inside (faulttime: faults) */

	/* Opens, configures and loads the probe into `l`; after the run,
	 * fills its part of the report from its maps. NULL for a probe
	 * that only changes another one's programs, and without BPF. */
	int (*open)(struct loader *l, const struct probes_setup *s);
	int (*collect)(const struct loader *l, struct probes_report *r);

	/* Its section of the text report, printed when it was in the set;
	 * and its member `json_key` of the JSON report, always present
	 * (null or nulls inside when not observed). Either may be NULL. */
	void (*print)(FILE *out, const struct probes_report *r,
		      const struct probe_report_opts *o);
	const char *json_key;
	json_t *(*json)(const struct probes_report *r,
			const struct probe_report_opts *o);
};

/* A row's loader hooks, kept only in a build with BPF: NAME.c compiles
 * its loader inside #ifdef COLDSTART_PROBES_BPF. */
#ifdef COLDSTART_PROBES_BPF
#define PROBE_ROW_LOADER(open_fn, collect_fn) \
	.open = open_fn, .collect = collect_fn
#else
#define PROBE_ROW_LOADER(open_fn, collect_fn) .open = NULL
#endif

/* Each probe's row, NAME__row in NAME.c. */
#define PROBE(name, NAME) extern const struct probe_row name##__row;
#include "probes_list.h"
#undef PROBE

/* The row of table index i (enum probes_index), i < PROBES_NR. */
const struct probe_row *probes__row(unsigned int i);

/* The tracepoint (tp_btf section name) behind an event. */
const char *probes__event_tracepoint(enum probes_ev ev);

/* ---- for report sections ---- */

/* "12 ns", "3.4 us", "5.67 ms", "1.234 s". */
const char *probes__fmt_ns(char *buf, size_t size, double ns);

/* "n, total T, mean M, p50 P, p99 Q, max X" of a histogram. */
void probes__print_hist(FILE *out, const struct probes_hist *h);

/* count, sum, max, mean, p50/p90/p99 and the non-empty log2 slots. */
json_t *probes__hist_json(const struct probes_hist *h);

/* A count, or null when its tracepoint never fired. */
json_t *probes__count_json(const struct probes_report *r, enum probes_ev ev,
			   uint64_t n);

/* A histogram, or null when its tracepoint never fired. */
json_t *probes__hist_or_null(const struct probes_report *r,
			     enum probes_ev ev, const struct probes_hist *h);

/* The JSON key of an exit kind ("pio_in", ...), for per-thread exits. */
const char *probes__exit_kind_key(enum kvmexit_kind kind);

#endif
