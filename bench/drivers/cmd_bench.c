/* `coldstart bench`: the suite and the table of measuring drivers
 * (drivers.c), listed and run by name. */
#include "cmd_bench.h"

#include "cli.h"
#include "drivers.h"
#include "suite.h"

#include <stdio.h>
#include <string.h>

const struct bench_driver *bench__driver_at(size_t i)
{
	size_t n;
	const struct bench_driver *d = bench__drivers(&n);

	if (i == 0)
		return &suite__driver;
	return i - 1 < n ? &d[i - 1] : NULL;
}

static void usage(FILE *out)
{
	const struct bench_driver *d;

	fputs("Usage: coldstart bench DRIVER [OPTIONS]\n\nDrivers:\n", out);
	for (size_t i = 0; (d = bench__driver_at(i)); i++)
		fprintf(out, "  %-10s %s\n", d->name, d->summary);
	fputs("\n'coldstart bench DRIVER --help' describes each driver.\n", out);
}

int cmd_bench(int argc, char **argv)
{
	const struct bench_driver *d;

	if (argc < 2) {
		usage(stderr);
		return CLI_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return CLI_OK;
	}
	for (size_t i = 0; (d = bench__driver_at(i)); i++)
		if (!strcmp(argv[1], d->name))
			return d->run(argc - 1, argv + 1);
	cli__error(CLI_USAGE, "bench: unknown driver '%s'", argv[1]);
	return cli__usage_error("bench");
}
