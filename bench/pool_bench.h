/* `coldstart bench pool`: arrival processes replayed open loop against a
 * real warm pool. */
#ifndef COLDSTART_POOL_BENCH_H
#define COLDSTART_POOL_BENCH_H

#include "driver.h"

struct pool_config;

/* Its options: its own, --json, --out and the pool's (pool_config.h),
 * --config's files under the other options. */
extern const struct bench_driver pool_driver;

/* Before /dev/kvm is opened (and before a jail: the files stay open),
 * for `pool run|serve` too, as enum cli_exit with the message prefixed
 * by `cmd`: --kernel's guest gets its default command line and memory,
 * its kernel and initrd are opened and planned (1 when they cannot be);
 * a Linux guest on a PVM host is 77 unless --allow-pvm. Unless CLI_OK,
 * the config is released. */
int pool_bench__prepare_guest(struct pool_config *c, const char *cmd);

#endif
