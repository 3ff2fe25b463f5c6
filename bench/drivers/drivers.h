/* The benchmark drivers' descriptors (drivers.c): each driver's command
 * and what the suite passes it. */
#ifndef COLDSTART_DRIVERS_H
#define COLDSTART_DRIVERS_H

#include <stddef.h>

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
 * `help` and the suite iterate the one table of them (drivers.c). */
struct bench_driver {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
	struct suite_args suite;
};

/* The measuring drivers, `n` of them (not the suite: cmd_bench.c lists
 * it first). */
const struct bench_driver *bench__drivers(size_t *n);

#endif
