/* `coldstart run --probes`: the eBPF probes on the running process,
 * attached before the VM is created, with the breakdown split into the
 * run's phases. CLI layer: prints its own warnings. */
#ifndef COLDSTART_RUN_PROBES_H
#define COLDSTART_RUN_PROBES_H

#include "probe_report.h"

#include <jansson.h>
#include <stdbool.h>

struct run_probes {
	struct probes *probes;        /* attached, or NULL */
	struct probes_report *report; /* after run_probes__finish() */
	uint64_t attach_ns;           /* how long attaching took */
};

/* Attaches the probes in `set` (enum probes_set; 0 = none) to this
 * process; 0 or -errno (err__last). */
int run_probes__attach(unsigned int set, struct run_probes *rp);

/* Detaches and keeps the report; a failure is printed, not fatal. */
void run_probes__finish(struct run_probes *rp);

/* The breakdown after a run's human output; nothing when not enabled. */
void run_probes__print(const struct run_probes *rp, const struct timeline *tl);

/* Adds "probes" to a run's JSON document; nothing when not enabled. */
void run_probes__add_json(const struct run_probes *rp,
			  const struct timeline *tl, json_t *doc);

void run_probes__free(struct run_probes *rp);

#endif
