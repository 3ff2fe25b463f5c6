/* `coldstart run --rootfs R --exec CMD`: the host's side of one command
 * in a booting guest, through its agent. */
#ifndef COLDSTART_RUN_EXEC_H
#define COLDSTART_RUN_EXEC_H

#include "agent_client.h"
#include "run_opts.h"
#include "timeline.h"
#include "vm.h"

#include <jansson.h>
#include <stdbool.h>

struct run_exec {
	/* The request: the command, where the agent listens, how long the
	 * whole may take (0: no limit), whether output is captured. */
	const char *cmd;
	char vsock[108];
	uint32_t port;
	uint64_t timeout_ns;
	bool json;
	bool keep; /* leave the VM running after the command (to save it) */
	bool ran;         /* the status below is the command's */
	int status;       /* its exit code, or 128 + its signal */
	/* with --json: the output captured, up to a bound */
	struct agent_capture captured[2]; /* stdout, stderr */
};

/* A request for `cmd` (NULL: none, only the socket) through the agent
 * on `port` of the VM's vsock device, whose Unix socket is `vsock` (NULL:
 * it has none; the agent is reached through the device either way).
 * 0, or -errno with a message. */
int run_exec__init(struct run_exec *x, const char *cmd, const char *vsock,
		   uint32_t port, uint64_t timeout_ns, bool json);

/* run_exec__init for o's --exec (with no --vsock, the guest's vsock
 * device has no socket file). Nothing is made without --exec. */
int run_exec__prepare(struct run_cli *o, struct run_exec *x);
void run_exec__cleanup(struct run_exec *x);

/* Waits for the agent, runs x->cmd, streams its output (to stdout and
 * stderr, or captured with json), marks the timeline and ends the VM:
 * completed when the command ran (unless x->keep: then it runs on),
 * failed (with the reason) when not. */
void run_exec__session(struct vm *vm, struct timeline *tl,
		       struct run_exec *x);

/* {"command", "status", "stdout", "stderr"} of the captured command. */
json_t *run_exec__json(const struct run_exec *x);

#endif
