/* bench session --kills (session_int.h): crash consistency of a session.
 * Each turn and each merge runs in a forked child, SIGKILLed at a random
 * point; after each kill the link it wrote must be absent or a complete
 * snapshot, and the session goes on from its last complete turn, whose
 * continuity check finds every earlier turn's state. */
#include "session.h"
#include "session_int.h"

#include "diff.h"
#include "err.h"
#include "snapshot.h"
#include "stats.h"
#include "tmpdir.h"
#include "units.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* What a child tells its parent through a pipe, in one write. */
struct kill_report {
	int ret;
	bool lost;
	uint64_t sectors;
	struct turn t;
	char msg[480];
};

/* One child's run. */
struct kill_run {
	bool merge;
	uint64_t kill_ns; /* 0: never killed */
	uint64_t wall_ns;
	bool killed;
	bool reported;
	struct kill_report r;
	enum session_link link;
	uint64_t link_bytes; /* a complete link's memory and disk data */
	char why[256]; /* a torn link: what the snapshot code said */
};

struct kills {
	struct stats_rng rng;
	uint64_t made, finished, turns_done, merges_done;
	uint64_t tmp_removed;
	uint64_t turn_ns, merge_ns; /* an unkilled run's wall time */
	uint64_t k;                 /* the next turn */
	bool merge_due;
	char next[PATH_MAX];
	json_t *events;
	json_t *failure;
};

enum session_link session__link_state(const char *dir, char *why, size_t n,
				       uint64_t *bytes)
{
	struct snapshot snap;
	struct snapdiff d;
	struct stat st;
	int ret;

	*bytes = 0;
	if (lstat(dir, &st) < 0 && errno == ENOENT)
		return SESSION_LINK_ABSENT;
	ret = snapshot__open_layer(&snap, dir);
	if (ret == 0) {
		ret = snapdiff__parse(&snap, &d);
		for (uint32_t i = 0; ret >= 0 && i < snap.virtio.nr_drives &&
				     i < SNAP_MAX_DRIVES; i++)
			*bytes += snap.virtio.drive[i].layer_bytes;
		*bytes += ret >= 0 ? snap.mem.data_bytes : 0;
		snapshot__close(&snap);
	}
	if (ret < 0) {
		snprintf(why, n, "%s", err__last());
		return SESSION_LINK_TORN;
	}
	return ret == 1 ? SESSION_LINK_DIFF : SESSION_LINK_FULL;
}

/* The child's side: the turn (or merge) on a KVM handle of its own. */
static void child_body(struct session *s, struct kills *kl, bool merge,
		       int fd)
{
	struct kill_report r = { 0 };
	struct kvm_host kvm;

	if (merge) {
		r.ret = session__merge_write(s, &r.t);
	} else {
		r.ret = kvm__open(&kvm, s->o->c.kvm_path);
		if (r.ret == 0) {
			r.ret = session__turn(s, &kvm, kl->k, kl->next, &r.t,
					      &r.lost);
			kvm__close(&kvm);
		}
		r.sectors = s->sectors;
	}
	if (r.ret < 0)
		snprintf(r.msg, sizeof(r.msg), "%s", err__last());
	if (write(fd, &r, sizeof(r)) != (ssize_t)sizeof(r))
		_exit(3);
	if (r.ret < 0 && !merge) /* saved, but not a turn to go on from */
		snapshot__abort_dir(kl->next);
	_exit(r.ret < 0 ? 1 : 0);
}

/* Waits for the child, SIGKILLing it at run->kill_ns: a pidfd wakes the
 * wait the moment it exits, so a finished child is never signalled. */
