/* `coldstart run`: one VM with the probe guest, its timeline and result. */
#include "cmd_run.h"

#include "args.h"
#include "cli.h"
#include "err.h"
#include "jail.h"
#include "output.h"
#include "run_linux.h"
#include "run_probes.h"
#include "seccomp.h"

#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <string.h>

#define MiB ((uint64_t)1 << 20)
#define DEFAULT_TIMEOUT_NS (60ull * 1000000000ull)
#define DEFAULT_STRIDE 16
#define MAX_MEM (1ull << 40)

static const char *const pattern_names[] = { "seq", "random", "stride", NULL };
static const char *const op_names[] = { "read", "write", NULL };
static const char *const misbehave_names[] = { "none", "abort", "bad-port",
					       "fault", "hang", NULL };
static const char *const stop_names[] = { "done", "ready", "boot", NULL };
static const char *const cpuid_names[] = { "none", "host", NULL };

static void usage(FILE *out)
{
	fputs("Usage: coldstart run [OPTIONS]\n"
	      "       coldstart run --kernel FILE [--initrd FILE] [--cmdline "
	      "TEXT] [OPTIONS]\n"
	      "Runs the built-in probe guest (or a Linux guest) in one VM and "
	      "prints its\ntimeline.\n\n"
	      "Linux guest:\n"
	      "  --kernel FILE       bzImage or ELF vmlinux to boot instead of "
	      "the probe guest\n"
	      "  --initrd FILE       initial ramdisk\n"
	      "  --cmdline TEXT      kernel command line (default: \"" LINUX_DEFAULT_CMDLINE "\")\n"
	      "  --console FILE      guest console (COM1) output; - for stdout "
	      "(default;\n"
	      "                      stderr with --json, none with --quiet)\n"
	      "  --stop-at boot      end the VM at the boot-complete signal\n"
	      "  --allow-pvm         boot even on a PVM host, where ordinary "
	      "kernels cannot run\n"
	      "  (--mem defaults to 256M; --vcpus, --timeout, --json, --quiet "
	      "and --probes apply)\n\n"
	      "VM:\n"
	      "  --mem SIZE          guest memory (default: the least that fits "
	      "the workload,\n"
	      "                      at least 2M; a multiple of 2 MiB)\n"
	      "  --vcpus N           vCPUs, one host thread each (default 1, "
	      "at most 64)\n"
	      "  --mem-backend NAME  anon (default), memfd, hugetlb\n"
	      "  --cpuid WHICH       none (default: the probe guest executes "
	      "no CPUID) or host\n"
	      "                      (KVM_GET_SUPPORTED_CPUID, as an OS "
	      "guest gets)\n"
	      "  --kvm PATH          KVM device (default /dev/kvm)\n"
	      "Workload (split evenly across vCPUs):\n"
	      "  --init SIZE         memory first-touched before READY "
	      "(default 0)\n"
	      "  --ws SIZE           working set touched after READY "
	      "(default 0)\n"
	      "  --pattern NAME      seq (default), random, stride\n"
	      "  --stride PAGES      page stride for --pattern stride "
	      "(default 16)\n"
	      "  --op NAME           read (default) or write\n"
	      "  --seed N            seed for random order and written values "
	      "(default 1)\n"
	      "  --compute N         spin iterations per vCPU after the "
	      "working set (default 0)\n"
	      "Control:\n"
	      "  --stop-at WHEN      done (default) or ready: stop once every "
	      "vCPU is READY\n"
	      "  --timeout DUR       stop the VM after DUR (default 60s; 0 = "
	      "never)\n"
	      "  --misbehave WHAT    make the guest fail on purpose: abort, "
	      "bad-port, fault, hang\n"
	      "Output:\n"
	      "  --json              one JSON document on stdout\n"
	      "  --probes[=SET]      attach eBPF probes before the VM starts "
	      "and add their\n"
	      "                      breakdown to the output; SET: default, "
	      "all, or a list of\n"
	      "                      kvmexit,faults,kvmioctl,schedlat,"
	      "mmaplock,faulttime\n"
	      "  -q, --quiet         print nothing on stdout (errors still go to "
	      "stderr)\n"
	      CLI_SECCOMP_HELP
	      JAIL_HELP
	      "  -h, --help          this help\n\n"
	      "Exit codes: 0 the guest finished with the predicted checksum, "
	      "1 it did not,\n2 usage error, 77 this host cannot run VMs.\n",
	      out);
}

