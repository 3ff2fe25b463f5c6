/* What bench session's files share (bench/session.c: options, turns,
 * the chain; bench/session_doc.c: the result document and its
 * Markdown). Not for use outside the session driver. */
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
	struct session_merge_policy merge;
};

/* What one turn did. */
struct turn {
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
};

/* The result document of the turns done (and the fresh boots); NULL
 * when out of memory. */
json_t *session__result(const struct session *s);

/* Its Markdown: the turns table, the drift and resume over boot. */
void session__report(FILE *out, const json_t *doc);

#endif
