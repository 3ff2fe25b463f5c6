/* `coldstart tune session --snapshot DIR`: which merge policy a session
 * of one turn command should use; its options and the command. */
#include "commands.h"

#include "args.h"
#include "err.h"
#include "mem_restore.h"
#include "opt.h"
#include "tune_session.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The list parted in one copy of it (freed by cmd_tune_session), so no
 * policy's text is lost on any way out. */
static int set_policies(void *ctx, const char *arg)
{
	struct tune_session_opts *o = ctx;
	char *p;

	free(o->policies_text);
	o->policies_text = p = strdup(arg);
	if (!p)
		return err__set(ENOMEM, "--policies");
	o->nr_policies = 0;
	for (;;) {
		size_t n = strcspn(p, ",");
		bool last = !p[n];

		if (n == 0)
			return err__set(EINVAL, "--policies '%s': an empty "
					"policy", arg);
		if (o->nr_policies == TUNE_SESSION_MAX)
			return err__set(EINVAL, "--policies: at most %d",
					TUNE_SESSION_MAX);
		p[n] = '\0';
		o->policies[o->nr_policies++] = p;
		if (last)
			return 0;
		p += n + 1;
	}
}

static int set_snapshot(void *ctx, const char *arg)
{
	((struct tune_session_opts *)ctx)->snapshot = arg;
	return 0;
}

static int set_exec(void *ctx, const char *arg)
{
	if (!*arg)
		return err__set(EINVAL, "--exec: an empty command");
	((struct tune_session_opts *)ctx)->exec = arg;
	return 0;
}

static int set_turns(void *ctx, const char *arg)
{
	return args__u64("--turns", arg, 1, 100000,
			 &((struct tune_session_opts *)ctx)->turns);
}

static int set_strategy(void *ctx, const char *arg)
{
	return mem__choose(mem_restore__strategies(), "--strategy", arg,
			   &((struct tune_session_opts *)ctx)->strategy);
}

static int set_work_dir(void *ctx, const char *arg)
{
	((struct tune_session_opts *)ctx)->work_dir = arg;
	return 0;
}

static int set_allow_pvm(void *ctx, const char *arg)
{
	(void)arg;
	((struct tune_session_opts *)ctx)->allow_pvm = true;
	return 0;
}

static int set_json(void *ctx, const char *arg)
{
	(void)arg;
	((struct tune_session_opts *)ctx)->json = true;
	return 0;
}

static int set_out(void *ctx, const char *arg)
{
	((struct tune_session_opts *)ctx)->out_dir = arg;
	return 0;
}

static int set_kvm(void *ctx, const char *arg)
{
	((struct tune_session_opts *)ctx)->kvm_path = arg;
	return 0;
}

static const struct opt table[] = {
	{ "snapshot", 0, "DIR", false, "the session's first state: a "
	  "snapshot of a guest with an\nagent (snapshot create --rootfs); "
	  "never written", set_snapshot, NULL },
	{ "exec", 0, "CMD", false, "each turn's command (default: bench "
	  "session's)", set_exec, NULL },
	{ "turns", 0, "N", false, "turns per policy (default 12)", set_turns,
	  NULL },
	{ "policies", 0, "LIST", false, "candidate merge policies, as bench "
	  "session --merge\n(default never,chain:4,chain:8,every:4)",
	  set_policies, NULL },
	{ "strategy", 0, "NAME", false, "the resume's memory strategy "
	  "(default mmap)", set_strategy, NULL },
	{ "work-dir", 0, "DIR", false, "where the turns' snapshots go "
	  "(default: a new directory\nper policy in $TMPDIR or /var/tmp); "
	  "removed afterwards", set_work_dir, NULL },
	{ "allow-pvm", 0, NULL, false, "run on a PVM host", set_allow_pvm,
	  NULL },
	{ "json", 0, NULL, false, "the result document on stdout", set_json,
	  NULL },
	{ "out", 0, "DIR", false, "also write DIR/tune-session.json and "
	  "DIR/tune-session.md", set_out, NULL },
	{ "kvm", 0, "PATH", false, "KVM device (default /dev/kvm)", set_kvm,
	  NULL },
	OPT_END,
};

static void usage(FILE *out)
{
	struct tune_session_opts defaults;
	struct opt_set set = { .opts = table, .ctx = &defaults };

	tune_session__defaults(&defaults);
	fputs("Usage: coldstart tune session --snapshot DIR [OPTIONS]\n"
	      "Runs a session of --turns turns of the same command (as bench "
	      "session) once per\ncandidate merge policy, each in its own "
	      "work directory, interleaved turn by\nturn on this host (round "
	      "k: turn k of every policy, the order rotating).\nPer policy: "
	      "resume drift (median resume -> first output of the last three\n"
	      "turns over the first three), median resume, bytes written per "
	      "turn (snapshots\nand merges), merge time. Recommends, among "
	      "the policies whose drift is at most\n1.20x, the one writing "
	      "the fewest bytes; if none is, the flattest.\n\n", out);
	opt__help(out, &set, 1);
	fputs("Exit codes: 0 done, 1 a turn failed, 2 usage or not a snapshot "
	      "of a guest with\nan agent.\n", out);
}

/* 0, 1 for --help, or -EINVAL with a message. */
static int parse(int argc, char **argv, struct tune_session_opts *o)
{
	struct opt_set set = { .opts = table, .ctx = o };
	int ret;

	tune_session__defaults(o);
	ret = opt__parse(argc, argv, &set, 1, OPT_OPERANDS_ANY);
	if (ret == 1)
		return 1;
	if (ret == 0)
		ret = args__no_operands(argc, argv);
	if (ret == 0 && !o->snapshot)
		ret = err__set(EINVAL, "--snapshot DIR is needed: a snapshot "
			       "of a guest with an agent (snapshot create "
			       "--rootfs)");
	if (ret == 0)
		ret = tune_session__check(o);
	return ret;
}

int cmd_tune_session(int argc, char **argv)
{
	struct tune_session_opts o;
	int ret = parse(argc, argv, &o);

	if (ret != 0)
		ret = cli__parsed(ret, "tune session", usage);
	else
		ret = tune_session__run(&o);
	if (ret < 0)
		ret = cli__error(cli__exit_for(ret), "tune session: %s",
				 err__last());
	free(o.policies_text);
	return ret;
}