enum {
	OPT_MEM = 256, OPT_VCPUS, OPT_BACKEND, OPT_KVM, OPT_INIT, OPT_WS,
	OPT_PATTERN, OPT_STRIDE, OPT_OP, OPT_SEED, OPT_COMPUTE, OPT_STOP,
	OPT_TIMEOUT, OPT_MISBEHAVE, OPT_JSON, OPT_CPUID, OPT_PROBES,
	OPT_SECCOMP, OPT_KERNEL, OPT_INITRD, OPT_CMDLINE, OPT_CONSOLE, OPT_ALLOW_PVM,
};

static const struct option options[] = {
	{ "mem", required_argument, NULL, OPT_MEM },
	{ "vcpus", required_argument, NULL, OPT_VCPUS },
	{ "mem-backend", required_argument, NULL, OPT_BACKEND },
	{ "kvm", required_argument, NULL, OPT_KVM },
	{ "init", required_argument, NULL, OPT_INIT },
	{ "ws", required_argument, NULL, OPT_WS },
	{ "pattern", required_argument, NULL, OPT_PATTERN },
	{ "stride", required_argument, NULL, OPT_STRIDE },
	{ "op", required_argument, NULL, OPT_OP },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "compute", required_argument, NULL, OPT_COMPUTE },
	{ "stop-at", required_argument, NULL, OPT_STOP },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "misbehave", required_argument, NULL, OPT_MISBEHAVE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "cpuid", required_argument, NULL, OPT_CPUID },
	{ "probes", optional_argument, NULL, OPT_PROBES },
	{ "seccomp", required_argument, NULL, OPT_SECCOMP },
	{ "kernel", required_argument, NULL, OPT_KERNEL },
	{ "initrd", required_argument, NULL, OPT_INITRD },
	{ "cmdline", required_argument, NULL, OPT_CMDLINE },
	{ "console", required_argument, NULL, OPT_CONSOLE },
	{ "allow-pvm", no_argument, NULL, OPT_ALLOW_PVM },
	JAIL_LONG_OPTIONS,
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse_backend(const char *text, struct run_config *cfg)
{
	return mem__choose(mem__backends(), "--mem-backend", text,
			   &cfg->mem_ops);
}

static int parse_enum(const char *opt, const char *text,
		      const char *const *names, uint32_t *out)
{
	unsigned int v;
	int ret = args__choice(opt, text, names, &v);

	if (ret == 0)
		*out = v;
	return ret;
}

static const char *option_name(int c)
{
	for (const struct option *opt = options; opt->name; opt++)
		if (opt->val == c)
			return opt->name;
	return "?";
}

static int parse_linux(int c, const char *arg, struct run_cli *o)
{
	switch (c) {
	case OPT_KERNEL:
		o->kernel = arg;
		return 0;
	case OPT_INITRD:
		o->initrd = arg;
		break;
	case OPT_CMDLINE:
		o->cmdline = arg;
		break;
	case OPT_CONSOLE:
		o->console = arg;
		break;
	default:
		o->allow_pvm = true;
		break;
	}
	if (!o->linux_opt)
		o->linux_opt = option_name(c);
	return 0;
}

/* Options only the probe guest understands. */
static bool probe_only(int c)
{
	switch (c) {
	case OPT_INIT: case OPT_WS: case OPT_PATTERN: case OPT_STRIDE:
	case OPT_OP: case OPT_SEED: case OPT_COMPUTE: case OPT_MISBEHAVE:
	case OPT_CPUID:
		return true;
	default:
		return false;
	}
}

