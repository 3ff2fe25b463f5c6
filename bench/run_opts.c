/* `coldstart run`'s options, one table that parses them and makes their
 * help: the command uses it, and so do the drivers that forward options
 * to `coldstart run`. Also the --seccomp mode's start and report. */
#include "run_opts.h"

#include "args.h"
#include "cli.h"
#include "err.h"
#include "guest/agent_abi.h"
#include "jail.h"
#include "probes.h"
#include "run_linux.h"
#include "seccomp.h"
#include "units.h"

#include <inttypes.h>
#include <string.h>

#define DEFAULT_TIMEOUT_NS (60ull * 1000000000ull)
#define DEFAULT_STRIDE 16
#define MAX_MEM (1ull << 40)

const char *const run_opts_patterns[] = { "seq", "random", "stride", NULL };
const char *const run_opts_ops[] = { "read", "write", NULL };
const char *const run_opts_misbehaviours[] = { "none", "abort", "bad-port",
					       "fault", "hang", NULL };
const char *const run_opts_cpuids[] = { "none", "host", NULL };
static const char *const stop_names[] = { "done", "ready", "boot", NULL };

static int parse_enum(const char *opt, const char *text,
		      const char *const *names, uint32_t *out)
{
	unsigned int v;
	int ret = args__choice(opt, text, names, &v);

	if (ret == 0)
		*out = v;
	return ret;
}

/* The first option of each guest's own, for the error when they mix. */
static void note(const char **first, const char *name)
{
	if (!*first)
		*first = name;
}

/* ---- the Linux guest ---- */

static int set_kernel(void *ctx, const char *arg)
{
	((struct run_cli *)ctx)->kernel = arg;
	return 0;
}

static int set_initrd(void *ctx, const char *arg)
{
	struct run_cli *o = ctx;

	o->initrd = arg;
	note(&o->linux_opt, "initrd");
	return 0;
}

static int set_cmdline(void *ctx, const char *arg)
{
	struct run_cli *o = ctx;

	o->cmdline = arg;
	note(&o->linux_opt, "cmdline");
	return 0;
}

static int set_console(void *ctx, const char *arg)
{
	struct run_cli *o = ctx;

	o->console = arg;
	note(&o->linux_opt, "console");
	return 0;
}

/* PATH[,ro|rw|cow|overlay|overlay=FILE|reflink=FILE]: the mode after
 * the last comma that starts one (a path may hold commas; one ending in
 * ",ro" is given as PATH,ro,overlay; FILE may hold none). The default,
 * an unnamed overlay, won bench_drive.sh's comparison: a VM's writes in
 * a file, not in its private memory as with cow. `opt` names the option
 * (--drive or --rootfs) in the messages. */
static int parse_drive(const char *opt, const char *arg, struct run_drive *d)
{
	const char *comma = strrchr(arg, ','), *own = NULL;
	size_t len = strlen(arg);

	d->mode = VBLK_OVERLAY;
	d->own[0] = '\0';
	if (comma && vblk__mode(comma + 1, &d->mode, &own) == 0)
		len = (size_t)(comma - arg);
	else if (comma && (!strncmp(comma, ",overlay=", 9) ||
			   !strncmp(comma, ",reflink=", 9)))
		return err__set(EINVAL, "--%s '%s': no FILE after '%.8s'",
				opt, arg, comma + 1);
	if (own && strlen(own) >= sizeof(d->own))
		return err__set(EINVAL, "--%s '%s': the file is too long",
				opt, arg);
	if (own)
		strcpy(d->own, own);
	if (len == 0 || len >= sizeof(d->path))
		return err__set(EINVAL, "--%s '%s': %s", opt, arg,
				len ? "the path is too long" : "no path");
	memcpy(d->path, arg, len);
	d->path[len] = '\0';
	return 0;
}

