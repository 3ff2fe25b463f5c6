/* `coldstart tune restore SNAPSHOT_DIR`: which memory-restore strategy
 * this host should use for one snapshot; its options and the command. */
#include "commands.h"

#include "args.h"
#include "err.h"
#include "mem_restore.h"
#include "opt.h"
#include "tune_restore.h"

#include <errno.h>
#include <getopt.h>
#include <string.h>

static int parse_strategies(const char *text, struct tune_opts *o)
{
	char buf[256], *save = NULL, *tok;
	int ret = 0;

	if (snprintf(buf, sizeof(buf), "%s", text) >= (int)sizeof(buf))
		return err__set(EINVAL, "--strategy: list too long");
	o->nr_strategies = 0;
	for (tok = strtok_r(buf, ",", &save); ret == 0 && tok;
	     tok = strtok_r(NULL, ",", &save)) {
		const struct guest_mem_ops *ops;

		ret = mem__choose(mem_restore__strategies(), "--strategy", tok,
				  &ops);
		for (size_t i = 0; ret == 0 && i < o->nr_strategies; i++)
			if (o->strategies[i] == ops)
				ret = err__set(EINVAL, "--strategy: %s is named "
					       "twice", tok);
		if (ret == 0)
			o->strategies[o->nr_strategies++] = ops;
	}
	if (ret == 0 && o->nr_strategies == 0)
		ret = err__set(EINVAL, "--strategy: empty list");
	return ret;
}

static int parse_cache(const char *text, struct tune_opts *o)
{
	static const char *const names[] = { "warm", "cold", NULL };
	char buf[64], *save = NULL, *tok;
	unsigned int which;
	int ret = 0;

	if (snprintf(buf, sizeof(buf), "%s", text) >= (int)sizeof(buf))
		return err__set(EINVAL, "--cache: list too long");
	o->warm = o->cold = false;
	for (tok = strtok_r(buf, ",", &save); ret == 0 && tok;
	     tok = strtok_r(NULL, ",", &save)) {
		ret = args__choice("--cache", tok, names, &which);
		if (ret == 0)
			*(which ? &o->cold : &o->warm) = true;
	}
	if (ret == 0 && !o->warm && !o->cold)
		ret = err__set(EINVAL, "--cache: empty list");
	return ret;
}

static int set_count(void *ctx, const char *arg)
{
	return args__u64("--count", arg, 1, 100000,
			 &((struct tune_opts *)ctx)->count);
}

static int set_budget(void *ctx, const char *arg)
{
	struct tune_opts *o = ctx;

	if (args__duration("--budget", arg, &o->budget_ns) < 0)
		return -EINVAL;
	return o->budget_ns ? 0 : err__set(EINVAL, "--budget: must be more "
					   "than 0");
}

static int set_cache(void *ctx, const char *arg)
{
	return parse_cache(arg, ctx);
}

static int set_alpha(void *ctx, const char *arg)
{
	return args__probability("--alpha", arg,
				 &((struct tune_opts *)ctx)->alpha);
}

static int set_strategy(void *ctx, const char *arg)
{
	return parse_strategies(arg, ctx);
}

static int set_exec(void *ctx, const char *arg)
{
	((struct tune_opts *)ctx)->exec = arg;
	return 0;
}

static int set_allow_pvm(void *ctx, const char *arg)
{
	(void)arg;
	((struct tune_opts *)ctx)->allow_pvm = true;
	return 0;
}

static int set_json(void *ctx, const char *arg)
{
	(void)arg;
	((struct tune_opts *)ctx)->json = true;
	return 0;
}

static int set_out(void *ctx, const char *arg)
{
	((struct tune_opts *)ctx)->out_dir = arg;
	return 0;
}

static int set_kvm(void *ctx, const char *arg)
{
	((struct tune_opts *)ctx)->kvm_path = arg;
	return 0;
}