static int parse_one(int c, const char *arg, struct run_cli *o)
{
	struct run_config *cfg = &o->cfg;
	struct probe_params *p = &cfg->probe;
	uint64_t v;
	uint32_t e = 0;
	int ret;

	ret = jail__parse_option(&o->jail, c, arg);
	if (ret <= 0)
		return ret;
	if (probe_only(c) && !o->probe_opt)
		o->probe_opt = option_name(c);
	if (c >= OPT_KERNEL)
		return parse_linux(c, arg, o);
	switch (c) {
	case OPT_MEM:
		o->mem_given = true;
		return args__size("--mem", arg, &cfg->mem_size);
	case OPT_VCPUS:
		ret = args__u64("--vcpus", arg, 1, PROBE_MAX_VCPUS, &v);
		cfg->nr_vcpus = (unsigned int)v;
		return ret;
	case OPT_BACKEND:
		return parse_backend(arg, cfg);
	case OPT_KVM:
		o->kvm_path = arg;
		return 0;
	case OPT_INIT:
		return args__size("--init", arg, &p->init_bytes);
	case OPT_WS:
		return args__size("--ws", arg, &p->ws_bytes);
	case OPT_PATTERN:
		return parse_enum("--pattern", arg, pattern_names, &p->pattern);
	case OPT_STRIDE:
		ret = args__u64("--stride", arg, 1, UINT32_MAX, &v);
		p->stride = (uint32_t)v;
		return ret;
	case OPT_OP:
		return parse_enum("--op", arg, op_names, &p->op);
	case OPT_SEED:
		return args__u64("--seed", arg, 0, UINT64_MAX, &p->seed);
	case OPT_COMPUTE:
		return args__u64("--compute", arg, 0, UINT64_MAX,
				 &p->compute_iters);
	case OPT_STOP:
		ret = parse_enum("--stop-at", arg, stop_names, &e);
		p->stop_at_ready = e == 1;
		o->stop_at_boot = e == 2;
		return ret;
	case OPT_TIMEOUT:
		return args__duration("--timeout", arg, &cfg->timeout_ns);
	case OPT_MISBEHAVE:
		return parse_enum("--misbehave", arg, misbehave_names,
				  &p->misbehave);
	case OPT_JSON:
		o->json = true;
		return 0;
	case OPT_CPUID:
		ret = parse_enum("--cpuid", arg, cpuid_names, &e);
		cfg->cpuid = e == 1 ? VM_CPUID_HOST : VM_CPUID_NONE;
		return ret;
	case OPT_PROBES:
		return probes__parse_set(arg ? arg : "default", &o->probes);
	case OPT_SECCOMP:
		return seccomp__parse_mode(arg, &o->seccomp);
	case 'q':
		o->quiet = true;
		return 0;
	case 'h':
		o->help = true;
		return 0;
	default:
		return err__set(EINVAL, "unknown option");
	}
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
	return 0;
}

int cmd_run__parse(int argc, char **argv, struct run_cli *o)
{
	int c, ret = 0;

	memset(o, 0, sizeof(*o));
	o->cfg.nr_vcpus = 1;
	o->cfg.timeout_ns = DEFAULT_TIMEOUT_NS;
	o->cfg.verify = true;
	o->cfg.probe.seed = 1;
	o->cfg.probe.stride = DEFAULT_STRIDE;
	o->seccomp = SECCOMP_KILL;
	jail__init(&o->jail);
	optind = 0;
	opterr = 0;
	while (ret == 0 && (c = getopt_long(argc, argv, "qh", options, NULL)) != -1) {
		if (c == '?')
			return args__bad_option(argv);
		ret = parse_one(c, optarg, o);
	}
	if (ret == 0 && args__no_operands(argc, argv) < 0)
		return -EINVAL;
	if (ret == 0 && !o->help)
		ret = o->kernel ? check_linux(o) : check_probe(o);
	if (o->json && o->quiet)
		return err__set(EINVAL, "--json and --quiet exclude each other");
	if (ret == 0 && !o->help && o->probes && o->jail.dir)
		return err__set(EINVAL, "--probes and --jail exclude each other "
				"(the probes' readers need the host's view)");
	if (ret == 0 && !o->help)
		ret = jail__check(&o->jail);
	return ret;
}

