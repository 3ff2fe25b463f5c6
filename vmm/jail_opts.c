/* The jail's options (--jail DIR, --uid, --gid, --cpus, --memory):
 * parsed strictly, each value in its range. */
#include "jail.h"

#include "err.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* A decimal number and nothing else: no sign, no leading or trailing
 * space, which strtoul() and strtod() would take. */
static bool all_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return n > 0;
}

static int parse_id(const char *what, const char *arg, uid_t *id)
{
	unsigned long v;

	errno = 0;
	v = all_digits(arg, strlen(arg)) ? strtoul(arg, NULL, 10) : ULONG_MAX;
	if (errno || v >= 65535 * 65536ul)
		return err__set(EINVAL, "%s: '%s' is not a numeric id", what,
				arg);
	*id = (uid_t)v;
	return 0;
}

/* SIZE: bytes, or with a K, M or G suffix (either case), at most 1 PiB. */
static int parse_size(const char *arg, uint64_t *out)
{
	static const char units[] = "KMG";
	size_t n = strlen(arg), digits = strspn(arg, "0123456789");
	/* memchr, not strchr: that one finds the terminator too */
	const char *u = n == digits + 1
		? memchr(units, arg[digits] & ~0x20, sizeof(units) - 1) : NULL;
	int shift = u ? 10 * (int)(u - units + 1) : 0;
	unsigned long long v = 0;

	errno = 0;
	if (all_digits(arg, digits) && (n == digits || u))
		v = strtoull(arg, NULL, 10);
	if (errno || v == 0 || v > (1ull << (50 - shift)))
		return err__set(EINVAL, "--memory: '%s' is not a size such as "
				"512M or 2G", arg);
	*out = (uint64_t)v << shift;
	return 0;
}

/* N CPUs: a decimal number (digits, and digits after a point) in
 * 0.01..4096. */
static int parse_cpus(const char *arg, double *out)
{
	size_t whole = strspn(arg, "0123456789"), frac = 0;
	double v = 0;

	if (arg[whole] == '.')
		frac = strspn(arg + whole + 1, "0123456789");
	if ((frac || (whole && !arg[whole])) &&
	    whole + !!frac + frac == strlen(arg))
		v = strtod(arg, NULL);
	if (!(v >= 0.01 && v <= 4096))
		return err__set(EINVAL, "--cpus: '%s' is not a number of CPUs "
				"between 0.01 and 4096", arg);
	*out = v;
	return 0;
}

int jail__parse_option(struct jail_opts *o, int opt, const char *arg)
{
	switch (opt) {
	case JAIL_OPT_DIR:
		o->off = !strcmp(arg, "off");
		o->dir = o->off ? NULL : arg;
		return 0;
	case JAIL_OPT_UID:
		o->id_given = true;
		return parse_id("--uid", arg, &o->uid);
	case JAIL_OPT_GID:
		o->id_given = true;
		return parse_id("--gid", arg, &o->gid);
	case JAIL_OPT_CPUS:
		o->limit_given = true;
		return parse_cpus(arg, &o->cpus);
	case JAIL_OPT_MEMORY:
		o->limit_given = true;
		return parse_size(arg, &o->memory);
	default:
		return 1;
	}
}