static int set_drive(void *ctx, const char *arg)
{
	struct run_cli *o = ctx;
	int ret;

	note(&o->linux_opt, "drive");
	if (o->nr_drives == LINUX_MAX_DRIVES)
		return err__set(EINVAL, "--drive: at most %d drives",
				LINUX_MAX_DRIVES);
	ret = parse_drive("drive", arg, &o->drives[o->nr_drives]);
	if (ret == 0)
		o->nr_drives++;
	return ret;
}

static int set_rootfs(void *ctx, const char *arg)
{
	struct run_cli *o = ctx;

	note(&o->linux_opt, "rootfs");
	if (o->has_rootfs)
		return err__set(EINVAL, "--rootfs given twice");
	o->has_rootfs = true;
	return parse_drive("rootfs", arg, &o->rootfs);
}

static int set_exec(void *ctx, const char *arg)
{
	struct run_cli *o = ctx;

	note(&o->linux_opt, "exec");
	if (!*arg)
		return err__set(EINVAL, "--exec needs a command");
	o->exec = arg;
	return 0;
}

static int set_agent_port(void *ctx, const char *arg)
{
	struct run_cli *o = ctx;

	note(&o->linux_opt, "agent-port");
	return args__u64("--agent-port", arg, 1, UINT32_MAX - 1,
			 &o->agent_port);
}

/* PATH[,cid=N] */
static int set_vsock(void *ctx, const char *arg)
{
	struct run_cli *o = ctx;
	const char *cid = strstr(arg, ",cid=");
	size_t len = cid ? (size_t)(cid - arg) : strlen(arg);

	note(&o->linux_opt, "vsock");
	o->vsock_cid = 3;
	o->has_vsock = true;
	if (cid && args__u64("--vsock cid", cid + 5, 3, UINT32_MAX - 1,
			     &o->vsock_cid) < 0)
		return -EINVAL;
	if (len == 0 || len >= sizeof(o->vsock))
		return err__set(EINVAL, "--vsock '%s': %s", arg,
				len ? "the socket path is too long (a Unix "
				      "socket's is at most 107 bytes)" :
				      "no socket path");
	memcpy(o->vsock, arg, len);
	o->vsock[len] = '\0';
	return 0;
}

static int set_allow_pvm(void *ctx, const char *arg)
{
	struct run_cli *o = ctx;

	(void)arg;
	o->allow_pvm = true;
	note(&o->linux_opt, "allow-pvm");
	return 0;
}

/* ---- the VM ---- */

static int set_mem(void *ctx, const char *arg)
{
	struct run_cli *o = ctx;

	o->mem_given = true;
	return args__size("--mem", arg, &o->cfg.mem_size);
}

static int set_vcpus(void *ctx, const char *arg)
{
	struct run_cli *o = ctx;
	uint64_t v;
	int ret = args__u64("--vcpus", arg, 1, PROBE_MAX_VCPUS, &v);

	o->cfg.nr_vcpus = (unsigned int)v;
	return ret;
}

static int set_backend(void *ctx, const char *arg)
{
	return mem__choose(mem__backends(), "--mem-backend", arg,
			   &((struct run_cli *)ctx)->cfg.mem_ops);
}

static int set_cpuid(void *ctx, const char *arg)
{
	struct run_cli *o = ctx;
	uint32_t e = 0;
	int ret = parse_enum("--cpuid", arg, run_opts_cpuids, &e);

	note(&o->probe_opt, "cpuid");
	o->cfg.cpuid = e == 1 ? VM_CPUID_HOST : VM_CPUID_NONE;
	return ret;
}

static int set_kvm(void *ctx, const char *arg)
{
	((struct run_cli *)ctx)->kvm_path = arg;
	return 0;
}

/* ---- the probe guest's workload ---- */

static struct probe_params *probe(void *ctx, const char *name)
{
	struct run_cli *o = ctx;

	note(&o->probe_opt, name);
	return &o->cfg.probe;
}

