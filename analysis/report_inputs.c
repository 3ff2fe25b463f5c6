/* What the report's parts look up, below them all: a driver's document
 * among the inputs, a guest's short name, the label of a Summary line
 * and a time's text. */
#include "report_driver.h"
#include "report_int.h"

#include "result.h"

#include <stdio.h>
#include <string.h>

int report__find_input(const struct report *r, const char *bench)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->in[i].doc.bench, bench))
			return (int)i;
	return -1;
}

void report__guest_text(char *buf, size_t len, const json_t *g)
{
	const char *sum = str_or(g, "sha256", NULL);

	if (!sum && json_is_object(get(g, "kernel")))
		sum = str_or(get(g, "kernel"), "sha256", NULL);
	snprintf(buf, len, "%s%s%.8s%s", str_or(g, "name", "?"),
		 sum ? " `" : "", sum ? sum : "", sum ? "`" : "");
}

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
