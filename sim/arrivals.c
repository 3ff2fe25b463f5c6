/* Arrival processes: the --arrivals text, Poisson and MMPP drawn from a
 * seeded generator, and the API (traces are read in arrivals_trace.c). */
#include "arrivals.h"
#include "arrivals_int.h"

#include "err.h"
#include "stats.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char spec_forms[] = ARRIVALS_SPEC_FORMS;

/* ---- the --arrivals text ---- */

static int parse_poisson(const char *text, const char *rest,
			 struct arrivals_spec *out)
{
	out->kind = ARRIVALS_POISSON;
	if (number_in(rest, strlen(rest), &out->rate) < 0 || out->rate <= 0)
		return err__set(EINVAL,
				"--arrivals '%s': rate '%s' is not a "
				"positive number of arrivals per second; %s",
				text, rest, spec_forms);
	return 0;
}

static int parse_mmpp(const char *text, const char *rest,
		      struct arrivals_spec *out)
{
	static const char *const what[] = { "R0", "R1", "D0", "D1" };
	double *dst[] = { &out->mmpp_rate[0], &out->mmpp_rate[1],
			  &out->mmpp_dwell[0], &out->mmpp_dwell[1] };
	const char *p = rest;

	out->kind = ARRIVALS_MMPP;
	for (int i = 0; i < 4; i++) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);

		if ((i < 3 && !comma) || (i == 3 && comma))
			return err__set(
				EINVAL,
				"--arrivals '%s': mmpp takes "
				"four numbers R0,R1,D0,D1 (rates per "
				"second, mean dwell times: seconds or "
				"500ms, 2m...); %s",
				text, spec_forms);
		/* A silent state (rate 0) makes an on/off process. */
		if ((i < 2 ? number_in(p, len, dst[i])
			   : arrivals__dwell_in(p, len, dst[i])) < 0 || *dst[i] < 0 ||
		    (i >= 2 && *dst[i] == 0))
			return err__set(EINVAL,
					"--arrivals '%s': %s '%.*s' is "
					"not a %s; %s",
					text, what[i], (int)len, p,
					i < 2 ? "non-negative number"
					      : "positive duration",
					spec_forms);
		p += len + 1;
	}
	if (out->mmpp_rate[0] == 0 && out->mmpp_rate[1] == 0)
		return err__set(EINVAL,
				"--arrivals '%s': mmpp rates R0 and R1 "
				"are both 0; %s",
				text, spec_forms);
	return 0;
}

static int trace_option(const char *text, const char *opt,
			struct arrivals_spec *out, bool *seen_format)
{
	if (!strncmp(opt, "format=", 7)) {
		for (unsigned int f = ARRIVALS_CSV; f <= ARRIVALS_AZURE2021;
		     f++)
			if (!strcmp(opt + 7, arrivals__format_name(f)) &&
			    !*seen_format) {
				out->format = f;
				*seen_format = true;
				return 0;
			}
		return err__set(EINVAL,
				"--arrivals '%s': '%s' is not one of "
				"format=csv|azure2019|azure2021 (or is given "
				"twice); %s",
				text, opt, spec_forms);
	}
	if (!opt[7] || strlen(opt + 7) >= sizeof(out->column) || out->column[0])
		return err__set(EINVAL,
				"--arrivals '%s': '%s' needs a column "
				"name of 1 to %zu characters, once; %s",
				text, opt, sizeof(out->column) - 1, spec_forms);
	strcpy(out->column, opt + 7);
	return 0;
}

/* Options are peeled off the end so that FILE itself may hold commas. */
static int parse_trace(const char *text, const char *rest,
		       struct arrivals_spec *out)
{
	size_t len = strlen(rest);
	bool seen_format = false;
	const char *comma;
	int err;

	out->kind = ARRIVALS_TRACE;
	if (len >= sizeof(out->path))
		return err__set(EINVAL,
				"--arrivals: trace path is longer than "
				"%zu bytes",
				sizeof(out->path) - 1);
	memcpy(out->path, rest, len + 1);
	while ((comma = strrchr(out->path, ','))) {
		if (strncmp(comma + 1, "format=", 7) &&
		    strncmp(comma + 1, "column=", 7))
			break;
		err = trace_option(text, comma + 1, out, &seen_format);
		if (err < 0)
			return err;
		out->path[comma - out->path] = '\0';
	}
	if (!out->path[0])
		return err__set(EINVAL,
				"--arrivals '%s': trace needs a FILE; %s", text,
				spec_forms);
	if (out->column[0] && out->format == ARRIVALS_AUTO)
		out->format = ARRIVALS_CSV;
	if (out->column[0] && out->format != ARRIVALS_CSV)
		return err__set(EINVAL,
				"--arrivals '%s': column= applies to "
				"format=csv only; %s",
				text, spec_forms);
	return 0;
}

int arrivals__parse_spec(const char *text, struct arrivals_spec *out)
{
	memset(out, 0, sizeof(*out));
	if (!strncmp(text, "poisson:", 8))
		return parse_poisson(text, text + 8, out);
	if (!strncmp(text, "mmpp:", 5))
		return parse_mmpp(text, text + 5, out);
	if (!strncmp(text, "trace:", 6))
		return parse_trace(text, text + 6, out);
	if (!strncmp(text, "batch:", 6))
		return arrivals__parse_batch(text, text + 6, out);
	return err__set(EINVAL,
			"--arrivals: unknown arrival process '%.*s'; %s",
			(int)strcspn(text, ":"), text, spec_forms);
}

/* ---- drawn processes ---- */

/* Exponential with the given mean; 1 - U lies in (0, 1], so log is finite. */
static double draw_exp(struct stats_rng *rng, double mean)
{
	return -mean * log1p(-stats__rng_uniform(rng));
}