static int set_init(void *ctx, const char *arg)
{
	return args__size("--init", arg, &probe(ctx, "init")->init_bytes);
}

static int set_ws(void *ctx, const char *arg)
{
	return args__size("--ws", arg, &probe(ctx, "ws")->ws_bytes);
}

static int set_pattern(void *ctx, const char *arg)
{
	return parse_enum("--pattern", arg, run_opts_patterns,
			  &probe(ctx, "pattern")->pattern);
}

static int set_stride(void *ctx, const char *arg)
{
	uint64_t v;
	int ret = args__u64("--stride", arg, 1, UINT32_MAX, &v);

	probe(ctx, "stride")->stride = (uint32_t)v;
	return ret;
}

static int set_op(void *ctx, const char *arg)
{
	return parse_enum("--op", arg, run_opts_ops, &probe(ctx, "op")->op);
}

static int set_seed(void *ctx, const char *arg)
{
	return args__u64("--seed", arg, 0, UINT64_MAX,
			 &probe(ctx, "seed")->seed);
}

static int set_compute(void *ctx, const char *arg)
{
	return args__u64("--compute", arg, 0, UINT64_MAX,
			 &probe(ctx, "compute")->compute_iters);
}

/* ---- control and output ---- */

static int set_stop(void *ctx, const char *arg)
{
	struct run_cli *o = ctx;
	uint32_t e = 0;
	int ret = parse_enum("--stop-at", arg, stop_names, &e);

	o->cfg.probe.stop_at_ready = e == 1;
	o->stop_at_boot = e == 2;
	return ret;
}

static int set_timeout(void *ctx, const char *arg)
{
	return args__duration("--timeout", arg,
			      &((struct run_cli *)ctx)->cfg.timeout_ns);
}

static int set_misbehave(void *ctx, const char *arg)
{
	return parse_enum("--misbehave", arg, run_opts_misbehaviours,
			  &probe(ctx, "misbehave")->misbehave);
}

static int set_json(void *ctx, const char *arg)
{
	(void)arg;
	((struct run_cli *)ctx)->json = true;
	return 0;
}

static int set_probes(void *ctx, const char *arg)
{
	return probes__parse_set(arg ? arg : "default",
				 &((struct run_cli *)ctx)->probes);
}

static int set_quiet(void *ctx, const char *arg)
{
	(void)arg;
	((struct run_cli *)ctx)->quiet = true;
	return 0;
}

static int set_seccomp(void *ctx, const char *arg)
{
	return seccomp__parse_mode(arg, &((struct run_cli *)ctx)->seccomp);
}

static int jail(void *ctx, int code, const char *arg)
{
	return jail__parse_option(&((struct run_cli *)ctx)->jail, code, arg);
}

static int set_jail(void *ctx, const char *arg)
{
	return jail(ctx, JAIL_OPT_DIR, arg);
}

static int set_uid(void *ctx, const char *arg)
{
	return jail(ctx, JAIL_OPT_UID, arg);
}

static int set_gid(void *ctx, const char *arg)
{
	return jail(ctx, JAIL_OPT_GID, arg);
}

static int set_cpus(void *ctx, const char *arg)
{
	return jail(ctx, JAIL_OPT_CPUS, arg);
}

static int set_memory(void *ctx, const char *arg)
{
	return jail(ctx, JAIL_OPT_MEMORY, arg);
}

