/* Which merge policy a session should use, from each policy's resume
 * drift and the bytes it wrote: a pure function, shared by `tune
 * session` and tested on hand-made numbers. */
#ifndef COLDSTART_MERGE_PICK_H
#define COLDSTART_MERGE_PICK_H

#include <stdbool.h>
#include <stddef.h>

/* The target: after the turns, resume within 20 % of the first turns'. */
#define MERGE_PICK_TARGET 1.2

/* One candidate's measurements. */
struct merge_score {
	double drift; /* median resume of the last 3 turns over the first 3 */
	double bytes; /* bytes written per turn: snapshots and merges */
};

/* The rule, in words, for the outputs that state it. */
extern const char merge_pick__rule[];

/* Among the candidates whose drift is finite and at most `target`, the
 * one writing the fewest bytes (ties: the flatter, then the first); if
 * none is, the flattest (|drift - 1|; ties: the fewest bytes, then the
 * first), with *met false. A drift that is not finite (a run of too few
 * turns) never meets the target and is the least flat. The index, or
 * -1 when n is 0. */
long merge_pick__choose(const struct merge_score *s, size_t n, double target,
			bool *met);

#endif
