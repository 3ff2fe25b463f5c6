/* `coldstart tune host`: its options, help and exit status; the tuner
 * is tune/tune_host*.c. */
#include "commands.h"

#include "args.h"
#include "cli.h"
#include "err.h"
#include "opt.h"
#include "tune_host.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct host_args {
	struct th_opts o;
	bool guest_set; /* --mem, --cold or --warm */
	bool budget_set;
};

static int set_trace(void *ctx, const char *arg)
{
	((struct host_args *)ctx)->o.trace = arg;
	return 0;
}

static int set_format(void *ctx, const char *arg)
{
	static const char *const names[] = { "auto", "azure2019", "azure2021",
					     NULL };
	static const enum arrivals_format formats[] = {
		ARRIVALS_AUTO, ARRIVALS_AZURE2019, ARRIVALS_AZURE2021 };
	unsigned int k;

	if (args__choice("--format", arg, names, &k) < 0)
		return -EINVAL;
	((struct host_args *)ctx)->o.format = formats[k];
	return 0;
}

static int set_guests(void *ctx, const char *arg)
{
	((struct host_args *)ctx)->o.guests = arg;
	return 0;
}

static int set_mem(void *ctx, const char *arg)
{
	struct host_args *a = ctx;
	uint64_t v;

	a->guest_set = true;
	if (args__size("--mem", arg, &v) < 0)
		return -EINVAL;
	if (v < 1024 || v > (1ull << 50))
		return err__set(EINVAL, "--mem: '%s' is not from 1K to 1024T",
				arg);
	a->o.guest.mem_mib = (double)v / (1024.0 * 1024.0);
	return 0;
}

static int set_latency(const char *opt, const char *arg, double *s)
{
	uint64_t ns;

	if (args__duration(opt, arg, &ns) < 0)
		return -EINVAL;
	if (ns > 100000ull * 1000000000ull)
		return err__set(EINVAL, "%s: '%s' is more than 100000 s", opt,
				arg);
	*s = (double)ns / 1e9;
	return 0;
}

static int set_cold(void *ctx, const char *arg)
{
	struct host_args *a = ctx;

	a->guest_set = true;
	return set_latency("--cold", arg, &a->o.guest.cold_s);
}

static int set_warm(void *ctx, const char *arg)
{
	struct host_args *a = ctx;

	a->guest_set = true;
	return set_latency("--warm", arg, &a->o.guest.hit_s);
}

static int set_budget(void *ctx, const char *arg)
{
	struct host_args *a = ctx;

	a->budget_set = true;
	if (args__size("--memory-budget", arg, &a->o.budget) < 0)
		return -EINVAL;
	if (a->o.budget < (1u << 20) || a->o.budget > (1ull << 50))
		return err__set(EINVAL, "--memory-budget: '%s' is not from 1M "
				"to 1024T", arg);
	return 0;
}

static int set_minutes(void *ctx, const char *arg)
{
	return args__u64("--minutes", arg, 1, FN_TRACE_MAX_MINUTES,
			 &((struct host_args *)ctx)->o.minutes);
}

static int set_keepalive(void *ctx, const char *arg)
{
	uint64_t v;
	int err = args__u64("--keepalive", arg, 1, HOSTSIM_RANGE, &v);

	((struct host_args *)ctx)->o.keepalive = (unsigned int)v;
	return err;
}

static int set_price(void *ctx, const char *arg)
{
	struct host_args *a = ctx;
	char *end;

	errno = 0;
	a->o.price = strtod(arg, &end);
	a->o.price_set = true;
	if (end == arg || *end || errno || !(a->o.price >= 0) ||
	    a->o.price > 1e6)
		return err__set(EINVAL, "--price: '%s' is not a number from 0 "
				"to 1e6", arg);
	return 0;
}

static int set_json(void *ctx, const char *arg)
{
	(void)arg;
	((struct host_args *)ctx)->o.json = true;
	return 0;
}

static int set_out(void *ctx, const char *arg)
{
	((struct host_args *)ctx)->o.out_dir = arg;
	return 0;
}