static void print_human(const struct run_cli *o, const struct run_result *r)
{
	const struct run_config *cfg = &o->cfg;
	const struct probe_params *p = &cfg->probe;
	printf("probe guest: %u vCPU%s, %" PRIu64 " MiB %s memory; init %" PRIu64
	       " KiB, working set %" PRIu64 " KiB (%s %s), compute %" PRIu64 "\n",
	       cfg->nr_vcpus, cfg->nr_vcpus > 1 ? "s" : "",
	       cfg->mem_size / MiB, cfg->mem_ops ? cfg->mem_ops->name : "anon",
	       p->init_bytes >> 10, p->ws_bytes >> 10, pattern_names[p->pattern],
	       op_names[p->op], p->compute_iters);
	timeline__print(stdout, &r->tl);
	printf("outcome: %s%s%s\n", vm__outcome_name(r->outcome),
	       r->reason[0] ? ": " : "", r->reason);
	if (r->probe.done == cfg->nr_vcpus && cfg->verify)
		printf("checksum: 0x%016" PRIx64 " (%s 0x%016" PRIx64 ")\n",
		       r->probe.checksum,
		       r->checksum_ok ? "matches the prediction"
				      : "WRONG, the host predicted",
		       r->expected_checksum);
	printf("guest work: %" PRIu64 " pages touched after READY, %" PRIu64
	       " ucalls, %" PRIu64 " VM exits\n", r->probe.pages,
	       r->probe.ucalls, r->exits);
	if (r->have_memory)
		printf("memory before teardown: RSS %" PRIu64 " KiB, PSS %" PRIu64
		       " KiB, USS %" PRIu64 " KiB; guest resident %" PRIu64
		       " KiB; VMM overhead (USS - guest) %" PRIu64 " KiB\n",
		       r->memory.rss_kib, r->memory.pss_kib, r->memory.uss_kib,
		       r->memory.guest_rss_kib,
		       memstat__overhead_kib(&r->memory));
}

static json_t *config_json(const struct run_cli *o)
{
	const struct run_config *cfg = &o->cfg;
	const struct probe_params *p = &cfg->probe;

	return json_pack("{s:s, s:I, s:i, s:s, s:s, s:I, s:I, s:s, s:i, s:s, "
			 "s:I, s:I, s:s, s:s, s:I}",
			 "guest", "probe", "mem_bytes", (json_int_t)cfg->mem_size,
			 "vcpus", (int)cfg->nr_vcpus, "mem_backend",
			 cfg->mem_ops ? cfg->mem_ops->name : "anon", "cpuid",
			 cpuid_names[cfg->cpuid],
			 "init_bytes", (json_int_t)p->init_bytes, "ws_bytes",
			 (json_int_t)p->ws_bytes, "pattern",
			 pattern_names[p->pattern], "stride", (int)p->stride,
			 "op", op_names[p->op], "seed", (json_int_t)p->seed,
			 "compute_iters", (json_int_t)p->compute_iters,
			 "stop_at", p->stop_at_ready ? "ready" : "done",
			 "misbehave", misbehave_names[p->misbehave],
			 "timeout_ns", (json_int_t)cfg->timeout_ns);
}

static json_t *memory_json(const struct run_result *r)
{
	if (!r->have_memory)
		return json_null();
	return json_pack("{s:I, s:I, s:I, s:I, s:I}",
			 "rss_kib", (json_int_t)r->memory.rss_kib,
			 "pss_kib", (json_int_t)r->memory.pss_kib,
			 "uss_kib", (json_int_t)r->memory.uss_kib,
			 "guest_rss_kib", (json_int_t)r->memory.guest_rss_kib,
			 "vmm_overhead_kib",
			 (json_int_t)memstat__overhead_kib(&r->memory));
}

