/* One warm pool's configuration (pool_config.h): its defaults, its option
 * table (parser and help), its validation and its guest's files. Its
 * JSON: pool_config_json.c. */
#include "pool_config.h"

#include "args.h"
#include "err.h"
#include "kvm.h"
#include "mem_restore.h"
#include "snapshot.h"

#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <stdint.h>

#define MiB (1ull << 20)
#define DEFAULT_MAX 64
#define MAX_MAX 4096
/* The help's column of option texts. */
#define HELP_COLUMN 23

static const char *const holds[] = { "warm", "shell", NULL };
static const char *const on_empty[] = { "make", "wait", NULL };

void pool_config__defaults(struct pool_config *c)
{
	memset(c, 0, sizeof(*c));
	c->source = POOL_FROM_PROBE;
	c->strategy = mem_restore__strategy("mmap");
	c->nr_vcpus = 1;
	c->probe = (struct probe_params){
		.init_bytes = 2 * MiB, .ws_bytes = 1 * MiB, .seed = 1,
		.stride = 1,
	};
	c->hold = POOL_HOLD_WARM;
	c->seccomp = SECCOMP_KILL;
	c->policy = POOL_FIXED;
	c->on_empty = POOL_MAKE;
	c->size = 4;
	c->max = DEFAULT_MAX;
	c->workers = 1;
	policy__defaults(&c->params);
	c->timeout_ns = 10000000000ull;
}

/* ---- the setters, one per option ---- */

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

static int seconds(const char *opt, const char *arg, double *out)
{
	uint64_t ns;
	int ret = args__duration(opt, arg, &ns);

	*out = (double)ns / 1e9;
	return ret;
}

static int set_config(struct pool_config *c, const char *opt, const char *a)
{
	(void)opt;
	return pool_config__load(c, a);
}

static int set_snapshot(struct pool_config *c, const char *opt, const char *a)
{
	(void)opt;
	c->source = POOL_FROM_SNAPSHOT;
	c->snapshot_dir = a;
	return 0;
}

static int set_mem_restore(struct pool_config *c, const char *opt,
			   const char *a)
{
	return mem__choose(mem_restore__strategies(), opt, a, &c->strategy);
}

static int set_kernel(struct pool_config *c, const char *opt, const char *a)
{
	(void)opt;
	c->kernel = a;
	return 0;
}

static int set_initrd(struct pool_config *c, const char *opt, const char *a)
{
	(void)opt;
	c->initrd = a;
	return 0;
}

static int set_cmdline(struct pool_config *c, const char *opt, const char *a)
{
	(void)opt;
	c->cmdline = a;
	return 0;
}

static int set_mem(struct pool_config *c, const char *opt, const char *a)
{
	return args__size(opt, a, &c->linux_mem);
}

static int set_init(struct pool_config *c, const char *opt, const char *a)
{
	return args__size(opt, a, &c->probe.init_bytes);
}

static int set_ws(struct pool_config *c, const char *opt, const char *a)
{
	return args__size(opt, a, &c->probe.ws_bytes);
}

static int set_vcpus(struct pool_config *c, const char *opt, const char *a)
{
	return count(opt, a, 1, PROBE_MAX_VCPUS, &c->nr_vcpus);
}

static int set_hold(struct pool_config *c, const char *opt, const char *a)
{
	unsigned int i;
	int ret = args__choice(opt, a, holds, &i);

	if (ret == 0)
		c->hold = (enum pool_hold)i;
	return ret;
}

static int set_size(struct pool_config *c, const char *opt, const char *a)
{
	return count(opt, a, 0, MAX_MAX, &c->size);
}

static int set_min(struct pool_config *c, const char *opt, const char *a)
{
	return count(opt, a, 0, MAX_MAX, &c->min);
}

static int set_max(struct pool_config *c, const char *opt, const char *a)
{
	c->max_set = true;
	return count(opt, a, 1, MAX_MAX, &c->max);
}

static int set_workers(struct pool_config *c, const char *opt, const char *a)
{
	return count(opt, a, 1, 64, &c->workers);
}

static int set_policy(struct pool_config *c, const char *opt, const char *a)
{
	const char *names[POOL_POLICIES + 1] = { NULL };
	unsigned int i;
	int ret;

	for (i = 0; i < POOL_POLICIES; i++)
		names[i] = policy__name((enum pool_policy)i);
	ret = args__choice(opt, a, names, &i);
	if (ret == 0)
		c->policy = (enum pool_policy)i;
	return ret;
}

static int set_on_empty(struct pool_config *c, const char *opt,
			const char *a)
{
	unsigned int i;
	int ret = args__choice(opt, a, on_empty, &i);

	if (ret == 0)
		c->on_empty = (enum pool_on_empty)i;
	return ret;
}

