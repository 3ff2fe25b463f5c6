/* The Summary of report.md: each driver's lines (report_NAME.c), in the
 * order of report__drivers[], then the tuners'. */
#include "report_driver.h"
#include "report_int.h"

#include "report_tune.h"
#include "result.h"

#include <stdio.h>
#include <string.h>

void report__time_text(char *buf, size_t len, double ns)
{
	result__value_text(buf, len, "ns", ns, ns);
}

const char *report__summary_name(char *buf, size_t len,
				 const struct input *in)
{
	const json_t *guest = get(in->root, "guest");
	char text[96];

	/* documents from before the "guest" object name none */
	if (!json_is_object(guest)) {
		snprintf(buf, len, "%s", in->label);
		return buf;
	}
	report__guest_text(text, sizeof(text), guest);
	snprintf(buf, len, "%s (%s)", in->label, text);
	return buf;
}

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
