/* `coldstart sysinfo`: prints the host description (sysinfo.h) as JSON. */
#include "commands.h"
#include "err.h"
#include "sysinfo.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

/* Long-only options get values outside the char range. */
enum { OPT_COMPACT = 0x100 };

static const struct option long_options[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "compact", no_argument, NULL, OPT_COMPACT },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *out)
{
	fputs("Usage: coldstart sysinfo [--compact]\n"
	      "  -h, --help     show this help and exit\n"
	      "      --compact  print the JSON on one line\n",
	      out);
}

/* Returns -1 to go on, or the exit code to return at once. */
static int parse_args(int argc, char **argv, bool *compact)
{
	int c;

	optind = 0; /* another command may have run getopt before */
	while ((c = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return CLI_OK;
		case OPT_COMPACT:
			*compact = true;
			break;
		default:
			return cli__usage_error("sysinfo");
		}
	}
	if (optind < argc) {
		cli__error(CLI_USAGE, "sysinfo: unexpected argument '%s'",
			   argv[optind]);
		return cli__usage_error("sysinfo");
	}
	return -1;
}

static int print_json(const json_t *info, bool compact)
{
	size_t flags = compact ? JSON_COMPACT : JSON_INDENT(2);

	if (json_dumpf(info, stdout, flags) || fputc('\n', stdout) == EOF ||
	    fflush(stdout)) {
		err__sys(errno, "writing to stdout");
		return cli__error(CLI_FAIL, "%s", err__last());
	}
	return CLI_OK;
}

int cmd_sysinfo(int argc, char **argv)
{
	bool compact = false;
	json_t *info;
	int ret = parse_args(argc, argv, &compact);

	if (ret >= 0)
		return ret;
	if (sysinfo__collect(&info) < 0)
		return cli__error(CLI_FAIL, "%s", err__last());
	ret = print_json(info, compact);
	json_decref(info);
	return ret;
}
