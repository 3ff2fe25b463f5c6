/* bench session's chain (session_int.h): a turn from the chain's top
 * into a new link, and the chain moving on after it or after a merge;
 * shared by the turns run in place and those of --kills. */
#include "session.h"
#include "session_int.h"

#include "diff.h"
#include "err.h"
#include "snap_linux.h"
#include "snapshot.h"
#include "units.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TURN_TIMEOUT_NS (300ull * 1000000000ull)

/* Not the user's snapshot, even one in a directory whose name starts as
 * the work directory's does. */
bool session__ours(const struct session *s, const char *dir)
{
	size_t n = strlen(s->work);

	return strncmp(dir, s->work, n) == 0 && dir[n] == '/';
}

int session__merge_write(struct session *s, struct turn *t)
{
	char *diffs[SNAPDIFF_MAX_CHAIN];
	const char *top = s->links[s->nr_links - 1];
	struct snapshot_stats st;
	uint64_t t0 = now_ns();
	int ret;

	for (unsigned int i = 1; i < s->nr_links; i++)
		diffs[i - 1] = s->links[i];
	ret = snapshot__merge(s->links[0], diffs, s->nr_links - 1, top,
			      SNAPSHOT_REPLACE, &st);
	if (ret < 0)
		return ret;
	t->merged = true;
	t->merge_ns = (double)(now_ns() - t0);
	t->merged_bytes = st.mem_data_bytes + st.disk_bytes;
	return 0;
}

void session__merged(struct session *s)
{
	for (unsigned int i = 0; i + 1 < s->nr_links; i++)
		if (session__ours(s, s->links[i]))
			snapshot__abort_dir(s->links[i]);
	memmove(s->links[0], s->links[s->nr_links - 1], PATH_MAX);
	s->nr_links = 1;
	s->diff_bytes = 0;
}

void session__advance(struct session *s, const char *next)
{
	if (s->o->full) {
		for (unsigned int i = 0; i < s->nr_links; i++)
			if (session__ours(s, s->links[i]))
				snapshot__abort_dir(s->links[i]);
		s->nr_links = 0;
	}
	snprintf(s->links[s->nr_links++], PATH_MAX, "%s", next);
}

static int check_turn(struct session *s, uint64_t k,
		      const struct snap_turn_result *r, struct turn *t,
		      bool *lost)
{
	char what[512];
	uint64_t sectors = 0;
	int ret = session__check(r->out, k, &sectors, what, sizeof(what));

	*lost = ret == 0;
	if (ret == 0)
		return err__set(EIO, "turn %" PRIu64 ": state of earlier turns "
				"is lost: %s", k, what);
	if (ret < 0)
		return err__set(EIO, "turn %" PRIu64 ": %s (the command's "
				"stderr: %.200s)", k, err__last(), r->err);
	t->changed_bytes = r->dirty_pages * 4096 +
			   (sectors - s->sectors) * 512;
	s->sectors = sectors;
	return 0;
}

int session__turn_path(const struct session *s, uint64_t k,
		       char next[PATH_MAX])
{
	if (snprintf(next, PATH_MAX, "%s/turn-%04" PRIu64, s->work, k) >=
	    PATH_MAX)
		return err__set(ENAMETOOLONG, "the work directory's path is "
				"too long");
	return 0;
}

int session__turn(struct session *s, struct kvm_host *kvm, uint64_t k,
		  const char *next, struct turn *t, bool *lost)
{
	struct session_opts *o = s->o;
	struct snap_turn_result r;
	char *cmd = session__command(o->exec, k);
	struct snap_turn turn = { .dir = s->links[s->nr_links - 1],
				  .exec = cmd, .save = next, .diff = !o->full,
				  .strategy = o->strategy,
				  .timeout_ns = TURN_TIMEOUT_NS };
	int ret;

	*lost = false;
	if (!cmd)
		return err__set(ENOMEM, "turn %" PRIu64, k);
	t->no = k;
	ret = snap_linux__turn(kvm, &turn, &r);
	free(cmd);
	if (ret < 0)
		return err__set(-ret, "turn %" PRIu64 ": %s", k, err__last());
	ret = check_turn(s, k, &r, t, lost);
	t->resume_ns = timeline__span_ns(&r.tl, TL_RESTORE_START, TL_FIRST_OUTPUT);
	t->command_ns = timeline__span_ns(&r.tl, TL_COMMAND_SENT, TL_COMMAND_EXIT);
	t->pause_ns = timeline__span_ns(&r.tl, TL_COMMAND_EXIT, TL_PAUSED);
	t->save_ns = (double)r.saved.ns;
	t->mem_bytes = r.saved.mem_data_bytes;
	t->disk_bytes = r.saved.disk_bytes;
	snap_linux__turn_free(&r);
	return ret;
}
