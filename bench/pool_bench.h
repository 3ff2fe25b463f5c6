/* `coldstart bench pool`: arrival processes replayed open loop against a
 * real warm pool. */
#ifndef COLDSTART_POOL_BENCH_H
#define COLDSTART_POOL_BENCH_H

int cmd_bench_pool(int argc, char **argv);

#endif
