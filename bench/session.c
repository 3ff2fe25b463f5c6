/* `coldstart bench session` (session.h): its options, the turns, the
 * chain of snapshots and its merges, and the result document. */
#include "session.h"
#include "session_int.h"

#include "agent_client.h"
#include "args.h"
#include "child.h"
#include "cli.h"
#include "diff.h"
#include "err.h"
#include "kvm.h"
#include "mem_restore.h"
#include "output.h"
#include "restore.h"
#include "result.h"
#include "result_new.h"
#include "snap_linux.h"
#include "snapshot.h"
#include "units.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_EXEC                                                      \
	"python3 -c 'import json, os, time; "                             \
	"open(\"/root/work.json\", \"w\").write(json.dumps({\"t\": "     \
	"time.time()})); open(\"/root/turns.log\", \"a\").write("         \
	"\"turn\\n\"); print(\"turn done\")'"

/* Folds the chain into one full snapshot at its newest link, then drops
 * the older links of ours (the user's snapshot stays). */
static int merge_chain(struct session *s, struct turn *t)
{
	int ret = session__merge_write(s, t);

	if (ret == 0)
		session__merged(s);
	return ret;
}

static int one_turn(struct session *s, uint64_t k)
{
	struct session_opts *o = s->o;
	struct turn *t = &s->t[k - 1];
	char next[PATH_MAX];
	bool lost;
	int ret = session__turn_path(s, k, next);

	if (ret < 0)
		return ret;
	ret = session__turn(s, &s->kvm, k, next, t, &lost);
	if (ret < 0) { /* saved, but not a turn the session goes on from */
		snapshot__abort_dir(next);
		return ret;
	}
	session__advance(s, next);
	s->diff_bytes += o->full ? 0 : t->mem_bytes + t->disk_bytes;
	if (!o->full && session__should_merge(&o->merge, k, s->nr_links - 1,
					      s->diff_bytes))
		ret = merge_chain(s, t);
	t->chain = s->nr_links;
	return ret;
}

static void progress(const struct session *s, uint64_t k)
{
	const struct turn *t = &s->t[k - 1];

	fprintf(stderr, "coldstart: session: turn %" PRIu64 "/%" PRIu64
		": resume -> first output %.1f ms, command %.1f ms, pause + "
		"snapshot %.1f ms, %.1f MiB saved, chain %u%s\n", k,
		s->o->turns, t->resume_ns / 1e6, t->command_ns / 1e6,
		(t->pause_ns + t->save_ns) / 1e6,
		(double)(t->mem_bytes + t->disk_bytes) / MiB, t->chain,
		t->merged ? " (merged)" : "");
}

/* One fresh boot of the snapshot's guest (its kernel, initrd and root
 * disk, read-only underneath its own overlay) running the turn's
 * command: `coldstart run ... --exec CMD --json`, process start -> first
 * output byte, as a user's cold start would be. */
static int boot_once(struct session *s, double *ns)
{
	const struct restore_snap *i = &s->info;
	char *argv[16], *cmd = session__command(s->o->exec, 1);
	const char *self = cli__self_exe();
	json_t *doc = NULL, *tl;
	int n = 0, status = 0, ret;

	if (!cmd || !self) {
		free(cmd);
		return err__set(ENOMEM, "a fresh boot");
	}
	argv[n++] = (char *)self;
	argv[n++] = "run";
	argv[n++] = "--kernel";
	argv[n++] = (char *)i->guest.kernel;
	if (i->guest.initrd[0]) {
		argv[n++] = "--initrd";
		argv[n++] = (char *)i->guest.initrd;
	}
	argv[n++] = "--rootfs";
	argv[n++] = (char *)i->rootfs;
	argv[n++] = "--exec";
	argv[n++] = cmd;
	argv[n++] = "--json";
	argv[n++] = "--timeout";
	argv[n++] = "300s";
	if (s->o->c.allow_pvm)
		argv[n++] = "--allow-pvm";
	argv[n] = NULL;
	ret = child__capture(argv, &doc, &status);
	free(cmd);
	tl = json_object_get(doc, "timeline_ns");
	if (ret == 0 && !json_is_integer(json_object_get(tl, "first_output")))
		ret = err__set(EIO, "a fresh boot of the guest (coldstart run "
			       "--kernel %s --rootfs %s --exec) gave no first "
			       "output (wait status %d)", i->guest.kernel,
			       i->rootfs, status);
	if (ret == 0)
		*ns = (double)json_integer_value(json_object_get(tl,
							       "first_output"));
	json_decref(doc);
	return ret;
}

