/* The options that describe a warm pool (pool_cli.h). */
#include "pool_cli.h"

#include "args.h"
#include "cli.h"
#include "err.h"
#include "kvm.h"
#include "mem_restore.h"
#include "run_linux.h"
#include "runner.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MiB (1ull << 20)
#define DEFAULT_MAX 64
#define MAX_MAX 4096

volatile sig_atomic_t pool_cli__stop;

static void on_signal(int sig)
{
	(void)sig;
	pool_cli__stop = 1;
}

void pool_cli__catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static const char *const holds[] = { "warm", "shell", NULL };
static const char *const policies[] = { "fixed", "follow", "marginal",
					 NULL };
static const char *const on_empty[] = { "make", "wait", NULL };

void pool_cli__defaults(struct pool_cli *o)
{
	memset(o, 0, sizeof(*o));
	o->cfg.source = POOL_FROM_PROBE;
	o->cfg.strategy = mem_restore__strategy("mmap");
	o->cfg.nr_vcpus = 1;
	o->cfg.probe = (struct probe_params){
		.init_bytes = 2 * MiB, .ws_bytes = 1 * MiB, .seed = 1,
		.stride = 1,
	};
	o->cfg.hold = POOL_HOLD_WARM;
	o->seccomp = SECCOMP_KILL;
	o->cfg.policy = POOL_FIXED;
	o->cfg.on_empty = POOL_MAKE;
	o->cfg.size = 4;
	o->cfg.max = DEFAULT_MAX;
	o->cfg.workers = 1;
	o->cfg.halflife_s = 10;
	o->cfg.headroom = 0.5;
	o->cfg.miss_cost_s = 60;
	o->cfg.burst_halflife_s = 3;
	o->cfg.burst_z = 3;
	o->cfg.peak_halflife_s = 0;
	o->cfg.timeout_ns = 10000000000ull;
}

static int count(const char *opt, const char *arg, uint64_t min, uint64_t max,
		 unsigned int *out)
{
	uint64_t v;
	int ret = args__u64(opt, arg, min, max, &v);

	if (ret == 0)
		*out = (unsigned int)v;
	return ret;
}

static int number(const char *opt, const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(v) || v < 0)
		return err__set(EINVAL, "%s: '%s' is not a number >= 0", opt,
				arg);
	*out = v;
	return 0;
}

int pool_cli__option(struct pool_cli *o, int c, const char *arg)
{
	struct pool_config *cfg = &o->cfg;
	unsigned int i;
	uint64_t ns;
	int ret;

	switch (c) {
	case 0x200:
		cfg->source = POOL_FROM_SNAPSHOT;
		cfg->snapshot_dir = arg;
		return 0;
	case 0x201:
		return mem__choose(mem_restore__strategies(), "--mem-restore",
				   arg, &cfg->strategy);
	case 0x202:
		return args__size("--init", arg, &cfg->probe.init_bytes);
	case 0x203:
		return args__size("--ws", arg, &cfg->probe.ws_bytes);
	case 0x204:
		return count("--vcpus", arg, 1, PROBE_MAX_VCPUS, &cfg->nr_vcpus);
	case 0x205:
		ret = args__choice("--hold", arg, holds, &i);
		cfg->hold = (enum pool_hold)i;
		return ret;
	case 0x206:
		return count("--size", arg, 0, MAX_MAX, &cfg->size);
	case 0x207:
		return count("--min", arg, 0, MAX_MAX, &cfg->min);
	case 0x208:
		o->max_set = true;
		return count("--max", arg, 1, MAX_MAX, &cfg->max);
	case 0x209:
		return count("--workers", arg, 1, 64, &cfg->workers);
	case 0x20a:
		ret = args__choice("--policy", arg, policies, &i);
		cfg->policy = (enum pool_policy)i;
		return ret;
	case 0x20b:
		ret = args__duration("--halflife", arg, &ns);
		cfg->halflife_s = (double)ns / 1e9;
		return ret;
	case 0x20c:
		return number("--headroom", arg, &cfg->headroom);
	case 0x20d:
		ret = args__choice("--on-empty", arg, on_empty, &i);
		cfg->on_empty = (enum pool_on_empty)i;
		return ret;
	case 0x20e:
		ret = args__duration("--timeout", arg, &cfg->timeout_ns);
		if (ret == 0 && !cfg->timeout_ns)
			ret = err__set(EINVAL, "--timeout: must be above 0");
		return ret;
	case 0x20f:
		o->kvm_path = arg;
		return 0;
	case 0x210:
		return count("--abort-every", arg, 1, 1000000,
			     &cfg->abort_every);
	case 0x220:
		ret = args__duration("--miss-cost", arg, &ns);
		cfg->miss_cost_s = (double)ns / 1e9;
		return ret;
	case 0x221:
		ret = args__duration("--burst-halflife", arg, &ns);
		cfg->burst_halflife_s = (double)ns / 1e9;
		return ret;
	case 0x222:
		return number("--burst-z", arg, &cfg->burst_z);
	case 0x228:
		ret = args__duration("--peak-halflife", arg, &ns);
		cfg->peak_halflife_s = (double)ns / 1e9;
		return ret;
	case 0x211:
		return seccomp__parse_mode(arg, &o->seccomp);
	case 0x223:
		o->allow_pvm = true;
		return 0;
	case 0x224:
		o->kernel = arg;
		return 0;
	case 0x225:
		o->initrd = arg;
		return 0;
	case 0x226:
		o->cmdline = arg;
		return 0;
	case 0x227:
		return args__size("--mem", arg, &o->linux_mem);
	default:
		return 1;
	}
}

