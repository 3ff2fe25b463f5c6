/* Result documents as Prometheus metrics: the text exposition format
 * (version 0.0.4) that node_exporter's textfile collector, the
 * Pushgateway and `promtool check metrics` read.
 *
 * Every document gives (BENCH is its "bench", sanitized):
 *   coldstart_BENCH_UNIT           summary of each series' raw samples:
 *                                  quantile 0.5, 0.9, 0.99, 0.999 (the
 *                                  document's summary), _sum, _count;
 *                                  UNIT seconds (ns, us, ms, s), bytes
 *                                  (kib, bytes) or the unit as named
 *   coldstart_BENCH_vms_per_second gauge: a series' "vms_per_s"
 *   coldstart_density_vms_per_gibibyte, coldstart_density_marginal_bytes
 *                                  gauges per density mode
 *   coldstart_pool_*               gauges from pool.json's "pool"
 *   coldstart_run_timestamp_seconds when the run's host data was taken
 * Labels: host, kernel, kvm_flavour, kvm_mode (native or emulated),
 * emulation (the emulated host's label), guest, guest_sha256, version,
 * commit, strategy (from the config), series and each of the series'
 * params (a name taken already gets a "param_" prefix). */
#ifndef COLDSTART_OPENMETRICS_H
#define COLDSTART_OPENMETRICS_H

#include "result.h"

#include <stdio.h>

/* The host a document was measured on (sysinfo's hostname), "" when it
 * does not say. */
const char *openmetrics__host(const struct result_doc *doc);

/* Writes the metrics of docs[0..n) to `out`; with `host` not NULL only
 * those of the documents measured on that host. paths[] name the
 * documents in messages. -EINVAL with a message when two documents give
 * the same metric and labels (the same run given twice) or one name
 * would be two kinds of metric, -ENOMEM. */
int openmetrics__write(FILE *out, const struct result_doc *docs,
		       const char *const *paths, size_t n, const char *host);

/* `s` as the inside of a quoted label value: backslash, double quote and
 * newline escaped; other control characters, which no scraper expects
 * in a value, as spaces. */
void openmetrics__escape(FILE *out, const char *s);

/* A label or metric name part from any text: lower case letters, digits
 * and '_' (everything else becomes '_'), never empty, never starting
 * with a digit. */
void openmetrics__name(char *buf, size_t len, const char *text);

/* `v` as the shortest text that reads back as the same double; NaN,
 * +Inf and -Inf as Prometheus spells them. */
void openmetrics__value(char *buf, size_t len, double v);

#endif