/* The baseline: fresh boots before the turns (--baseline N). */
static int boots(struct session *s)
{
	int ret = 0;

	s->boot_ns = calloc(s->o->baseline ? s->o->baseline : 1,
			    sizeof(*s->boot_ns));
	if (!s->boot_ns)
		return err__set(ENOMEM, "the fresh boots");
	for (uint64_t b = 0; ret == 0 && b < s->o->baseline; b++) {
		ret = boot_once(s, &s->boot_ns[b]);
		if (ret == 0) {
			s->boots++;
			fprintf(stderr, "coldstart: session: fresh boot %" PRIu64
				"/%" PRIu64 ": process start -> first output "
				"%.1f ms\n", b + 1, s->o->baseline,
				s->boot_ns[b] / 1e6);
		}
	}
	return ret;
}

/* The turn after those done, with its progress line. */
static int next_turn(struct session *s)
{
	uint64_t k = s->done + 1;
	int ret = one_turn(s, k);

	if (ret == 0) {
		s->done = k;
		progress(s, k);
	}
	return ret;
}

static int run_turns(struct session *s)
{
	int ret = 0;

	for (uint64_t k = 1; ret == 0 && k <= s->o->turns; k++) {
		if (k > 1 && s->o->think_ns) {
			struct timespec ts = {
				.tv_sec = (time_t)(s->o->think_ns / 1000000000),
				.tv_nsec = (long)(s->o->think_ns % 1000000000)
			};

			nanosleep(&ts, NULL);
		}
		ret = next_turn(s);
	}
	return ret;
}

/* The user's snapshot: one of a guest with an agent (a rootfs guest). */
static int check_dir(const char *command, const char *dir, bool allow_pvm,
		     struct restore_snap *info)
{
	int code = restore__check_snapshot(command, dir, allow_pvm, info);

	if (code == CLI_OK && !info->agent)
		code = cli__error(CLI_USAGE, "%s: %s holds no guest with an "
				  "agent; make one with `snapshot create DIR "
				  "--kernel K --initrd I --rootfs R`", command,
				  dir);
	if (code == CLI_OK && info->compressed)
		code = cli__error(CLI_USAGE, "%s: %s is compressed; diffs need "
				  "a raw base", command, dir);
	return code;
}

static int check_snapshot(struct session *s)
{
	return check_dir("bench session", s->o->snapshot, s->o->c.allow_pvm,
			 &s->info);
}

int session__check_snapshot(const char *command, const char *dir,
			    bool allow_pvm)
{
	struct restore_snap info;

	return check_dir(command, dir, allow_pvm, &info);
}

static int setup(struct session *s)
{
	struct session_opts *o = s->o;
	char abs[PATH_MAX];
	int ret;

	if (!realpath(o->snapshot, abs))
		return err__sys(errno, "--snapshot %s", o->snapshot);
	ret = restore__scratch_dir(s->work, o->work_dir, "session");
	if (ret < 0)
		return ret;
	s->links = calloc(SNAPDIFF_MAX_CHAIN + 1, sizeof(*s->links));
	s->t = calloc(o->turns, sizeof(*s->t));
	if (!s->links || !s->t)
		return err__set(ENOMEM, "bench session");
	snprintf(s->links[0], PATH_MAX, "%s", abs);
	s->nr_links = 1;
	return kvm__open(&s->kvm, o->c.kvm_path);
}