static const struct opt run_table[] = {
	OPT_HEADING("Linux guest:"),
	{ "kernel", 0, "FILE", false, "bzImage or ELF vmlinux to boot instead "
	  "of the probe guest", set_kernel, NULL },
	{ "initrd", 0, "FILE", false, "initial ramdisk", set_initrd, NULL },
	{ "cmdline", 0, "TEXT", false, "kernel command line (default: \""
	  LINUX_DEFAULT_CMDLINE "\")", set_cmdline, NULL },
	{ "console", 0, "FILE", false, "guest console (COM1) output; - for "
	  "stdout (default;\nstderr with --json, none with --quiet)",
	  set_console, NULL },
	{ "drive", 0, "PATH", false, "a virtio disk, PATH[,MODE] (repeatable, "
	  "at most 4;\n/dev/vda, vdb...): a raw image such as a rootfs.ext4; "
	  "MODE\noverlay (default: writes go to an unnamed sparse file),\n"
	  "overlay=FILE (to FILE), cow (to this VM's memory),\nreflink=FILE "
	  "(to a reflinked copy), rw (into the image)\nor ro", set_drive,
	  NULL },
	{ "vsock", 0, "PATH", false, "a virtio-vsock device, PATH[,cid=N] "
	  "(guest CID N,\ndefault 3): the host connects to the Unix socket "
	  "PATH\nand writes \"CONNECT <port>\\n\"; a guest's connection "
	  "to\nhost port P reaches PATH_P (jailed: refused)", set_vsock,
	  NULL },
	{ "rootfs", 0, "PATH", false, "the root file system, PATH[,MODE] (an "
	  "ext4 image,\ne.g. `coldstart image build --rootfs`'s): the first "
	  "disk,\n/dev/vda; the initramfs's init switches to it and "
	  "starts\nthe guest agent", set_rootfs, NULL },
	{ "exec", 0, "CMD", false, "with --rootfs: run CMD (sh -c) in the "
	  "guest through the\nagent, print its stdout and stderr, exit with "
	  "its status", set_exec, NULL },
	{ "agent-port", 0, "N", false, "the agent's vsock port (default "
	  "1024)", set_agent_port, NULL },
	/* --stop-at is a Control row; its Linux value is said here */
	OPT_HEADING("  --stop-at boot      end the VM at the boot-complete "
		    "signal"),
	{ "allow-pvm", 0, NULL, false, "boot even on a PVM host, where "
	  "ordinary kernels cannot run", set_allow_pvm, NULL },
	OPT_HEADING("  (--mem defaults to 256M; --vcpus, --timeout, --json, "
		    "--quiet and\n  --probes apply)\n\nVM:"),
	{ "mem", 0, "SIZE", false, "guest memory (default: the least that "
	  "fits the workload,\nat least 2M; a multiple of 2 MiB)", set_mem,
	  NULL },
	{ "vcpus", 0, "N", false, "vCPUs, one host thread each (default 1, at "
	  "most 64)", set_vcpus, NULL },
	{ "mem-backend", 0, "NAME", false, "anon (default), memfd, hugetlb",
	  set_backend, NULL },
	{ "cpuid", 0, "WHICH", false, "none (default: the probe guest "
	  "executes no CPUID) or host\n(KVM_GET_SUPPORTED_CPUID, as an OS "
	  "guest gets)", set_cpuid, NULL },
	{ "kvm", 0, "PATH", false, "KVM device (default /dev/kvm)", set_kvm,
	  NULL },
	OPT_HEADING("Workload (split evenly across vCPUs):"),
	{ "init", 0, "SIZE", false, "memory first-touched before READY "
	  "(default 0)", set_init, NULL },
	{ "ws", 0, "SIZE", false, "working set touched after READY (default "
	  "0)", set_ws, NULL },
	{ "pattern", 0, "NAME", false, "seq (default), random, stride",
	  set_pattern, NULL },
	{ "stride", 0, "PAGES", false, "page stride for --pattern stride "
	  "(default 16)", set_stride, NULL },
	{ "op", 0, "NAME", false, "read (default) or write", set_op, NULL },
	{ "seed", 0, "N", false, "seed for random order and written values "
	  "(default 1)", set_seed, NULL },
	{ "compute", 0, "N", false, "spin iterations per vCPU after the "
	  "working set (default 0)", set_compute, NULL },
	OPT_HEADING("Control:"),
	{ "stop-at", 0, "WHEN", false, "done (default) or ready: stop once "
	  "every vCPU is READY", set_stop, NULL },
	{ "timeout", 0, "DUR", false, "stop the VM after DUR (default 60s; "
	  "0 = never)", set_timeout, NULL },
	{ "misbehave", 0, "WHAT", false, "make the guest fail on purpose:\n"
	  "abort, bad-port, fault, hang", set_misbehave, NULL },
	OPT_HEADING("Output:"),
	{ "json", 0, NULL, false, "one JSON document on stdout", set_json,
	  NULL },
	{ "probes", 0, "SET", true, "attach eBPF probes before the VM starts "
	  "and add their\nbreakdown to the output; SET: default, all, or a "
	  "list of\n" PROBES_NAMES,
	  set_probes, NULL },
	{ "quiet", 'q', NULL, false, "print nothing on stdout (errors still go "
	  "to stderr)", set_quiet, NULL },
	RUN_OPTS_SECCOMP_ROW(set_seccomp),
	{ "jail", 0, "DIR", false, "after setup, confine the VMM: new "
	  "namespaces (mount, PID,\nnetwork, IPC, UTS), DIR (empty) as its "
	  "root, no\ncapabilities, no_new_privs; off: no jail", set_jail,
	  NULL },
	{ "uid", 0, "N", false, "the jailed VMM's user (default 65534, "
	  "nobody)", set_uid, NULL },
	{ "gid", 0, "N", false, "the jailed VMM's group (default 65534, "
	  "nogroup)", set_gid, NULL },
	{ "cpus", 0, "N", false, "jailed: cgroup CPU limit, N CPUs (1.5 "
	  "allowed)", set_cpus, NULL },
	{ "memory", 0, "SIZE", false, "jailed: cgroup memory limit (e.g. "
	  "512M)", set_memory, NULL },
	OPT_END,
};

