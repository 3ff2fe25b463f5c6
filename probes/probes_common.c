/* What every build has of the probes besides their table: the events,
 * histogram arithmetic and the helpers of the report sections, which the
 * probes' own files call (the table, which names those files, is in
 * probes_table.c, so no two files call each other). */
#include "probe_row.h"

#include "err.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *shown, *tracepoint;
	unsigned int probe;
} events[PEV_COUNT] = {
#define PROBES_EV(id, probe, shown, tp) \
	[PEV_##id] = { shown, tp, PROBES_##probe },
#define PROBE_EVENTS(NAME) NAME##_EVENTS(PROBES_EV)
#include "probes_list.h"
#undef PROBE_EVENTS
#undef PROBES_EV
};

const char *probes__event_name(enum probes_ev ev)
{
	return ev < PEV_COUNT ? events[ev].shown : "?";
}

const char *probes__event_tracepoint(enum probes_ev ev)
{
	return ev < PEV_COUNT ? events[ev].tracepoint : "?";
}

unsigned int probes__event_probe(enum probes_ev ev)
{
	return ev < PEV_COUNT ? events[ev].probe : 0;
}

bool probes__observed(const struct probes_report *r, enum probes_ev ev)
{
	return ev < PEV_COUNT && r->attached[ev] && r->events[ev] > 0;
}

double probes__hist_percentile(const struct probes_hist *h, double p)
{
	double rank, below = 0, max = (double)h->max_ns;

	if (!h->count)
		return 0;
	if (h->count == 1)
		return (double)h->sum_ns;
	rank = p / 100.0 * (double)h->count;
	for (int i = 0; i < PROBES_HIST_SLOTS; i++) {
		double n = (double)h->slots[i];
		double lo = i ? (double)(1ull << i) : 0;
		double hi = (double)(1ull << (i + 1));

		if (max > 0 && hi > max + 1)
			hi = max + 1; /* the top slot ends at the maximum */
		if (n > 0 && below + n >= rank)
			return lo + (hi - lo) * (rank - below) / n;
		below += n;
	}
	return max;
}

void probes__report_free(struct probes_report *r)
{
	if (!r)
		return;
	for (int i = 0; i < PROBES_NR; i++)
		free(r->data[i]);
	free(r->threads);
	free(r->timeline);
	free(r);
}

const char *probes__fmt_ns(char *buf, size_t size, double ns)
{
	if (ns < 1e3)
		snprintf(buf, size, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(buf, size, "%.1f us", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, size, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, size, "%.3f s", ns / 1e9);
	return buf;
}

void probes__print_hist(FILE *out, const struct probes_hist *h)
{
	char a[24], b[24], c[24], d[24], e[24];

	fprintf(out, "%" PRIu64 ", total %s, mean %s, p50 %s, p99 %s, max %s",
		(uint64_t)h->count,
		probes__fmt_ns(a, sizeof(a), (double)h->sum_ns),
		probes__fmt_ns(b, sizeof(b), h->count ? (double)h->sum_ns /
					     (double)h->count : 0),
		probes__fmt_ns(c, sizeof(c), probes__hist_percentile(h, 50)),
		probes__fmt_ns(d, sizeof(d), probes__hist_percentile(h, 99)),
		probes__fmt_ns(e, sizeof(e), (double)h->max_ns));
}

json_t *probes__hist_json(const struct probes_hist *h)
{
	json_t *slots = json_array();

	for (int i = 0; i < PROBES_HIST_SLOTS; i++)
		if (h->slots[i])
			json_array_append_new(slots, json_pack(
				"{s:I, s:I}", "from_ns",
				(json_int_t)(i ? 1ull << i : 0), "count",
				(json_int_t)h->slots[i]));
	return json_pack("{s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:o}", "count",
			 (json_int_t)h->count, "sum_ns", (json_int_t)h->sum_ns,
			 "max_ns", (json_int_t)h->max_ns,
			 "mean_ns", h->count ? (double)h->sum_ns /
				    (double)h->count : 0.0,
			 "p50_ns", probes__hist_percentile(h, 50), "p90_ns",
			 probes__hist_percentile(h, 90), "p99_ns",
			 probes__hist_percentile(h, 99), "log2_ns", slots);
}

json_t *probes__count_json(const struct probes_report *r, enum probes_ev ev,
			   uint64_t n)
{
	return probes__observed(r, ev) ? json_integer((json_int_t)n)
				       : json_null();
}

json_t *probes__hist_or_null(const struct probes_report *r,
			     enum probes_ev ev, const struct probes_hist *h)
{
	return probes__observed(r, ev) ? probes__hist_json(h) : json_null();
}
