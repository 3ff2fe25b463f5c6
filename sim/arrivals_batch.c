/* Batch arrivals (compound Poisson): requests that come in groups, as an
 * interactive service's do (a page load, a fan-out, a retry storm), with
 * a heavy-tailed group size: the "batch:" text and the drawn process. */
#include "arrivals.h"
#include "arrivals_int.h"

#include "err.h"
#include "stats.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest batch size, fixed or Pareto's bound. */
#define BATCH_SIZE_MAX 1000000
#define BATCH_PARETO_MAX 1000

static int bad(const char *text, const char *what)
{
	return err__set(EINVAL, "--arrivals '%s': %s; %s", text, what,
			ARRIVALS_SPEC_FORMS);
}

/* A whole number of 1 to BATCH_SIZE_MAX in [s, s + len). */
static int count_in(const char *s, size_t len, double *out)
{
	return number_in(s, len, out) < 0 || *out < 1 ||
			       *out > BATCH_SIZE_MAX || *out != floor(*out)
		       ? -EINVAL
		       : 0;
}

static int parse_size(const char *text, const char *s, size_t len,
		      struct arrivals_batch *b)
{
	const char *colon;

	if (len > 5 && !strncmp(s, "geom:", 5)) {
		b->size_kind = BATCH_GEOM;
		if (number_in(s + 5, len - 5, &b->size_a) < 0 ||
		    !(b->size_a >= 1 && b->size_a <= BATCH_SIZE_MAX))
			return bad(text, "geom:MEAN takes a mean batch size "
				   "from 1 to 1000000");
		return 0;
	}
	if (len > 7 && !strncmp(s, "pareto:", 7)) {
		b->size_kind = BATCH_PARETO;
		b->size_max = BATCH_PARETO_MAX;
		colon = memchr(s + 7, ':', len - 7);
		if (number_in(s + 7, (colon ? (size_t)(colon - s) : len) - 7,
			      &b->size_a) < 0 ||
		    !(b->size_a > 0 && b->size_a <= 100) ||
		    (colon && count_in(colon + 1, len - (size_t)(colon + 1 - s),
				       &b->size_max) < 0))
			return bad(text, "pareto:ALPHA[:MAX] takes an exponent "
				   "above 0 (at most 100) and a largest size "
				   "from 1 to 1000000 (default 1000)");
		return 0;
	}
	b->size_kind = BATCH_FIXED;
	if (count_in(s, len, &b->size_a) < 0)
		return bad(text, "the batch size is a whole number from 1 to "
			   "1000000, geom:MEAN or pareto:ALPHA[:MAX]");
	return 0;
}

int arrivals__parse_batch(const char *text, const char *rest,
			  struct arrivals_spec *out)
{
	struct arrivals_batch *b = &out->batch;
	const char *comma = strchr(rest, ','), *size, *within;
	size_t len;

	out->kind = ARRIVALS_BATCH;
	if (!comma || number_in(rest, (size_t)(comma - rest), &b->rate) < 0 ||
	    !(b->rate > 0))
		return bad(text, "batch takes RATE (batches per second, above "
			   "0), then the batch size");
	size = comma + 1;
	within = strstr(size, ",within=");
	len = within ? (size_t)(within - size) : strlen(size);
	if (within && (arrivals__dwell_in(within + 8, strlen(within + 8),
					  &b->within_s) < 0 ||
		       !(b->within_s >= 0 && b->within_s <= 86400)))
		return bad(text, "within= takes a duration from 0 to a day "
			   "(500ms, 2s, ...)");
	return parse_size(text, size, len, b);
}

/* The mean batch size. */
static double mean_size(const struct arrivals_batch *b)
{
	double sum = 0;

	if (b->size_kind != BATCH_PARETO)
		return b->size_a;
	for (double k = 1; k <= b->size_max; k++)
		sum += pow(k, -b->size_a);
	return sum;
}

static double draw_size(const struct arrivals_batch *b, struct stats_rng *rng)
{
	/* 1 - U lies in (0, 1] */
	double u = 1 - stats__rng_uniform(rng), k;

	switch (b->size_kind) {
	case BATCH_GEOM:
		/* geometric on 1, 2, ...: P(size > k) = (1 - 1 / MEAN)^k */
		if (b->size_a <= 1)
			return 1;
		return 1 + floor(log(u) / log1p(-1 / b->size_a));
	case BATCH_PARETO:
		k = floor(pow(u, -1 / b->size_a));
		return k < b->size_max ? k : b->size_max;
	case BATCH_FIXED:
		break;
	}
	return b->size_a;
}

static int cmp_time(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

static int draw_batches(const struct arrivals_batch *b, double duration,
			struct stats_rng *rng, struct series *s)
{
	for (double t = -log1p(-stats__rng_uniform(rng)) / b->rate;
	     t < duration; t += -log1p(-stats__rng_uniform(rng)) / b->rate) {
		double n = draw_size(b, rng);

		for (double i = 0; i < n; i++) {
			double at = t + b->within_s * stats__rng_uniform(rng);
			int err = at < duration ? series_push(s, at) : 0;

			if (err < 0)
				return err;
		}
	}
	if (b->within_s > 0 && s->n)
		qsort(s->t, s->n, sizeof(*s->t), cmp_time);
	return 0;
}

static void size_text(const struct arrivals_batch *b, char *buf, size_t len)
{
	if (b->size_kind == BATCH_GEOM)
		snprintf(buf, len, "geom:%g", b->size_a);
	else if (b->size_kind == BATCH_PARETO)
		snprintf(buf, len, "pareto:%g:%g", b->size_a, b->size_max);
	else
		snprintf(buf, len, "%g", b->size_a);
}

int arrivals__make_batch(const struct arrivals_spec *spec, double duration,
			 uint64_t seed, struct arrivals *out)
{
	const struct arrivals_batch *b = &spec->batch;
	struct series s = { 0 };
	struct stats_rng rng;
	char size[64];
	int err;

	if (!(b->rate > 0 && isfinite(b->rate) && b->size_a > 0 &&
	      b->within_s >= 0))
		return err__set(EINVAL, "arrivals: invalid batch parameters");
	if (!(duration > 0))
		return err__set(EINVAL, "arrivals: batch needs a duration > 0 s");
	if (b->rate * duration * mean_size(b) > ARRIVALS_MAX ||
	    b->rate * duration > ARRIVALS_MAX)
		return too_many("batch", "a shorter duration, a lower rate or "
				"smaller batches");
	stats__rng_seed(&rng, seed);
	err = draw_batches(b, duration, &rng, &s);
	if (err < 0) {
		free(s.t);
		if (err == -E2BIG)
			return too_many("batch", "a shorter duration, a lower "
					"rate or smaller batches");
		return err__set(ENOMEM, "batch: out of memory");
	}
	size_text(b, size, sizeof(size));
	out->t = s.t;
	out->n = s.n;
	out->span_s = duration;
	snprintf(out->desc, sizeof(out->desc),
		 "batch %g/s of %s (mean %.3g), within %g s, %g s, seed "
		 "%" PRIu64, b->rate, size, mean_size(b), b->within_s,
		 duration, seed);
	return 0;
}