const struct opt *run_opts__table(void)
{
	return run_table;
}

void run_opts__defaults(struct run_cli *o)
{
	memset(o, 0, sizeof(*o));
	o->cfg.nr_vcpus = 1;
	o->cfg.timeout_ns = DEFAULT_TIMEOUT_NS;
	o->cfg.verify = true;
	o->cfg.probe.seed = 1;
	o->cfg.probe.stride = DEFAULT_STRIDE;
	o->seccomp = SECCOMP_KILL;
	jail__init(&o->jail);
}

void run_opts__help(FILE *out)
{
	struct run_cli defaults;
	struct opt_set set = { .opts = run_table, .ctx = &defaults };

	run_opts__defaults(&defaults);

	opt__help(out, &set, 1);
}
static int check_sizes(struct run_cli *o)
{
	struct run_config *cfg = &o->cfg;
	uint64_t need = runner__min_mem(&cfg->probe);

	if (!o->mem_given)
		cfg->mem_size = need;
	if (cfg->mem_size == 0 || cfg->mem_size % MEM_ALIGN ||
	    cfg->mem_size > MAX_MEM)
		return err__set(EINVAL, "--mem: %" PRIu64 " bytes is not a "
				"multiple of 2 MiB between 2M and 1T",
				cfg->mem_size);
	if (cfg->mem_size < need)
		return err__set(EINVAL, "--mem: the workload needs at least "
				"%" PRIu64 " MiB of guest memory", need / MiB);
	if (cfg->probe.init_bytes % PROBE_PAGE_SIZE ||
	    cfg->probe.ws_bytes % PROBE_PAGE_SIZE)
		return err__set(EINVAL, "--init and --ws must be multiples of "
				"4 KiB");
	return 0;
}

/* The probe guest's and the Linux guest's options do not mix. */
static int check_probe(struct run_cli *o)
{
	if (o->linux_opt)
		return err__set(EINVAL, "--%s needs --kernel", o->linux_opt);
	if (o->stop_at_boot)
		return err__set(EINVAL, "--stop-at boot needs --kernel (the "
				"probe guest stops at done or ready)");
	return check_sizes(o);
}

