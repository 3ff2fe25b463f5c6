/* /proc/self/smaps_rollup and smaps parsing. */
#include "memstat.h"

#include "err.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Adds "Key:   N kB" lines for the keys of interest to `m`. */
static void add_field(const char *line, uint64_t *rss, uint64_t *pss,
		      uint64_t *priv)
{
	uint64_t v;

	if (sscanf(line, "Rss: %" SCNu64, &v) == 1)
		*rss += v;
	else if (pss && sscanf(line, "Pss: %" SCNu64, &v) == 1)
		*pss += v;
	else if (sscanf(line, "Private_Clean: %" SCNu64, &v) == 1 ||
		 sscanf(line, "Private_Dirty: %" SCNu64, &v) == 1)
		*priv += v;
}

static int read_rollup(struct memstat *m)
{
	char line[256];
	FILE *f = fopen("/proc/self/smaps_rollup", "re");

	if (!f)
		return err__sys(errno, "opening /proc/self/smaps_rollup");
	while (fgets(line, sizeof(line), f))
		add_field(line, &m->rss_kib, &m->pss_kib, &m->uss_kib);
	fclose(f);
	return 0;
}

/* Whether `line` is an smaps header ("start-end perms ..."); its start
 * address in *start. */
static int parse_header(const char *line, uintptr_t *start)
{
	uintptr_t end;

	return sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", start, &end) == 2;
}

static int read_guest(struct memstat *m, const void *guest)
{
	char line[512];
	int inside = 0;
	FILE *f = fopen("/proc/self/smaps", "re");

	if (!f)
		return err__sys(errno, "opening /proc/self/smaps");
	while (fgets(line, sizeof(line), f)) {
		uintptr_t start;

		if (parse_header(line, &start))
			inside = start == (uintptr_t)guest;
		else if (inside)
			add_field(line, &m->guest_rss_kib, NULL,
				  &m->guest_private_kib);
	}
	fclose(f);
	return 0;
}

int memstat__self(struct memstat *m, const void *guest)
{
	int ret;

	memset(m, 0, sizeof(*m));
	ret = read_rollup(m);
	if (ret == 0 && guest)
		ret = read_guest(m, guest);
	return ret;
}

uint64_t memstat__overhead_kib(const struct memstat *m)
{
	return m->uss_kib > m->guest_private_kib
		       ? m->uss_kib - m->guest_private_kib
		       : 0;
}
