/* What the files of `coldstart snapshot` share (cmd_snapshot.c: create,
 * merge and the action table; cmd_snapshot_usage.c: the help;
 * cmd_snapshot_restore.c: restore; cmd_snapshot_inspect.c: inspect): the
 * help text, the errors every action reports the same way, and each
 * action's entry point. Not for use outside `coldstart snapshot`. */
#ifndef COLDSTART_CMD_SNAPSHOT_INT_H
#define COLDSTART_CMD_SNAPSHOT_INT_H

#include "cli.h"
#include "err.h"
#include "units.h"

#include <errno.h>
#include <stdio.h>

/* cmd_snapshot_usage.c: the help text of every action. */
void cmd_snapshot__usage(FILE *out);

/* A usage error: one line saying what is wrong, then where help is. */
static inline int usage_error(const char *what)
{
	cli__error(CLI_USAGE, "snapshot %s", what);
	return cli__usage_error("snapshot");
}

static inline int load_error(int ret)
{
	return cli__error(ret == -ENOTSUP ? CLI_SKIP : CLI_FAIL,
			  "snapshot: %s", err__last());
}

/* cmd_snapshot_restore.c: `snapshot restore DIR ...` (argv[0] "restore") */
int cmd_snapshot__restore(int argc, char **argv);

/* cmd_snapshot_inspect.c: `snapshot inspect DIR [--json]` */
int cmd_snapshot__inspect(int argc, char **argv);

#endif
