/* The lifecycle driver in the report: its Summary line, coldstart's
 * create-run-destroy median per mode against the bare-ioctl floor. */
#include "report_driver.h"
#include "report_int.h"

#include <stdio.h>

static void sum_lifecycle(FILE *md, const struct input *in)
{
	static const char *const modes[][3] = {
		{ "in-process", "inproc.coldstart", "inproc.floor" },
		{ "process-per-VM", "process.coldstart", "process.floor" },
	};
	const char *sep = "";
	char name[REPORT_NAME_LEN];

	fprintf(md, "- %s:", report__summary_name(name, sizeof(name), in));
	for (size_t i = 0; i < 2; i++) {
		const struct result_series *c =
			result__find(&in->doc, modes[i][1]);
		const struct result_series *f =
			result__find(&in->doc, modes[i][2]);
		double m = c ? median_ns(c) : 0, fl = f ? median_ns(f) : 0;
		char t[48];

		if (!c)
			continue;
		report__time_text(t, sizeof(t), m);
		fprintf(md, "%s %s %s median", sep, modes[i][0], t);
		if (fl > 0)
			fprintf(md, " (%.2fx the floor)", m / fl);
		sep = ",";
	}
	fputc('\n', md);
}

const struct report_driver report_driver_lifecycle = {
	.name = "lifecycle",
	.summary = sum_lifecycle,
};
