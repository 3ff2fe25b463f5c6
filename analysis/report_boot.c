/* The boot driver in the report: its Summary line, the total from
 * process start to teardown done. */
#include "report_driver.h"
#include "report_int.h"

#include <stdio.h>

static void sum_boot(FILE *md, const struct input *in)
{
	const struct result_series *t = result__find(&in->doc, "total");
	char text[48], name[REPORT_NAME_LEN];

	if (!t)
		return;
	report__time_text(text, sizeof(text), median_ns(t));
	fprintf(md, "- %s: total (process start -> teardown done) %s median\n",
		report__summary_name(name, sizeof(name), in), text);
}

const struct report_driver report_driver_boot = {
	.name = "boot",
	.summary = sum_boot,
};
