/* The suite in the report: the harness's overhead, each driver's status,
 * wall time and arguments, the suite's wall time. */
#include "report_driver.h"
#include "report_int.h"

#include <stdio.h>

static void md_suite(struct report *r, const struct input *in)
{
	const json_t *h = get(in->root, "harness"), *d;
	size_t i;

	if (h)
		fprintf(r->md, "\nHarness overhead per sample (an empty sample "
			"timed and stored back to back): %.1f ns median, "
			"%.1f ns p99 (target: at most 1000 ns).\n",
			json_number_value(get(h, "overhead_ns_p50")),
			json_number_value(get(h, "overhead_ns_p99")));
	if (json_array_size(get(in->root, "drivers")))
		fputs("\n| driver | status | wall s | arguments |\n"
		      "|---|---|--:|---|\n", r->md);
	json_array_foreach(get(in->root, "drivers"), i, d)
		fprintf(r->md, "| %s | %s | %.1f | `%s` |\n",
			str_or(d, "name", "?"), str_or(d, "status", "?"),
			json_number_value(get(d, "wall_s")),
			str_or(d, "args", ""));
	if (json_is_number(get(in->root, "wall_s")))
		fprintf(r->md, "\nSuite wall time: %.1f s.\n",
			json_number_value(get(in->root, "wall_s")));
}

const struct report_driver report_driver_suite = {
	.name = "suite",
	.md = md_suite,
};
