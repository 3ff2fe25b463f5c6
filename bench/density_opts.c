/* `bench density`'s options: the probe guest's workload or the user's
 * own Linux guest, checked before any VM starts. */
#include "density_int.h"

#include "args.h"
#include "cli.h"
#include "err.h"
#include "probe.h"
#include "run_linux.h"

#include <getopt.h>
#include <inttypes.h>
#include <string.h>

#define DEFAULT_SETTLE_NS 1000000000ull

void density__usage(FILE *out)
{
	fputs("Usage: coldstart bench density [OPTIONS]\n"
	      "       coldstart bench density --kernel FILE [--initrd FILE] "
	      "[--cmdline TEXT]\n                               [OPTIONS]\n"
	      "Starts VMM processes one at a time, each keeping its guest "
	      "alive (fresh: a new\nVM; clone: restored from one snapshot "
	      "with --mem-restore mmap, sharing clean\npages through the page "
	      "cache), until the count or the budget is reached.\nAfter each "
	      "start: RSS, PSS and USS of every VMM (smaps_rollup) and kernel\n"
	      "memory (/proc/meminfo deltas). Reports the density curve, "
	      "per-VM overhead\nbeyond guest memory and VMs per GiB.\n\n"
	      "  -n, --count N      VMs to start (default 16)\n"
	      "  --budget SIZE      start a VM only while the predicted PSS plus "
	      "kernel memory\n                     with it stays within SIZE "
	      "(the first VM always starts)\n"
	      "  -w, --warmup N     VMs started and released first (default 2)\n"
	      "  --mode MODE        fresh, clone or both (default both)\n"
	      "The probe guest (default), held after its workload ran to "
	      "DONE:\n"
	      "  --init SIZE        guest memory touched before READY (default "
	      "4M)\n"
	      "  --ws SIZE          working set read after READY (default 4M)\n"
	      "Your own Linux guest instead:\n"
	      "  --kernel FILE      bzImage or ELF vmlinux; fresh VMs are held "
	      "paused at its\n                     boot-complete signal; "
	      "clones, restored from a snapshot taken\n                     "
	      "there, run on until the guest's done signal (byte 124) or\n"
	      "                     --settle, whichever comes first, and are "
	      "held paused there\n"
	      "  --initrd FILE      its initramfs\n"
	      "  --cmdline TEXT     kernel command line (default as `coldstart "
	      "run --kernel`)\n"
	      "  --mem SIZE         guest memory (default 256M)\n"
	      "  --vcpus N          vCPUs (default 1)\n"
	      "  --settle DUR       longest a clone runs before it is held "
	      "(default 1s)\n"
	      "  --allow-pvm        run even on a PVM host, where ordinary "
	      "kernels cannot\n                     boot (else exit 77)\n"
	      "Output:\n"
	      "  --json             the result document on stdout\n"
	      "  --out DIR          also write DIR/density.json and "
	      "DIR/density.md\n"
	      "  -h, --help         this help\n", out);
}

