/* The probe table, in every build: the rows of COLDSTART_PROBES (each
 * defined in its probe's own file), their names, the default set and the
 * --probes parser. */
#include "probe_row.h"

#include "err.h"

#include <stdio.h>
#include <string.h>

static const struct probe_row *const rows[PROBES_NR] = {
#define PROBE(name, NAME) [PROBES_INDEX_##NAME] = &name##__row,
#include "probes_list.h"
#undef PROBE
};

const struct probe_row *probes__row(unsigned int i)
{
	return rows[i];
}

const char *probes__probe_name(unsigned int bit)
{
	for (unsigned int i = 0; i < PROBES_NR; i++)
		if (bit == rows[i]->bit)
			return rows[i]->name;
	return "?";
}

unsigned int probes__default_set(void)
{
	unsigned int set = 0;

	for (unsigned int i = 0; i < PROBES_NR; i++)
		if (!rows[i]->costly)
			set |= rows[i]->bit;
	return set;
}

const char *probes__set_names(char *buf, size_t size, unsigned int set,
			      const char *sep, const char *last)
{
	unsigned int left = 0;
	size_t len = 0;

	for (unsigned int i = 0; i < PROBES_NR; i++)
		left += !!(set & rows[i]->bit);
	buf[0] = '\0';
	for (unsigned int i = 0; i < PROBES_NR && len < size; i++) {
		if (!(set & rows[i]->bit))
			continue;
		left--;
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
					rows[i]->name,
					!left ? "" : left == 1 ? last : sep);
	}
	return buf;
}

static int parse_name(const char *name, size_t len, unsigned int *set)
{
	char names[256];

	if (len == 7 && !strncmp(name, "default", len)) {
		*set |= PROBES_DEFAULT;
		return 0;
	}
	if (len == 3 && !strncmp(name, "all", len)) {
		*set |= PROBES_ALL;
		return 0;
	}
	for (unsigned int i = 0; i < PROBES_NR; i++)
		if (strlen(rows[i]->name) == len &&
		    !strncmp(name, rows[i]->name, len)) {
			*set |= rows[i]->bit;
			return 0;
		}
	return err__set(EINVAL, "'%.*s' is not a probe: give default, all "
			"or a list of %s", (int)len, name,
			probes__set_names(names, sizeof(names), PROBES_ALL,
					  ", ", ", "));
}

int probes__parse_set(const char *text, unsigned int *set)
{
	unsigned int s = 0;

	if (!*text) {
		*set = PROBES_DEFAULT;
		return 0;
	}
	while (*text) {
		size_t len = strcspn(text, ",");
		int ret = parse_name(text, len, &s);

		if (ret < 0)
			return ret;
		text += len + (text[len] == ',');
	}
	*set = s;
	return 0;
}