static void hex(char *buf, size_t size, uint64_t v)
{
	snprintf(buf, size, "0x%016" PRIx64, v);
}

static void print_json(const struct run_cli *o, const struct run_result *r,
		       const struct run_probes *rp)
{
	char sum[24], want[24];
	json_t *doc;

	hex(sum, sizeof(sum), r->probe.checksum);
	hex(want, sizeof(want), r->expected_checksum);
	doc = json_pack("{s:i, s:s, s:o, s:s, s:s, s:o, s:s, s:s, s:b, s:I, "
			"s:I, s:I, s:o, s:b}",
			"schema", 1, "command", "run", "config", config_json(o),
			"outcome", vm__outcome_name(r->outcome), "reason",
			r->reason, "timeline_ns", output__timeline_json(&r->tl),
			"checksum", sum, "expected_checksum", want,
			"checksum_ok", r->checksum_ok, "pages_touched",
			(json_int_t)r->probe.pages, "ucalls",
			(json_int_t)r->probe.ucalls, "exits",
			(json_int_t)r->exits, "memory", memory_json(r),
			"success", runner__succeeded(&o->cfg, r));
	run_probes__add_json(rp, &r->tl, doc);
	json_dumpf(doc, stdout, JSON_INDENT(2));
	fputc('\n', stdout);
	json_decref(doc);
}

static void on_signal(int sig)
{
	(void)sig;
	runner__interrupt();
}

static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int cmd_run(int argc, char **argv)
{
	struct run_cli o;
	struct run_result res = { 0 };
	struct run_probes rp;
	struct kvm_host kvm;
	int ret, code;

	if (cmd_run__parse(argc, argv, &o) < 0)
		return cli__parse_error("run", "run");
	if (o.help) {
		usage(stdout);
		return CLI_OK;
	}
	/* jailed, the VMM is a child that enters the jail once set up */
	ret = jail__start(&o.jail, &code);
	if (ret < 0)
		return cli__error(CLI_FAIL, "run: %s", err__last());
	if (ret == 1)
		return code;
	/* the control thread's filter waits for the probes' readers */
	ret = cli__seccomp_start("run", o.seccomp, !o.probes);
	if (ret)
		return ret;
	if (o.kernel) {
		ret = run_linux(&o);
		cli__seccomp_report();
		return ret;
	}
	o.cfg.measure_memory = !o.quiet;
	res.tl.t[TL_PROCESS_START] = cli_process_start;
	ret = run_probes__attach(o.probes, &rp);
	if (ret < 0)
		return cli__error(cli__exit_for(ret), "run: %s", err__last());
	ret = kvm__open(&kvm, o.kvm_path);
	if (ret < 0) {
		run_probes__free(&rp);
		return cli__error(cli__exit_for(ret), "%s", err__last());
	}
	timeline__mark(&res.tl, TL_KVM_OPENED);
	catch_signals();
	ret = runner__probe(&kvm, &o.cfg, &res);
	kvm__close(&kvm);
	run_probes__finish(&rp);
	if (ret < 0) {
		run_probes__free(&rp);
		return cli__error(cli__exit_for(ret), "%s", err__last());
	}
	if (o.json)
		print_json(&o, &res, &rp);
	else if (!o.quiet)
		print_human(&o, &res);
	if (!o.json && !o.quiet)
		run_probes__print(&rp, &res.tl);
	run_probes__free(&rp);
	cli__seccomp_report();
	if (runner__succeeded(&o.cfg, &res))
		return CLI_OK;
	fprintf(stderr, "coldstart: run failed: %s\n",
			res.outcome == VM_COMPLETED ? "the checksum is wrong"
						    : res.reason);
	return CLI_FAIL;
}