static const struct opt table[] = {
	{ "trace", 0, "FILE", false, "a multi-function trace: Azure "
	  "Functions 2019 (counts per\nminute) or 2021 (one row per "
	  "invocation); required", set_trace, NULL },
	{ "format", 0, "F", false, "auto, azure2019 or azure2021 (default "
	  "auto: the header says)", set_format, NULL },
	{ "minutes", 0, "N", false, "keep only the trace's first N minutes",
	  set_minutes, NULL },
	{ "memory-budget", 0, "SIZE", false, "the host's memory for warm and "
	  "busy VMs, shared by every\nguest (e.g. 8G); required", set_budget,
	  NULL },
	{ "guests", 0, "FILE", false, "guest types as JSON: each its memory "
	  "per VM, cold and warm\nstart latency, idle weight and functions "
	  "(docs/commands.md)", set_guests, NULL },
	{ "mem", 0, "SIZE", false, "without --guests: every function's "
	  "memory per VM (default\n256M)", set_mem, NULL },
	{ "cold", 0, "TIME", false, "without --guests: a cold start's latency "
	  "(default 250ms)", set_cold, NULL },
	{ "warm", 0, "TIME", false, "without --guests: a warm start's latency "
	  "(default 2ms)", set_warm, NULL },
	{ "keepalive", 0, "MIN", false, "the fixed keep-alive baseline's "
	  "minutes, 1 to 240 (default\n10)", set_keepalive, NULL },
	{ "price", 0, "P", false, "ours's price (cold starts per idle "
	  "GiB-minute) instead of\nthe best of a sweep at the budget",
	  set_price, NULL },
	{ "json", 0, NULL, false, "the document on stdout instead of the "
	  "report", set_json, NULL },
	{ "out", 0, "DIR", false, "also write DIR/tune-host.json and "
	  "DIR/tune-host.md", set_out, NULL },
	OPT_END,
};

static void usage(FILE *out)
{
	struct host_args defaults;
	struct opt_set set = { .opts = table, .ctx = &defaults };

	tune_host__defaults(&defaults.o);
	fputs("Usage: coldstart tune host --trace FILE --memory-budget SIZE "
	      "[OPTIONS]\n\nSimulates every function's warm VMs of a "
	      "multi-function trace in one\nhost's memory budget, minute by "
	      "minute, and recommends per-function\nkeep-alive windows (ours: "
	      "the cold starts each saves per idle MiB, at one\nprice swept "
	      "for the budget). Compares them with the hybrid histogram\n"
	      "(Shahrad et al., ATC'20), Greedy-Dual keep-alive (FaasCache, "
	      "ASPLOS'21) and a\nfixed keep-alive: cold starts, peak memory, "
	      "idle GiB-seconds at the budget,\nand the memory each needs for "
	      "ours's cold starts. No KVM needed.\n\n", out);
	opt__help(out, &set, 1);
	fputs("Exit status: 0 done, 1 a failure, 2 bad arguments or a missing "
	      "or malformed\ntrace or guests file.\n", out);
}

static int parse(int argc, char **argv, struct host_args *a)
{
	struct opt_set set = { .opts = table, .ctx = a };
	int ret;

	memset(a, 0, sizeof(*a));
	tune_host__defaults(&a->o);
	ret = opt__parse(argc, argv, &set, 1, OPT_NO_OPERANDS);
	if (ret != 0)
		return ret;
	if (!a->o.trace)
		return err__set(EINVAL, "--trace FILE missing");
	if (!a->budget_set)
		return err__set(EINVAL, "--memory-budget SIZE missing");
	if (a->o.guests && a->guest_set)
		return err__set(EINVAL, "--guests and --mem, --cold or --warm "
				"exclude each other (the file gives each "
				"guest's)");
	if (a->o.guest.hit_s > a->o.guest.cold_s)
		return err__set(EINVAL, "--warm is longer than --cold");
	return 0;
}

int cmd_tune_host(int argc, char **argv)
{
	struct host_args a;
	int code, ret = parse(argc, argv, &a);

	if (ret != 0)
		return cli__parsed(ret, "tune host", usage);
	ret = tune_host__run(&a.o, &code);
	if (ret < 0)
		return cli__error(code, "tune host: %s", err__last());
	return CLI_OK;
}
