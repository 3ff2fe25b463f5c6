/* `coldstart bench`: the table of benchmark drivers. */
#include "cli.h"
#include "err.h"
#include "floor.h"
#include "args.h"
#include "lifecycle.h"
#include "bench_probes.h"
#include "boot.h"
#include "density.h"
#include "peers.h"
#include "rate.h"
#include "restore.h"
#include "suite.h"

#include <string.h>

static int cmd_bench_floor(int argc, char **argv);

static const struct command drivers[] = {
	{ "suite", "every driver in turn (--quick, --smoke), then the report",
	  cmd_bench_suite },
	{ "lifecycle", "create -> READY -> destroy, in-process and "
		       "process-per-VM, against the floor", cmd_bench_lifecycle },
	{ "boot", "N fresh VMs: the distribution of every timeline phase",
	  cmd_bench_boot },
	{ "density", "VMs per GiB: held VMs, fresh and snapshot clones, "
		     "RSS/PSS/USS", cmd_bench_density },
	{ "floor", "the bare-ioctl cycle alone (the process-per-VM floor)",
	  cmd_bench_floor },
	{ "restore", "snapshot restore strategies x memory x working set, "
		     "cold and warm cache", cmd_bench_restore },
	{ "peers", "the trivial-guest lifecycle under QEMU microvm beside "
		   "ours, as ratios", cmd_bench_peers },
	{ "rate", "VM creation rate: sequential, concurrent workers and "
		  "bursts", cmd_bench_rate },
	{ "probes", "the eBPF probes' overhead: runs without and with "
		    "--probes", cmd_bench_probes },
};

#define NR_DRIVERS (sizeof(drivers) / sizeof(drivers[0]))

const struct command *bench__drivers(size_t *n)
{
	*n = NR_DRIVERS;
	return drivers;
}

static void usage(FILE *out)
{
	fputs("Usage: coldstart bench DRIVER [OPTIONS]\n\nDrivers:\n", out);
	for (size_t i = 0; i < NR_DRIVERS; i++)
		fprintf(out, "  %-10s %s\n", drivers[i].name,
			drivers[i].summary);
	fputs("\n'coldstart bench DRIVER --help' describes each driver.\n", out);
}

/* N bare-ioctl cycles, silently: used as a child by the lifecycle driver
 * and usable alone to check that a host can run VMs at all. */
static int cmd_bench_floor(int argc, char **argv)
{
	const char *kvm_path = NULL;
	uint64_t n = 1;
	struct floor f;
	int ret = 0;

	for (int i = 1; ret == 0 && i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs("Usage: coldstart bench floor [-nN] [--kvm PATH]\n"
			      "Runs N (default 1) create -> run -> destroy "
			      "cycles with bare KVM ioctls;\nprints nothing, "
			      "exits 0 when all succeeded.\n", stdout);
			return CLI_OK;
		}
		if (!strncmp(argv[i], "-n", 2) && argv[i][2])
			ret = args__u64("-n", argv[i] + 2, 1, 100000000, &n);
		else if (!strcmp(argv[i], "--kvm") && i + 1 < argc)
			kvm_path = argv[++i];
		else
			ret = err__set(EINVAL, "unexpected argument '%s'",
				       argv[i]);
	}
	if (ret < 0)
		return cli__parse_error("bench floor", "bench floor");
	ret = floor__open(&f, kvm_path);
	if (ret < 0)
		return cli__error(cli__exit_for(ret), "bench floor: %s",
				  err__last());
	for (uint64_t i = 0; ret == 0 && i < n; i++)
		ret = floor__cycle(&f);
	floor__close(&f);
	if (ret < 0)
		return cli__error(CLI_FAIL, "bench floor: %s", err__last());
	return CLI_OK;
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
		if (!strcmp(argv[1], drivers[i].name))
			return drivers[i].run(argc - 1, argv + 1);
	cli__error(CLI_USAGE, "bench: unknown driver '%s'", argv[1]);
	return cli__usage_error("bench");
}