static int draw_poisson(const struct arrivals_spec *spec, double duration,
			struct stats_rng *rng, struct series *s)
{
	double t = draw_exp(rng, 1 / spec->rate);
	int err;

	for (; t < duration; t += draw_exp(rng, 1 / spec->rate)) {
		err = series_push(s, t);
		if (err < 0)
			return err;
	}
	return 0;
}

/* Exponential clocks are memoryless, so the arrival clock is simply
 * redrawn at each state change. */
static int draw_mmpp(const struct arrivals_spec *spec, double duration,
		     struct stats_rng *rng, struct series *s)
{
	int state = 0, err;
	double t = 0, change = draw_exp(rng, spec->mmpp_dwell[0]);

	while (t < duration) {
		double rate = spec->mmpp_rate[state];
		double next = rate > 0 ? t + draw_exp(rng, 1 / rate) : INFINITY;

		if (next < change) {
			if (next >= duration)
				break;
			err = series_push(s, next);
			if (err < 0)
				return err;
			t = next;
			continue;
		}
		t = change;
		state ^= 1;
		change = t + draw_exp(rng, spec->mmpp_dwell[state]);
	}
	return 0;
}

static const char *drawn_name(const struct arrivals_spec *spec)
{
	return spec->kind == ARRIVALS_POISSON ? "poisson" : "mmpp";
}

/* Refuses up front what would surely exceed ARRIVALS_MAX, or (MMPP) switch
 * state so often that drawing would take minutes. */
static int check_drawn(const struct arrivals_spec *spec, double duration)
{
	const double *r = spec->mmpp_rate, *d = spec->mmpp_dwell;
	double expect = spec->rate * duration;

	/* A spec filled by hand gets the checks arrivals__parse_spec makes. */
	if (spec->kind == ARRIVALS_POISSON
		    ? !(spec->rate > 0 && isfinite(spec->rate))
		    : !(r[0] >= 0 && r[1] >= 0 && r[0] + r[1] > 0 &&
			isfinite(r[0] + r[1]) && d[0] > 0 && d[1] > 0 &&
			isfinite(d[0] + d[1])))
		return err__set(EINVAL, "arrivals: invalid %s parameters",
				drawn_name(spec));
	if (!(duration > 0))
		return err__set(EINVAL, "arrivals: %s needs a duration > 0 s",
				drawn_name(spec));
	if (spec->kind == ARRIVALS_MMPP) {
		expect = duration * (r[0] * d[0] + r[1] * d[1]) / (d[0] + d[1]);
		if (duration / fmin(d[0], d[1]) > ARRIVALS_MAX)
			return err__set(E2BIG,
					"mmpp: about %.3g state changes "
					"in %g s; lengthen the dwell times",
					duration / fmin(d[0], d[1]), duration);
	}
	if (expect > ARRIVALS_MAX)
		return too_many(drawn_name(spec),
				"a shorter duration or a lower rate");
	return 0;
}

static int make_drawn(const struct arrivals_spec *spec, double duration,
		      uint64_t seed, struct arrivals *out)
{
	struct series s = { 0 };
	struct stats_rng rng;
	int err = check_drawn(spec, duration);

	if (err < 0)
		return err;
	stats__rng_seed(&rng, seed);
	err = spec->kind == ARRIVALS_POISSON
		      ? draw_poisson(spec, duration, &rng, &s)
		      : draw_mmpp(spec, duration, &rng, &s);
	if (err < 0) {
		free(s.t);
		if (err == -E2BIG)
			return too_many(drawn_name(spec), "a shorter duration "
							  "or a lower rate");
		return err__set(ENOMEM, "%s: out of memory", drawn_name(spec));
	}
	out->t = s.t;
	out->n = s.n;
	out->span_s = duration;
	if (spec->kind == ARRIVALS_POISSON)
		snprintf(out->desc, sizeof(out->desc),
			 "poisson %g/s, %g s, seed %" PRIu64, spec->rate,
			 duration, seed);
	else
		snprintf(out->desc, sizeof(out->desc),
			 "mmpp %g/s (mean %g s) <-> %g/s (mean %g s), %g s, "
			 "seed %" PRIu64,
			 spec->mmpp_rate[0], spec->mmpp_dwell[0],
			 spec->mmpp_rate[1], spec->mmpp_dwell[1], duration,
			 seed);
	return 0;
}

/* ---- the API ---- */

int arrivals__make(const struct arrivals_spec *spec, double duration_s,
		   double time_scale, uint64_t seed, struct arrivals *out)
{
	memset(out, 0, sizeof(*out));
	if (!(duration_s >= 0 && duration_s <= ARRIVALS_SPAN_MAX))
		return err__set(EINVAL,
				"arrivals: duration %g s is not a "
				"number from 0 to %g s",
				duration_s, ARRIVALS_SPAN_MAX);
	switch (spec->kind) {
	case ARRIVALS_POISSON:
	case ARRIVALS_MMPP:
		return make_drawn(spec, duration_s, seed, out);
	case ARRIVALS_TRACE:
		return arrivals__make_trace(spec, duration_s, time_scale, seed,
					    out);
	case ARRIVALS_BATCH:
		return arrivals__make_batch(spec, duration_s, seed, out);
	}
	return err__set(EINVAL, "arrivals: unknown kind %d", (int)spec->kind);
}

void arrivals__free(struct arrivals *a)
{
	free(a->t);
	a->t = NULL;
	a->n = 0;
}

double arrivals__mean_rate(const struct arrivals *a)
{
	double span = a->span_s > 0 ? a->span_s : a->n ? a->t[a->n - 1] : 0;

	double rate = span > 0 ? (double)a->n / span : 0;

	/* a span of a few denormals is no time either */
	return isfinite(rate) ? rate : 0;
}
