/* `coldstart bench session`: a multi-turn sandbox session on a snapshot of
 * a guest with an agent. Each turn resumes the newest snapshot, runs a
 * command, checks that everything earlier turns left (files, a log, a
 * counter held in a long-running guest process) is there, pauses and
 * saves a diff (or a full snapshot); a merge policy folds the chain of
 * diffs into a full snapshot. Per turn: resume to first output, the
 * command, pause and snapshot, the bytes saved against what the turn
 * changed, the chain's length and any merge. */
#ifndef COLDSTART_SESSION_H
#define COLDSTART_SESSION_H

#include "driver.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

extern const struct bench_driver session_driver;

/* When a chain of diffs is merged into one full snapshot. */
enum session_merge {
	MERGE_NEVER,
	MERGE_EVERY, /* every k turns */
	MERGE_CHAIN, /* when more than k diffs lie above the full snapshot */
	MERGE_SIZE,  /* when the diffs hold more than k bytes */
};

struct session_merge_policy {
	enum session_merge kind;
	uint64_t k;
};

/* "never", "every:K", "chain:K" or "size:SIZE" into *p; -EINVAL with a
 * message otherwise. */
int session__parse_merge(const char *text, struct session_merge_policy *p);

/* Whether the policy merges now: `turn` turns done, `diffs` diffs above
 * the full snapshot holding `bytes`. */
bool session__should_merge(const struct session_merge_policy *p,
			   uint64_t turn, unsigned int diffs, uint64_t bytes);

/* The shell text turn `k` runs: `cmd`, then the continuity check of
 * what turns 1..k-1 left, whose last line is "coldstart-session: ok K
 * SECTORS" (SECTORS: the root disk's sectors written since boot) or
 * "coldstart-session: MISSING turn K: WHAT". NULL when out of memory. */
char *session__command(const char *cmd, uint64_t k);

/* Reads that last line of `out`: 1 with *sectors for "ok k", 0 with
 * `what` (size bytes) saying what is missing, -EINVAL when there is no
 * such line. */
int session__check(const char *out, uint64_t k, uint64_t *sectors,
		   char *what, size_t size);

/* --kills: the point a turn's or a merge's child is SIGKILLed at, in
 * ns: uniform over [0, 1.2 x measured_ns] (an unkilled one's time), so
 * about one in six finishes first. Drawn from `rng`. */
struct stats_rng;
uint64_t session__kill_point(struct stats_rng *rng, uint64_t measured_ns);

/* A link after its writer's child ended: absent, there but no snapshot
 * (torn), a complete diff, a complete full snapshot. */
enum session_link {
	SESSION_LINK_ABSENT,
	SESSION_LINK_TORN,
	SESSION_LINK_DIFF,
	SESSION_LINK_FULL,
};

/* What a child left at the link `dir`; *bytes: a complete link's data
 * (memory pages and disk blocks, as its save counted them), which the
 * size: policy adds up even when the child was killed before it
 * reported; a torn link's reason in why. */
enum session_link session__link_state(const char *dir, char *why, size_t n,
				       uint64_t *bytes);

/* How a turn's or merge's child ended, and what it left. */
struct session_kill_end {
	bool merge;    /* a merge of the chain into its top link */
	bool killed;   /* died of our SIGKILL (not finished before it) */
	bool reported; /* its report arrived: ok and lost are its */
	bool ok;
	bool lost;     /* its continuity check found earlier state missing */
	enum session_link link; /* the turn's new link, the merge's top */
};

enum session_kill_verdict {
	SESSION_KILL_DONE,   /* the link is complete: the session goes on */
	SESSION_KILL_UNDONE, /* killed before its link: retried later */
	SESSION_KILL_LOST,   /* an earlier turn's state is missing */
	SESSION_KILL_TORN,   /* a link half-written or gone */
	SESSION_KILL_FAILED, /* failed on its own, unkilled */
};

/* The verdict on one child's end: lost state first, then a torn link;
 * a turn is done when its link is complete (and it reported no error),
 * a merge when the top link became a full snapshot (a top that is gone
 * is torn); a child that ended on its own without doing it failed. */
enum session_kill_verdict session__kill_verdict(
	const struct session_kill_end *e);

/* Its name in the document and on stderr ("done", "undone", ...). */
const char *session__verdict_name(enum session_kill_verdict v);

struct guest_mem_ops;

/* One session run as a library (tune session): what bench session's
 * options would say, without fresh boots. */
struct session_spec {
	const char *command; /* for error messages: "tune session" */
	const char *snapshot, *exec, *merge, *work_dir, *kvm_path;
	const struct guest_mem_ops *strategy; /* NULL: mmap */
	uint64_t turns;
	bool allow_pvm;
};

/* Whether `dir` is a snapshot a session can run on (a guest with an
 * agent, raw): CLI_OK, or the exit code with its message printed. */
int session__check_snapshot(const char *command, const char *dir,
			    bool allow_pvm);

/* A session run as a library, turn by turn (tune session interleaves
 * several): session__start, session__next_turn for each turn in order,
 * then session__finish. */
struct session_run;

/* Checks the options and the snapshot, makes the session's work
 * directory and opens KVM: 0 with *run, an exit code > 0 (printed) for
 * the snapshot, or -errno with err__last(). */
int session__start(const struct session_spec *sp, struct session_run **run);

/* Runs the session's next turn, with its progress line on stderr: 0, or
 * -errno with err__last() (the session goes on no further). */
int session__next_turn(struct session_run *run);

/* Ends the session (its work directory removed) and frees it; with
 * `doc`, first bench session's result document of the turns done into
 * *doc. 0, or -ENOMEM for the document. NULL run: nothing. */
int session__finish(struct session_run *run, json_t **doc);

#endif
