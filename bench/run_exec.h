/* `coldstart run --rootfs R --exec CMD`: the host's side of one command
 * in a booting guest, through its agent. */
#ifndef COLDSTART_RUN_EXEC_H
#define COLDSTART_RUN_EXEC_H

#include "run_opts.h"
#include "timeline.h"
#include "vm.h"

#include <jansson.h>
#include <stdbool.h>

struct run_exec {
	char dir[64];     /* a private directory for the vsock socket, or "" */
	bool ran;         /* the status below is the command's */
	int status;       /* its exit code, or 128 + its signal */
	/* with --json: the output captured, up to a bound */
	struct run_exec_capture {
		char *buf;
		size_t len;
		bool truncated;
	} captured[2]; /* stdout, stderr */
};

/* With --exec and no --vsock, a socket path in a new private directory
 * (o->vsock is set); run_exec__cleanup removes both. */
int run_exec__prepare(struct run_cli *o, struct run_exec *x);
void run_exec__cleanup(struct run_exec *x);

/* Waits for the agent, runs o->exec, streams its output (to stdout and
 * stderr, or captured with --json), marks the timeline and ends the VM:
 * completed when the command ran, failed (with the reason) when not. */
void run_exec__session(const struct run_cli *o, struct vm *vm,
		       struct timeline *tl, struct run_exec *x);

/* {"command", "status", "stdout", "stderr"} of the captured command. */
json_t *run_exec__json(const struct run_cli *o, const struct run_exec *x);

#endif
