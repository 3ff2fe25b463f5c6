/* `coldstart run`: its options, parsed by a function tests can call. */
#ifndef COLDSTART_CMD_RUN_H
#define COLDSTART_CMD_RUN_H

#include "jail.h"
#include "runner.h"
#include "seccomp.h"

#include <stdbool.h>

struct run_cli {
	struct run_config cfg;
	const char *kvm_path; /* NULL: /dev/kvm */
	bool json;
	bool quiet;
	bool help;
	bool mem_given; /* --mem was set; else sized to fit the workload */
	unsigned int probes; /* --probes[=SET]: enum probes_set, 0 = none */
	/* A Linux guest instead of the probe guest (run_linux.c). */
	const char *kernel;   /* --kernel: NULL runs the probe guest */
	const char *initrd;
	const char *cmdline;  /* NULL: LINUX_DEFAULT_CMDLINE */
	const char *console;  /* NULL or "-": stdout (stderr with --json) */
	bool allow_pvm;       /* boot even on PVM, where ring 0 crawls */
	bool stop_at_boot;    /* --stop-at boot: end at boot complete */
	const char *probe_opt; /* first probe-guest-only option given */
	const char *linux_opt; /* first Linux-only option given */
	enum seccomp_mode seccomp; /* default kill */
	struct jail_opts jail;     /* --jail DIR and its options */
};

/* Fills `out` from argv (argv[0] = "run"). Returns 0, or -EINVAL with the
 * reason in err__last(). Sets defaults for everything not given. */
int cmd_run__parse(int argc, char **argv, struct run_cli *out);

#endif