static int wait_or_kill(pid_t pid, struct kill_run *run)
{
	struct pollfd p = { .events = POLLIN };
	struct timespec ts = { .tv_sec = (time_t)(run->kill_ns / 1000000000),
			       .tv_nsec = (long)(run->kill_ns % 1000000000) };
	int status, n, sent = 0;

	p.fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (p.fd < 0) {
		n = errno;
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return err__sys(n, "pidfd_open of a session's child");
	}
	do
		n = ppoll(&p, 1, run->kill_ns ? &ts : NULL, NULL);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		sent = kill(pid, SIGKILL) == 0;
	close(p.fd);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return err__sys(errno, "waiting for a session's child");
	run->killed = sent && WIFSIGNALED(status) &&
		      WTERMSIG(status) == SIGKILL;
	return 0;
}

/* Runs the next turn (or the merge) in a child; run filled. */
static int run_child(struct session *s, struct kills *kl,
		     struct kill_run *run)
{
	const char *link = run->merge ? s->links[s->nr_links - 1] : kl->next;
	uint64_t t0;
	int fds[2], ret;
	pid_t pid;

	/* what a killed writer of this link left, as `snapshot restore
	 * --save` does; counted */
	ret = tmpdir__clean_stale(link, NULL, NULL);
	kl->tmp_removed += ret > 0 ? (uint64_t)ret : 0;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return err__sys(errno, "a pipe for a session's child");
	fflush(NULL);
	t0 = now_ns();
	pid = fork();
	if (pid < 0) {
		ret = err__sys(errno, "forking a session's child");
		close(fds[0]);
		close(fds[1]);
		return ret;
	}
	if (pid == 0) {
		close(fds[0]);
		child_body(s, kl, run->merge, fds[1]);
	}
	close(fds[1]);
	ret = wait_or_kill(pid, run);
	run->wall_ns = now_ns() - t0;
	if (ret == 0)
		run->reported = read(fds[0], &run->r, sizeof(run->r)) ==
				(ssize_t)sizeof(run->r);
	close(fds[0]);
	run->link = session__link_state(link, run->why, sizeof(run->why),
					&run->link_bytes);
	return ret;
}

/* The session after a done run: the chain moved on, the turn recorded
 * when its report arrived. */
static void went_on(struct session *s, struct kills *kl,
		    const struct kill_run *run)
{
	const struct session_opts *o = s->o;
	const struct turn *t = &run->r.t;

	if (run->merge) {
		session__merged(s);
		kl->merge_due = false;
		if (run->reported && s->done && s->t[s->done - 1].no + 1 == kl->k) {
			s->t[s->done - 1].merged = true;
			s->t[s->done - 1].merge_ns = t->merge_ns;
			s->t[s->done - 1].merged_bytes = t->merged_bytes;
			s->t[s->done - 1].chain = s->nr_links;
		}
		return;
	}
	session__advance(s, kl->next);
	/* the link's own count: a turn killed after its save and before
	 * its report still adds its bytes (the size: policy's) */
	s->diff_bytes += o->full ? 0 : run->link_bytes;
	if (run->reported) {
		s->sectors = run->r.sectors;
		s->t[s->done] = *t;
		s->t[s->done++].chain = s->nr_links;
	}
	kl->merge_due = !o->full &&
		(session__should_merge(&o->merge, kl->k, s->nr_links - 1,
				       s->diff_bytes) ||
		 s->nr_links - 1 >= SNAPDIFF_MAX_CHAIN);
	kl->k++;
}

static const char *link_name(enum session_link l)
{
	static const char *const names[] = { "absent", "torn", "a diff",
					     "a full snapshot" };

	return names[l];
}

