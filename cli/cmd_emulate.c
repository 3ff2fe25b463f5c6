/* `coldstart emulate`: runs a command inside the emulated SVM host, for
 * machines without a usable /dev/kvm. */
#include "args.h"
#include "commands.h"
#include "emulate.h"
#include "err.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

enum {
	OPT_OUT = 0x100, OPT_VCPUS, OPT_MEM, OPT_DISK, OPT_TIMEOUT, OPT_STALL, OPT_BOOT,
	OPT_IMAGE, OPT_CONSOLE, OPT_WORK, OPT_QUIET, OPT_HOLD, OPT_CGROUP,
};

static const struct option long_options[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "out", required_argument, NULL, OPT_OUT },
	{ "vcpus", required_argument, NULL, OPT_VCPUS },
	{ "mem", required_argument, NULL, OPT_MEM },
	{ "disk", required_argument, NULL, OPT_DISK },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "stall", required_argument, NULL, OPT_STALL },
	{ "boot-timeout", required_argument, NULL, OPT_BOOT },
	{ "image", required_argument, NULL, OPT_IMAGE },
	{ "console", required_argument, NULL, OPT_CONSOLE },
	{ "work-dir", required_argument, NULL, OPT_WORK },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "hold-kvm", no_argument, NULL, OPT_HOLD }, /* the host's init */
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *out)
{
	fputs("Usage: coldstart emulate [OPTIONS] -- COMMAND [ARGS...]\n"
	      "Runs COMMAND inside an emulated x86 host with AMD SVM (QEMU TCG,\n"
	      "Debian's cloud kernel with kvm_amd), where a real /dev/kvm works:\n"
	      "coldstart's way to run VMs on a machine without a usable\n"
	      "/dev/kvm. COMMAND sees this machine's files at the same paths\n"
	      "(read-only; its writes go to a scratch disk and are thrown away)\n"
	      "and the same working directory and environment; only the --out\n"
	      "directories are written back. Its stdout and stderr arrive here\n"
	      "as they come. Timings inside are functional only: the CPU is\n"
	      "emulated, about 30x slower; results made there say so.\n"
	      "  -h, --help          show this help and exit\n"
	      "      --out DIR       a directory COMMAND may write on this\n"
	      "                      machine (made if missing; repeatable, up to 8)\n"
	      "      --vcpus N       the emulated host's CPUs (default 2)\n"
	      "      --mem SIZE      its memory (default 4G)\n"
	      "      --disk SIZE     its scratch disk, ext4 on virtio-blk, sparse\n"
	      "                      (default 16G); /tmp and every write land there\n"
	      "      --timeout DUR   stop the host after DUR (default: none)\n"
	      "      --stall DUR     stop a host whose init's heartbeat (every 10 s)\n"
	      "                      is missing this long (default 180s)\n"
	      "      --boot-timeout DUR  boot the host once more when it is not up\n"
	      "                      after DUR, or its console was silent for\n"
	      "                      --stall (the command has not started);\n"
	      "                      fail when the second boot is not either\n"
	      "                      (default 120s; it usually takes 5-40 s)\n"
	      "      --image DIR     kernel and modules from this image directory\n"
	      "                      (default: 'coldstart image build', cached)\n"
	      "      --console FILE  keep the host's console log in FILE\n"
	      "      --work-dir DIR  where the scratch disk lives (default /var/tmp)\n"
	      "      --cgroup V      the host's cgroups: v2 (default; cgroup2 on\n"
	      "                      /sys/fs/cgroup) or v1 (a tmpfs there with the\n"
	      "                      cpu,cpuacct and memory hierarchies, as on a\n"
	      "                      cgroup v1 machine)\n"
	      "      --quiet         no progress lines\n"
	      "Exit: COMMAND's exit status; 1 when the host failed (stalled, timed\n"
	      "out, ended early); 2 usage; 77 a tool or the kernel is missing\n"
	      "(qemu-system-x86, qemu-system-common, busybox-static, e2fsprogs).\n"
	      "Example: coldstart emulate --out results -- coldstart bench suite "
	      "--quick --out results/x\n",
	      out);
}

