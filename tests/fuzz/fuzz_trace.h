/* What the one-format trace targets share (fuzz_trace_csv.c,
 * fuzz_trace_azure2019.c, fuzz_trace_azure2021.c): the input is one byte
 * of options and then the file, read in the target's format only, so no
 * mutation is spent on the header's detection (fuzz_arrivals.c covers
 * it). Byte 0: bits 0-1 the window (the whole trace, 60 s, 1 h, the
 * longest time line), bits 2-3 the time scale (1, 0.1, the smallest, the
 * largest), bits 4-7 the seed. What is accepted must be what the
 * simulator takes (sim/poolsim_check.c): finite, ascending, from 0,
 * within the window and the limits; anything else aborts, a finding. */
#ifndef COLDSTART_FUZZ_TRACE_H
#define COLDSTART_FUZZ_TRACE_H

#include "fuzz.h"

#include "arrivals.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static char fuzz_trace_path[PATH_MAX];

static inline int fuzz_trace__init(const char *target)
{
	snprintf(fuzz_trace_path, sizeof(fuzz_trace_path), "%s/trace.csv",
		 fuzz__scratch(target));
	return 0;
}

/* poolsim_check.c's conditions, and the limits. */
static inline void fuzz_trace__check(const struct arrivals *a,
				     double window)
{
	if (!a->n || !a->t || a->n > ARRIVALS_MAX ||
	    !(a->span_s >= 0 && a->span_s <= ARRIVALS_SPAN_MAX) ||
	    (window > 0 && !(a->t[a->n - 1] < window)) ||
	    !isfinite(arrivals__mean_rate(a)))
		abort();
	for (size_t i = 0; i < a->n; i++)
		if (!(a->t[i] >= (i ? a->t[i - 1] : 0) && isfinite(a->t[i])))
			abort();
}

static inline int fuzz_trace__one(enum arrivals_format format,
				  const uint8_t *data, size_t size)
{
	static const double windows[] = { 0, 60, 3600, ARRIVALS_SPAN_MAX };
	static const double scales[] = { 1, 0.1, ARRIVALS_SCALE_MIN,
					 ARRIVALS_SCALE_MAX };
	struct arrivals_spec spec;
	struct arrivals a;
	double window;
	char text[PATH_MAX + 32];

	if (size < 1)
		return 0;
	fuzz__write(fuzz_trace_path, data + 1, size - 1);
	snprintf(text, sizeof(text), "trace:%s,format=%s", fuzz_trace_path,
		 arrivals__format_name(format));
	if (arrivals__parse_spec(text, &spec) < 0)
		abort(); /* the text is ours */
	window = windows[data[0] & 3];
	if (arrivals__make(&spec, window, scales[(data[0] >> 2) & 3],
			   data[0] >> 4, &a) == 0) {
		fuzz_trace__check(&a, window);
		arrivals__free(&a);
	}
	return 0;
}

#endif
