/* Multi-function traces: the Azure Functions 2019 and 2021 public trace
 * formats read per function, as invocation counts per minute (what
 * `tune host` simulates), where arrivals.h flattens them into one
 * stream. Pure code: no KVM, no global state. */
#ifndef COLDSTART_ARRIVALS_FUNCTIONS_H
#define COLDSTART_ARRIVALS_FUNCTIONS_H

#include "arrivals.h"

#include <stddef.h>
#include <stdint.h>

/* At most this many functions x minutes cells are held (4 bytes each,
 * 128 MiB): more is refused with -E2BIG. */
#ifndef FN_TRACE_MAX_CELLS /* the fuzz build sets a smaller one */
#define FN_TRACE_MAX_CELLS (1u << 25)
#endif
/* The longest time line in minutes (a year); -E2BIG past it. */
#define FN_TRACE_MAX_MINUTES (366u * 1440u)
/* A function's name is at most this long (-EINVAL past it). */
#define FN_TRACE_MAX_NAME 255

struct fn_trace {
	size_t nfn, nmin;
	char **name;	 /* nfn names, owned */
	uint32_t *count; /* nfn x nmin: count[f * nmin + m] */
	uint64_t total;	 /* the sum of every count */
	enum arrivals_format format;
};

/* Reads an Azure 2019 trace (HashOwner,HashApp,HashFunction,Trigger,1,
 * ...,N: minute k's count in column "k") or an Azure 2021 trace
 * (app,func,end_timestamp,duration: one row per invocation, which
 * starts at end_timestamp - duration, seconds) at `path`. `format` is
 * ARRIVALS_AUTO (the header says which), ARRIVALS_AZURE2019 or
 * ARRIVALS_AZURE2021. A function is its HashFunction (2019) or func
 * (2021) name: rows of one name are summed. Azure 2021 minute 0 starts
 * at the earliest invocation. `max_minutes` > 0 keeps only the first
 * minutes. Functions keep the order of their first row.
 *
 * A plain CSV of timestamps, a malformed line, a count that is not a
 * whole number below 2^32 (or whose minute's sum is not), counts adding
 * up past 2^64, no invocation at all, more than FN_TRACE_MAX_CELLS
 * cells, FN_TRACE_MAX_MINUTES minutes or ARRIVALS_MAX rows of Azure
 * 2021, a name longer than FN_TRACE_MAX_NAME bytes, a file that is not a
 * regular file: an error (-EINVAL, -E2BIG, -ENOMEM) whose message names
 * the file (and the line). On success *out owns its arrays
 * (arrivals__functions_free); on error *out is empty. */
int arrivals__functions_read(const char *path, enum arrivals_format format,
			     size_t max_minutes, struct fn_trace *out);

void arrivals__functions_free(struct fn_trace *t);

#endif
