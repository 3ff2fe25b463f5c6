/* The options that describe a warm pool, shared by `coldstart pool run`,
 * `coldstart pool serve` and `coldstart bench pool`: its source, what it
 * holds, its size and policy. */
#ifndef COLDSTART_POOL_CLI_H
#define COLDSTART_POOL_CLI_H

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
	bool allow_pvm;            /* a Linux snapshot on a PVM host */
	struct restore_snap snap;  /* --snapshot: what it holds */
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
	{ "seccomp", required_argument, NULL, 0x211 },                     \
	{ "allow-pvm", no_argument, NULL, 0x223 }

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

/* Whether this host can run the pool's guest, before /dev/kvm is opened,
 * as enum cli_exit: a Linux snapshot on a PVM host is 77 (the message
 * prefixed by `cmd`) unless --allow-pvm. */
int pool_cli__check_host(const struct pool_cli *o, const char *cmd);

/* Set by SIGINT or SIGTERM once pool_cli__catch_signals ran: the pool
 * commands stop serving, drain and exit. */
extern volatile sig_atomic_t pool_cli__stop;
void pool_cli__catch_signals(void);

/* The help text of the pool options. */
void pool_cli__usage(FILE *out);

/* The pool's configuration as a JSON object (results' "config"). */
json_t *pool_cli__config_json(const struct pool_cli *o);

#endif
