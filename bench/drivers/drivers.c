/* The table of measuring drivers: each one's command and what `coldstart
 * bench suite` passes it. The suite reads it; `coldstart bench` lists the
 * suite and then these. */
#include "drivers.h"

#include "bench_probes.h"
#include "boot.h"
#include "density.h"
#include "floor.h"
#include "lifecycle.h"
#include "peers.h"
#include "pool_bench.h"
#include "rate.h"
#include "restore.h"
#include "soak.h"

/* Each driver with the arguments the suite gives it (drivers.h says which
 * is which): quick keeps the suite to a few minutes on a 2-core PVM host;
 * smoke only proves every driver runs end to end. A Linux guest boots in
 * tenths of a second natively but seconds in the emulated host, so its
 * quick runs are shorter. Not in the suite: the floor runs inside
 * lifecycle, probes needs BPF and measures the probes, not VMs, soak runs
 * for many minutes and is run on its own. */
static const struct bench_driver drivers[] = {
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
};

#define NR_DRIVERS (sizeof(drivers) / sizeof(drivers[0]))

const struct bench_driver *bench__drivers(size_t *n)
{
	*n = sizeof(drivers) / sizeof(drivers[0]);
	return drivers;
}
