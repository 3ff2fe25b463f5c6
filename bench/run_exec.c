/* `coldstart run --exec`: the agent waited for through the VM's vsock
 * device, one command run through it, the VM ended after. */
#include "run_exec.h"

#include "agent_client.h"
#include "err.h"
#include "units.h"
#include "vm_state.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What --json keeps of each stream at most. */
#define CAPTURE_MAX (1u << 20)

int run_exec__init(struct run_exec *x, const char *cmd, const char *vsock,
		   uint32_t port, uint64_t timeout_ns, bool json)
{
	memset(x, 0, sizeof(*x));
	*x = (struct run_exec){ .cmd = cmd, .port = port,
				.timeout_ns = timeout_ns, .json = json };
	x->captured[0].max = x->captured[1].max = CAPTURE_MAX;
	if (!vsock)
		return 0;
	if (strlen(vsock) >= sizeof(x->vsock))
		return err__set(ENAMETOOLONG, "vsock socket path %s is too "
				"long", vsock);
	memcpy(x->vsock, vsock, strlen(vsock) + 1);
	return 0;
}

int run_exec__prepare(struct run_cli *o, struct run_exec *x)
{
	memset(x, 0, sizeof(*x));
	if (!o->exec)
		return 0;
	return run_exec__init(x, o->exec, o->vsock[0] ? o->vsock : NULL,
			      (uint32_t)o->agent_port, o->cfg.timeout_ns,
			      o->json);
}

void run_exec__cleanup(struct run_exec *x)
{
	for (int i = 0; i < 2; i++) {
		free(x->captured[i].buf);
		x->captured[i] = (struct agent_capture){ .max = CAPTURE_MAX };
	}
}

void run_exec__session(struct vm *vm, struct timeline *tl,
		       struct run_exec *x)
{
	uint64_t deadline = x->timeout_ns ? now_ns() + x->timeout_ns
					  : UINT64_MAX;
	int fds[2] = { STDOUT_FILENO, STDERR_FILENO };
	struct agent_times t;
	int fd, ret;

	struct device *dev = vm__find_device(vm, "virtio-vsock");

	/* through the device itself, not its socket file: that is out of
	 * a jailed VMM's reach, and there is none without --vsock */
	fd = dev ? agent__connect_dev(dev->dev, x->port, deadline,
				      agent__vm_gone, vm)
		 : err__set(ENODEV, "the guest has no vsock device");
	if (fd < 0) {
		vm__end(vm, VM_FAILED, "%s", err__last());
		return;
	}
	timeline__mark(tl, TL_AGENT_READY);
	ret = x->json ? agent__exec(fd, x->cmd, agent__sink_capture, x->captured,
				    deadline, &t,
				    &x->status)
		      : agent__exec(fd, x->cmd, agent__sink_fds, fds, deadline,
				    &t, &x->status);
	close(fd);
	/* the marks are the client's own clock readings */
	tl->t[TL_COMMAND_SENT] = t.sent;
	tl->t[TL_FIRST_OUTPUT] = t.first_output;
	tl->t[TL_COMMAND_EXIT] = t.exited;
	if (ret < 0) {
		vm__end(vm, VM_FAILED, "%s", err__last());
		return;
	}
	x->ran = true;
	if (!x->keep)
		vm__end(vm, VM_COMPLETED, "the command exited with status %d",
			x->status);
}

json_t *run_exec__json(const struct run_exec *x)
{
	json_t *doc = json_pack("{s:s, s:b}", "command", x->cmd, "ran",
				x->ran);

	if (!doc || !x->ran)
		return doc;
	json_object_set_new(doc, "status", json_integer(x->status));
	json_object_set_new(doc, "stdout", agent__capture_json(&x->captured[0]));
	json_object_set_new(doc, "stderr", agent__capture_json(&x->captured[1]));
	if (x->captured[0].truncated || x->captured[1].truncated)
		json_object_set_new(doc, "truncated_at_bytes",
				    json_integer(CAPTURE_MAX));
	return doc;
}
