/* `coldstart tune session --snapshot DIR`: which merge policy a
 * multi-turn session of one turn command should use. Each candidate
 * policy runs a session of the same turns (bench session's code, each in
 * its own work directory) on this host, interleaved turn by turn; the pick is merge_pick's pure
 * rule over their resume drifts and bytes written. */
#ifndef COLDSTART_TUNE_SESSION_H
#define COLDSTART_TUNE_SESSION_H

#include "mem.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TUNE_SESSION_MAX 16 /* candidate policies */

struct tune_session_opts {
	const char *snapshot, *exec, *out_dir, *work_dir, *kvm_path;
	const char *policies[TUNE_SESSION_MAX];
	size_t nr_policies;
	char *policies_text; /* --policies' copy, policies point into it */
	const struct guest_mem_ops *strategy; /* NULL: bench session's */
	uint64_t turns;
	bool json, allow_pvm;
};

/* The default candidates and turns. */
void tune_session__defaults(struct tune_session_opts *o);

/* -EINVAL with a message when a policy is no policy, named twice, or
 * `never` with more turns than a chain may hold. */
int tune_session__check(const struct tune_session_opts *o);

/* Which policy (an index into policies) runs j-th (from 0) of `n` in
 * round `round` (from 0): the order rotates one place each round. */
size_t tune_session__order(uint64_t round, size_t j, size_t n);

/* Measures every candidate and writes the pick: an exit code (2 for the
 * snapshot, printed), or -errno with err__last(). */
int tune_session__run(const struct tune_session_opts *o);

#endif
