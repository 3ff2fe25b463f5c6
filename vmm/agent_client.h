/* The host's side of the guest agent's protocol (guest/agent_abi.h):
 * connect through a vsock device's Unix socket (Firecracker's CONNECT
 * convention), run a command with its output streamed to two descriptors,
 * put and get files. Every wait has a deadline. */
#ifndef COLDSTART_AGENT_CLIENT_H
#define COLDSTART_AGENT_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* When each step of one command happened (now_ns() clock; 0 = not). */
struct agent_times {
	uint64_t sent;         /* the command's frame written */
	uint64_t first_output; /* its first byte of stdout or stderr */
	uint64_t exited;       /* its status received */
};

/* Connects to the agent on vsock `port` through the device's Unix socket
 * `uds`, retrying while the guest is not listening yet, until
 * `deadline_ns` (now_ns() clock) or until `gone(arg)` says the VM ended.
 * With `direct`, `uds` is the agent's own Unix socket (no CONNECT line:
 * the agent tested on the host). Returns a descriptor or -errno. */
int agent__connect(const char *uds, uint32_t port, bool direct,
		   uint64_t deadline_ns, bool (*gone)(void *arg), void *arg);

/* The same through the VMM's own vsock device `dev`
 * (vsock__connect_local): no socket file, so it works jailed. */
struct vsock;
int agent__connect_dev(struct vsock *dev, uint32_t port, uint64_t deadline_ns,
		       bool (*gone)(void *arg), void *arg);

/* Where a command's output goes as it comes: `stream` 1 is stdout, 2
 * stderr. Returns 0, or -errno to stop. */
typedef int (*agent_sink)(void *ctx, int stream, const uint8_t *p,
			  uint32_t len);

/* A sink writing stream 1 to fds[0] and stream 2 to fds[1] (ctx: int[2]). */
int agent__sink_fds(void *ctx, int stream, const uint8_t *p, uint32_t len);

/* Runs `cmd` with sh -c in the guest; its output goes to sink(ctx, ...)
 * as it comes. *status: its exit code, or 128 + the signal that killed
 * it. Returns 0, or -errno when the agent failed or broke the protocol,
 * the sink stopped it, or the deadline passed. */
int agent__exec(int fd, const char *cmd, agent_sink sink, void *ctx,
		uint64_t deadline_ns, struct agent_times *t, int *status);

/* Writes what `local_fd` holds to `path` in the guest, with `mode`. */
int agent__put(int fd, int local_fd, const char *path, uint32_t mode,
	       uint64_t deadline_ns);

/* Writes the guest's `path` to local_fd. */
int agent__get(int fd, const char *path, int local_fd, uint64_t deadline_ns);

/* One stream of a command's output, kept up to `max` bytes. */
struct agent_capture {
	char *buf; /* malloc'd at the first byte (free it), or NULL */
	size_t len, max;
	bool truncated; /* more came than max */
};

/* An agent__exec sink whose ctx is struct agent_capture[2] (stdout,
 * stderr, each with its max set): the first max bytes of each. */
int agent__sink_capture(void *ctx, int stream, const uint8_t *p,
			uint32_t len);

/* A captured stream as a JSON string; bytes that are not UTF-8 (and
 * NULs) become '?', in c->buf itself. NULL only when out of memory. */
json_t *agent__capture_json(const struct agent_capture *c);

/* agent__connect's gone() for a VM (ctx a struct vm): it is ending or
 * was interrupted. */
bool agent__vm_gone(void *vm);

/* What a driver runs through a guest's agent unless told otherwise: a
 * python3 that imports a few standard modules, a real interpreter's
 * working set, and prints one line. */
#define AGENT_DEFAULT_EXEC                                                \
	"python3 -c 'import json, re, subprocess, urllib.request; print(1)'"

#endif
