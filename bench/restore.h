/* `coldstart bench restore`: every memory-restore strategy x guest memory
 * size x working-set size, with the page cache cold and warm, beside the
 * same request phase in a VM that never stopped. */
#ifndef COLDSTART_RESTORE_BENCH_H
#define COLDSTART_RESTORE_BENCH_H

int cmd_bench_restore(int argc, char **argv);

#endif
