/* The temporary directories atomic snapshot writes go through: their
 * names carry the writer's pid, so a later writer of the same snapshot
 * can tell a temporary whose writer was killed (SIGKILL, power loss,
 * OOM) from one still being written, and remove it. */
#ifndef COLDSTART_TMPDIR_H
#define COLDSTART_TMPDIR_H

#include <limits.h>
#include <stdbool.h>

/* The mkdtemp template of a temporary for snapshot `dir`, beside it:
 * "DIR.tmp.PID.XXXXXX" (DIR without trailing slashes). 0, or
 * -ENAMETOOLONG with a message. */
int tmpdir__template(const char *dir, char out[PATH_MAX]);

/* One temporary of `dir` that tmpdir__clean_stale found. */
struct tmpdir_stale {
	const char *path;
	long pid;     /* its writer; 0 when its name holds none (written by
		       * a coldstart older than pid-named temporaries) */
	bool removed;
	int err;      /* not removed: why (-errno), or 0 when its writer is
		       * unknown (pid 0) and it was left alone */
};

typedef void tmpdir_report_fn(void *arg, const struct tmpdir_stale *s);

/* Removes the temporaries of snapshot `dir` whose writer process is gone
 * (its pid is not alive) and that hold nothing but snapshot files; calls
 * `on_stale` (may be NULL) for each one removed, and for each stale one
 * left in place (foreign files in it, no pid in its name). Temporaries of
 * live writers are not touched nor reported. Returns how many were
 * removed, or -errno with a message when the parent directory cannot be
 * read (a missing parent is 0). A writer in another pid namespace looks
 * gone: do not share snapshot directories across pid namespaces while
 * writing them. */
int tmpdir__clean_stale(const char *dir, tmpdir_report_fn *on_stale,
			void *arg);

/* An on_stale for commands: one line on stderr per temporary (removed:
 * whose process it was; left: why). */
void tmpdir__print_stale(void *arg, const struct tmpdir_stale *s);

#endif
