/* One warm pool's configuration (pool_config.h): its defaults, its option
 * table (parser and help), its validation and its guest's files. Its
 * JSON, and --config's files: pool_config_json.c, which sets what they
 * name through this table (never the other way round). */
#include "pool_config.h"

#include "args.h"
#include "err.h"
#include "guest_devices.h"
#include "kvm.h"
#include "mem_restore.h"
#include "agent_client.h"
#include "snapshot.h"
#include "units.h"

#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <stdint.h>

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

/* FILE was read before the other options (pool_config__load_args): here
 * it is only checked off, so that every other option overrides it
 * wherever it stands. A FILE the reader did not see as --config's (an
 * abbreviated --conf) was not read. */
static int set_config(void *ctx, const char *a)
{
	struct pool_config *c = ctx;

	if (c->configs_taken < c->nr_configs &&
	    c->config_args[c->configs_taken] == a) {
		c->configs_taken++;
		return 0;
	}
	return err__set(EINVAL, "--config %s: give it as --config FILE or "
			"--config=FILE (it is read before the other options)",
			a);
}

static int set_snapshot(void *ctx, const char *a)
{
	struct pool_config *c = ctx;

	c->source = POOL_FROM_SNAPSHOT;
	c->snapshot_dir = a;
	return 0;
}

static int set_exec(void *ctx, const char *a)
{
	if (!*a || strlen(a) > POOL_EXEC_MAX)
		return err__set(EINVAL, "--exec: a command of 1 to %u bytes, "
				"not %zu", POOL_EXEC_MAX, strlen(a));
	((struct pool_config *)ctx)->exec = a;
	return 0;
}

static int set_mem_restore(void *ctx, const char *a)
{
	return mem__choose(mem_restore__strategies(), "--mem-restore", a,
			   &((struct pool_config *)ctx)->strategy);
}

static int set_kernel(void *ctx, const char *a)
{
	((struct pool_config *)ctx)->kernel = a;
	return 0;
}

static int set_initrd(void *ctx, const char *a)
{
	((struct pool_config *)ctx)->initrd = a;
	return 0;
}

static int set_cmdline(void *ctx, const char *a)
{
	((struct pool_config *)ctx)->cmdline = a;
	return 0;
}

static int set_mem(void *ctx, const char *a)
{
	return args__size("--mem", a, &((struct pool_config *)ctx)->linux_mem);
}

static int set_init(void *ctx, const char *a)
{
	return args__size("--init", a,
			  &((struct pool_config *)ctx)->probe.init_bytes);
}

static int set_ws(void *ctx, const char *a)
{
	return args__size("--ws", a,
			  &((struct pool_config *)ctx)->probe.ws_bytes);
}

static int set_vcpus(void *ctx, const char *a)
{
	return count("--vcpus", a, 1, PROBE_MAX_VCPUS,
		     &((struct pool_config *)ctx)->nr_vcpus);
}

static int set_hold(void *ctx, const char *a)
{
	unsigned int i;
	int ret = args__choice("--hold", a, holds, &i);

	if (ret == 0)
		((struct pool_config *)ctx)->hold = (enum pool_hold)i;
	return ret;
}

static int set_size(void *ctx, const char *a)
{
	return count("--size", a, 0, MAX_MAX,
		     &((struct pool_config *)ctx)->size);
}

static int set_min(void *ctx, const char *a)
{
	return count("--min", a, 0, MAX_MAX, &((struct pool_config *)ctx)->min);
}

static int set_max(void *ctx, const char *a)
{
	struct pool_config *c = ctx;

	c->max_set = true;
	return count("--max", a, 1, MAX_MAX, &c->max);
}

static int set_workers(void *ctx, const char *a)
{
	return count("--workers", a, 1, 64,
		     &((struct pool_config *)ctx)->workers);
}

static int set_policy(void *ctx, const char *a)
{
	const char *names[POOL_POLICIES + 1] = { NULL };
	unsigned int i;
	int ret;

	for (i = 0; i < POOL_POLICIES; i++)
		names[i] = policy__name((enum pool_policy)i);
	ret = args__choice("--policy", a, names, &i);
	if (ret == 0)
		((struct pool_config *)ctx)->policy = (enum pool_policy)i;
	return ret;
}

