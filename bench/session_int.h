/* What bench session's files share (bench/session.c: options, the
 * turns; session_chain.c: a turn and the chain; session_kills.c:
 * --kills; session_doc.c: the result document and its Markdown). Not
 * for use outside the session driver. */
#ifndef COLDSTART_SESSION_INT_H
#define COLDSTART_SESSION_INT_H

#include "driver.h"
#include "kvm.h"
#include "restore.h"
#include "session.h"

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct session_opts {
	struct bench_common c;
	const char *snapshot, *exec, *work_dir, *merge_text;
	const struct guest_mem_ops *strategy;
	uint64_t turns, think_ns;
	uint64_t print_turn; /* --turn-command K: print turn K's text */
	uint64_t baseline;   /* fresh boots of the same guest, command */
	bool full, keep;
	bool merge_given; /* --merge was given (not the default) */
	uint64_t kills;   /* --kills N: the crash-consistency run */
	uint64_t seed;
	bool seed_given;
	struct session_merge_policy merge;
};

/* What one turn did. */
struct turn {
	uint64_t no;        /* its number (turns of --kills may go unrecorded) */
	double resume_ns;   /* restore start -> first output byte */
	double command_ns;  /* command sent -> its exit */
	double pause_ns;    /* its exit -> every vCPU paused */
	double save_ns;     /* the snapshot's writing */
	uint64_t mem_bytes, disk_bytes; /* in the snapshot */
	uint64_t changed_bytes; /* pages written + guest's disk writes */
	unsigned int chain;     /* snapshots a resume of it reads */
	bool merged;
	double merge_ns;
	uint64_t merged_bytes;
};

struct session {
	struct session_opts *o;
	struct kvm_host kvm;
	struct restore_snap info;
	char work[PATH_MAX];
	/* the chain the next turn resumes: a full snapshot, then diffs */
	char (*links)[PATH_MAX];
	unsigned int nr_links;
	uint64_t diff_bytes; /* what the diffs above links[0] hold */
	uint64_t sectors;    /* the guest's disk sectors written so far */
	struct turn *t;
	uint64_t done;
	double *boot_ns; /* process start -> first output, fresh boots */
	uint64_t boots;
	json_t *kills;   /* --kills: what the kills did (session_kills.c) */
	bool kill_failed; /* --kills: state was lost or torn */
};

/* Whether `dir` is a link of ours, in the work directory. */
bool session__ours(const struct session *s, const char *dir);

/* Turn k's snapshot in the work directory into next; -ENAMETOOLONG. */
int session__turn_path(const struct session *s, uint64_t k,
		       char next[PATH_MAX]);

/* Turn k from the chain's top into `next` on `kvm`: the resume, the
 * command and its continuity check, the snapshot saved; *t filled and
 * s->sectors moved on. -EIO with *lost when the check found earlier
 * turns' state missing (the snapshot is saved: the caller removes it). */
int session__turn(struct session *s, struct kvm_host *kvm, uint64_t k,
		  const char *next, struct turn *t, bool *lost);

/* The chain after a turn saved `next`: a diff on top, or a full
 * snapshot alone (the older links of ours dropped). */
void session__advance(struct session *s, const char *next);

/* Merges the chain into its top link (replaced atomically), with the
 * merge's time and bytes in *t; session__merged then drops the older
 * links. */
int session__merge_write(struct session *s, struct turn *t);
void session__merged(struct session *s);

/* --kills: the turns and merges in child processes, each SIGKILLed at a
 * random point, with the checks after each kill; s->kills and
 * s->kill_failed filled. 0, or -errno (no child could be run). */
int session__kills(struct session *s);

/* The result document of the turns done (and the fresh boots); NULL
 * when out of memory. */
json_t *session__result(const struct session *s);

/* Its Markdown: the turns table, the drift and resume over boot. */
void session__report(FILE *out, const json_t *doc);

#endif