static void cleanup(struct session *s)
{
	if (s->work[0] && !s->o->keep) {
		for (unsigned int i = 0; i < s->nr_links; i++)
			if (session__ours(s, s->links[i]))
				snapshot__abort_dir(s->links[i]);
		if (rmdir(s->work) < 0)
			fprintf(stderr, "coldstart: bench session: %s is left "
				"(not empty)\n", s->work);
	} else if (s->work[0]) {
		fprintf(stderr, "coldstart: bench session: the snapshots are "
			"kept in %s\n", s->work);
	}
	free(s->links);
	s->links = NULL;
}

static int run(void *opts)
{
	struct session s = { .o = opts };
	json_t *doc;
	int code, ret;

	if (s.o->print_turn) {
		char *text = session__command(s.o->exec, s.o->print_turn);

		if (!text)
			return err__set(ENOMEM, "--turn-command");
		fputs(text, stdout);
		free(text);
		return CLI_OK;
	}
	/* checked here, not with the options: each option alone parses */
	if (!s.o->snapshot)
		return cli__error(CLI_USAGE, "bench session: --snapshot DIR is "
				  "needed: a snapshot of a guest with an "
				  "agent (snapshot create --rootfs)");
	code = check_snapshot(&s);
	if (code != CLI_OK)
		return code;
	if (s.o->kills) /* at most one recorded turn per kill, two unkilled */
		s.o->turns = s.o->kills + 2;
	ret = setup(&s);
	if (ret == 0 && !s.o->kills)
		ret = boots(&s);
	if (ret == 0) {
		ret = s.o->kills ? session__kills(&s) : run_turns(&s);
		kvm__close(&s.kvm);
	}
	cleanup(&s);
	if (ret < 0 && !s.done) {
		free(s.t);
		free(s.boot_ns);
		json_decref(s.kills);
		return ret;
	}
	if (ret < 0) /* the turns done are a result: kept, then the error */
		fprintf(stderr, "coldstart: bench session: %s\n", err__last());
	doc = session__result(&s);
	free(s.t);
	free(s.boot_ns);
	json_decref(s.kills);
	if (!doc)
		return err__set(ENOMEM, "the result document");
	code = result__emit(doc, s.o->c.json, s.o->c.out_dir,
			     session__report);
	json_decref(doc);
	if (code < 0)
		return code;
	return ret < 0 || s.kill_failed ? CLI_FAIL : CLI_OK;
}

static void init(void *opts);
static int check(void *opts);

/* A session of the library's: its options live with it. */
struct session_run {
	struct session_opts o;
	struct session s;
	bool kvm_open;
};

int session__start(const struct session_spec *sp, struct session_run **run)
{
	struct session_run *r = calloc(1, sizeof(*r));
	struct session_opts *o = r ? &r->o : NULL;
	int ret;

	*run = NULL;
	if (!r)
		return err__set(ENOMEM, "a session");
	r->s.o = o;
	init(o);
	o->snapshot = sp->snapshot;
	o->exec = sp->exec ? sp->exec : o->exec;
	o->work_dir = sp->work_dir;
	o->c.kvm_path = sp->kvm_path;
	o->c.allow_pvm = sp->allow_pvm;
	o->strategy = sp->strategy ? sp->strategy : o->strategy;
	o->turns = sp->turns;
	o->baseline = 0;
	o->merge_text = sp->merge;
	o->merge_given = true;
	ret = session__parse_merge(sp->merge, &o->merge);
	if (ret == 0)
		ret = check(o);
	if (ret == 0)
		ret = check_dir(sp->command, o->snapshot, o->c.allow_pvm,
				&r->s.info);
	if (ret == 0)
		ret = setup(&r->s);
	r->kvm_open = ret == 0;
	if (ret != 0) {
		session__finish(r, NULL);
		return ret;
	}
	*run = r;
	return 0;
}

int session__next_turn(struct session_run *run)
{
	if (run->s.done >= run->o.turns)
		return err__set(EINVAL, "the session's %" PRIu64 " turns are "
				"done", run->o.turns);
	return next_turn(&run->s);
}

