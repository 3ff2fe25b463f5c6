/* The tuners' documents (tune-pool.json, tune-restore.json,
 * tune-host.json, tune-session.json) in report.md:
 * they carry recommendations, not series to summarize, so the report
 * renders them apart from the drivers' documents. */
#ifndef COLDSTART_REPORT_TUNE_H
#define COLDSTART_REPORT_TUNE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* The tuner's own Markdown file name ("tune-pool.md"). */
const char *report_tune__file(const char *bench);

/* One line of report.md's summary for a tuner's document. */
void report_tune__summary(FILE *md, const json_t *doc);

/* Its "Tuning" subsection; `name` is the document's file name, and
 * `full_beside` says whether the tuner's own Markdown report lies beside
 * report.md (then the section points to it). */
void report_tune__section(FILE *md, const json_t *doc, const char *name,
			  bool full_beside);

#endif
