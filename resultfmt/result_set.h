/* Result documents read from a file or from a directory of them (as
 * `coldstart bench ... --out DIR` or the suite leaves them), for
 * `coldstart compare`, its cross-host table and `bench ab`. */
#ifndef COLDSTART_RESULT_SET_H
#define COLDSTART_RESULT_SET_H

#include "result.h"

#include <stdbool.h>

struct result_entry {
	char *path; /* owned */
	struct result_doc doc;
};

/* The documents of one file, or of every *.json of a directory in name
 * order; at most one document per bench. */
struct result_set {
	const char *where; /* the path given, borrowed */
	bool is_dir;
	struct result_entry *docs;
	size_t n;
	/* a directory's documents that are not benchmark results (a
	 * tuner's tune-pool.json beside them), left out: owned paths */
	char **skipped;
	size_t nr_skipped;
};

/* Reads one result document. -errno with a message naming the file and
 * the problem (unreadable, not JSON, not a result); -ENOMSG for a
 * tuner's document (tune-pool.json, tune-restore.json, tune-host.json,
 * tune-session.json), which is JSON of another kind rather than a
 * malformed result. */
int result__load_file(const char *path, struct result_doc *doc);

/* Reads `path`: a result file, or a directory whose *.json files must all
 * be result documents, apart from tuners' documents, which are skipped
 * (set->skipped). -EINVAL with a message when one is not, when the
 * directory has none, or when two are of one bench; -errno otherwise. */
int result__load_set(const char *path, struct result_set *set);
void result__free_set(struct result_set *set);

/* The document of bench `bench` in `set`, or NULL. */
const struct result_entry *result__set_find(const struct result_set *set,
					     const char *bench);

#endif
