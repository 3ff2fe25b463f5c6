/* `coldstart bench`: the table of benchmark drivers; finds one, parses
 * its options, prints its help or runs it, and maps its errors to exit
 * codes. */
#include "commands.h"

#include "ab.h"
#include "bench_probes.h"
#include "boot.h"
#include "density.h"
#include "emulate.h"
#include "err.h"
#include "floor.h"
#include "kvm.h"
#include "lifecycle.h"
#include "output.h"
#include "peers.h"
#include "pool_bench.h"
#include "rate.h"
#include "restore.h"
#include "session.h"
#include "soak.h"
#include "suite.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Each driver, in the order `coldstart bench` lists them and the suite
 * runs them; each descriptor carries what the suite passes it. */
static const struct bench_driver *const drivers[] = {
	&suite_driver, &lifecycle_driver, &boot_driver, &density_driver,
	&floor_driver, &restore_driver, &peers_driver, &rate_driver,
	&pool_driver, &session_driver, &probes_driver, &soak_driver,
	&ab_driver,
};

#define NR_DRIVERS (sizeof(drivers) / sizeof(drivers[0]))

const struct bench_driver *const *bench__drivers(size_t *n)
{
	*n = NR_DRIVERS;
	return drivers;
}

static void usage(FILE *out)
{
	fputs("Usage: coldstart bench DRIVER [OPTIONS]\n\nDrivers:\n", out);
	for (size_t i = 0; i < NR_DRIVERS; i++)
		fprintf(out, "  %-10s %s\n", drivers[i]->name,
			drivers[i]->summary);
	fputs("\n'coldstart bench DRIVER --help' describes each driver.\n", out);
}

#define SUITE_MAX_ARGS 64

/* The suite inside the emulated SVM host, writing into out_dir here. */
static int suite_emulated(char **args, int n, const char *out_dir)
{
	struct emulate_options o = { .argv = args, .outs = { out_dir },
				     .nr_outs = 1, .mem_mib = 8192,
				     .timeout_s = 3 * 3600 };
	struct emulate_result r;
	int ret = output__mkdirs(out_dir);

	args[n] = NULL;
	if (ret == 0)
		ret = emulate__run(&o, &r);
	if (ret == -ENOENT)
		return cli__error(CLI_SKIP, "bench suite: no usable /dev/kvm, "
				  "and no emulated host: %s", err__last());
	if (ret < 0)
		return cli__error(CLI_FAIL, "bench suite: %s", err__last());
	return r.exit_status;
}

/* The suite where KVM is: here with a usable /dev/kvm or inside the
 * emulated host already; else inside the emulated SVM host, unless
 * --no-emulate (--emulate goes there even with a usable device), with
 * argv (its options, parsed into o) passed on. */
static int suite_where(const struct bench_driver *d, void *o, int argc,
		       char **argv)
{
	char *args[SUITE_MAX_ARGS + 4], dir[PATH_MAX];
	const char *out = bench__common(d, o)->out_dir;
	const char *self = cli__self_exe();
	bool force, never;
	struct kvm_where w;
	int n = 3;

	suite__placement(o, &force, &never);
	kvm__where(&w, NULL);
	if (never || !self || (!force && (w.usable || w.emulated[0])))
		return d->run(o);
	args[0] = (char *)self;
	args[1] = "bench";
	args[2] = "suite";
	for (int i = 1; i < argc && n < SUITE_MAX_ARGS; i++)
		if (strcmp(argv[i], "--emulate") && strcmp(argv[i], "--no-emulate"))
			args[n++] = argv[i];
	if (!w.usable)
		fprintf(stderr, "coldstart: no usable /dev/kvm here because "
			"%s; running the suite inside an emulated SVM host: "
			"timings are functional, compare only ratios within "
			"this run\n", w.reason);
	if (!out) {
		suite__default_dir(dir, sizeof(dir));
		out = dir;
		args[n++] = "--out";
		args[n++] = dir;
	}
	return suite_emulated(args, n, out);
}

/* Parses, helps or runs driver d; its -errno becomes "bench NAME: why"
 * and the exit code for it. */
static int run_driver(const struct bench_driver *d, int argc, char **argv)
{
	char cmd[64];
	void *o;
	int ret;

	if (d->hidden && argc >= 2 &&
	    !strncmp(argv[1], d->hidden_prefix, strlen(d->hidden_prefix)))
		return d->hidden(argc, argv);
	snprintf(cmd, sizeof(cmd), "bench %s", d->name);
	o = calloc(1, d->size);
	if (!o)
		return cli__error(CLI_FAIL, "%s: out of memory", cmd);
	ret = bench__parse(d, drivers, NR_DRIVERS, argc, argv, o);
	if (ret == 1) {
		bench__help(d, stdout);
		ret = CLI_OK;
	} else if (ret < 0) {
		ret = cli__parse_error(cmd, cmd);
	} else {
		ret = d == &suite_driver ? suite_where(d, o, argc, argv)
					 : d->run(o);
		if (ret < 0)
			ret = cli__error(cli__exit_for(ret), "%s: %s", cmd,
					 err__last());
		if (d->release)
			d->release(o);
	}
	free(o);
	return ret;
}

int cmd_bench(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CLI_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return CLI_OK;
	}
	for (size_t i = 0; i < NR_DRIVERS; i++)
		if (!strcmp(argv[1], drivers[i]->name))
			return run_driver(drivers[i], argc - 1, argv + 1);
	cli__error(CLI_USAGE, "bench: unknown driver '%s'", argv[1]);
	return cli__usage_error("bench");
}
