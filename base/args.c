/* Command-line value parsing. */
#include "args.h"

#include "err.h"

#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Parses the leading decimal digits; *end points past them. */
static int leading_u64(const char *text, uint64_t *out, const char **end)
{
	char *e;
	unsigned long long v;

	if (!isdigit((unsigned char)text[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(text, &e, 10);
	if (errno == ERANGE)
		return -ERANGE;
	*out = v;
	*end = e;
	return 0;
}

static int mul_overflows(uint64_t a, uint64_t b, uint64_t *out)
{
	return __builtin_mul_overflow(a, b, out);
}

static int size_shift(const char *suffix, unsigned int *shift)
{
	static const char units[] = "bkmgt";
	const char *u;

	if (!*suffix) {
		*shift = 0;
		return 0;
	}
	u = strchr(units, tolower((unsigned char)*suffix));
	if (!u)
		return -EINVAL;
	*shift = (unsigned int)(u - units) * 10;
	suffix++;
	if (*shift && (!strcasecmp(suffix, "ib") || !strcasecmp(suffix, "b")))
		return 0;
	return *suffix ? -EINVAL : 0;
}

int args__size(const char *opt, const char *text, uint64_t *out)
{
	const char *end;
	unsigned int shift;
	uint64_t v;

	if (leading_u64(text, &v, &end) < 0 || size_shift(end, &shift) < 0)
		return err__set(EINVAL, "%s: '%s' is not a size (examples: "
				"4096, 64M, 2G)", opt, text);
	if (shift && v > (UINT64_MAX >> shift))
		return err__set(EINVAL, "%s: '%s' is too large", opt, text);
	*out = v << shift;
	return 0;
}

static int count_scale(const char *suffix, uint64_t *scale)
{
	*scale = 1;
	if (!*suffix)
		return 0;
	if (suffix[1] == '\0') {
		switch (*suffix) {
		case 'k': case 'K': *scale = 1000; return 0;
		case 'M': *scale = 1000000; return 0;
		case 'G': *scale = 1000000000; return 0;
		}
	}
	if ((suffix[0] == 'e' || suffix[0] == 'E') && isdigit((unsigned char)suffix[1])) {
		uint64_t exp;
		const char *end;

		if (leading_u64(suffix + 1, &exp, &end) < 0 || *end || exp > 19)
			return -EINVAL;
		while (exp--)
			*scale *= 10;
		return 0;
	}
	return -EINVAL;
}

int args__u64(const char *opt, const char *text, uint64_t min, uint64_t max,
	      uint64_t *out)
{
	const char *end;
	uint64_t v, scale;

	if (leading_u64(text, &v, &end) < 0 || count_scale(end, &scale) < 0)
		return err__set(EINVAL, "%s: '%s' is not a whole number", opt,
				text);
	if (mul_overflows(v, scale, &v) || v < min || v > max)
		return err__set(EINVAL, "%s: %s is outside %llu..%llu", opt, text,
				(unsigned long long)min,
				(unsigned long long)max);
	*out = v;
	return 0;
}

int args__duration(const char *opt, const char *text, uint64_t *ns)
{
	static const struct {
		const char *suffix;
		uint64_t ns;
	} units[] = {
		{ "", 1000000000ull },  { "s", 1000000000ull },
		{ "ms", 1000000ull },   { "us", 1000ull },
		{ "ns", 1ull },         { "m", 60000000000ull },
		{ "h", 3600000000000ull },
	};
	const char *end;
	uint64_t v;

	if (leading_u64(text, &v, &end) == 0)
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcmp(end, units[i].suffix)) {
				uint64_t total;

				if (mul_overflows(v, units[i].ns, &total))
					break;
				*ns = total;
				return 0;
			}
	return err__set(EINVAL, "%s: '%s' is not a duration (examples: 500ms, "
			"10s, 2m, 1h)", opt, text);
}

int args__probability(const char *opt, const char *text, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (end == text || *end || errno || !(v > 0 && v < 1))
		return err__set(EINVAL, "%s: '%s' is not a probability "
				"between 0 and 1", opt, text);
	*out = v;
	return 0;
}

int args__choice(const char *opt, const char *text,
		 const char *const *names, unsigned int *out)
{
	char list[256] = "";
	size_t used = 0;

	for (unsigned int i = 0; names[i]; i++) {
		if (!strcmp(text, names[i])) {
			*out = i;
			return 0;
		}
		used += (size_t)snprintf(list + used, sizeof(list) - used,
					 "%s%s", i ? ", " : "", names[i]);
		if (used >= sizeof(list))
			used = sizeof(list) - 1;
	}
	return err__set(EINVAL, "%s: '%s' is not one of: %s", opt, text, list);
}

int args__both(const char *opt, const char *text, const char *first,
	       const char *second, bool *a, bool *b)
{
	const char *const names[] = { "both", first, second, NULL };
	unsigned int i;

	if (args__choice(opt, text, names, &i) < 0)
		return -EINVAL;
	*a = i != 2;
	*b = i != 1;
	return 0;
}

int args__bad_option(char *const argv[])
{
	return err__set(EINVAL, "unknown or incomplete option '%s'",
			argv[optind - 1]);
}

int args__no_operands(int argc, char *const argv[])
{
	if (optind < argc)
		return err__set(EINVAL, "unexpected argument '%s'",
				argv[optind]);
	return 0;
}

int args__getopt(int argc, char **argv, const char *shortopts,
		 const struct option *longopts,
		 int (*one)(int c, char *arg, void *ctx), void *ctx)
{
	int c, ret = 0;

	optind = 0;
	opterr = 0;
	while (ret == 0 &&
	       (c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == 'h')
			return 1;
		ret = c == '?' || c == ':' ? args__bad_option(argv)
					   : one(c, optarg, ctx);
	}
	return ret;
}
