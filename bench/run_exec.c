/* `coldstart run --exec`: a private socket for the vsock device, the
 * agent waited for, one command run through it, the VM ended after. */
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

int run_exec__prepare(struct run_cli *o, struct run_exec *x)
{
	memset(x, 0, sizeof(*x));
	if (!o->exec || o->vsock[0])
		return 0;
	snprintf(x->dir, sizeof(x->dir), "/tmp/coldstart-exec-XXXXXX");
	if (!mkdtemp(x->dir)) {
		x->dir[0] = '\0';
		return err__sys(errno, "creating a directory for the agent's "
				"socket in /tmp");
	}
	snprintf(o->vsock, sizeof(o->vsock), "%s/vsock", x->dir);
	return 0;
}

void run_exec__cleanup(struct run_exec *x)
{
	char path[96];

	if (x->out)
		fclose(x->out);
	if (x->err)
		fclose(x->err);
	x->out = x->err = NULL;
	if (!x->dir[0])
		return;
	snprintf(path, sizeof(path), "%s/vsock", x->dir);
	unlink(path);
	rmdir(x->dir);
	x->dir[0] = '\0';
}

static bool vm_gone(void *arg)
{
	struct vm *vm = arg;

	return __atomic_load_n(&vm->ending, __ATOMIC_ACQUIRE) ||
	       vm->interrupted;
}

void run_exec__session(const struct run_cli *o, struct vm *vm,
		       struct timeline *tl, struct run_exec *x)
{
	uint64_t deadline = o->cfg.timeout_ns ? now_ns() + o->cfg.timeout_ns
					      : UINT64_MAX;
	struct agent_times t;
	int fd, ret;

	if (o->json && (!(x->out = tmpfile()) || !(x->err = tmpfile()))) {
		vm__end(vm, VM_FAILED, "capturing the command's output: %s",
			strerror(errno));
		return;
	}
	fd = agent__connect(o->vsock, (uint32_t)o->agent_port, false,
			    deadline, vm_gone, vm);
	if (fd < 0) {
		vm__end(vm, VM_FAILED, "%s", err__last());
		return;
	}
	timeline__mark(tl, TL_AGENT_READY);
	ret = agent__exec(fd, o->exec, x->out ? fileno(x->out) : STDOUT_FILENO,
			  x->err ? fileno(x->err) : STDERR_FILENO, deadline, &t,
			  &x->status);
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
	vm__end(vm, VM_COMPLETED, "the command exited with status %d",
		x->status);
}

/* A captured stream as a JSON string: invalid UTF-8 bytes become '?'. */
static json_t *captured(FILE *f, bool *truncated)
{
	char *buf = malloc(CAPTURE_MAX);
	size_t n;
	json_t *s;

	if (!buf)
		return NULL;
	rewind(f);
	n = fread(buf, 1, CAPTURE_MAX, f);
	*truncated = n == CAPTURE_MAX && fgetc(f) != EOF;
	s = json_stringn(buf, n);
	for (size_t i = 0; !s && i < n; i++)
		if ((unsigned char)buf[i] >= 0x80 || !buf[i])
			buf[i] = '?';
	if (!s)
		s = json_stringn(buf, n);
	free(buf);
	return s;
}

json_t *run_exec__json(const struct run_cli *o, const struct run_exec *x)
{
	bool out_cut = false, err_cut = false;
	json_t *doc = json_pack("{s:s, s:b}", "command", o->exec, "ran",
				x->ran);

	if (!doc || !x->ran)
		return doc;
	json_object_set_new(doc, "status", json_integer(x->status));
	if (x->out)
		json_object_set_new(doc, "stdout", captured(x->out, &out_cut));
	if (x->err)
		json_object_set_new(doc, "stderr", captured(x->err, &err_cut));
	if (out_cut || err_cut)
		json_object_set_new(doc, "truncated_at_bytes",
				    json_integer(CAPTURE_MAX));
	return doc;
}
