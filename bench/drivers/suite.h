/* `coldstart bench suite`: every benchmark driver in turn with quick (or
 * smoke-test) parameters into one directory, the harness's own overhead
 * per sample, then the report over everything written. */
#ifndef COLDSTART_SUITE_H
#define COLDSTART_SUITE_H

#include "cli.h"

#include <stddef.h>

int cmd_bench_suite(int argc, char **argv);

/* Checks the suite's options without running anything: 0 when they
 * parse, else the exit code after the usage error is printed (so a typo
 * fails before an emulated host boots). */
int suite__check_args(int argc, char **argv);

/* results/HOST-YYYYMMDD-HHMMSS (UTC): where a suite writes by default. */
void suite__default_dir(char *buf, size_t len);

/* The table of `coldstart bench` drivers (cmd_bench.c). */
const struct command *bench__drivers(size_t *n);

#endif