int session__finish(struct session_run *run, json_t **doc)
{
	int ret = 0;

	if (!run)
		return 0;
	if (run->kvm_open)
		kvm__close(&run->s.kvm);
	cleanup(&run->s);
	if (doc && !(*doc = session__result(&run->s)))
		ret = err__set(ENOMEM, "the result document");
	free(run->s.t);
	free(run->s.boot_ns);
	free(run);
	return ret;
}

/* ---- options ---- */

static void init(void *opts)
{
	struct session_opts *o = opts;

	*o = (struct session_opts){ .turns = 10, .exec = DEFAULT_EXEC,
				    .baseline = 1,
				    .merge_text = "chain:8",
				    .strategy = mem_restore__strategy("mmap") };
	session__parse_merge(o->merge_text, &o->merge);
}

static int set_snapshot(void *opts, const char *arg)
{
	((struct session_opts *)opts)->snapshot = arg;
	return 0;
}

static int set_turns(void *opts, const char *arg)
{
	return args__u64("--turns", arg, 1, 100000,
			 &((struct session_opts *)opts)->turns);
}

static int set_exec(void *opts, const char *arg)
{
	((struct session_opts *)opts)->exec = arg;
	return 0;
}

static int set_snapshots(void *opts, const char *arg)
{
	static const char *const kinds[] = { "diff", "full", NULL };
	unsigned int k;
	int ret = args__choice("--snapshots", arg, kinds, &k);

	((struct session_opts *)opts)->full = k == 1;
	return ret;
}

static int set_merge(void *opts, const char *arg)
{
	struct session_opts *o = opts;

	o->merge_text = arg;
	o->merge_given = true;
	return session__parse_merge(arg, &o->merge);
}

static int set_strategy(void *opts, const char *arg)
{
	return mem__choose(mem_restore__strategies(), "--strategy", arg,
			   &((struct session_opts *)opts)->strategy);
}

static int set_think(void *opts, const char *arg)
{
	return args__duration("--think", arg,
			      &((struct session_opts *)opts)->think_ns);
}

static int set_work_dir(void *opts, const char *arg)
{
	((struct session_opts *)opts)->work_dir = arg;
	return 0;
}

static int set_keep(void *opts, const char *arg)
{
	(void)arg;
	((struct session_opts *)opts)->keep = true;
	return 0;
}

static int set_baseline(void *opts, const char *arg)
{
	return args__u64("--baseline", arg, 0, 1000,
			 &((struct session_opts *)opts)->baseline);
}

static int set_kills(void *opts, const char *arg)
{
	return args__u64("--kills", arg, 1, 100000,
			 &((struct session_opts *)opts)->kills);
}

static int set_seed(void *opts, const char *arg)
{
	struct session_opts *o = opts;

	o->seed_given = true;
	return args__u64("--seed", arg, 0, UINT64_MAX, &o->seed);
}

static int set_turn_command(void *opts, const char *arg)
{
	return args__u64("--turn-command", arg, 1, 100000,
			 &((struct session_opts *)opts)->print_turn);
}

static int check(void *opts)
{
	const struct session_opts *o = opts;

	if (!*o->exec)
		return err__set(EINVAL, "--exec: an empty command");
	/* a resume reads at most SNAPDIFF_MAX_CHAIN diffs */
	if (!o->full && o->merge.kind == MERGE_NEVER &&
	    o->turns > SNAPDIFF_MAX_CHAIN)
		return err__set(EINVAL, "--merge never keeps every diff, and a "
				"resume reads at most %u: at most %u turns "
				"(or merge)", SNAPDIFF_MAX_CHAIN,
				SNAPDIFF_MAX_CHAIN);
	if (o->seed_given && !o->kills)
		return err__set(EINVAL, "--seed goes with --kills (it picks "
				"the kill points)");
	if (o->full && o->merge.kind != MERGE_NEVER &&
	    o->merge_given)
		return err__set(EINVAL, "--merge goes with --snapshots diff "
				"(full snapshots make no chain)");
	return 0;
}