/* --rootfs becomes the first drive; --exec needs it (and runs to the
 * command's end: no stop at boot). */
static int check_rootfs(struct run_cli *o)
{
	if (o->exec && !o->has_rootfs)
		return err__set(EINVAL, "--exec needs --rootfs (the guest "
				"agent runs from the root disk)");
	if (o->exec && o->stop_at_boot)
		return err__set(EINVAL, "--exec and --stop-at boot exclude "
				"each other");
	if (o->exec && !o->has_vsock) { /* the agent's channel */
		o->has_vsock = true;
		o->vsock_cid = 3;
	}
	if (!o->agent_port)
		o->agent_port = AGENT_PORT;
	if (!o->has_rootfs)
		return 0;
	if (o->nr_drives == LINUX_MAX_DRIVES)
		return err__set(EINVAL, "--rootfs and --drive: at most %d "
				"disks in all", LINUX_MAX_DRIVES);
	memmove(&o->drives[1], &o->drives[0],
		o->nr_drives * sizeof(o->drives[0]));
	o->drives[0] = o->rootfs;
	o->nr_drives++;
	return 0;
}

static int check_linux(struct run_cli *o)
{
	if (o->probe_opt)
		return err__set(EINVAL, "--%s applies to the probe guest, not "
				"to --kernel", o->probe_opt);
	if (o->cfg.probe.stop_at_ready)
		return err__set(EINVAL, "--stop-at ready applies to the probe "
				"guest; a Linux guest stops at boot or runs "
				"until it exits");
	if (!o->mem_given)
		o->cfg.mem_size = LINUX_DEFAULT_MEM;
	if (o->cfg.mem_size == 0 || o->cfg.mem_size % MEM_ALIGN)
		return err__set(EINVAL, "--mem: %" PRIu64 " bytes is not a "
				"multiple of 2 MiB", o->cfg.mem_size);
	return check_rootfs(o);
}

int run_opts__parse(int argc, char **argv, struct run_cli *o)
{
	struct opt_set set = { .opts = run_table, .ctx = o };
	int ret;

	run_opts__defaults(o);
	ret = opt__parse(argc, argv, &set, 1, OPT_NO_OPERANDS);
	o->help = ret == 1;
	if (ret != 0)
		return o->help ? 0 : ret;
	if (o->json && o->quiet)
		return err__set(EINVAL, "--json and --quiet exclude each other");
	ret = o->kernel ? check_linux(o) : check_probe(o);
	if (ret == 0 && o->probes && o->jail.dir)
		return err__set(EINVAL, "--probes and --jail exclude each other "
				"(the probes' readers need the host's view)");
	return ret ? ret : jail__check(&o->jail);
}


int run_opts__seccomp_start(const char *cmd, enum seccomp_mode mode,
			    bool main_thread)
{
	if (seccomp__configure(mode, main_thread) < 0)
		return cli__error(CLI_FAIL, "%s: %s", cmd, err__last());
	return 0;
}

void run_opts__seccomp_report(void)
{
	struct seccomp_hit hits[32];
	int n;

	if (seccomp__mode() != SECCOMP_LOG)
		return;
	n = seccomp__logged(hits, 32, 300);
	if (n < 0) {
		fprintf(stderr, "coldstart: seccomp log: %s; the kernel logs "
			"each call outside the lists as an audit record "
			"(type=1326, in dmesg or the audit log)\n",
			err__last());
		return;
	}
	for (int i = 0; i < n; i++) {
		const char *name = seccomp__syscall_name(hits[i].nr);

		fprintf(stderr, "coldstart: seccomp log: thread %s made "
			"system call %s (%ld) outside its list (%u times)\n",
			hits[i].comm, name ? name : "?", hits[i].nr,
			hits[i].count);
	}
}
