/* `coldstart bench suite`: every benchmark driver in turn with quick (or
 * smoke-test) parameters into one directory, the harness's own overhead
 * per sample, then the report over everything written. */
#ifndef COLDSTART_SUITE_H
#define COLDSTART_SUITE_H

#include "cli.h"
#include "driver.h"

#include <stdbool.h>
#include <stddef.h>

/* `coldstart bench suite`: runs each driver of the table it was found in
 * that has suite arguments (bench_common's table). */
extern const struct bench_driver suite_driver;

/* Where its parsed options ask it to run: --emulate (inside the emulated
 * SVM host even with a usable /dev/kvm), --no-emulate (never). */
void suite__placement(const void *opts, bool *emulate, bool *no_emulate);

/* The arguments the suite gives driver `name` after `coldstart bench
 * NAME` under its parsed options `opts` (its level's and the guest's, as
 * suite.json records them; a snapshot's path empty until it is made),
 * into `text`; false when the suite does not run that driver. */
bool suite__driver_args(const void *opts, const char *name, char *text,
			size_t len);

/* results/HOST-YYYYMMDD-HHMMSS (UTC): where a suite writes by default. */
void suite__default_dir(char *buf, size_t len);

#endif