static const struct opt table[] = {
	{ "snapshot", 0, "DIR", false, "the session's first state: a "
	  "snapshot of a guest with an\nagent (snapshot create --rootfs); "
	  "never written", set_snapshot, NULL },
	{ "turns", 0, "N", false, "turns (default 10)", set_turns, NULL },
	{ "exec", 0, "CMD", false, "each turn's command (default: python3 "
	  "that writes a file,\nappends to a log and imports json)",
	  set_exec, NULL },
	{ "snapshots", 0, "KIND", false, "diff (default: the pages and disk "
	  "blocks written in\nthe turn) or full", set_snapshots, NULL },
	{ "merge", 0, "POLICY", false, "when diffs are merged into a full "
	  "snapshot: never,\nevery:K turns, chain:K (more than K diffs; "
	  "default chain:8)\nor size:SIZE (the diffs hold more)", set_merge,
	  NULL },
	{ "strategy", 0, "NAME", false, "the resume's memory strategy "
	  "(default mmap)", set_strategy, NULL },
	{ "think", 0, "DUR", false, "time between turns (default 0)",
	  set_think, NULL },
	{ "work-dir", 0, "DIR", false, "where the turns' snapshots go "
	  "(default: a new directory\nin $TMPDIR or /var/tmp); removed "
	  "afterwards", set_work_dir, NULL },
	{ "keep", 0, NULL, false, "keep the turns' snapshots", set_keep,
	  NULL },
	{ "baseline", 0, "N", false, "fresh boots of the same guest running "
	  "the turn's command\nfirst (default 1; 0: none): resume against "
	  "boot to first\noutput", set_baseline, NULL },
	{ "kills", 0, "N", false, "crash consistency instead of timings: "
	  "each turn and merge\nin a child process, SIGKILLed at a random "
	  "point (N kills,\nthen one turn unkilled); every link must be "
	  "absent or\ncomplete, and the session go on from its last "
	  "complete turn\nwith all its state (exit 1 otherwise)", set_kills,
	  NULL },
	{ "seed", 0, "S", false, "the kill points' seed (default: from the "
	  "clock; printed\nand recorded)", set_seed, NULL },
	{ "turn-command", 0, "K", false, "print the shell text turn K runs "
	  "(--exec, then the\ncontinuity check) and exit: for turns run by "
	  "hand with\n`snapshot restore DIR --exec TEXT --save NEW --diff`",
	  set_turn_command, NULL },
	OPT_END,
};

const struct bench_driver session_driver = {
	.name = "session",
	.summary = "multi-turn sessions: resume, command, pause and diff "
		   "snapshot, turn after turn",
	.usage = "Usage: coldstart bench session --snapshot DIR [OPTIONS]\n"
		 "Runs --turns turns of a sandbox session on a snapshot of a "
		 "guest with an agent.\nEach turn resumes the newest snapshot, "
		 "runs --exec, checks that every file,\nlog line and a "
		 "counter in a long-running guest process of the earlier "
		 "turns\nis there (a loss stops the run naming the turn and "
		 "what is missing), pauses\nand saves a diff; --merge folds "
		 "the chain into a full snapshot. Per turn:\nresume -> first "
		 "output, the command, pause + snapshot, bytes saved against\n"
		 "what the turn changed (pages written + the guest's disk "
		 "writes), chain length.\n",
	.common = BENCH_JSON | BENCH_OUT | BENCH_KVM | BENCH_ALLOW_PVM,
	.opts = table,
	.size = sizeof(struct session_opts),
	.common_at = offsetof(struct session_opts, c),
	.init = init,
	.check = check,
	.run = run,
	/* the user's guest on its root disk alone (bench suite --kernel K
	 * --rootfs R takes its snapshot); no probe-guest level */
	.suite = { .root_full = "--turns 10",
		   .root_quick = "--turns 3 --merge every:2",
		   .root_smoke = "--turns 2" },
};