static const struct opt table[] = {
	{ "budget", 0, "DURATION", false, "stop sampling once this is spent, "
	  "in whole rounds (default\n60s, trial restores included)",
	  set_budget, NULL },
	{ "cache", 0, "LIST", false, "warm, cold or both (default warm,cold); "
	  "cold is left out\n(and recorded) on tmpfs and for diff snapshots",
	  set_cache, NULL },
	{ "count", 'n', "N", false, "restores per strategy and cache state "
	  "(default 30); raised\nto the least with which the test can reach "
	  "--alpha", set_count, NULL },
	{ "alpha", 0, "P", false, "significance level (default 0.01, as "
	  "compare)", set_alpha, NULL },
	{ "strategy", 0, "LIST", false, "strategies to try (default: all)",
	  set_strategy, NULL },
	{ "allow-pvm", 0, NULL, false, "time a Linux snapshot on a PVM host "
	  "(only the ring-0 test\nkernel runs there)", set_allow_pvm, NULL },
	{ "exec", 0, "CMD", false, "for a --rootfs guest's snapshot: the "
	  "command its agent runs,\ntimed to its first output byte "
	  "(default: a python3 that\nimports json, re, subprocess, "
	  "urllib.request)", set_exec, NULL },
	{ "json", 0, NULL, false, "the result document on stdout", set_json,
	  NULL },
	{ "out", 0, "DIR", false, "also write DIR/tune-restore.json and "
	  "DIR/tune-restore.md", set_out, NULL },
	{ "kvm", 0, "PATH", false, "KVM device (default /dev/kvm)", set_kvm,
	  NULL },
	OPT_END,
};

static void usage(FILE *out)
{
	struct tune_opts defaults;
	struct opt_set set = { .opts = table, .ctx = &defaults };

	tune_restore__defaults(&defaults);
	fputs("Usage: coldstart tune restore SNAPSHOT_DIR [OPTIONS]\n"
	      "Restores SNAPSHOT_DIR (a probe-guest or Linux snapshot) with "
	      "every memory-restore\nstrategy this host and snapshot allow, "
	      "with the page cache warm and cold, all\ninterleaved round by "
	      "round, and times restore start -> DONE (for Linux: the\nguest's "
	      "done signal). Ranks the strategies by median and names a "
	      "winner only\nwhen it is significantly faster than every other "
	      "one: the two-sided\nMann-Whitney U test of `coldstart compare` "
	      "against the fastest, Holm-corrected\nover those comparisons. "
	      "Otherwise says which strategies show no significant\ndifference "
	      "from the fastest. Prints the flag to use (--mem-restore NAME).\n"
	      "\n", out);
	opt__help(out, &set, 1);
	fputs("The prefetch strategies record SNAPSHOT_DIR/wset on their first "
	      "restore when it\nis missing, as `snapshot restore` does.\n"
	      "Exit codes: 0 done (winner or not), 1 a restore failed, 2 usage "
	      "or not a\nsnapshot, 77 this host cannot (no KVM; a Linux "
	      "snapshot on PVM).\nStrategies:", out);
	for (const struct guest_mem_ops *const *s = mem_restore__strategies();
	     *s; s++)
		fprintf(out, " %s", (*s)->name);
	fputc('\n', out);
}

/* 0, 1 for --help, or -EINVAL with a message. SNAPSHOT_DIR may come
 * before or after the options. */
static int parse(int argc, char **argv, struct tune_opts *o)
{
	struct opt_set set = { .opts = table, .ctx = o };
	int ret;

	tune_restore__defaults(o);
	ret = opt__parse(argc, argv, &set, 1, OPT_OPERANDS_ANY);
	if (ret == 1)
		return 1;
	if (ret == 0 && optind >= argc)
		ret = err__set(EINVAL, "SNAPSHOT_DIR missing");
	if (ret == 0)
		o->dir = argv[optind++];
	if (ret == 0)
		ret = args__no_operands(argc, argv);
	return ret;
}

int cmd_tune_restore(int argc, char **argv)
{
	struct tune_opts o;
	int ret = parse(argc, argv, &o);

	if (ret != 0)
		return cli__parsed(ret, "tune restore", usage);
	ret = tune_restore__run(&o);
	if (ret < 0)
		return cli__error(cli__exit_for(ret), "tune restore: %s",
				  err__last());
	return ret;
}
