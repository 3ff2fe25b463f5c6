/* One warm pool's configuration: the struct the pool runs from, its
 * command-line options (one table, which is also their help), its
 * validation, and its JSON both ways (the result documents' "config" and
 * `--config FILE`, e.g. the "pool_config" `coldstart tune pool` writes). `coldstart pool
 * run|serve` and `coldstart bench pool` take the same options. */
#ifndef COLDSTART_POOL_CONFIG_H
#define COLDSTART_POOL_CONFIG_H

#include "guest.h"
#include "linux_x86.h"
#include "mem.h"
#include "opt.h"
#include "policy.h"
#include "probe.h"
#include "seccomp.h"

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct kvm_host;

/* --exec's command (and a served request's "exec"): its bytes at most. */
#define POOL_EXEC_MAX 4096u

/* --config FILE: how many files one command takes. */
#define POOL_CONFIGS_MAX 8

enum pool_source {
	/* restored from a snapshot of the probe guest, or of a Linux guest
	 * (`snapshot create --kernel`: taken at its boot-complete signal; a
	 * request runs it on to its done signal, which ends it) */
	POOL_FROM_SNAPSHOT,
	POOL_FROM_PROBE,    /* the probe guest booted fresh to READY */
	/* a Linux guest booted fresh and paused at its boot-complete
	 * signal; a request runs it on to its done signal, which ends it */
	POOL_FROM_LINUX,
};

enum pool_hold { POOL_HOLD_WARM, POOL_HOLD_SHELL };
enum pool_on_empty {
	POOL_MAKE, /* the request makes its own VM (a miss) */
	POOL_WAIT, /* the request waits for the next refill */
};

struct pool_config {
	struct kvm_host *kvm; /* borrowed; shared by every thread */
	enum pool_source source;
	const char *snapshot_dir;             /* POOL_FROM_SNAPSHOT */
	const struct guest_mem_ops *strategy; /* its memory restore strategy */
	/* a snapshot of a guest with an agent (a --rootfs guest's): the
	 * command each request runs through it (pool_config__finish sets
	 * AGENT_DEFAULT_EXEC where none is given); NULL for other guests */
	const char *exec;
	/* POOL_FROM_LINUX: the checked boot plan (its kernel, initrd,
	 * command line, memory and vCPUs); borrowed, read by every refill
	 * thread at once (the loader reads the files with pread) */
	const struct linux_boot *linux_boot;
	/* POOL_FROM_PROBE: the guest's shape and workload */
	uint64_t mem_size;
	unsigned int nr_vcpus;
	struct probe_params probe;

	enum pool_hold hold;
	enum pool_policy policy;
	enum pool_on_empty on_empty;
	unsigned int size;    /* fixed: the target; follow: the first one */
	unsigned int min, max; /* bounds of the target (max >= 1) */
	unsigned int workers; /* refill threads, >= 1 */
	/* the policies' parameters (policy.h): half-life (> 0), follow's
	 * headroom, marginal's miss cost, burst detector and peak */
	struct policy_params params;
	uint64_t timeout_ns;  /* one request's run, and one VM's making */
	/* Testing: every Nth VM the refill threads make runs a guest that
	 * aborts after READY (probe sources only; 0: never); VMs requests
	 * make for themselves never do. */
	unsigned int abort_every;

	/* What only the options name (the pool reads none of it): */
	const char *kvm_path;      /* --kvm; NULL: /dev/kvm */
	enum seccomp_mode seccomp; /* --seccomp; default kill */
	bool allow_pvm;            /* a Linux guest on a PVM host */
	bool max_set;              /* --max given: --size does not raise it */
	/* --kernel's guest: its files, command line (NULL until
	 * pool_config__open_guest: the default) and memory (0: likewise) */
	const char *kernel, *initrd, *cmdline;
	uint64_t linux_mem;
	/* a snapshot's guest, read by pool_config__finish: a Linux guest's
	 * files, which the JSON names */
	bool snap_linux;
	struct snap_guest_rec snap_guest;
	/* its guest has vsock (vm.virtio): an agent */
	bool snap_agent;
	/* --kernel's files opened and planned (pool_config__open_guest) */
	struct linux_kernel lk;
	struct linux_boot lb;
	bool linux_open;
	/* --config's files, read before the other options
	 * (pool_config__load_args): their documents, which the strings
	 * above may point into, and each FILE as argv holds it, checked off
	 * as the parser comes to its --config */
	json_t *loaded;
	const char *config_args[POOL_CONFIGS_MAX];
	unsigned int nr_configs, configs_taken;
};

