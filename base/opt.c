/* Option tables: getopt_long()'s arrays and the help text, both made
 * from the same rows. */
#include "opt.h"

#include "args.h"
#include "err.h"

#include <errno.h>
#include <getopt.h>
#include <string.h>

#define OPT_MAX 96
#define OPT_LONG_BASE 0x100 /* getopt's value of row i: base + i */

struct opt_found {
	const struct opt *row;
	const struct opt_set *set;
};

/* Row `k` across the sets, counting rows with a name only. */
static struct opt_found nth(const struct opt_set *sets, size_t n, int k)
{
	for (size_t s = 0; s < n; s++)
		for (const struct opt *o = sets[s].opts; o->name || o->help;
		     o++)
			if (o->name && k-- == 0)
				return (struct opt_found){ o, &sets[s] };
	return (struct opt_found){ NULL, NULL };
}

static struct opt_found by_short(const struct opt_set *sets, size_t n,
				 int c)
{
	for (size_t s = 0; s < n; s++)
		for (const struct opt *o = sets[s].opts; o->name || o->help;
		     o++)
			if (o->name && o->short_name == c)
				return (struct opt_found){ o, &sets[s] };
	return (struct opt_found){ NULL, NULL };
}

static int has_arg(const struct opt *o)
{
	if (!o->arg)
		return no_argument;
	return o->optional ? optional_argument : required_argument;
}

/* getopt_long()'s long options and short option string for the sets. */
static int build(const struct opt_set *sets, size_t n, bool stop,
		 struct option *longs, char *shorts, size_t shorts_len)
{
	size_t k = 0, j = 0;
	struct opt_found f;

	if (stop)
		shorts[j++] = '+';
	while ((f = nth(sets, n, (int)k)).row) {
		if (k + 2 >= OPT_MAX || j + 4 >= shorts_len)
			return err__set(E2BIG, "too many options in a table");
		longs[k] = (struct option){ f.row->name, has_arg(f.row), NULL,
					    OPT_LONG_BASE + (int)k };
		if (f.row->short_name) {
			shorts[j++] = f.row->short_name;
			for (int a = 0; a < has_arg(f.row); a++)
				shorts[j++] = ':';
		}
		k++;
	}
	longs[k++] = (struct option){ "help", no_argument, NULL, 'h' };
	longs[k] = (struct option){ NULL, 0, NULL, 0 };
	shorts[j++] = 'h';
	shorts[j] = '\0';
	return 0;
}

int opt__parse(int argc, char **argv, const struct opt_set *sets, size_t n,
	       enum opt_operands operands)
{
	struct option longs[OPT_MAX];
	char shorts[2 * OPT_MAX];
	struct opt_found f;
	int c, ret = build(sets, n, operands == OPT_OPERANDS_LAST, longs,
			   shorts, sizeof(shorts));

	optind = 0;
	opterr = 0;
	while (ret == 0 && (c = getopt_long(argc, argv, shorts, longs,
					    NULL)) != -1) {
		if (c == 'h')
			return 1;
		f = c >= OPT_LONG_BASE ? nth(sets, n, c - OPT_LONG_BASE)
				       : by_short(sets, n, c);
		if (!f.row)
			return args__bad_option(argv);
		ret = f.row->set(f.set->ctx, optarg);
		if (ret == 0 && f.set->taken)
			ret = f.set->taken(f.set->taken_ctx, f.row, optarg);
	}
	if (ret == 0 && operands == OPT_NO_OPERANDS)
		ret = args__no_operands(argc, argv);
	return ret;
}

/* "-n, --count N", "--probes[=SET]": the option's side of its line. */
static int left(const struct opt *o, char *buf, size_t len)
{
	int k = 0;

	if (o->short_name)
		k = snprintf(buf, len, "-%c, ", o->short_name);
	k += snprintf(buf + k, len - (size_t)k, "--%s", o->name);
	if (o->arg)
		k += snprintf(buf + k, len - (size_t)k, o->optional ? "[=%s]"
				: " %s", o->arg);
	return k;
}

static int column(const struct opt_set *sets, size_t n)
{
	char buf[128];
	int col = 17;

	for (size_t s = 0; s < n; s++)
		for (const struct opt *o = sets[s].opts;
		     !sets[s].hidden && (o->name || o->help); o++)
			if (o->name && left(o, buf, sizeof(buf)) + 2 > col)
				col = left(o, buf, sizeof(buf)) + 2;
	return col;
}

/* The help text, its continuation lines indented to the column. */
static void help_lines(FILE *out, const char *text, int col)
{
	const char *nl;

	while ((nl = strchr(text, '\n'))) {
		fprintf(out, "%.*s\n%*s", (int)(nl - text), text, col + 2, "");
		text = nl + 1;
	}
	fputs(text, out);
}

static void row(FILE *out, const struct opt *o, const void *ctx, int col)
{
	char buf[128], def[128];

	if (!o->name) {
		fprintf(out, "%s\n", o->help);
		return;
	}
	left(o, buf, sizeof(buf));
	fprintf(out, "  %-*s", col, buf);
	help_lines(out, o->help ? o->help : "", col);
	if (o->show) {
		o->show(ctx, def, sizeof(def));
		fprintf(out, " (default %s)", def);
	}
	fputc('\n', out);
}

void opt__help(FILE *out, const struct opt_set *sets, size_t n)
{
	int col = column(sets, n);

	for (size_t s = 0; s < n; s++)
		for (const struct opt *o = sets[s].opts;
		     !sets[s].hidden && (o->name || o->help); o++)
			row(out, o, sets[s].ctx, col);
	fprintf(out, "  %-*sthis help\n", col, "-h, --help");
}

const struct opt *opt__find(const struct opt_set *sets, size_t n,
			    const char *name)
{
	for (size_t s = 0; s < n; s++)
		for (const struct opt *o = sets[s].opts; o->name || o->help;
		     o++)
			if (o->name && !strcmp(o->name, name))
				return o;
	return NULL;
}