static const struct option options[] = {
	{ "count", required_argument, NULL, 'n' },
	{ "warmup", required_argument, NULL, 'w' },
	{ "budget", required_argument, NULL, 'b' },
	{ "init", required_argument, NULL, 'i' },
	{ "ws", required_argument, NULL, 's' },
	{ "mode", required_argument, NULL, 'm' },
	{ "kernel", required_argument, NULL, 'K' },
	{ "initrd", required_argument, NULL, 'I' },
	{ "cmdline", required_argument, NULL, 'C' },
	{ "mem", required_argument, NULL, 'M' },
	{ "vcpus", required_argument, NULL, 'V' },
	{ "settle", required_argument, NULL, 'S' },
	{ "allow-pvm", no_argument, NULL, 'P' },
	{ "json", no_argument, NULL, 'j' },
	{ "out", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char *option_name(int c)
{
	for (const struct option *opt = options; opt->name; opt++)
		if (opt->val == c)
			return opt->name;
	return "?";
}

/* The probe guest's options and the Linux guest's do not mix. */
static int check_probe(const struct density_opts *o)
{
	if (o->linux_opt)
		return err__set(EINVAL, "--%s needs --kernel", o->linux_opt);
	if (o->init % 4096 || o->ws % 4096)
		return err__set(EINVAL, "--init and --ws must be multiples of "
				"4 KiB");
	return 0;
}

static int check_linux(const struct density_opts *o)
{
	if (o->probe_opt)
		return err__set(EINVAL, "--%s is the probe guest's workload; a "
				"Linux guest touches what its kernel and init "
				"do, so it does not apply with --kernel",
				o->probe_opt);
	if (o->mem == 0 || o->mem % MEM_ALIGN)
		return err__set(EINVAL, "--mem: %" PRIu64 " bytes is not a "
				"multiple of 2 MiB", o->mem);
	if (o->settle_ns == 0)
		return err__set(EINVAL, "--settle must be above 0");
	return 0;
}

int density__parse(int argc, char **argv, struct density_opts *o)
{
	int c, ret = 0;

	*o = (struct density_opts){ .count = 16, .warmup = 2,
				    .init = 4ull << 20, .ws = 4ull << 20,
				    .fresh = true, .clone = true,
				    .mem = LINUX_DEFAULT_MEM, .vcpus = 1,
				    .settle_ns = DEFAULT_SETTLE_NS };
	optind = 0;
	opterr = 0;
	while (ret == 0 && (c = getopt_long(argc, argv, "n:w:h", options, NULL)) != -1) {
		switch (c) {
		case 'n':
			ret = args__u64("--count", optarg, 1, DENSITY_MAX_VMS,
					&o->count);
			break;
		case 'w': ret = args__u64("--warmup", optarg, 0, 1000, &o->warmup); break;
		case 'b': ret = args__size("--budget", optarg, &o->budget); break;
		case 'i': ret = args__size("--init", optarg, &o->init); break;
		case 's': ret = args__size("--ws", optarg, &o->ws); break;
		case 'K': o->kernel = optarg; break;
		case 'I': o->initrd = optarg; break;
		case 'C': o->cmdline = optarg; break;
		case 'M': ret = args__size("--mem", optarg, &o->mem); break;
		case 'V':
			ret = args__u64("--vcpus", optarg, 1, PROBE_MAX_VCPUS,
					&o->vcpus);
			break;
		case 'S':
			ret = args__duration("--settle", optarg, &o->settle_ns);
			break;
		case 'P': o->allow_pvm = true; break;
		case 'm':
			ret = args__both("--mode", optarg, "fresh", "clone",
					 &o->fresh, &o->clone);
			break;
		case 'j': o->json = true; break;
		case 'o': o->out_dir = optarg; break;
		case 'h': return 1;
		default:
			return args__bad_option(argv);
		}
		if (strchr("is", c) && !o->probe_opt)
			o->probe_opt = option_name(c);
		if (strchr("ICMVSP", c) && !o->linux_opt)
			o->linux_opt = option_name(c);
	}
	if (ret == 0)
		ret = args__no_operands(argc, argv);
	if (ret == 0)
		ret = o->kernel ? check_linux(o) : check_probe(o);
	return ret;
}

void density__linux_args(const struct density_opts *o, char **argv, int *n,
		       char *mem, char *vcpus, size_t size)
{
	snprintf(mem, size, "--mem=%" PRIu64, o->mem);
	snprintf(vcpus, size, "--vcpus=%" PRIu64, o->vcpus);
	argv[(*n)++] = "--kernel";
	argv[(*n)++] = (char *)o->kernel;
	if (o->initrd) {
		argv[(*n)++] = "--initrd";
		argv[(*n)++] = (char *)o->initrd;
	}
	if (o->cmdline) {
		argv[(*n)++] = "--cmdline";
		argv[(*n)++] = (char *)o->cmdline;
	}
	argv[(*n)++] = mem;
	argv[(*n)++] = vcpus;
	if (o->allow_pvm)
		argv[(*n)++] = "--allow-pvm";
}

json_t *density__config_json(const struct density_opts *o)
{
	json_t *cfg = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I}",
				"guest", o->kernel ? "linux" : "probe",
				"clone_mem_restore", "mmap", "mode",
				o->fresh && o->clone ? "both" :
				o->fresh ? "fresh" : "clone", "budget_bytes",
				(json_int_t)o->budget, "count",
				(json_int_t)o->count, "warmup",
				(json_int_t)o->warmup);
	json_t *g;

	if (!o->kernel)
		g = json_pack("{s:I, s:I, s:s, s:s}", "init_bytes",
			      (json_int_t)o->init, "ws_bytes",
			      (json_int_t)o->ws, "fresh_held_at", "done",
			      "clone_held_at", "done");
	else /* result__new names the kernel and initrd by sha256 */
		g = json_pack("{s:s, s:s?, s:s, s:I, s:I, s:I, s:s, s:s}",
			      "kernel", o->kernel, "initrd", o->initrd,
			      "cmdline", o->cmdline ? o->cmdline
						    : LINUX_DEFAULT_CMDLINE,
			      "mem_bytes", (json_int_t)o->mem, "vcpus",
			      (json_int_t)o->vcpus, "settle_ns",
			      (json_int_t)o->settle_ns, "fresh_held_at",
			      "boot (paused at the boot-complete signal)",
			      "clone_held_at", "done or settle (resumed until "
			      "the done signal or settle_ns, then paused)");
	json_object_update(cfg, g);
	json_decref(g);
	return cfg;
}

int density__check_guest(const struct density_opts *o)
{
	if (!o->kernel)
		return CLI_OK;
	return run_linux__check_guest("bench density", o->kernel, o->initrd,
				      o->cmdline, o->mem,
				      (unsigned int)o->vcpus, o->allow_pvm);
}