int pool_cli__finish(struct pool_cli *o)
{
	struct pool_config *cfg = &o->cfg;
	int ret = pool__check_policy(cfg);

	if (ret < 0)
		return ret;
	if (!o->max_set && cfg->size > cfg->max)
		cfg->max = cfg->size;
	if (cfg->size > cfg->max)
		return err__set(EINVAL, "--size %u is above --max %u", cfg->size,
				cfg->max);
	if (cfg->min > cfg->max)
		return err__set(EINVAL, "--min %u is above --max %u", cfg->min,
				cfg->max);
	if (cfg->size < cfg->min)
		cfg->size = cfg->min;
	if (!o->kernel && (o->initrd || o->cmdline || o->linux_mem))
		return err__set(EINVAL, "--initrd, --cmdline and --mem need "
				"--kernel, which is missing");
	if (o->kernel && cfg->source == POOL_FROM_SNAPSHOT)
		return err__set(EINVAL, "--kernel and --snapshot: the pool "
				"holds one guest, booted fresh or restored");
	if (o->kernel) {
		if (cfg->hold == POOL_HOLD_SHELL)
			return err__set(EINVAL, "--hold shell needs --snapshot "
					"(a guest booted fresh is held warm)");
		if (cfg->abort_every)
			return err__set(EINVAL, "--abort-every needs the probe "
					"guest booted fresh (no --kernel)");
		cfg->source = POOL_FROM_LINUX;
		if (!o->linux_mem)
			o->linux_mem = LINUX_DEFAULT_MEM;
		return 0;
	}
	if (cfg->source == POOL_FROM_PROBE) {
		if (cfg->hold == POOL_HOLD_SHELL)
			return err__set(EINVAL, "--hold shell needs --snapshot "
					"(the probe guest booted fresh is held "
					"warm)");
		if (cfg->probe.init_bytes % (4096ull * cfg->probe.stride) ||
		    cfg->probe.ws_bytes % 4096)
			return err__set(EINVAL, "--init and --ws must be "
					"multiples of 4 KiB");
		cfg->mem_size = runner__min_mem(&cfg->probe);
		return probe__validate(&cfg->probe, cfg->mem_size,
				       cfg->nr_vcpus);
	}
	if (cfg->abort_every)
		return err__set(EINVAL, "--abort-every needs the probe guest "
				"booted fresh (no --snapshot)");
	/* a snapshot that is not one is the user's error, on any host */
	return restore__inspect(cfg->snapshot_dir, &o->snap);
}