static void fail(struct kills *kl, const struct kill_run *run,
		 const char *link, enum session_kill_verdict v)
{
	char what[PATH_MAX + 512];

	if (v == SESSION_KILL_LOST || (run->reported && run->r.ret < 0 &&
				       v != SESSION_KILL_TORN))
		snprintf(what, sizeof(what), "%s", run->r.msg);
	else if (v == SESSION_KILL_TORN)
		snprintf(what, sizeof(what), "%s is %s%s%s", link,
			 link_name(run->link), run->why[0] ? ": " : "",
			 run->why);
	else
		snprintf(what, sizeof(what), "it ended on its own and %s is %s",
			 link, link_name(run->link));
	kl->failure = json_pack("{s:I, s:s, s:I, s:s, s:s, s:s}", "kill",
				(json_int_t)kl->made, "of",
				run->merge ? "merge" : "turn", "turn",
				(json_int_t)(run->merge ? kl->k - 1 : kl->k),
				"link", link, "verdict",
				session__verdict_name(v), "what", what);
	fprintf(stderr, "coldstart: session: %s %" PRIu64 " %s after kill %"
		PRIu64 ": %s\n", run->merge ? "the merge after turn" : "turn",
		run->merge ? kl->k - 1 : kl->k, session__verdict_name(v),
		kl->made, what);
}

/* The kill points' scale: the unkilled run of its kind, raised to a
 * longer time a killed one is known to have run (its kill point), so
 * that a host slowing down still lets some finish. A run that finished
 * before its kill does not lower it: those are the faster ones (in the
 * emulated host, taking them made 93 of 100 turns killed). */
static void rescale(struct kills *kl, const struct kill_run *run)
{
	uint64_t *scale = run->merge ? &kl->merge_ns : &kl->turn_ns;

	if (!run->kill_ns && !*scale)
		*scale = run->wall_ns;
	else if (run->killed && run->kill_ns > *scale)
		*scale = run->kill_ns;
}

/* One run of the next turn or the merge, killed at kill_ns (0: never):
 * its verdict, or -errno. */
static int attempt(struct session *s, struct kills *kl, bool merge,
		   uint64_t kill_ns, enum session_kill_verdict *v)
{
	struct kill_run run = { .merge = merge, .kill_ns = kill_ns };
	char link[PATH_MAX];
	struct session_kill_end e;
	int ret = session__turn_path(s, kl->k, kl->next);

	if (ret < 0)
		return ret;
	snprintf(link, sizeof(link), "%s",
		 merge ? s->links[s->nr_links - 1] : kl->next);
	ret = run_child(s, kl, &run);
	if (ret < 0)
		return ret;
	rescale(kl, &run);
	e = (struct session_kill_end){ .merge = merge, .killed = run.killed,
		.reported = run.reported, .ok = run.reported && run.r.ret == 0,
		.lost = run.reported && run.r.lost, .link = run.link };
	*v = session__kill_verdict(&e);
	if (kill_ns) {
		kl->made++;
		kl->finished += !run.killed;
		fprintf(stderr, "coldstart: session: kill %" PRIu64 "/%" PRIu64
			": %s %" PRIu64 " after %.1f ms (%s): %s\n", kl->made,
			s->o->kills, merge ? "the merge after turn" : "turn",
			merge ? kl->k - 1 : kl->k, (double)kill_ns / 1e6,
			run.killed ? "killed" : "finished first",
			session__verdict_name(*v));
		json_array_append_new(kl->events, json_pack(
			"{s:s, s:I, s:f, s:b, s:s}", "of",
			merge ? "merge" : "turn", "turn",
			(json_int_t)(merge ? kl->k - 1 : kl->k), "after_ms",
			(double)kill_ns / 1e6, "finished", !run.killed,
			"verdict", session__verdict_name(*v)));
	}
	if (*v == SESSION_KILL_DONE) {
		if (kill_ns)
			merge ? kl->merges_done++ : kl->turns_done++;
		went_on(s, kl, &run);
	} else if (*v == SESSION_KILL_UNDONE) {
		if (merge) /* tried again after the next turn */
			kl->merge_due = s->nr_links - 1 >= SNAPDIFF_MAX_CHAIN;
	} else {
		fail(kl, &run, link, *v);
	}
	return 0;
}

/* An unkilled run that must be done (anything else is a failure, as it
 * cannot be undone): the first turn and merge (their times are the kill
 * points' first scale) and the last turn. */
static int unkilled(struct session *s, struct kills *kl, bool merge,
		    bool *ok)
{
	enum session_kill_verdict v;
	int ret = attempt(s, kl, merge, 0, &v);

	*ok = ret == 0 && v == SESSION_KILL_DONE;
	return ret;
}

