/* The Summary of report.md: each driver's lines (report_NAME.c), in the
 * order of report__drivers[], then the tuners'. The helpers those lines
 * use are report_inputs.c's. */
#include "report_driver.h"
#include "report_int.h"

#include "report_tune.h"
#include "result.h"

#include <stdio.h>
#include <string.h>

void report__md_summary(struct report *r)
{
	bool any = false;

	for (size_t d = 0; d < report__nr_drivers; d++)
		for (size_t i = 0; i < r->n; i++) {
			const struct report_driver *rd = report__drivers[d];

			if (!rd->summary || strcmp(r->in[i].doc.bench, rd->name))
				continue;
			if (!any)
				fputs("\n## Summary\n\n", r->md);
			any = true;
			rd->summary(r->md, &r->in[i]);
		}
	for (size_t i = 0; i < r->nr_tune; i++) {
		if (!any)
			fputs("\n## Summary\n\n", r->md);
		any = true;
		report_tune__summary(r->md, r->tune[i].root);
	}
}