static int set_timeout(struct pool_config *c, const char *opt, const char *a)
{
	int ret = args__duration(opt, a, &c->timeout_ns);

	if (ret == 0 && !c->timeout_ns)
		ret = err__set(EINVAL, "%s: must be above 0", opt);
	return ret;
}

static int set_kvm(struct pool_config *c, const char *opt, const char *a)
{
	(void)opt;
	c->kvm_path = a;
	return 0;
}

static int set_abort_every(struct pool_config *c, const char *opt,
			   const char *a)
{
	return count(opt, a, 1, 1000000, &c->abort_every);
}

static int set_allow_pvm(struct pool_config *c, const char *opt,
			 const char *a)
{
	(void)opt;
	(void)a;
	c->allow_pvm = true;
	return 0;
}

static int set_seccomp(struct pool_config *c, const char *opt, const char *a)
{
	(void)opt;
	return seccomp__parse_mode(a, &c->seccomp);
}

/* ---- the table: parser and help ---- */

/* One option: --name [ARG], its help (lines parted by '\n') and what
 * sets it: its setter, or for a policy's parameter (param) the field of
 * struct policy_params that param names. */
struct pool_option {
	const char *name, *arg, *help;
	int (*set)(struct pool_config *c, const char *opt, const char *arg);
	const struct pool_param *param;
};

/* A policy parameter's row. */
#define PARAM(field, json_key, group_name, in_seconds)                      \
	&(const struct pool_param){ json_key, group_name, in_seconds,       \
				    offsetof(struct policy_params, field) }

/* --policy's argument in the help: the policies' names (policy.c). */
static const char policy_arg[] = "POLICY";

static const struct pool_option options[] = {
	{ "config", "FILE", "a pool configuration in JSON: the recommendation "
	  "of\n`coldstart tune pool --out DIR` (DIR/tune-pool.json), a\n"
	  "`bench pool` result's, or the configuration alone; the\n"
	  "options after it override what it sets", set_config, NULL },
	{ "snapshot", "DIR", "hold VMs restored from this snapshot: the probe "
	  "guest's,\nor a Linux guest's (`snapshot create --kernel`), whose"
	  "\nrequest runs from boot complete to its done signal\n(default: "
	  "the probe guest booted fresh to READY)", set_snapshot, NULL },
	{ "mem-restore", "NAME", "its memory restore strategy (default mmap)",
	  set_mem_restore, NULL },
	{ "kernel", "FILE", "hold a Linux guest booted fresh and paused at "
	  "its\nboot-complete signal; a request runs it on to its done\n"
	  "signal", set_kernel, NULL },
	{ "initrd", "FILE", "--kernel's initrd (default none)", set_initrd, NULL },
	{ "cmdline", "TEXT", "--kernel's command line (default: the console "
	  "on COM1)", set_cmdline, NULL },
	{ "mem", "SIZE", "--kernel's guest memory (default 256M)", set_mem, NULL },
	{ "init", "SIZE", "the fresh probe guest: memory touched before READY"
	  "\n(default 2M)", set_init, NULL },
	{ "ws", "SIZE", "the fresh probe guest: memory each request touches\n"
	  "(default 1M)", set_ws, NULL },
	{ "vcpus", "N", "the guest booted fresh: vCPUs (default 1)",
	  set_vcpus, NULL },
	{ "hold", "warm|shell", "warm: restored (or booted) and stopped before "
	  "the\nrequest's first instruction; shell: VM and vCPUs only,\nthe "
	  "request restores into it (--snapshot only)", set_hold, NULL },
	{ "size", "N", "VMs to hold (default 4; follow: the first target)",
	  set_size, NULL },
	{ "min", "N", "lower bound of the target (default 0)", set_min, NULL },
	{ "max", "N", "upper bound of the target (default 64)", set_max, NULL },
	{ "workers", "K", "refill threads (default 1)", set_workers, NULL },
	{ "policy", policy_arg, "follow: the target tracks the "
	  "arrival rate (an\nexponentially decayed count) times the time to "
	  "make\none VM, plus --headroom; marginal: holds the n-th VM\nwhile "
	  "the misses it saves, each worth --miss-cost of\nidle time, outweigh "
	  "its idle time (what `coldstart\ntune pool` simulates)", set_policy, NULL },
	{ "halflife", "DUR", "follow, marginal: the rate estimate's half-life"
	  "\n(default 10s)", NULL, PARAM(halflife_s, "halflife_s", NULL, true) },
	{ "headroom", "F", "follow: extra fraction held (default 0.5)", NULL,
	  PARAM(headroom, "headroom", NULL, false) },
	{ "miss-cost", "DUR", "marginal: idle VM-time one miss is worth "
	  "(default 60s)", NULL,
	  PARAM(miss_cost_s, "miss_cost_s", "marginal", true) },
	{ "burst-halflife", "DUR", "marginal: the burst detector's fast "
	  "half-life (default\n3s; 0 for none)", NULL,
	  PARAM(burst_halflife_s, "burst_halflife_s", "marginal", true) },
	{ "burst-z", "F", "marginal: a burst is the fast rate F standard "
	  "deviations\nfrom the slow one (default 3)", NULL,
	  PARAM(burst_z, "burst_z", "marginal", false) },
	{ "peak-halflife", "DUR", "marginal: plan for at least the highest "
	  "rate planned\nfor before, halving every DUR (default 0: none)",
	  NULL, PARAM(peak_halflife_s, "peak_halflife_s", "marginal", true) },
	{ "on-empty", "make|wait", "what a request does when nothing is held: "
	  "make its\nown VM (a miss; default) or wait for a refill",
	  set_on_empty, NULL },
	{ "timeout", "DUR", "one request's run, one VM's making (default 10s)",
	  set_timeout, NULL },
	{ "kvm", "PATH", "the KVM device (default /dev/kvm)", set_kvm, NULL },
	{ "abort-every", "N", "testing: every Nth VM the refill threads make "
	  "aborts\nafter READY (the probe guest only)", set_abort_every, NULL },
	{ "allow-pvm", NULL, "run a Linux guest on a PVM host anyway (only\n"
	  "guests that never run ring-0 code there can work)",
	  set_allow_pvm, NULL },
	{ "seccomp", "MODE", "per-thread system call filters: kill (default), "
	  "log\n(allowed, logged, reported at exit) or off", set_seccomp, NULL },
};

