/* `bench density`'s options, shared by its driver (density.c) and
 * their parsing and checks (density_opts.c). */
#ifndef COLDSTART_DENSITY_INT_H
#define COLDSTART_DENSITY_INT_H

#include "driver.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define DENSITY_MAX_VMS 4096

struct density_opts {
	struct bench_common c; /* count: VMs to start */
	uint64_t budget, init, ws;
	bool fresh, clone;
	/* A Linux guest (c.kernel...) instead of the probe guest: its
	 * memory and vCPUs from c.mem and c.vcpus, and settle. */
	uint64_t mem, vcpus, settle_ns;
	const char *probe_opt, *linux_opt; /* the first given, for refusals */
};

/* The driver's options table, defaults and checks (density_opts.c). */
extern const struct opt density__options[];
void density__init(void *opts);
int density__check(void *opts);

/* Runs the driver with its parsed options (density_driver's run). */
int density__run(void *opts);

/* A Linux guest's inputs, checked as `coldstart run --kernel` checks
 * them (kernel, initrd, command line against guest memory) before any
 * VM; then the host: PVM cannot boot an ordinary kernel (exit 77 unless
 * --allow-pvm). An enum cli_exit, the error printed. CLI_OK for the
 * probe guest. */
int density__check_guest(const struct density_opts *o);

/* Appends the Linux guest's options for a `coldstart run`-style command
 * line to argv from *n; `mem` and `vcpus` (size bytes each) hold the
 * text of two of them. */
void density__linux_args(const struct density_opts *o, char **argv, int *n,
			 char *mem, char *vcpus, size_t size);

/* The result document's config: every option, the guest's files (which
 * result__new names by sha256) and where VMs are held. */
json_t *density__config_json(const struct density_opts *o);

#endif