int pool_cli__prepare_guest(struct pool_cli *o, const char *cmd)
{
	struct pool_config *cfg = &o->cfg;
	int ret;

	if (cfg->source == POOL_FROM_SNAPSHOT)
		return restore__check_pvm(cmd, cfg->snapshot_dir, &o->snap,
					  o->allow_pvm);
	if (cfg->source != POOL_FROM_LINUX)
		return CLI_OK;
	/* a kernel that is not one is the user's error, on any host */
	ret = linux__open_kernel(&o->lk, o->kernel);
	if (ret == 0) {
		ret = linux__plan(&o->lb, &o->lk, o->cmdline ? o->cmdline
				  : LINUX_DEFAULT_CMDLINE, o->initrd,
				  o->linux_mem, cfg->nr_vcpus);
		if (ret < 0)
			linux__close_kernel(&o->lk);
	}
	if (ret < 0)
		return cli__error(CLI_FAIL, "%s: %s", cmd, err__last());
	if (!o->allow_pvm && kvm__device_flavour() == KVM_FLAVOUR_PVM) {
		linux__plan_free(&o->lb);
		linux__close_kernel(&o->lk);
		return cli__error(CLI_SKIP, "%s --kernel: %s", cmd,
				  run_linux__pvm_refusal());
	}
	o->linux_open = true;
	cfg->linux_boot = &o->lb;
	cfg->mem_size = o->linux_mem;
	return CLI_OK;
}

void pool_cli__release_guest(struct pool_cli *o)
{
	if (!o->linux_open)
		return;
	linux__plan_free(&o->lb);
	linux__close_kernel(&o->lk);
	o->linux_open = false;
	o->cfg.linux_boot = NULL;
}

void pool_cli__usage(FILE *out)
{
	fputs("Pool options:\n"
	      "  --snapshot DIR       hold VMs restored from this snapshot: "
	      "the probe guest's,\n"
	      "                       or a Linux guest's (`snapshot create "
	      "--kernel`), whose\n"
	      "                       request runs from boot complete to its "
	      "done signal\n"
	      "                       (default: the probe guest booted fresh "
	      "to READY)\n"
	      "  --mem-restore NAME   its memory restore strategy (default "
	      "mmap)\n"
	      "  --kernel FILE        hold a Linux guest booted fresh and "
	      "paused at its\n"
	      "                       boot-complete signal; a request runs it "
	      "on to its done\n"
	      "                       signal (with --initrd FILE, --cmdline "
	      "TEXT, --mem SIZE,\n"
	      "                       default 256M, and --vcpus)\n"
	      "  --init SIZE, --ws SIZE, --vcpus N\n"
	      "                       the fresh probe guest: memory touched "
	      "before READY\n"
	      "                       (default 2M), by each request (1M), "
	      "vCPUs (1)\n"
	      "  --hold warm|shell    warm: restored (or booted) and stopped "
	      "before the\n"
	      "                       request's first instruction; shell: VM "
	      "and vCPUs only,\n"
	      "                       the request restores into it "
	      "(--snapshot only)\n"
	      "  --size N             VMs to hold (default 4; follow: the "
	      "first target)\n"
	      "  --min N, --max N     bounds of the target (default 0 and 64)\n"
	      "  --workers K          refill threads (default 1)\n"
	      "  --policy fixed|follow|marginal\n"
	      "                       follow: the target tracks the arrival "
	      "rate (an\n"
	      "                       exponentially decayed count) times the "
	      "time to make\n"
	      "                       one VM, plus --headroom; marginal: holds "
	      "the n-th VM\n"
	      "                       while the misses it saves, each worth "
	      "--miss-cost of\n"
	      "                       idle time, outweigh its idle time (what "
	      "`coldstart\n"
	      "                       tune pool` simulates)\n"
	      "  --halflife DUR       follow, marginal: the rate estimate's "
	      "half-life\n"
	      "                       (default 10s)\n"
	      "  --headroom F         follow: extra fraction held (default "
	      "0.5)\n"
	      "  --miss-cost DUR      marginal: idle VM-time one miss is worth "
	      "(default 60s)\n"
	      "  --burst-halflife DUR marginal: the burst detector's fast "
	      "half-life (default\n"
	      "                       3s; 0 for none)\n"
	      "  --burst-z F          marginal: a burst is the fast rate F "
	      "standard deviations\n"
	      "                       from the slow one (default 3)\n"
	      "  --peak-halflife DUR  marginal: plan for at least the highest "
	      "rate planned\n"
	      "                       for before, halving every DUR (default "
	      "0: none)\n"
	      "  --on-empty make|wait what a request does when nothing is "
	      "held: make its\n"
	      "                       own VM (a miss; default) or wait for "
	      "a refill\n"
	      "  --timeout DUR        one request's run, one VM's making "
	      "(default 10s)\n"
	      "  --kvm PATH           the KVM device (default /dev/kvm)\n"
	      "  --abort-every N      testing: every Nth VM the refill threads "
	      "make aborts\n"
	      "                       after READY (the probe guest only)\n"
	      "  --allow-pvm          run a Linux guest on a PVM host "
	      "anyway (only\n"
	      "                       guests that never run ring-0 code "
	      "there can work)\n"
	      "  --seccomp MODE       per-thread system call filters: kill "
	      "(default), log\n"
	      "                       (allowed, logged, reported at exit) or "
	      "off\n",
	      out);
}