#define NR_OPTIONS (sizeof(options) / sizeof(options[0]))
_Static_assert(NR_OPTIONS <= POOL_OPTIONS_MAX, "POOL_OPTIONS_MAX");

size_t pool_config__getopt(struct option *out)
{
	for (size_t i = 0; i < NR_OPTIONS; i++)
		out[i] = (struct option){
			options[i].name, options[i].arg ? required_argument
							: no_argument,
			NULL, POOL_OPT_BASE + (int)i,
		};
	return NR_OPTIONS;
}

const struct pool_param *pool_config__param(size_t i, const char **option)
{
	for (size_t k = 0; k < NR_OPTIONS; k++) {
		if (!options[k].param || i--)
			continue;
		*option = options[k].name;
		return options[k].param;
	}
	return NULL;
}

double *pool_config__param_value(struct pool_config *c,
				 const struct pool_param *p)
{
	return (double *)((char *)&c->params + p->offset);
}

int pool_config__option(struct pool_config *c, int opt, const char *arg)
{
	const struct pool_option *o;
	char name[40];

	if (opt < POOL_OPT_BASE || opt >= POOL_OPT_BASE + (int)NR_OPTIONS)
		return 1;
	o = &options[opt - POOL_OPT_BASE];
	snprintf(name, sizeof(name), "--%s", o->name);
	if (o->set)
		return o->set(c, name, arg);
	return o->param->seconds
		? seconds(name, arg, pool_config__param_value(c, o->param))
		: number(name, arg, pool_config__param_value(c, o->param));
}

void pool_config__usage(FILE *out)
{
	fputs("Pool options:\n", out);
	for (size_t i = 0; i < NR_OPTIONS; i++) {
		const struct pool_option *o = &options[i];
		const char *h = o->help;
		int w = fprintf(out, "  --%s%s%s", o->name, o->arg ? " " : "",
				o->arg && o->arg != policy_arg ? o->arg : "");

		for (int p = 0; o->arg == policy_arg && p < POOL_POLICIES; p++)
			w += fprintf(out, "%s%s", p ? "|" : "",
				     policy__name((enum pool_policy)p));

		/* the first line beside the option when it fits */
		if (w >= HELP_COLUMN) {
			fputc('\n', out);
			w = 0;
		}
		for (;;) {
			size_t len = strcspn(h, "\n");

			fprintf(out, "%*s%.*s\n", HELP_COLUMN - w, "", (int)len,
				h);
			if (!h[len])
				break;
			h += len + 1;
			w = 0;
		}
	}
}

int pool_config__set(struct pool_config *c, const char *name,
		     const char *text)
{
	for (size_t i = 0; i < NR_OPTIONS; i++)
		if (!strcmp(options[i].name, name))
			return pool_config__option(c, POOL_OPT_BASE + (int)i,
						   text);
	return err__set(EINVAL, "no option --%s", name);
}

/* ---- validation ---- */