/* A policy parameter's option (policy.h): its JSON key, the object it is
 * in (NULL: the configuration itself; else a policy's name, written for
 * that policy only), whether its value is seconds (a duration option),
 * and its field, a double, in struct policy_params. */
struct pool_param {
	const char *json, *group;
	bool seconds;
	size_t offset;
};

/* The i-th policy parameter among the options, its option's name in
 * *option; NULL past the last. */
const struct pool_param *pool_config__param(size_t i, const char **option);

/* Its value in c. */
double *pool_config__param_value(struct pool_config *c,
				 const struct pool_param *p);

/* getopt_long values of the pool options: POOL_OPT_BASE and up. */
#define POOL_OPT_BASE 0x200
/* How many getopt_long entries pool_config__getopt writes at most. */
#define POOL_OPTIONS_MAX 40

/* The defaults: the probe guest (2 MiB init, 1 MiB working set, 1 vCPU)
 * held warm, 4 VMs (at most 64), one refill thread, fixed size, a miss
 * makes its own VM, 10 s per request. */
void pool_config__defaults(struct pool_config *c);

/* The option table (opt.h), which is also the help: a heading, then a
 * row per option, each setter given the struct pool_config. `bench
 * pool` parses with it; `pool run|serve` through the three below. */
const struct opt *pool_config__table(void);

/* The pool options' getopt_long entries, from the option table, into
 * out[POOL_OPTIONS_MAX]; returns how many (a command appends its own
 * and the { NULL } entry). */
size_t pool_config__getopt(struct option *out);

/* Takes getopt's (c, optarg) when c is a pool option: 0 or -EINVAL with
 * a message; 1 when c is not one. */
int pool_config__option(struct pool_config *c, int opt, const char *arg);

/* Sets the option --`name` from `text`, as on the command line: 0 or
 * -EINVAL with a message. */
int pool_config__set(struct pool_config *c, const char *name,
		     const char *text);

/* The help of the pool options, from the same table, their texts in
 * one column. */
void pool_config__usage(FILE *out);

/* After parsing: the guest's memory size and the size bounds that
 * follow from the others, and what --snapshot holds; -EINVAL (-ENOENT
 * for a missing snapshot) with a message when they disagree, DIR is no
 * snapshot, or a --config FILE pool_config__load_args read was not
 * --config's to the parser. */
int pool_config__finish(struct pool_config *c);

/* Checks the policy's parameters (half-life, headroom, marginal's):
 * -EINVAL naming the offending value. pool__start checks them too. */
int pool_config__check_policy(const struct pool_config *c);

/* Whether the guest is a Linux guest (--kernel, or a Linux snapshot)
 * and this host's KVM is PVM without allow_pvm. */
bool pool_config__pvm_refused(const struct pool_config *c);

/* --kernel (c->cmdline and c->linux_mem set: the command's defaults
 * where not given): opens the kernel and initrd and plans the boot into c->linux_boot (before /dev/kvm is
 * opened, and before a jail: the files stay open); 0 or -errno with a
 * message. A no-op for other sources. */
int pool_config__open_guest(struct pool_config *c);

/* Closes what pool_config__open_guest opened and frees --config's
 * documents; the config is not used after. */
void pool_config__release(struct pool_config *c);

/* The configuration as a JSON object (results' "config"), or NULL when
 * out of memory. */
json_t *pool_config__to_json(const struct pool_config *c);

/* Sets what the object `j` names, as the options of the same names
 * would (keys it does not know are left alone, so that a result's
 * "config" can be given); `what` names it in errors. 0 or -EINVAL. */
int pool_config__from_json(struct pool_config *c, const json_t *j,
			   const char *what);

/* The options that set this configuration, from the same table as
 * --config reads it (" --snapshot DIR --mem-restore mmap --hold warm
 * ..."; values quoted for a POSIX shell where needed): malloc'd, or NULL
 * when out of memory. */
char *pool_config__options_text(const struct pool_config *c);

/* --config FILE: before the options are parsed (after
 * pool_config__defaults), reads each FILE that argv (argv[0] the
 * command; up to "--") gives as "--config FILE" or "--config=FILE", in
 * order, and takes its configuration as pool_config__from_json: FILE's
 * "pool_config" (as `coldstart tune pool` writes it into
 * tune-pool.json), a pool result's "config", or FILE itself. Every
 * other option, before or after it, then overrides what it set; the
 * table's --config row only checks FILE off. Keeps the documents
 * (c->loaded). 0 or -EINVAL with a message. */
int pool_config__load_args(struct pool_config *c, int argc, char **argv);

#endif
