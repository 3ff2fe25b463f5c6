/* `coldstart tune`: recommendations computed from this host's own
 * measurements; the table of tuners. */
#include "commands.h"
#include "tune_restore.h"

#include <string.h>

static const struct command tuners[] = {
	{ "host", "per-guest warm-VM keep-alive under one host's memory "
		  "budget (simulated, no KVM)", cmd_tune_host },
	{ "pool", "which warm-pool policy and size meet a start-latency SLO "
		  "cheapest (simulated, no KVM)", cmd_tune_pool },
	{ "restore", "which memory-restore strategy to use for a snapshot "
		     "(--mem-restore NAME)", cmd_tune_restore },
	{ "session", "which merge policy keeps a session's resume flat "
		     "cheapest (--merge POLICY)", cmd_tune_session },
};

#define NR_TUNERS (sizeof(tuners) / sizeof(tuners[0]))

const struct command *tune__tuners(size_t *n)
{
	*n = NR_TUNERS;
	return tuners;
}

static void usage(FILE *out)
{
	fputs("Usage: coldstart tune TUNER [OPTIONS]\n\nTuners:\n", out);
	for (size_t i = 0; i < NR_TUNERS; i++)
		fprintf(out, "  %-8s %s\n", tuners[i].name, tuners[i].summary);
	fputs("\n'coldstart tune TUNER --help' describes each tuner.\n", out);
}

int cmd_tune(int argc, char **argv)
{
	if (argc < 2) {
		cli__error(CLI_USAGE, "tune: what to tune?");
		usage(stderr);
		return CLI_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return CLI_OK;
	}
	for (size_t i = 0; i < NR_TUNERS; i++)
		if (!strcmp(tuners[i].name, argv[1]))
			return tuners[i].run(argc - 1, argv + 1);
	cli__error(CLI_USAGE, "tune: unknown tuner '%s'", argv[1]);
	usage(stderr);
	return CLI_USAGE;
}