static int loop(struct session *s, struct kills *kl)
{
	enum session_kill_verdict v = SESSION_KILL_DONE;
	bool ok;
	int ret = unkilled(s, kl, false, &ok);

	while (ret == 0 && ok && kl->made < s->o->kills) {
		if (kl->merge_due && !kl->merge_ns) {
			ret = unkilled(s, kl, true, &ok);
			continue;
		}
		ret = attempt(s, kl, kl->merge_due,
			      session__kill_point(&kl->rng, kl->merge_due
						  ? kl->merge_ns : kl->turn_ns),
			      &v);
		ok = v == SESSION_KILL_DONE || v == SESSION_KILL_UNDONE;
	}
	/* the last turn checks every earlier one's state, unkilled */
	if (ret == 0 && ok)
		ret = unkilled(s, kl, false, &ok);
	s->kill_failed = ret == 0 && !ok;
	return ret;
}

/* What killed writers left in the work directory, removed (counted). */
static uint64_t sweep_temporaries(const struct session *s)
{
	char path[PATH_MAX];
	struct dirent *de;
	uint64_t n = 0;
	DIR *d = opendir(s->work);

	while (d && (de = readdir(d)))
		if (strstr(de->d_name, ".tmp.") &&
		    snprintf(path, sizeof(path), "%s/%s", s->work,
			     de->d_name) < (int)sizeof(path)) {
			n++;
			if (!s->o->keep)
				snapshot__abort_dir(path);
		}
	if (d)
		closedir(d);
	return n;
}

int session__kills(struct session *s)
{
	struct kills kl = { .k = 1, .events = json_array() };
	uint64_t t0 = now_ns(), left;
	int ret;

	if (!kl.events)
		return err__set(ENOMEM, "--kills");
	if (!s->o->seed_given) /* printed and recorded: a run can be redone */
		s->o->seed = now_ns() ^ ((uint64_t)getpid() << 32);
	stats__rng_seed(&kl.rng, s->o->seed);
	fprintf(stderr, "coldstart: session: %" PRIu64 " kills, seed %" PRIu64
		"\n", s->o->kills, s->o->seed);
	ret = loop(s, &kl);
	left = sweep_temporaries(s);
	s->o->turns = kl.k - 1;
	s->kills = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
			     "s:f, s:f, s:f, s:b, s:o, s:o}", "seed",
			     (json_int_t)s->o->seed, "requested",
			     (json_int_t)s->o->kills, "made",
			     (json_int_t)kl.made, "last_turn",
			     (json_int_t)(kl.k - 1), "finished_first",
			     (json_int_t)kl.finished, "turns_completed",
			     (json_int_t)kl.turns_done, "merges_completed",
			     (json_int_t)kl.merges_done,
			     "temporaries_removed_by_next_writer",
			     (json_int_t)kl.tmp_removed, "temporaries_left",
			     (json_int_t)left, "turn_ms",
			     (double)kl.turn_ns / 1e6, "merge_ms",
			     (double)kl.merge_ns / 1e6, "wall_s",
			     (double)(now_ns() - t0) / 1e9, "ok",
			     ret == 0 && !s->kill_failed, "events", kl.events,
			     "failure", kl.failure ? kl.failure : json_null());
	if (!s->kills)
		return err__set(ENOMEM, "--kills");
	fprintf(stderr, "coldstart: session: %" PRIu64 " kills (%" PRIu64
		" finished first); %" PRIu64 " turns and %" PRIu64 " merges "
		"completed despite them; %" PRIu64 " temporaries of killed "
		"writers removed by the next, %" PRIu64 " left; %s\n",
		kl.made, kl.finished, kl.turns_done, kl.merges_done,
		kl.tmp_removed, left, s->kill_failed ? "state was lost or torn"
				     : "no state lost or torn");
	return ret;
}
