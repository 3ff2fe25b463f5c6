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
