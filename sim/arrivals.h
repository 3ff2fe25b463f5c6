/* Arrival processes for open-loop benchmarks: when requests arrive, as an
 * ascending array of times. Poisson and two-state MMPP processes are drawn
 * from a seeded generator; traces are read from CSV files (a plain column of
 * timestamps, or the Azure Functions 2019 and 2021 public traces). Pure code:
 * no KVM, no global state; every random choice follows the seed. */
#ifndef COLDSTART_ARRIVALS_H
#define COLDSTART_ARRIVALS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* At most this many arrivals are held in memory (8 bytes each): every row
 * of a CSV or Azure 2021 trace, the arrivals inside the window of an Azure
 * 2019 trace or of a drawn process. More is refused with -E2BIG. */
#ifndef ARRIVALS_MAX /* the fuzz build sets a smaller one */
#define ARRIVALS_MAX 50000000
#endif

/* The longest time line, in seconds (some 300 years): a longer duration,
 * or a whole trace that spans more once scaled, is refused with -EINVAL.
 * Past about 10^15 s a double no longer resolves the simulator's 100 ms
 * ticks, and a tick that cannot advance the clock never ends. */
#define ARRIVALS_SPAN_MAX 1e10

/* The time scales a trace accepts (-EINVAL otherwise). */
#define ARRIVALS_SCALE_MIN 1e-6
#define ARRIVALS_SCALE_MAX 1e6

/* The --arrivals text, parsed. */
struct arrivals_spec {
	enum arrivals_kind {
		ARRIVALS_POISSON,
		ARRIVALS_MMPP,
		ARRIVALS_TRACE,
		ARRIVALS_BATCH,
	} kind;
	double rate;	      /* poisson: arrivals per second */
	double mmpp_rate[2];  /* mmpp: rate in state 0 and state 1 (/s) */
	double mmpp_dwell[2]; /* mmpp: mean time in each state (s) */
	/* batch: batches per second, each of a size drawn from size_kind
	 * (size_a: N, the mean, or the Pareto exponent; size_max: Pareto's
	 * bound), its members spread uniformly over within_s (0: at once) */
	struct arrivals_batch {
		double rate;
		enum { BATCH_FIXED, BATCH_GEOM, BATCH_PARETO } size_kind;
		double size_a, size_max, within_s;
	} batch;
	char path[PATH_MAX];  /* trace file */
	enum arrivals_format {
		ARRIVALS_AUTO,
		ARRIVALS_CSV,
		ARRIVALS_AZURE2019,
		ARRIVALS_AZURE2021,
	} format;
	/* csv: the timestamp column's header name; "" picks the column named
	 * "timestamp", else the first whose name contains "time" (both
	 * case-insensitive). */
	char column[64];
};

/* Parses "poisson:RATE" (RATE > 0 per second), "mmpp:R0,R1,D0,D1" (a
 * two-state Markov-modulated Poisson process: rates R0, R1 >= 0, not both 0,
 * mean dwell times D0, D1 > 0 s), "batch:RATE,SIZE[,within=DUR]" (compound
 * Poisson: RATE batches per second, SIZE a count N, "geom:MEAN" or the
 * heavy-tailed "pareto:ALPHA[:MAX]" with P(size >= k) = k^-ALPHA up to MAX,
 * default 1000; members at once, or spread uniformly over DUR) or "trace:FILE[,format=csv|azure2019|
 * azure2021][,column=NAME]" (options are peeled off the end, so FILE may
 * contain commas; column= implies csv). 0, or -EINVAL with a message naming
 * the bad part and the accepted forms. */
int arrivals__parse_spec(const char *text, struct arrivals_spec *out);

/* Name of a format ("auto", "csv", "azure2019", "azure2021"). */
const char *arrivals__format_name(enum arrivals_format format);

struct arrivals {
	double *t; /* seconds from the start, ascending; owned */
	size_t n;
	double span_s;	/* the time line's length: duration_s, or for a whole
			 * trace its last arrival (Azure 2019: its last
			 * minute's end), scaled */
	char desc[256]; /* one line for reports */
};

/* Arrivals in [0, duration_s) of the (scaled) time line; duration_s is at
 * most ARRIVALS_SPAN_MAX.
 *
 * poisson/mmpp: duration_s > 0 is required; time_scale is ignored. The MMPP
 * starts in state 0; dwell times are exponential with the given means.
 *
 * traces: duration_s 0 keeps the whole trace; time_scale (from
 * ARRIVALS_SCALE_MIN to ARRIVALS_SCALE_MAX) multiplies trace time, so 0.1
 * replays it ten times faster. CSV and Azure 2021 times
 * are made relative to the earliest arrival (which is at 0); rows need not
 * be sorted. CSV timestamps are seconds ("12.5") or UTC date-times
 * ("2023-11-16 18:17:03.9799600", 'T' separator and a final 'Z' accepted,
 * up to 9 fractional digits). Azure 2019 minute k (header "k") spans
 * [60 (k - 1), 60 k) s, its count spread uniformly at random. Azure 2021
 * arrivals are end_timestamp - duration. The format is detected from the
 * header unless spec->format says it. A malformed line, an empty trace or
 * window, a file that is not a regular file, a whole trace that spans more
 * than ARRIVALS_SPAN_MAX once scaled, or more than ARRIVALS_MAX arrivals
 * (-E2BIG; Azure 2019 counts that add up past 2^64 too, wherever they
 * are) is an error whose message names the file (and the line).
 *
 * The same inputs and seed give identical arrays. On success *out owns
 * the array (arrivals__free); on error *out is empty. 0 or -errno. */
int arrivals__make(const struct arrivals_spec *spec, double duration_s,
		   double time_scale, uint64_t seed, struct arrivals *out);

void arrivals__free(struct arrivals *a);

/* n / span_s (span_s, or else the last arrival's time); 0 when the span
 * is 0 or too short for the quotient to be finite. */
double arrivals__mean_rate(const struct arrivals *a);

#endif