/* A snapshot directory the pool can restore, and its guest. */
static int inspect_snapshot(struct pool_config *c)
{
	const char *dir = c->snapshot_dir;
	struct snapshot s;
	struct stat st;
	char why[512];
	int ret;

	if (stat(dir, &st) < 0)
		return err__sys(errno, "snapshot directory %s", dir);
	if (!S_ISDIR(st.st_mode))
		return err__set(EINVAL, "%s is not a directory (a snapshot is "
				"a directory made by `coldstart snapshot "
				"create`)", dir);
	ret = snapshot__open(&s, dir);
	if (ret < 0) {
		snprintf(why, sizeof(why), "%s", err__last());
		return err__set(EINVAL, "%s is not a snapshot coldstart can "
				"restore: %s", dir, why);
	}
	c->snap_linux = s.cfg.guest == SNAP_GUEST_LINUX;
	if (c->snap_linux)
		c->snap_guest = s.guest;
	snapshot__close(&s);
	return 0;
}

/* The probe guest's memory: its work area above PROBE_WORK_GPA, in
 * whole MEM_ALIGN units. */
static uint64_t probe_mem(const struct probe_params *p)
{
	uint64_t work = p->init_bytes > p->ws_bytes ? p->init_bytes
						    : p->ws_bytes;

	return PROBE_WORK_GPA + (work + MEM_ALIGN - 1) / MEM_ALIGN * MEM_ALIGN;
}

static int finish_probe(struct pool_config *c)
{
	if (c->hold == POOL_HOLD_SHELL)
		return err__set(EINVAL, "--hold shell needs --snapshot (the "
				"probe guest booted fresh is held warm)");
	if (c->probe.init_bytes % (4096ull * c->probe.stride) ||
	    c->probe.ws_bytes % 4096)
		return err__set(EINVAL, "--init and --ws must be multiples of "
				"4 KiB");
	c->mem_size = probe_mem(&c->probe);
	return probe__validate(&c->probe, c->mem_size, c->nr_vcpus);
}

int pool_config__check_policy(const struct pool_config *c)
{
	char why[256];

	if (policy__check(c->policy, &c->params, why, sizeof(why)) < 0)
		return err__set(EINVAL, "%s", why);
	return 0;
}

int pool_config__finish(struct pool_config *c)
{
	int ret = pool_config__check_policy(c);

	if (ret < 0)
		return ret;
	if (!c->max_set && c->size > c->max)
		c->max = c->size;
	if (c->size > c->max)
		return err__set(EINVAL, "--size %u is above --max %u", c->size,
				c->max);
	if (c->min > c->max)
		return err__set(EINVAL, "--min %u is above --max %u", c->min,
				c->max);
	if (c->size < c->min)
		c->size = c->min;
	if (!c->kernel && (c->initrd || c->cmdline || c->linux_mem))
		return err__set(EINVAL, "--initrd, --cmdline and --mem need "
				"--kernel, which is missing");
	if (c->kernel && c->source == POOL_FROM_SNAPSHOT)
		return err__set(EINVAL, "--kernel and --snapshot: the pool "
				"holds one guest, booted fresh or restored");
	if (c->kernel) {
		if (c->hold == POOL_HOLD_SHELL)
			return err__set(EINVAL, "--hold shell needs --snapshot "
					"(a guest booted fresh is held warm)");
		if (c->abort_every)
			return err__set(EINVAL, "--abort-every needs the probe "
					"guest booted fresh (no --kernel)");
		c->source = POOL_FROM_LINUX;
		return 0;
	}
	if (c->source == POOL_FROM_PROBE)
		return finish_probe(c);
	if (c->abort_every)
		return err__set(EINVAL, "--abort-every needs the probe guest "
				"booted fresh (no --snapshot)");
	/* a snapshot that is not one is the user's error, on any host */
	return inspect_snapshot(c);
}

/* ---- the guest's files ---- */

bool pool_config__pvm_refused(const struct pool_config *c)
{
	bool linux_guest = c->source == POOL_FROM_LINUX ||
			   (c->source == POOL_FROM_SNAPSHOT && c->snap_linux);

	return linux_guest && !c->allow_pvm &&
	       kvm__device_flavour() == KVM_FLAVOUR_PVM;
}

int pool_config__open_guest(struct pool_config *c)
{
	int ret;

	if (c->source != POOL_FROM_LINUX)
		return 0;
	ret = linux__open_kernel(&c->lk, c->kernel);
	if (ret < 0)
		return ret;
	ret = linux__plan(&c->lb, &c->lk, c->cmdline, c->initrd, c->linux_mem,
			  c->nr_vcpus);
	if (ret < 0) {
		linux__close_kernel(&c->lk);
		return ret;
	}
	c->linux_open = true;
	c->linux_boot = &c->lb;
	c->mem_size = c->linux_mem;
	return 0;
}

void pool_config__release(struct pool_config *c)
{
	if (c->linux_open) {
		linux__plan_free(&c->lb);
		linux__close_kernel(&c->lk);
		c->linux_open = false;
		c->linux_boot = NULL;
	}
	json_decref(c->loaded);
	c->loaded = NULL;
}
