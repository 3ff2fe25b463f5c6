/* `coldstart tune pool --host RESULTS_DIR`: which warm-pool policy and
 * parameters meet a start-latency SLO at the least idle VM-seconds, for
 * an arrival process, simulated (poolsim.h) with the costs a `bench
 * suite` measured on a host. No KVM needed, except by --validate, which
 * replays the arrivals through real fixed pools (`bench pool` children)
 * and puts measured beside simulated hit ratio and p99. */
#ifndef COLDSTART_TUNE_POOL_H
#define COLDSTART_TUNE_POOL_H

/* Exit codes: 0 a recommendation, 1 no configuration meets the SLO (the
 * report and files are still written), 2 bad arguments or inputs, 77
 * --validate on a host that cannot run VMs; validation results never
 * change the status. */
int cmd_tune_pool(int argc, char **argv);

#endif
