/* What the arrival processes' files share (arrivals.c: the --arrivals text,
 * the drawn processes and the API; arrivals_trace.c: trace files): a
 * growing array of times, number parsing, the limit's message, and the
 * trace reader's entry point. Not for use outside the arrivals. */
#ifndef COLDSTART_ARRIVALS_INT_H
#define COLDSTART_ARRIVALS_INT_H

#include "arrivals.h"

#include "err.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A finite number spanning all of [s, s + len): no blanks, no suffix. */
static inline int number_in(const char *s, size_t len, double *out)
{
	char buf[64], *end;

	if (len == 0 || len >= sizeof(buf) || isspace((unsigned char)*s))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	*out = strtod(buf, &end);
	if (end != buf + len || !isfinite(*out))
		return -EINVAL;
	return 0;
}

/* A dwell time: a number of seconds, or with a unit as every other
 * duration ("500ms", "2m"; fractions too, "1.5s"). */
static inline int arrivals__dwell_in(const char *s, size_t len, double *out)
{
	static const struct {
		const char *unit;
		double s;
	} units[] = { { "ns", 1e-9 }, { "us", 1e-6 }, { "ms", 1e-3 },
		      { "s", 1 },     { "m", 60 },     { "h", 3600 } };

	for (size_t i = 0; i < sizeof(units) / sizeof(*units); i++) {
		size_t u = strlen(units[i].unit);

		if (len > u && !strncmp(s + len - u, units[i].unit, u) &&
		    !isalpha((unsigned char)s[len - u - 1])) {
			if (number_in(s, len - u, out) < 0)
				return -EINVAL;
			*out *= units[i].s;
			return 0;
		}
	}
	return number_in(s, len, out);
}

struct series {
	double *t;
	size_t n, cap;
};

/* -E2BIG past ARRIVALS_MAX, -ENOMEM; the caller words the message. */
static inline int series_push(struct series *s, double v)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4096;
		double *t;

		if (s->n >= ARRIVALS_MAX)
			return -E2BIG;
		if (cap > ARRIVALS_MAX)
			cap = ARRIVALS_MAX;
		t = realloc(s->t, cap * sizeof(*t));
		if (!t)
			return -ENOMEM;
		s->t = t;
		s->cap = cap;
	}
	s->t[s->n++] = v;
	return 0;
}

static inline int too_many(const char *what, const char *hint)
{
	return err__set(E2BIG,
			"%s: more than %d arrivals (the limit bounds "
			"memory); use %s",
			what, ARRIVALS_MAX, hint);
}

/* arrivals_trace.c: the arrivals of a trace file (spec->kind
 * ARRIVALS_TRACE), as arrivals__make. */
int arrivals__make_trace(const struct arrivals_spec *spec, double duration,
			 double scale, uint64_t seed, struct arrivals *out);

/* The accepted --arrivals forms, for messages. */
#define ARRIVALS_SPEC_FORMS                                                 \
	"accepted: poisson:RATE, mmpp:R0,R1,D0,D1, "                        \
	"trace:FILE[,format=csv|azure2019|azure2021][,column=NAME], "       \
	"batch:RATE,N|geom:MEAN|pareto:ALPHA[:MAX][,within=DUR]"

/* arrivals_batch.c: "batch:" + rest parsed into out (kind ARRIVALS_BATCH),
 * and a batch process's arrivals, as arrivals__make. */
int arrivals__parse_batch(const char *text, const char *rest,
			  struct arrivals_spec *out);
int arrivals__make_batch(const struct arrivals_spec *spec, double duration,
			 uint64_t seed, struct arrivals *out);

#endif
