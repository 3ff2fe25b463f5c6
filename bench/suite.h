/* `coldstart bench suite`: every benchmark driver in turn with quick (or
 * smoke-test) parameters into one directory, the harness's own overhead
 * per sample, then the report over everything written. */
#ifndef COLDSTART_SUITE_H
#define COLDSTART_SUITE_H

#include "cli.h"

#include <stddef.h>

struct bench_driver;

/* `coldstart bench suite ARGS` here: runs each of the `nd` drivers `d`
 * (the table of `coldstart bench`, given by its caller) that has suite
 * arguments; an enum cli_exit. */
int suite__run(int argc, char **argv, const struct bench_driver *d,
	       size_t nd);

/* Checks the suite's options (among them --only against `d`) without
 * running anything: 0 when they parse, else the exit code after the
 * usage error is printed (so a typo fails before an emulated host
 * boots). */
int suite__check_args(int argc, char **argv, const struct bench_driver *d,
		      size_t nd);

/* results/HOST-YYYYMMDD-HHMMSS (UTC): where a suite writes by default. */
void suite__default_dir(char *buf, size_t len);

/* What `coldstart bench suite` passes a driver at each level: nothing
 * at the full level for the probe guest. quick NULL: the suite does not
 * run the driver. The linux_* are for the user's own guest (--kernel);
 * linux_full NULL: the driver measures only the built-in probe guest and
 * is not run with --kernel. */
struct suite_args {
	const char *quick, *smoke;
	const char *linux_full, *linux_quick, *linux_smoke;
};

/* A `coldstart bench` driver: its command (name, help line, run; as in
 * struct command) and what the suite passes it. `coldstart bench`,
 * `help` and the suite iterate the one table of them. */
struct bench_driver {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
	struct suite_args suite;
};

/* The table of `coldstart bench` drivers (cmd_bench.c). */
const struct bench_driver *bench__drivers(size_t *n);

#endif
