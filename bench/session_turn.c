/* A session's turn as text (session.h): the command and the continuity
 * check after it, the check's answer read back, the merge policy, and
 * --kills' kill points and verdicts. */
#include "session.h"

#include "args.h"
#include "err.h"
#include "stats.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int session__parse_merge(const char *text, struct session_merge_policy *p)
{
	static const struct {
		const char *prefix;
		enum session_merge kind;
	} kinds[] = { { "every:", MERGE_EVERY }, { "chain:", MERGE_CHAIN },
		      { "size:", MERGE_SIZE } };

	*p = (struct session_merge_policy){ MERGE_NEVER, 0 };
	if (!strcmp(text, "never"))
		return 0;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		size_t n = strlen(kinds[i].prefix);

		if (strncmp(text, kinds[i].prefix, n))
			continue;
		p->kind = kinds[i].kind;
		if (p->kind == MERGE_SIZE)
			return args__size("--merge size", text + n, &p->k) < 0
				       ? -EINVAL
				       : 0;
		return args__u64("--merge", text + n, 1, 32, &p->k);
	}
	return err__set(EINVAL, "--merge '%s': expected never, every:K, "
			"chain:K (K 1 to 32) or size:SIZE", text);
}

bool session__should_merge(const struct session_merge_policy *p,
			   uint64_t turn, unsigned int diffs, uint64_t bytes)
{
	if (diffs == 0)
		return false;
	switch (p->kind) {
	case MERGE_EVERY:
		return turn % p->k == 0;
	case MERGE_CHAIN:
		return diffs > p->k;
	case MERGE_SIZE:
		return bytes > p->k;
	default:
		return false;
	}
}

/* The check: every file and log line of turns 1..k-1, and a counter a
 * process started in turn 1 keeps in its memory (a bash loop behind two
 * FIFOs), which only a snapshot of memory carries from turn to turn. A
 * process that is gone must not hang the check: timeouts. */
static const char check_fmt[] =
	"cs_status=$?\n"
	"echo\n"
	"k=%" PRIu64 "; d=/var/lib/coldstart-session\n"
	"miss() { echo \"coldstart-session: MISSING turn $k: $*\"; exit 99; }\n"
	"mkdir -p $d || miss \"cannot make $d\"\n"
	"if [ $k = 1 ]; then\n"
	"  [ -e $d/log ] && miss \"the log of an earlier session is there\"\n"
	"  mkfifo $d/ci $d/co || miss \"cannot make the counter's FIFOs\"\n"
	"  setsid bash -c \"n=0; while :; do read c <$d/ci; n=\\$((n+1)); "
	"echo \\$n >$d/co; done\" </dev/null >/dev/null 2>&1 &\n"
	"fi\n"
	"l=$( (wc -l <$d/log) 2>/dev/null || echo 0)\n"
	"[ \"$l\" = $((k-1)) ] || miss \"the log has $l lines; turns 1 to "
	"$((k-1)) wrote $((k-1))\"\n"
	"i=1; while [ $i -lt $k ]; do\n"
	"  [ \"$(cat $d/turn-$i 2>/dev/null)\" = $i ] || miss \"file "
	"turn-$i, written in turn $i\"\n"
	"  i=$((i+1))\n"
	"done\n"
	"timeout 10 sh -c \"echo x >$d/ci\" || miss \"the counter process "
	"(it does not read)\"\n"
	"n=$(timeout 10 cat $d/co) || miss \"the counter process (it does "
	"not answer)\"\n"
	"[ \"$n\" = $k ] || miss \"the counter process counts $n; $k "
	"expected\"\n"
	"echo \"turn $k\" >>$d/log; echo $k >$d/turn-$k\n"
	"echo \"coldstart-session: ok $k $(awk '{print $7}' "
	"/sys/block/vda/stat)\"\n"
	"exit $cs_status\n";

char *session__command(const char *cmd, uint64_t k)
{
	char *check = NULL, *all = NULL;

	if (asprintf(&check, check_fmt, k) < 0)
		return NULL;
	/* the user's command in a subshell of its own: its exit, cd or
	 * variables do not reach the check */
	if (asprintf(&all, "(\n%s\n)\n%s", cmd, check) < 0)
		all = NULL;
	free(check);
	return all;
}

int session__check(const char *out, uint64_t k, uint64_t *sectors,
		   char *what, size_t size)
{
	static const char tag[] = "coldstart-session: ";
	const char *line = NULL, *p = out;
	uint64_t turn;
	char tail;

	/* the last line that starts with the tag */
	while ((p = strstr(p, tag))) {
		if (p == out || p[-1] == '\n')
			line = p;
		p += sizeof(tag) - 1;
	}
	if (!line)
		return err__set(EINVAL, "the turn's output has no "
				"\"coldstart-session:\" line");
	line += sizeof(tag) - 1;
	if (!strncmp(line, "MISSING ", 8)) {
		size_t n = strcspn(line + 8, "\n");

		snprintf(what, size, "%.*s", (int)n, line + 8);
		return 0;
	}
	if (sscanf(line, "ok %" SCNu64 " %" SCNu64 "%c", &turn, sectors,
		   &tail) != 3 || tail != '\n' || turn != k)
		return err__set(EINVAL, "the turn's check line is \"%.*s\"",
				(int)strcspn(line, "\n"), line);
	return 1;
}

uint64_t session__kill_point(struct stats_rng *rng, uint64_t measured_ns)
{
	return stats__rng_below(rng, measured_ns / 5 * 6 + 1);
}

enum session_kill_verdict session__kill_verdict(
	const struct session_kill_end *e)
{
	bool complete = e->link == SESSION_LINK_DIFF ||
			e->link == SESSION_LINK_FULL;

	if (e->reported && e->lost)
		return SESSION_KILL_LOST;
	if (e->link == SESSION_LINK_TORN)
		return SESSION_KILL_TORN;
	if (e->merge) {
		if (e->link == SESSION_LINK_FULL)
			return SESSION_KILL_DONE;
		if (e->link == SESSION_LINK_ABSENT)
			return SESSION_KILL_TORN;
		return e->killed ? SESSION_KILL_UNDONE : SESSION_KILL_FAILED;
	}
	if (complete)
		return e->reported && !e->ok ? SESSION_KILL_FAILED
					     : SESSION_KILL_DONE;
	return e->killed ? SESSION_KILL_UNDONE : SESSION_KILL_FAILED;
}

const char *session__verdict_name(enum session_kill_verdict v)
{
	static const char *const names[] = { "done", "undone", "lost", "torn",
					     "failed" };

	return (unsigned int)v < 5 ? names[v] : "?";
}
