/* A `coldstart bench` driver as its descriptor: name, summary, option
 * tables (its help is made from them), options struct, parse and run;
 * and the common options most drivers take, one table for all. The
 * command itself (cli/cmd_bench.c) finds, parses, helps and runs. */
#ifndef COLDSTART_DRIVER_H
#define COLDSTART_DRIVER_H

#include "opt.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What `coldstart bench suite` passes a driver at each level: nothing
 * at the full level for the probe guest. quick NULL: the suite does not
 * run the driver. The linux_* are for the user's own guest (--kernel);
 * linux_full NULL: the driver measures only the built-in probe guest and
 * is not run with --kernel. The root_* are for that guest on its root
 * disk (--rootfs: slower, as its agent runs a command), NULL: the
 * linux_* ones; a driver with root_* and no linux_* measures the user's
 * guest only with --rootfs. */
struct suite_args {
	const char *quick, *smoke;
	const char *linux_full, *linux_quick, *linux_smoke;
	const char *root_full, *root_quick, *root_smoke;
};

#define BENCH_FORWARD_MAX 56

/* The common options' values; a driver's options struct embeds one. The
 * driver's init sets the defaults and the limits. */
struct bench_common {
	uint64_t count;      /* -n, --count: counted samples */
	uint64_t warmup;     /* -w, --warmup: uncounted samples first */
	uint64_t count_max, warmup_max; /* count is 1.., warmup 0.. */
	bool json;           /* the result document on stdout */
	const char *out_dir; /* --out: also DIR/NAME.json and DIR/NAME.md */
	const char *kvm_path; /* --kvm; NULL: /dev/kvm */
	/* The guest: `coldstart run`'s options, as given (NULL: not given);
	 * kernel NULL: the probe guest. */
	const char *kernel, *initrd, *cmdline, *mem, *vcpus;
	bool allow_pvm;
	/* With forwards: the options that are `coldstart run`'s and not
	 * the driver's, as given ("--name", its value), to pass on. */
	char *forwarded[BENCH_FORWARD_MAX];
	int nr_forwarded;
	char forwarded_names[BENCH_FORWARD_MAX][24]; /* their "--name" */
	/* The table of drivers it was found in (the suite runs its rows). */
	const struct bench_driver *const *table;
	size_t nr_table;
	/* With operands: what follows the options (ab's DRIVER ...). */
	char **operands;
	int nr_operands;
};

/* Which rows of the common table a driver takes. */
enum bench_common_opt {
	BENCH_COUNT = 1 << 0,
	BENCH_WARMUP = 1 << 1,
	BENCH_JSON = 1 << 2,
	BENCH_OUT = 1 << 3,
	BENCH_KVM = 1 << 4,
	/* the guest's, listed after the driver's own */
	BENCH_KERNEL = 1 << 5,
	BENCH_INITRD = 1 << 6,
	BENCH_CMDLINE = 1 << 7,
	BENCH_MEM = 1 << 8,
	BENCH_VCPUS = 1 << 9,
	BENCH_ALLOW_PVM = 1 << 10,
	BENCH_GUEST = BENCH_KERNEL | BENCH_INITRD | BENCH_CMDLINE | BENCH_MEM |
		      BENCH_VCPUS | BENCH_ALLOW_PVM,
};

struct bench_driver {
	const char *name;
	const char *summary; /* one line, for `coldstart bench` and help */
	/* The help before the options ("Usage: ..." and what it does) and
	 * after them (NULL: nothing). */
	const char *usage, *epilog;
	void (*more_help)(FILE *out); /* after the epilog (NULL: none) */
	unsigned int common;     /* enum bench_common_opt bits */
	bool operands;           /* operands follow the options */
	/* It takes `coldstart run`'s options too, into forwarded (boot,
	 * which passes them on); its help says so, not listing them. */
	bool forwards;
	const struct opt *opts;  /* its own rows (NULL: none) */
	size_t size;             /* sizeof its options struct */
	size_t common_at;        /* where its struct bench_common is */
	void (*init)(void *o);   /* the defaults */
	/* After every option was taken: combinations that cannot work;
	 * 0 or -EINVAL (NULL: none). */
	int (*check)(void *o);
	/* Runs with the parsed options: an exit code (enum cli_exit), or
	 * -errno with err__last() saying why. */
	int (*run)(void *o);
	/* Another room's table, after the driver's own and the guest's
	 * (the pool's, pool_config.c), its setters given the part of the
	 * options struct at more_at (NULL: none). */
	const struct opt *(*more_opts)(void);
	size_t more_at;
	/* After init, before the options are parsed: what argv (argv[0]
	 * the driver's name) holds that every option overrides (the
	 * pool's --config files); 0 or -EINVAL (NULL: nothing). */
	int (*prepare)(void *o, int argc, char **argv);
	/* Frees what prepare, the options, check or run kept: once the run
	 * is over, or by bench__parse when it returns other than 0 (NULL:
	 * nothing kept). */
	void (*release)(void *o);
	/* The hidden mode of the driver's own child processes, when argv[1]
	 * starts with hidden_prefix (density's held VMs): an exit code. */
	const char *hidden_prefix;
	int (*hidden)(int argc, char **argv);
	struct suite_args suite;
};

/* The common options' table; `mask` selects rows (enum
 * bench_common_opt), a heading goes before the guest's. Writes at most
 * `max` rows plus the end to `rows`. */
void bench__common_rows(unsigned int mask, struct opt *rows, size_t max);

/* argv (argv[0] the driver's name) into `o` (d->size bytes): defaults,
 * the table of drivers d is in (`nr` of them), d->prepare, every option
 * through the tables, then d->check. 0 (d->release is the caller's
 * then), 1 for --help, or -EINVAL with err__last() saying why. */
int bench__parse(const struct bench_driver *d,
		 const struct bench_driver *const *table, size_t nr, int argc,
		 char **argv, void *o);

/* The driver's --help, made from its usage, tables and epilog. */
void bench__help(const struct bench_driver *d, FILE *out);

/* The common options of a driver's options struct. */
struct bench_common *bench__common(const struct bench_driver *d, void *o);

#endif
