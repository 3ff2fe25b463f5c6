/* `coldstart bench`: the table of benchmark drivers. */
#include "cli.h"
#include "emulate.h"
#include "err.h"
#include "kvm.h"
#include "output.h"
#include "floor.h"
#include "ab.h"
#include "args.h"
#include "lifecycle.h"
#include "bench_probes.h"
#include "boot.h"
#include "density.h"
#include "peers.h"
#include "pool_bench.h"
#include "rate.h"
#include "restore.h"
#include "soak.h"
#include "suite.h"

#include <string.h>

static int cmd_bench_floor(int argc, char **argv);
static int cmd_bench_suite_where(int argc, char **argv);

/* Each driver with the arguments the suite gives it (suite.h says which
 * is which): quick keeps the suite to a few minutes on a 2-core PVM host;
 * smoke only proves every driver runs end to end. A Linux guest boots in
 * tenths of a second natively but seconds in the emulated host, so its
 * quick runs are shorter. Not in the suite: the floor runs inside
 * lifecycle, probes needs BPF and measures the probes, not VMs, soak runs
 * for many minutes and is run on its own. */
static const struct bench_driver drivers[] = {
	{ "suite", "every driver in turn (--quick, --smoke), then the report",
	  cmd_bench_suite_where, { .quick = NULL } },
	{ "lifecycle", "create -> READY -> destroy, in-process and "
		       "process-per-VM, against the floor", cmd_bench_lifecycle,
	  { .quick = "-n 100 -w 10", .smoke = "-n 3 -w 1 --mode in-process" } },
	{ "boot", "N fresh VMs: the distribution of every timeline phase",
	  cmd_bench_boot,
	  { .quick = "-n 50 -w 5", .smoke = "-n 3 -w 1", .linux_full = "",
	    .linux_quick = "-n 20 -w 2", .linux_smoke = "-n 2 -w 0" } },
	{ "density", "VMs per GiB: held VMs, fresh and snapshot clones, "
		     "RSS/PSS/USS", cmd_bench_density,
	  { .quick = "-n 8 -w 1", .smoke = "-n 2 -w 0", .linux_full = "",
	    .linux_quick = "-n 4 -w 0", .linux_smoke = "-n 2 -w 0" } },
	{ "floor", "the bare-ioctl cycle alone (the process-per-VM floor)",
	  cmd_bench_floor, { .quick = NULL } },
	{ "restore", "snapshot restore strategies x memory x working set "
		     "(or --snapshot DIR), cold and warm cache",
	  cmd_bench_restore,
	  { .quick = "-n 5 -w 1",
	    .smoke = "-n 2 -w 0 --mem 8M --ws 4M --strategy mmap,prefetch "
		     "--no-baseline",
	    .linux_full = "", .linux_quick = "-n 5 -w 1",
	    .linux_smoke = "-n 2 -w 0 --strategy mmap,uffd --cache warm" } },
	{ "peers", "the trivial-guest lifecycle under QEMU microvm beside "
		   "ours, as ratios", cmd_bench_peers,
	  { .quick = "-n 10 -w 2", .smoke = "-n 2 -w 1" } },
	{ "rate", "VM creation rate: sequential, concurrent workers and "
		  "bursts", cmd_bench_rate,
	  { .quick = "-n 20 -w 2 --rounds 3",
	    .smoke = "-n 2 -w 1 --rounds 1 --workers 1", .linux_full = "",
	    .linux_quick = "-n 4 -w 1 --rounds 2",
	    .linux_smoke = "-n 1 -w 0 --rounds 1 --workers 1 --burst 2" } },
	{ "pool", "arrivals replayed open loop against a warm pool: hits, "
		  "latency, idle VMs", cmd_bench_pool,
	  { .quick = "--arrivals poisson:50 --duration 10s --size 4",
	    .smoke = "--arrivals poisson:20 --duration 1s --size 2",
	    .linux_full = "--arrivals poisson:5 --duration 30s --size 4",
	    .linux_quick = "--arrivals poisson:2 --duration 10s --size 2 "
			   "--baseline 5",
	    .linux_smoke = "--arrivals poisson:2 --duration 2s --size 1 "
			   "--baseline 2" } },
	{ "probes", "the eBPF probes' overhead: runs without and with "
		    "--probes", cmd_bench_probes, { .quick = NULL } },
	{ "soak", "10,000 cycles in one process: descriptor, RSS and slab "
		  "growth (not in suite)", cmd_bench_soak, { .quick = NULL } },
	{ "ab", "one driver as A and B (two binaries or option sets), "
		"interleaved, gated", cmd_bench_ab, { .quick = NULL } },
};

#define NR_DRIVERS (sizeof(drivers) / sizeof(drivers[0]))

const struct bench_driver *bench__drivers(size_t *n)
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
 * --no-emulate (--emulate goes there even with a usable device). */
static int cmd_bench_suite_where(int argc, char **argv)
{
	char *args[SUITE_MAX_ARGS + 4], dir[PATH_MAX];
	const char *out = NULL, *self = cli__self_exe();
	bool force = false, never = false, help = false;
	struct kvm_where w;
	int n = 3, ret;

	args[0] = (char *)self;
	args[1] = "bench";
	args[2] = "suite";
	for (int i = 1; i < argc && n < SUITE_MAX_ARGS; i++) {
		force |= !strcmp(argv[i], "--emulate");
		never |= !strcmp(argv[i], "--no-emulate");
		help |= !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");
		if (!strcmp(argv[i], "--out") && i + 1 < argc)
			out = argv[i + 1];
		else if (!strncmp(argv[i], "--out=", 6))
			out = argv[i] + 6;
		if (strcmp(argv[i], "--emulate") && strcmp(argv[i], "--no-emulate"))
			args[n++] = argv[i];
	}
	kvm__where(&w, NULL);
	if (help || never || !self || (!force && (w.usable || w.emulated[0]))) {
		args[n] = NULL;
		return suite__run(n - 2, args + 2, drivers, NR_DRIVERS);
	}
	if (force && never)
		return cli__error(CLI_USAGE, "bench suite: --emulate and "
				  "--no-emulate exclude each other");
	args[n] = NULL;
	ret = suite__check_args(n - 2, args + 2, drivers, NR_DRIVERS);
	if (ret != 0)
		return ret;
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
