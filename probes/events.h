/* The kernel tracepoints the probes count, one index each, in the order
 * of the probes (probes_list.h) and of each probe's NAME_EVENTS list in
 * its NAME.h. Shared by the BPF programs (which count firings for the
 * target process) and the loaders (which record what attached), so it
 * holds only an enum. */
#ifndef COLDSTART_PROBES_EVENTS_H
#define COLDSTART_PROBES_EVENTS_H

#include "probes_list.h"

/* Each NAME_EVENTS(EV) in NAME.h lists EV(ID, PROBE, "shown as",
 * "tracepoint"): PEV_ID, counted for probe PROBES_PROBE, named in reports
 * as shown, attached where a program's section is tp_btf/tracepoint. */
enum probes_ev {
#define PROBES_EV(id, probe, shown, tp) PEV_##id,
#define PROBE_EVENTS(NAME) NAME##_EVENTS(PROBES_EV)
#include "probes_list.h"
#undef PROBE_EVENTS
#undef PROBES_EV
	PEV_COUNT
};

#endif
