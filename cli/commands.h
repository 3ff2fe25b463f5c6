/* The commands of coldstart: the command table's entry type and every
 * command's entry point. Lower rooms export functions; only cli/ has
 * commands. */
#ifndef COLDSTART_COMMANDS_H
#define COLDSTART_COMMANDS_H

#include "cli.h"
#include "driver.h"

#include <stddef.h>

struct command {
	const char *name;
	const char *summary;
	/* argv[0] is the command's name; returns an enum cli_exit. */
	int (*run)(int argc, char **argv);
};

int cmd_run(int argc, char **argv);
int cmd_sysinfo(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_image(int argc, char **argv);
int cmd_emulate(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_tune_restore(int argc, char **argv);
int cmd_tune_session(int argc, char **argv);
int cmd_export(int argc, char **argv);

/* The pool's commands. */
int cmd_pool(int argc, char **argv);
int cmd_tune_pool(int argc, char **argv);
int cmd_tune_host(int argc, char **argv);

/* The tuners of `coldstart tune`, `n` of them (cmd_tune.c). */
const struct command *tune__tuners(size_t *n);

/* The drivers of `coldstart bench`, `n` of them (cmd_bench.c). */
const struct bench_driver *const *bench__drivers(size_t *n);

#endif
