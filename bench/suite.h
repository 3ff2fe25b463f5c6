/* `coldstart bench suite`: every benchmark driver in turn with quick (or
 * smoke-test) parameters into one directory, the harness's own overhead
 * per sample, then the report over everything written. */
#ifndef COLDSTART_SUITE_H
#define COLDSTART_SUITE_H

#include "cli.h"
#include "driver.h"

#include <stddef.h>

/* The suite's row in the table of drivers (no run: see suite__run). */
extern const struct bench_driver suite_driver;

/* `coldstart bench suite ARGS` here: runs each of the `nd` drivers `d`
 * (the table of `coldstart bench`, given by its caller) that has suite
 * arguments; an enum cli_exit. */
int suite__run(int argc, char **argv, const struct bench_driver *const *d,
	       size_t nd);

/* Checks the suite's options (among them --only against `d`) without
 * running anything: 0 when they parse, else the exit code after the
 * usage error is printed (so a typo fails before an emulated host
 * boots). */
int suite__check_args(int argc, char **argv,
		      const struct bench_driver *const *d, size_t nd);

/* results/HOST-YYYYMMDD-HHMMSS (UTC): where a suite writes by default. */
void suite__default_dir(char *buf, size_t len);

#endif