static int set_on_empty(void *ctx, const char *a)
{
	unsigned int i;
	int ret = args__choice("--on-empty", a, on_empty, &i);

	if (ret == 0)
		((struct pool_config *)ctx)->on_empty = (enum pool_on_empty)i;
	return ret;
}

static int set_timeout(void *ctx, const char *a)
{
	struct pool_config *c = ctx;
	int ret = args__duration("--timeout", a, &c->timeout_ns);

	if (ret == 0 && !c->timeout_ns)
		ret = err__set(EINVAL, "--timeout: must be above 0");
	return ret;
}

static int set_kvm(void *ctx, const char *a)
{
	((struct pool_config *)ctx)->kvm_path = a;
	return 0;
}

static int set_abort_every(void *ctx, const char *a)
{
	return count("--abort-every", a, 1, 1000000,
		     &((struct pool_config *)ctx)->abort_every);
}

static int set_allow_pvm(void *ctx, const char *a)
{
	(void)a;
	((struct pool_config *)ctx)->allow_pvm = true;
	return 0;
}

static int set_seccomp(void *ctx, const char *a)
{
	return seccomp__parse_mode(a, &((struct pool_config *)ctx)->seccomp);
}

/* ---- the table: parser and help ---- */

/* The policies' parameters (policy.h), one row each: option, value's
 * name, help (lines parted by '\n'), field (a double) of struct
 * policy_params, JSON key, the object it is in (NULL: the configuration
 * itself; else a policy's name, written for that policy only) and
 * whether its value is seconds (a duration option). */
#define POOL_PARAMS(X)                                                      \
	X("halflife", "DUR", "follow, marginal: the rate estimate's "       \
	  "half-life\n(default 10s)", halflife_s, "halflife_s", NULL, true) \
	X("headroom", "F", "follow: extra fraction held (default 0.5)",     \
	  headroom, "headroom", NULL, false)                                \
	X("miss-cost", "DUR", "marginal: idle VM-time one miss is worth "   \
	  "(default 60s)", miss_cost_s, "miss_cost_s", "marginal", true)   \
	X("burst-halflife", "DUR", "marginal: the burst detector's fast "   \
	  "half-life (default\n3s; 0 for none)", burst_halflife_s,          \
	  "burst_halflife_s", "marginal", true)                             \
	X("burst-z", "F", "marginal: a burst is the fast rate F standard "  \
	  "deviations\nfrom the slow one (default 3)", burst_z, "burst_z",  \
	  "marginal", false)                                                \
	X("peak-halflife", "DUR", "marginal: plan for at least the highest " \
	  "rate planned\nfor before, halving every DUR (default 0: none)",  \
	  peak_halflife_s, "peak_halflife_s", "marginal", true)             \
	X("cover-quantile", "F", "cover: hold the F quantile of the VMs "   \
	  "bursts used up\nbefore refills caught up (default 0.99)",        \
	  cover_q, "cover_q", "cover", false)                               \
	X("cover-halflife", "DUR", "cover: the half-life of what it learnt " \
	  "(default 10m)", cover_halflife_s, "cover_halflife_s", "cover",   \
	  true)

/* Each parameter's setter: set_FIELD. */
#define PARAM_SETTER(opt, arg, help, field, key, group, secs)              \
	static int set_##field(void *ctx, const char *a)                    \
	{                                                                    \
		double *v = &((struct pool_config *)ctx)->params.field;      \
		return secs ? seconds("--" opt, a, v)                        \
			    : number("--" opt, a, v);                        \
	}
POOL_PARAMS(PARAM_SETTER)

