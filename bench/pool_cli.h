/* The options that describe a warm pool, shared by `coldstart pool run`,
 * `coldstart pool serve` and `coldstart bench pool`: its source, what it
 * holds, its size and policy. */
#ifndef COLDSTART_POOL_CLI_H
#define COLDSTART_POOL_CLI_H

#include "linux_x86.h"
#include "pool.h"
#include "restore.h"
#include "seccomp.h"

#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>

struct pool_cli {
	struct pool_config cfg;
	const char *kvm_path;
	bool max_set;
	enum seccomp_mode seccomp; /* default kill */
	bool allow_pvm;            /* a Linux guest on a PVM host */
	struct restore_snap snap;  /* --snapshot: what it holds */
	/* --kernel: the guest booted fresh, and its plan once prepared */
	const char *kernel, *initrd, *cmdline;
	uint64_t linux_mem;
	struct linux_kernel lk;
	struct linux_boot lb;
	bool linux_open;
};

/* getopt_long entries of the pool options (values 0x200 and up); end a
 * command's own table with POOL_CLI_OPTIONS then the { NULL } entry. */
#define POOL_CLI_OPTIONS                                                   \
	{ "snapshot", required_argument, NULL, 0x200 },                    \
	{ "mem-restore", required_argument, NULL, 0x201 },                 \
	{ "init", required_argument, NULL, 0x202 },                        \
	{ "ws", required_argument, NULL, 0x203 },                          \
	{ "vcpus", required_argument, NULL, 0x204 },                       \
	{ "hold", required_argument, NULL, 0x205 },                        \
	{ "size", required_argument, NULL, 0x206 },                        \
	{ "min", required_argument, NULL, 0x207 },                         \
	{ "max", required_argument, NULL, 0x208 },                         \
	{ "workers", required_argument, NULL, 0x209 },                     \
	{ "policy", required_argument, NULL, 0x20a },                      \
	{ "halflife", required_argument, NULL, 0x20b },                    \
	{ "headroom", required_argument, NULL, 0x20c },                    \
	{ "on-empty", required_argument, NULL, 0x20d },                    \
	{ "timeout", required_argument, NULL, 0x20e },                     \
	{ "kvm", required_argument, NULL, 0x20f },                         \
	{ "abort-every", required_argument, NULL, 0x210 },                 \
	{ "miss-cost", required_argument, NULL, 0x220 },                   \
	{ "burst-halflife", required_argument, NULL, 0x221 },              \
	{ "burst-z", required_argument, NULL, 0x222 },                     \
	{ "peak-halflife", required_argument, NULL, 0x228 },               \
	{ "seccomp", required_argument, NULL, 0x211 },                     \
	{ "allow-pvm", no_argument, NULL, 0x223 },                        \
	{ "kernel", required_argument, NULL, 0x224 },                      \
	{ "initrd", required_argument, NULL, 0x225 },                      \
	{ "cmdline", required_argument, NULL, 0x226 },                     \
	{ "mem", required_argument, NULL, 0x227 }

/* The defaults: the probe guest (2 MiB init, 1 MiB working set, 1 vCPU)
 * held warm, 4 VMs (at most 64), one refill thread, fixed size, a miss
 * makes its own VM, 10 s per request. */
void pool_cli__defaults(struct pool_cli *o);

/* Takes getopt's (c, optarg) when c is a pool option: 0 or -EINVAL with a
 * message; 1 when c is not one. */
int pool_cli__option(struct pool_cli *o, int c, const char *arg);

/* After parsing: the guest's memory size and the size bounds that
 * follow from the others, and what --snapshot holds (o->snap); -EINVAL
 * with a message when they disagree or DIR is no snapshot. */
int pool_cli__finish(struct pool_cli *o);

/* Before /dev/kvm is opened (and before a jail: the files stay open),
 * as enum cli_exit with the message prefixed by `cmd`: --kernel's
 * kernel and initrd are opened and planned into cfg.linux_boot (1 when
 * they cannot be); a Linux guest on a PVM host is 77 unless
 * --allow-pvm. */
int pool_cli__prepare_guest(struct pool_cli *o, const char *cmd);

/* Closes what pool_cli__prepare_guest opened (after the pool drained). */
void pool_cli__release_guest(struct pool_cli *o);

/* Set by SIGINT or SIGTERM once pool_cli__catch_signals ran: the pool
 * commands stop serving, drain and exit. */
extern volatile sig_atomic_t pool_cli__stop;
void pool_cli__catch_signals(void);

/* The help text of the pool options. */
void pool_cli__usage(FILE *out);

/* The pool's configuration as a JSON object (results' "config"). */
json_t *pool_cli__config_json(const struct pool_cli *o);

#endif
