/* The result document every benchmark driver writes (schema 1), made,
 * written and read here: the skeleton with host and build metadata
 * (result__make), series of raw samples with their summaries and
 * warnings, writing NAME.json + NAME.md into --out DIR (result.c), and
 * parsing a stored one back (result_read.c; from files and directories:
 * result_set.h).
 *
 * Document layout (what `coldstart compare` and `coldstart report` read):
 *   {"schema": 1, "bench": NAME, "coldstart": {version, commit},
 *    "sysinfo": {...}, "config": {...},
 *    "guest": {"name": "probe", "bytes", "sha256"} or {"name": "linux",
 *              "kernel": {path, bytes, sha256}, "initrd": {...} or null},
 *    "series": [SERIES...],
 *    "warnings": [strings],
 *    "skipped": [{"what": part of the work, "why": reason}]: what the
 *               driver left out because this host cannot do it (cold
 *               cache on tmpfs, QEMU not installed, no huge pages); the
 *               rest ran and the driver succeeded,
 *    ...driver-specific top-level objects}
 * SERIES:
 *   {"name": unique, "unit": "ns" | "kib" | "vms_per_s" | "vms_per_gib",
 *    "better": "lower" | "higher", "params": {...},
 *    "samples_ns": [...] (unit "ns", integers) or "samples": [...],
 *    "summary": {n, min, max, mean, stddev, cv, p50, p90, p99, p99_9,
 *                ci95_median: [lo, hi]}, ...driver-specific fields}
 */
#ifndef COLDSTART_RESULT_H
#define COLDSTART_RESULT_H

#include "stats.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#define RESULT_SCHEMA 1

enum result_better { RESULT_LOWER, RESULT_HIGHER };

/* What only the measuring process knows about itself, gathered by its
 * caller (bench/result_new.c's result__new), so that this module needs
 * no VMM. result__make takes the reference to each. */
struct result_origin {
	json_t *sysinfo; /* sysinfo__collect's object; NULL: null */
	json_t *seccomp; /* {"mode", "installed": {role: n}, "install_ns"} */
	json_t *guest;   /* the guest it ran (layout above) */
};

/* A new document for bench `name`: schema, bench, coldstart (sysinfo's
 * copy of it), sysinfo, config, empty series, warnings and skipped, then
 * seccomp and guest, in this order. Takes the reference to `config` (an
 * object; NULL: empty) and to origin's objects. NULL with a message on
 * ENOMEM. */
json_t *result__make(const char *name, json_t *config,
		     const struct result_origin *origin);

/* Appends a series of `n` samples in run order (n may be 0: no summary)
 * and returns it (borrowed) for driver-specific fields, or NULL with a
 * message. Takes the reference to `params` (NULL: {}). Adds MAD-outlier
 * and first-run warnings about the series to the document; a first
 * sample is a first-run effect when it is a MAD outlier above the median
 * and more than 10 % above it. */
json_t *result__add_series(json_t *doc, const char *name, const char *unit,
			   enum result_better better, json_t *params,
			   const double *samples, size_t n);

/* The summary object of `samples` (see above); NULL when n == 0 or out of
 * memory. */
json_t *result__summary_json(const double *samples, size_t n);

