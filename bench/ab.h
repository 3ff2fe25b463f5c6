/* `coldstart bench ab`: one driver as A and B, interleaved, gated. */
#ifndef COLDSTART_BENCH_AB_H
#define COLDSTART_BENCH_AB_H

int cmd_bench_ab(int argc, char **argv);

#endif
