/* Probe faulttime: each guest fault's handling time. It has no programs
 * of its own: it attaches faults.bpf.c's timed ones, and faults' report
 * section shows what they measured. */
#include "probe_row.h"

const struct probe_row faulttime__row = {
	.name = "faulttime",
	.bit = PROBES_FAULTTIME,
	.costly = true, /* a second program per guest fault */
	.needs = PROBES_FAULTS,
};