#define PARAM_ROW(opt, arg, help, field, key, group, secs) \
	{ opt, 0, arg, false, help, set_##field, NULL },

static const struct opt options[] = {
	OPT_HEADING("Pool options:"),
	{ "config", 0, "FILE", false, "a pool configuration in JSON: the "
	  "recommendation of\n`coldstart tune pool --out DIR` "
	  "(DIR/tune-pool.json), a\n`bench pool` result's, or the "
	  "configuration alone; every\nother option overrides what it sets, "
	  "before or after it", set_config, NULL },
	{ "snapshot", 0, "DIR", false, "hold VMs restored from this snapshot: "
	  "the probe guest's,\nor a Linux guest's (`snapshot create "
	  "--kernel`), whose\nrequest runs from boot complete to its done "
	  "signal\n(default: the probe guest booted fresh to READY)",
	  set_snapshot, NULL },
	{ "mem-restore", 0, "NAME", false, "its memory restore strategy "
	  "(default mmap)", set_mem_restore, NULL },
	{ "exec", 0, "CMD", false, "a snapshot of a guest with an agent (a "
	  "--rootfs guest's):\nthe command each request runs through it "
	  "(default a\npython3 importing four standard modules)", set_exec,
	  NULL },
	{ "kernel", 0, "FILE", false, "hold a Linux guest booted fresh and "
	  "paused at its\nboot-complete signal; a request runs it on to its "
	  "done\nsignal", set_kernel, NULL },
	{ "initrd", 0, "FILE", false, "--kernel's initrd (default none)",
	  set_initrd, NULL },
	{ "cmdline", 0, "TEXT", false, "--kernel's command line (default: the "
	  "console on COM1)", set_cmdline, NULL },
	{ "mem", 0, "SIZE", false, "--kernel's guest memory (default 256M)",
	  set_mem, NULL },
	{ "init", 0, "SIZE", false, "the fresh probe guest: memory touched "
	  "before READY\n(default 2M)", set_init, NULL },
	{ "ws", 0, "SIZE", false, "the fresh probe guest: memory each request "
	  "touches\n(default 1M)", set_ws, NULL },
	{ "vcpus", 0, "N", false, "the guest booted fresh: vCPUs (default 1)",
	  set_vcpus, NULL },
	{ "hold", 0, "warm|shell", false, "warm: restored (or booted) and "
	  "stopped before the\nrequest's first instruction; shell: VM and "
	  "vCPUs only,\nthe request restores into it (--snapshot only)",
	  set_hold, NULL },
	{ "size", 0, "N", false, "VMs to hold (default 4; follow: the first "
	  "target)", set_size, NULL },
	{ "min", 0, "N", false, "lower bound of the target (default 0)",
	  set_min, NULL },
	{ "max", 0, "N", false, "upper bound of the target (default 64)",
	  set_max, NULL },
	{ "workers", 0, "K", false, "refill threads (default 1)", set_workers,
	  NULL },
	{ "policy", 0, "POLICY", false, "fixed (default): holds --size VMs; "
	  "follow: the target\ntracks the arrival rate (an exponentially "
	  "decayed\ncount) times the time to make one VM, plus --headroom;"
	  "\nmarginal: holds the n-th VM while the misses it saves,\neach "
	  "worth --miss-cost of idle time, outweigh its idle\ntime (what "
	  "`coldstart tune pool` simulates); cover:\na high quantile of the "
	  "VMs bursts used up before\nrefills caught up, learnt from the "
	  "recent past\n(for traffic in batches)", set_policy, NULL },
	POOL_PARAMS(PARAM_ROW)
	{ "on-empty", 0, "make|wait", false, "what a request does when nothing "
	  "is held: make its\nown VM (a miss; default) or wait for a refill",
	  set_on_empty, NULL },
	{ "timeout", 0, "DUR", false, "one request's run, one VM's making "
	  "(default 10s)", set_timeout, NULL },
	{ "kvm", 0, "PATH", false, "the KVM device (default /dev/kvm)",
	  set_kvm, NULL },
	{ "abort-every", 0, "N", false, "testing: every Nth VM the refill "
	  "threads make aborts\nafter READY (the probe guest only)",
	  set_abort_every, NULL },
	{ "allow-pvm", 0, NULL, false, "run a Linux guest on a PVM host anyway "
	  "(only\nguests that never run ring-0 code there can work)",
	  set_allow_pvm, NULL },
	{ "seccomp", 0, "MODE", false, "per-thread system call filters: kill "
	  "(default), log\n(allowed, logged, reported at exit) or off",
	  set_seccomp, NULL },
	OPT_END,
};

/* The named rows: all but the heading and the end. */
#define NR_OPTIONS (sizeof(options) / sizeof(options[0]) - 2)
_Static_assert(NR_OPTIONS <= POOL_OPTIONS_MAX, "POOL_OPTIONS_MAX");

#define PARAM_INFO(opt, arg, help, field, key, group, secs) \
	{ opt, { key, group, secs, offsetof(struct policy_params, field) } },

static const struct {
	const char *option;
	struct pool_param p;
} params[] = { POOL_PARAMS(PARAM_INFO) };

const struct opt *pool_config__table(void)
{
	return options;
}

size_t pool_config__getopt(struct option *out)
{
	for (size_t i = 0; i < NR_OPTIONS; i++)
		out[i] = (struct option){
			options[i + 1].name, options[i + 1].arg
						     ? required_argument
						     : no_argument,
			NULL, POOL_OPT_BASE + (int)i,
		};
	return NR_OPTIONS;
}

const struct pool_param *pool_config__param(size_t i, const char **option)
{
	if (i >= sizeof(params) / sizeof(params[0]))
		return NULL;
	*option = params[i].option;
	return &params[i].p;
}

double *pool_config__param_value(struct pool_config *c,
				 const struct pool_param *p)
{
	return (double *)((char *)&c->params + p->offset);
}

int pool_config__option(struct pool_config *c, int opt, const char *arg)
{
	if (opt < POOL_OPT_BASE || opt >= POOL_OPT_BASE + (int)NR_OPTIONS)
		return 1;
	return options[opt - POOL_OPT_BASE + 1].set(c, arg);
}

void pool_config__usage(FILE *out)
{
	for (const struct opt *o = options; o->name || o->help; o++) {
		const char *h = o->help;
		int w;

		if (!o->name) {
			fprintf(out, "%s\n", h);
			continue;
		}
		w = fprintf(out, "  --%s%s%s", o->name, o->arg ? " " : "",
			    o->arg ? o->arg : "");
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
		if (!strcmp(options[i + 1].name, name))
			return options[i + 1].set(c, text);
	return err__set(EINVAL, "no option --%s", name);
}

/* ---- validation ---- */

/* A snapshot directory the pool can restore, and its guest. */
static int inspect_snapshot(struct pool_config *c)
{
	const char *dir = c->snapshot_dir;
	struct snapshot s;
	int ret;

	ret = snapshot__open_named(&s, dir);
	if (ret < 0)
		return ret;
	c->snap_linux = s.cfg.guest == SNAP_GUEST_LINUX;
	c->snap_agent = guestdev__has_agent(&s);
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

static int no_agent(const struct pool_config *c)
{
	return err__set(EINVAL, "--exec: %s%s has no agent to run it (give "
			"--snapshot of a --rootfs guest)",
			c->source == POOL_FROM_SNAPSHOT ? "the guest of "
			: "the guest", c->source == POOL_FROM_SNAPSHOT
			? c->snapshot_dir : "");
}

int pool_config__finish(struct pool_config *c)
{
	int ret = pool_config__check_policy(c);

	if (ret < 0)
		return ret;
	/* read by pool_config__load_args, never reached by the parser */
	if (c->configs_taken < c->nr_configs)
		return err__set(EINVAL, "--config %s: read as another option's "
				"value, not as --config",
				c->config_args[c->configs_taken]);
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
		return c->exec ? no_agent(c) : 0;
	}
	if (c->source == POOL_FROM_PROBE)
		return c->exec ? no_agent(c) : finish_probe(c);
	if (c->abort_every)
		return err__set(EINVAL, "--abort-every needs the probe guest "
				"booted fresh (no --snapshot)");
	/* a snapshot that is not one is the user's error, on any host */
	ret = inspect_snapshot(c);
	if (ret == 0 && c->exec && !c->snap_agent)
		return no_agent(c);
	if (ret == 0 && c->snap_agent && !c->exec)
		c->exec = AGENT_DEFAULT_EXEC;
	return ret;
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
