/* What one benchmark driver contributes to `coldstart report`: its
 * Summary line, its section's tables, its CSV file and its plot, each
 * written in the driver's own report_NAME.c. The report iterates
 * report__drivers[] and knows no driver by name; each descriptor is
 * named for a driver of `coldstart bench`'s table (unit.drivers). */
#ifndef COLDSTART_REPORT_DRIVER_H
#define COLDSTART_REPORT_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct input;
struct report;

struct report_driver {
	const char *name; /* the documents' "bench" */
	/* Its lines in report.md's Summary, per document; NULL: none. */
	void (*summary)(FILE *md, const struct input *in);
	/* Its tables in the document's section, before the series; NULL:
	 * none. */
	void (*md)(struct report *r, const struct input *in);
	/* true: md says where the series are instead of the generic table
	 * of every series (restore has too many for one). */
	bool own_series;
	/* Its CSV file, written when a document of this driver is among
	 * the inputs; NULL: none. */
	const char *csv_name;
	void (*csv)(FILE *f, const struct report *r);
	/* Its plots after the latency CDFs (report.md's images); NULL:
	 * none. */
	void (*plot)(struct report *r);
	/* What the plot shows, for `coldstart help report`. */
	const char *plot_what;
};

/* Every driver with something of its own in the report, in the order of
 * the Summary. */
extern const struct report_driver *const report__drivers[];
extern const size_t report__nr_drivers;

/* The descriptor of documents whose "bench" is name, or NULL. */
const struct report_driver *report__driver(const char *name);

extern const struct report_driver report_driver_lifecycle,
	report_driver_boot, report_driver_restore, report_driver_rate,
	report_driver_density, report_driver_peers, report_driver_pool,
	report_driver_suite, report_driver_session;

#endif
