/* `coldstart run`'s options: one table that parses them and makes their
 * help, for the command and for the drivers that forward options to it;
 * and the --seccomp mode every command that runs VMs takes. */
#ifndef COLDSTART_RUN_OPTS_H
#define COLDSTART_RUN_OPTS_H

#include "jail.h"
#include "linux_x86.h"
#include "opt.h"
#include "runner.h"
#include "seccomp.h"

#include <stdbool.h>
#include <stdio.h>

struct run_cli {
	struct run_config cfg;
	const char *kvm_path; /* NULL: /dev/kvm */
	bool json;
	bool quiet;
	bool help;
	bool mem_given; /* --mem was set; else sized to fit the workload */
	unsigned int probes; /* --probes[=SET]: enum probes_set, 0 = none */
	/* A Linux guest instead of the probe guest (run_linux.c). */
	const char *kernel;   /* --kernel: NULL runs the probe guest */
	const char *initrd;
	const char *cmdline;  /* NULL: LINUX_DEFAULT_CMDLINE */
	const char *console;  /* NULL or "-": stdout (stderr with --json) */
	/* --drive PATH[,MODE] (repeatable) and --vsock PATH[,cid=N]: the
	 * Linux guest's virtio disks and host channel. */
	struct run_drive {
		char path[4096];
		enum vblk_mode mode;
		char own[4096]; /* overlay=FILE, reflink=FILE; "": none */
	} drives[LINUX_MAX_DRIVES];
	unsigned int nr_drives;
	char vsock[108];     /* its Unix socket; "": none */
	/* a vsock device: --vsock's, or (vsock "") one without a socket
	 * file, which --exec and a root disk's snapshot reach from inside */
	bool has_vsock;
	uint64_t vsock_cid;  /* default 3 */
	/* --rootfs PATH[,MODE]: drive 0 (vda), the root the guest's init
	 * switches to; --exec CMD: run there by the guest agent, listening on
	 * vsock --agent-port (default 1024). */
	struct run_drive rootfs;
	bool has_rootfs;
	const char *exec;
	uint64_t agent_port;
	bool allow_pvm;       /* boot even on PVM, where ring 0 crawls */
	bool stop_at_boot;    /* --stop-at boot: end at boot complete */
	const char *probe_opt; /* first probe-guest-only option given */
	const char *linux_opt; /* first Linux-only option given */
	enum seccomp_mode seccomp; /* default kill */
	struct jail_opts jail;     /* --jail DIR and its options */
};

/* The names of the values of --pattern, --op, --misbehave and --cpuid,
 * by their enum value; NULL-terminated. */
extern const char *const run_opts_patterns[];
extern const char *const run_opts_ops[];
extern const char *const run_opts_misbehaviours[];
extern const char *const run_opts_cpuids[];

/* The defaults of everything (no option given). */
void run_opts__defaults(struct run_cli *o);

/* Fills `out` from argv (argv[0] = "run"). Returns 0 (out->help set when
 * --help was given), or -EINVAL with the reason in err__last(). Sets
 * defaults for everything not given. */
int run_opts__parse(int argc, char **argv, struct run_cli *out);

/* The option table (its setters fill a struct run_cli). */
const struct opt *run_opts__table(void);

/* The options' lines of `coldstart run --help`, from the table. */
void run_opts__help(FILE *out);

/* The --seccomp row of every command that runs VMs, with its setter. */
#define RUN_OPTS_SECCOMP_ROW(setter) \
	{ "seccomp", 0, "MODE", false, "per-thread system call filters: " \
	  "kill (default), log\n(allowed, logged by the kernel, reported at " \
	  "exit) or off", (setter), NULL }

/* Configures the process's seccomp mode (seccomp.h); 0 or an exit code
 * with the message printed. */
int run_opts__seccomp_start(const char *cmd, enum seccomp_mode mode,
			    bool main_thread);

/* In log mode, names on stderr the calls the lists lack, as the kernel
 * logged them; else nothing. */
void run_opts__seccomp_report(void);

#endif