static int parse_seconds(const char *opt, const char *text, unsigned *out)
{
	uint64_t ns;
	int ret = args__duration(opt, text, &ns);

	if (ret == 0 && (ns < 1000000000ull || ns / 1000000000ull > 86400 * 7))
		ret = err__set(EINVAL, "%s: '%s' must be between 1 s and 7 days",
			       opt, text);
	if (ret == 0)
		*out = (unsigned)(ns / 1000000000ull);
	return ret;
}

static int parse_mib(const char *opt, const char *text, uint64_t min_mib,
		     uint64_t *out)
{
	uint64_t bytes;
	int ret = args__size(opt, text, &bytes);

	if (ret == 0 && (bytes >> 20) < min_mib)
		ret = err__set(EINVAL, "%s: '%s' is below %llu MiB", opt, text,
			       (unsigned long long)min_mib);
	if (ret == 0)
		*out = bytes >> 20;
	return ret;
}

static int parse_option(int c, struct emulate_options *o, bool *hold)
{
	uint64_t n;
	int ret = 0;

	switch (c) {
	case OPT_OUT:
		if (o->nr_outs == EMULATE_MAX_OUTS)
			return err__set(EINVAL, "--out: at most %d directories",
					EMULATE_MAX_OUTS);
		o->outs[o->nr_outs++] = optarg;
		break;
	case OPT_VCPUS:
		ret = args__u64("--vcpus", optarg, 1, 16, &n);
		o->vcpus = (unsigned)n;
		break;
	case OPT_MEM:
		return parse_mib("--mem", optarg, 512, &o->mem_mib);
	case OPT_DISK:
		return parse_mib("--disk", optarg, 256, &o->disk_mib);
	case OPT_TIMEOUT:
		return parse_seconds("--timeout", optarg, &o->timeout_s);
	case OPT_STALL:
		return parse_seconds("--stall", optarg, &o->stall_s);
	case OPT_BOOT:
		return parse_seconds("--boot-timeout", optarg,
				     &o->boot_timeout_s);
	case OPT_IMAGE:
		o->image_dir = optarg;
		break;
	case OPT_CONSOLE:
		o->console = optarg;
		break;
	case OPT_WORK:
		o->work_parent = optarg;
		break;
	case OPT_QUIET:
		o->quiet = true;
		break;
	case OPT_CGROUP:
		if (strcmp(optarg, "v1") && strcmp(optarg, "v2"))
			return err__set(EINVAL, "--cgroup: '%s' is not v1 or "
					"v2", optarg);
		o->cgroup_v1 = !strcmp(optarg, "v1");
		break;
	case OPT_HOLD:
		*hold = true;
		break;
	default:
		return err__set(EINVAL, "unknown option");
	}
	return ret;
}

/* 0 to go on, 1 for --help, -errno for a usage error. */
static int parse_args(int argc, char **argv, struct emulate_options *o,
		      bool *hold)
{
	int c, ret;

	optind = 0; /* another command may have run getopt before */
	/* '+': stop at COMMAND, whose own options are not ours. */
	while ((c = getopt_long(argc, argv, "+h", long_options, NULL)) != -1) {
		if (c == 'h')
			return 1;
		if (c == '?')
			return args__bad_option(argv);
		ret = parse_option(c, o, hold);
		if (ret < 0)
			return ret;
	}
	if (*hold)
		return args__no_operands(argc, argv);
	if (optind >= argc)
		return err__set(EINVAL, "no command: coldstart emulate "
				"[OPTIONS] -- COMMAND [ARGS...]");
	o->argv = argv + optind;
	return 0;
}

int cmd_emulate(int argc, char **argv)
{
	struct emulate_options o = { 0 };
	struct emulate_result r;
	bool hold = false;
	int ret = parse_args(argc, argv, &o, &hold);

	if (ret)
		return cli__parsed(ret, "emulate", usage);
	if (hold)
		return cli__error(cli__exit_for(emulate__hold_kvm()),
				  "emulate --hold-kvm: %s", err__last());
	ret = emulate__run(&o, &r);
	if (ret == -ENOENT)
		return cli__error(CLI_SKIP, "emulate: %s", err__last());
	if (ret == -EINTR)
		return cli__error(130, "emulate: %s", err__last());
	if (ret < 0)
		return cli__error(CLI_FAIL, "emulate: %s", err__last());
	return r.exit_status;
}
