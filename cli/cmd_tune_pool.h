/* `coldstart tune pool` (cmd_tune_pool.c). */
#ifndef COLDSTART_CMD_TUNE_POOL_H
#define COLDSTART_CMD_TUNE_POOL_H

/* Exit codes: 0 a recommendation, 1 no configuration meets the SLO (the
 * report and files are still written), 2 bad arguments or inputs, 77
 * --validate on a host that cannot run VMs; validation results never
 * change the status. */
int cmd_tune_pool(int argc, char **argv);

#endif
