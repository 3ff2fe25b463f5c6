/* Fuzz target: what a guest's agent answers the host. The guest is not
 * trusted, so the host's client of the agent (vmm/agent_client.c) must
 * take any bytes as the answer to a command, a put or a get: a frame
 * too large, of an unknown type, cut short, a STATUS of the wrong size,
 * a FAIL with any text. It returns 0 or an error, within its deadline,
 * and writes nothing but the frames' payloads.
 *
 * Input: u8 request (0 exec, 1 put, 2 get), then the agent's bytes,
 * delivered on a socket whose other end is then closed. */
#include "fuzz.h"

#include "agent_client.h"
#include "units.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int null_fd = -1;
static uint64_t taken;

static int count_sink(void *ctx, int stream, const uint8_t *p, uint32_t len)
{
	(void)ctx;
	if (stream != 1 && stream != 2)
		abort(); /* the client names only stdout and stderr */
	if (len)
		taken += p[0] + p[len - 1]; /* ASan checks the buffer's ends */
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	return null_fd < 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct agent_times t;
	int sv[2], status = 0, in;
	/* the agent's bytes sit in the socket before the client reads */
	uint64_t deadline = now_ns() + NS_PER_S;

	if (size < 1 || size > 200000)
		return 0;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		abort();
	/* a socket buffer big enough for any input: no writer thread */
	setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &(int){ 1 << 20 }, sizeof(int));
	setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &(int){ 1 << 20 }, sizeof(int));
	if (size > 1 && write(sv[1], data + 1, size - 1) != (ssize_t)(size - 1))
		abort();
	shutdown(sv[1], SHUT_WR);
	switch (data[0] % 3) {
	case 0:
		agent__exec(sv[0], "true", count_sink, NULL, deadline, &t,
			    &status);
		break;
	case 1:
		in = open("/dev/null", O_RDONLY | O_CLOEXEC);
		agent__put(sv[0], in, "/tmp/x", 0644, deadline);
		close(in);
		break;
	default:
		agent__get(sv[0], "/tmp/x", null_fd, deadline);
	}
	close(sv[0]);
	close(sv[1]);
	return 0;
}