json_t *pool_cli__config_json(const struct pool_cli *o)
{
	const struct pool_config *c = &o->cfg;
	json_t *j = json_pack(
		"{s:s, s:s?, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:f, s:f, "
		"s:f}",
		"source", c->source == POOL_FROM_SNAPSHOT ? "snapshot"
			  : c->source == POOL_FROM_LINUX ? "linux" : "probe",
		"snapshot", c->source == POOL_FROM_SNAPSHOT ? c->snapshot_dir
							    : NULL,
		"mem_restore", c->source == POOL_FROM_SNAPSHOT
				       ? c->strategy->name : "none",
		"hold", pool__hold_name(c->hold), "policy",
		pool__policy_name(c->policy), "on_empty",
		c->on_empty == POOL_WAIT ? "wait" : "make", "size",
		(json_int_t)c->size, "min", (json_int_t)c->min, "max",
		(json_int_t)c->max, "workers", (json_int_t)c->workers,
		"halflife_s", c->halflife_s, "headroom", c->headroom,
		"timeout_s", (double)c->timeout_ns / 1e9);

	if (j && c->policy == POOL_MARGINAL &&
	    json_object_set_new(j, "marginal", json_pack(
		    "{s:f, s:f, s:f, s:f}", "miss_cost_s", c->miss_cost_s,
		    "burst_halflife_s", c->burst_halflife_s, "burst_z",
		    c->burst_z, "peak_halflife_s", c->peak_halflife_s)) < 0) {
		json_decref(j);
		return NULL;
	}

	/* a Linux snapshot's guest: the files it was booted from, which
	 * result__new names by sha256 */
	if (j && c->source == POOL_FROM_SNAPSHOT && o->snap.linux_guest &&
	    json_object_update_new(j, json_pack(
		    "{s:s, s:s, s:o, s:s, s:b}", "guest", "linux", "kernel",
		    o->snap.guest.kernel, "initrd",
		    *o->snap.guest.initrd ? json_string(o->snap.guest.initrd)
					  : json_null(),
		    "cmdline", o->snap.guest.cmdline, "allow_pvm",
		    o->allow_pvm)) < 0) {
		json_decref(j);
		return NULL;
	}
	if (j && c->source == POOL_FROM_LINUX &&
	    json_object_update_new(j, json_pack(
		    "{s:s, s:s, s:o, s:s, s:I, s:I, s:b}", "guest", "linux",
		    "kernel", o->kernel, "initrd",
		    o->initrd ? json_string(o->initrd) : json_null(),
		    "cmdline", o->cmdline ? o->cmdline : LINUX_DEFAULT_CMDLINE,
		    "mem_bytes", (json_int_t)o->linux_mem, "vcpus",
		    (json_int_t)c->nr_vcpus, "allow_pvm", o->allow_pvm)) < 0) {
		json_decref(j);
		return NULL;
	}
	if (j && c->source == POOL_FROM_PROBE &&
	    json_object_set_new(j, "probe", json_pack(
		    "{s:I, s:I, s:I, s:I}", "init_bytes",
		    (json_int_t)c->probe.init_bytes, "ws_bytes",
		    (json_int_t)c->probe.ws_bytes, "vcpus",
		    (json_int_t)c->nr_vcpus, "mem_bytes",
		    (json_int_t)c->mem_size)) < 0) {
		json_decref(j);
		return NULL;
	}
	return j;
}