/* Appends a formatted warning to doc's "warnings". */
void result__warn(json_t *doc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Records in doc's "skipped" that the part `what` of the work was left
 * out and why (formatted); an identical entry is not added twice. */
void result__skip(json_t *doc, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "Measured inside an emulated SVM host ..." when doc's sysinfo says it
 * was (result__sysinfo_emulated), else NULL. result__write puts it under the
 * title of every NAME.md; result__emit before the report on stdout. */
const char *result__emulated_note(const json_t *doc);

/* Removes doc's series whose samples are empty (a pool run with no
 * misses has an empty .miss series, which result__parse refuses). */
void result__drop_empty_series(json_t *doc);

/* The document, indented, on `out`. */
void result__print_json(FILE *out, const json_t *doc);

/* Writes dir/BENCH.json and dir/BENCH.md (md: the Markdown text, may be
 * NULL) after creating dir; 0 or -errno with a message. */
int result__write(const json_t *doc, const char *dir, const char *md);

/* After the report (or, with `json`, the document) went to stdout: when
 * dir is not NULL, result__write() and, without `json`, "results written
 * to DIR/". 0 or -errno with a message. */
int result__save(const json_t *doc, bool json, const char *dir,
		 const char *md);

/* Writes the Markdown report of `doc` on `out`. */
typedef void result_report_fn(FILE *out, const json_t *doc);

/* What every driver does at the end: the report (or, with `json`, the
 * document) on stdout, and dir/BENCH.json + dir/BENCH.md when dir is not
 * NULL. 0 or -errno with a message. */
int result__emit(const json_t *doc, bool json, const char *dir,
		 result_report_fn *report);

/* A Markdown table of every series: name, params, n, median, p90, p99,
 * min, max, CI of the median (ns shown in ms). */
void result__md_series(FILE *out, const json_t *doc);

/* The document's "skipped" entries (nothing when none): a Markdown list
 * under a "Left out" heading, or with !md one "left out: WHAT: WHY" line
 * each. */
void result__print_skipped(FILE *out, const json_t *doc, bool md);

/* The document's warnings as a Markdown list under a "Warnings" heading
 * (nothing when none); see result__md_warning_list. */
void result__md_warnings(FILE *out, const json_t *doc);

/* The list items alone: every warning, except that the MAD-outlier
 * warnings collapse into one line with their count and the first few
 * series names (the document keeps each of them). */
void result__md_warning_list(FILE *out, const json_t *doc);

/* The same, but outlier warnings about series of fewer than min_n
 * samples only counted in one line saying they were not judged. */
void result__md_warning_list_judged(FILE *out, const json_t *doc,
				    size_t min_n);

/* The unit a time of about `ns` nanoseconds reads best in: "ns" below
 * 1 us, "us" below 1 ms, else "ms"; *div is ns per that unit. */
const char *result__ns_unit(double ns, double *div);

/* The unit values of about `ref` (in the document's `unit`) read best
 * in: ns as "ns", "us" or "ms" (result__ns_unit); kib as "KiB" below
 * 10 MiB, "MiB" below 10 GiB, else "GiB"; vms_per_s as "VMs/s",
 * vms_per_gib as "VMs/GiB"; other units as they are. *div converts a
 * value into it, *prec is the decimals to show (ns: 1 in ns, 2 in us, 3
 * in ms; others about four significant digits at ref). Never e-notation:
 * a table column takes one unit from its reference (e.g. the median of
 * its medians) for every row. */
const char *result__unit_for(const char *unit, double ref, double *div,
			     int *prec);

/* `v` (in `unit`) as text with its unit, in the unit result__unit_for
 * picks for `scale` (e.g. a median), so values shown together share a
 * unit: "48.4 ns", "813.83 us", "1.138 ms", "5808 KiB", "4.37 MiB",
 * "640 VMs/s". */
void result__value_text(char *buf, size_t size, const char *unit, double v,
			double scale);

/* A series' summary value (e.g. "p50"), 0 when absent. */
double result__stat(const json_t *series, const char *key);

/* A rate (VMs/s) as text: whole numbers from 100 up, three significant
 * digits below (a Linux guest in the emulated host makes 0.149 VMs/s,
 * which "%.0f" printed as 0). Returns buf. */
const char *result__rate_text(char *buf, size_t size, double per_s);

/* ---- reading (result_read.c) ---- */

/* One series of a result document: raw samples in run order. */
struct result_series {
	const char *name; /* borrowed from the document */
	const char *unit; /* "unit", "ns" when absent */
	double *samples;  /* owned */
	size_t n;
	bool higher_is_better; /* "better": "higher"; times are lower */
};

/* A parsed result document: any bench whose JSON has "schema", "bench",
 * "config", "sysinfo" and "series"[] of {name, unit, samples_ns[] (or
 * samples[])}, as `coldstart bench lifecycle` writes. */
struct result_doc {
	json_t *root; /* a reference is held */
	const char *bench;
	const json_t *config;  /* JSON null when absent */
	const json_t *sysinfo; /* JSON null when absent */
	struct result_series *series;
	size_t nr_series;
	/* series' indexes sorted by name (result__parse builds it), so
	 * that result__find is a binary search; NULL: a linear scan */
	size_t *by_name;
};

/* Parses `root` (takes its own reference). -EINVAL with a message naming
 * the problem (wrong schema, no series, a sample that is not a number,
 * a series name used twice), -ENOMEM. */
int result__parse(json_t *root, struct result_doc *doc);
void result__free(struct result_doc *doc);

/* The same, except that a series may have no samples (n 0, samples
 * NULL), as a pool run without a single miss writes its miss series:
 * for readers that export what a document holds rather than test it. */
int result__parse_all(json_t *root, struct result_doc *doc);

/* The series named `name`, or NULL; O(log n) on a parsed document. */
const struct result_series *result__find(const struct result_doc *doc,
					 const char *name);

/* Whether a document's "bench" is one of the tuners' (tune-pool,
 * tune-restore, tune-host, tune-session): recommendations rather than
 * series to compare. */
bool result__is_tune(const char *bench);

/* The emulated-host label of a sysinfo object as documents store it
 * (kvm.emulated), or NULL for a native host; documents of sysinfo schema
 * 1 have no label and are native. */
const char *result__sysinfo_emulated(const json_t *sysinfo);

#endif
