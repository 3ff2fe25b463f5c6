/* The host's side of the guest agent's protocol: frames over a stream
 * whose every wait is bounded by a deadline. */
#include "agent_client.h"

#include "err.h"
#include "virtio_vsock.h"
#include "vm.h"
#include "guest/agent_abi.h"
#include "output.h"
#include "units.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* Waits until fd is ready for `events`; -ETIMEDOUT past the deadline. */
static int wait_fd(int fd, short events, uint64_t deadline_ns)
{
	struct pollfd p = { fd, events, 0 };

	for (;;) {
		uint64_t now = now_ns();
		int ms, n;

		if (now >= deadline_ns)
			return -ETIMEDOUT;
		ms = (int)((deadline_ns - now + NS_PER_MS - 1) / NS_PER_MS);
		n = poll(&p, 1, ms);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

static int io_full(int fd, void *buf, size_t len, bool writing,
		   uint64_t deadline_ns)
{
	uint8_t *p = buf;

	while (len) {
		int ret = wait_fd(fd, writing ? POLLOUT : POLLIN, deadline_ns);
		ssize_t n;

		if (ret < 0)
			return ret;
		n = writing ? send(fd, p, len, MSG_NOSIGNAL) : read(fd, p, len);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int send_frame(int fd, uint8_t type, const void *p, uint32_t len,
		      uint64_t deadline_ns)
{
	uint8_t h[AGENT_HEADER_SIZE] = { type };
	int ret;

	agent_abi__put32(h + 1, len);
	ret = io_full(fd, h, sizeof(h), true, deadline_ns);
	if (ret == 0 && len)
		ret = io_full(fd, (void *)p, len, true, deadline_ns);
	return ret;
}

/* Reads one frame; *buf is grown as needed and NUL-terminated. */
static int recv_frame(int fd, uint8_t *type, uint8_t **buf, uint32_t *len,
		      uint64_t deadline_ns)
{
	uint8_t h[AGENT_HEADER_SIZE];
	int ret = io_full(fd, h, sizeof(h), false, deadline_ns);

	if (ret < 0)
		return ret == -ECONNRESET
			       ? err__set(ECONNRESET, "the guest agent closed "
					  "the connection")
			       : err__set(-ret, "reading from the guest agent: "
					  "%s", strerror(-ret));
	*type = h[0];
	*len = agent_abi__get32(h + 1);
	if (*len > AGENT_FRAME_MAX)
		return err__set(EPROTO, "the guest agent sent a frame of %u "
				"bytes (at most %u)", *len, AGENT_FRAME_MAX);
	if (!*buf) {
		*buf = malloc(AGENT_FRAME_MAX + 1);
		if (!*buf)
			return err__set(ENOMEM, "out of memory");
	}
	ret = io_full(fd, *buf, *len, false, deadline_ns);
	if (ret < 0)
		return err__set(-ret, "reading from the guest agent: %s",
				strerror(-ret));
	(*buf)[*len] = '\0';
	return 0;
}

/* A FAIL frame's text as the error; anything else unexpected. */
static int unexpected(uint8_t type, const uint8_t *buf, const char *what)
{
	if (type == AGENT_FAIL)
		return err__set(EIO, "the guest agent: %s", (const char *)buf);
	return err__set(EPROTO, "the guest agent answered %s with a frame "
			"of type 0x%02x", what, type);
}

/* One try: the Unix socket, then for vsock "CONNECT port" and "OK". A
 * guest that is not listening makes the VMM close the connection:
 * -EAGAIN, try again. */
/* Reads the answer to CONNECT, one byte at a time (what follows is the
 * agent's), looking every 20 ms whether the VM ended meanwhile: then no
 * answer comes, and the VMM need not close the connection. */
static int read_answer(int fd, char *line, size_t size, uint64_t deadline_ns,
		       bool (*gone)(void *arg), void *arg)
{
	size_t n = 0;

	while (n < size - 1) {
		uint64_t slice = now_ns() + 20 * NS_PER_MS;
		int ret = io_full(fd, line + n, 1, false,
				  slice < deadline_ns ? slice : deadline_ns);

		if (ret == -ETIMEDOUT && now_ns() < deadline_ns) {
			if (gone && gone(arg))
				return -ECANCELED;
			continue;
		}
		if (ret < 0)
			return ret;
		if (line[n++] == '\n')
			break;
	}
	line[n] = '\0';
	return strncmp(line, "OK ", 3) ? -EPROTO : 0;
}

/* A connection to the Unix socket `uds`: a descriptor, -EAGAIN while
 * nobody listens there, or -errno. */
static int dial_path(const char *uds)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd, ret;

	if (strlen(uds) >= sizeof(a.sun_path))
		return err__set(ENAMETOOLONG, "socket path too long: %s", uds);
	strcpy(a.sun_path, uds);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return err__sys(errno, "socket");
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		ret = errno == ENOENT || errno == ECONNREFUSED ? -EAGAIN
							       : -errno;
		close(fd);
		return ret;
	}
	return fd;
}

/* Where one try connects: a Unix socket's path, or a vsock device. */
struct dial {
	const char *uds;
	struct vsock *dev;
};

static int try_connect(const struct dial *to, uint32_t port, bool direct,
		       uint64_t deadline_ns, bool (*gone)(void *arg),
		       void *arg)
{
	char line[64];
	size_t n = 0;
	int fd, ret;

	fd = to->dev ? vsock__connect_local(to->dev) : dial_path(to->uds);
	if (fd < 0 || direct)
		return fd;
	n = (size_t)snprintf(line, sizeof(line), "CONNECT %u\n", port);
	ret = io_full(fd, line, n, true, deadline_ns);
	if (ret == 0)
		ret = read_answer(fd, line, sizeof(line), deadline_ns, gone,
				  arg);
	/* closed by the VMM: the guest is not listening (yet) */
	if (ret == -ECONNRESET || ret == -EPIPE)
		ret = -EAGAIN;
	if (ret == 0)
		return fd;
	close(fd);
	return ret;
}

static int connect_to(const struct dial *to, uint32_t port, bool direct,
		      uint64_t deadline_ns, bool (*gone)(void *arg), void *arg)
{
	uint64_t pause_ns = 500 * NS_PER_US;

	for (;;) {
		int fd = try_connect(to, port, direct, deadline_ns, gone, arg);

		if (fd >= 0 || (fd != -EAGAIN && fd != -ETIMEDOUT &&
				fd != -ECANCELED))
			return fd >= 0 || fd == -ENAMETOOLONG
				       ? fd
				       : err__set(-fd, "connecting to the guest "
						  "agent through %s: %s",
						  to->dev ? "its vsock device"
							  : to->uds,
						  strerror(-fd));
		if (gone && gone(arg))
			return err__set(ECANCELED, "the VM ended before its "
					"guest agent listened on vsock port %u",
					port);
		if (fd == -ETIMEDOUT || now_ns() + pause_ns >= deadline_ns)
			return err__set(ETIMEDOUT, "the guest agent did not "
					"answer on vsock port %u in time", port);
		nanosleep(&(struct timespec){ 0, (long)pause_ns }, NULL);
		if (pause_ns < 20 * NS_PER_MS)
			pause_ns *= 2;
	}
}

int agent__connect(const char *uds, uint32_t port, bool direct,
		   uint64_t deadline_ns, bool (*gone)(void *arg), void *arg)
{
	return connect_to(&(struct dial){ .uds = uds }, port, direct,
			  deadline_ns, gone, arg);
}

int agent__connect_dev(struct vsock *dev, uint32_t port, uint64_t deadline_ns,
		       bool (*gone)(void *arg), void *arg)
{
	return connect_to(&(struct dial){ .dev = dev }, port, false,
			  deadline_ns, gone, arg);
}

static int write_out(int fd, const uint8_t *p, uint32_t len, const char *what)
{
	int ret = output__write_all(fd, p, len);

	return ret < 0 ? err__sys(-ret, "writing %s", what) : 0;
}

int agent__sink_fds(void *ctx, int stream, const uint8_t *p, uint32_t len)
{
	const int *fds = ctx;

	return write_out(fds[stream == 2], p, len, stream == 2
							   ? "the command's stderr"
							   : "the command's stdout");
}

int agent__exec(int fd, const char *cmd, agent_sink sink, void *ctx,
		uint64_t deadline_ns, struct agent_times *t, int *status)
{
	size_t len = strlen(cmd);
	uint8_t *buf = NULL, type = 0;
	uint32_t n = 0;
	int ret;

	*t = (struct agent_times){ 0 };
	if (len > AGENT_FRAME_MAX)
		return err__set(E2BIG, "the command is %zu bytes (at most %u)",
				len, AGENT_FRAME_MAX);
	ret = send_frame(fd, AGENT_EXEC, cmd, (uint32_t)len, deadline_ns);
	if (ret < 0)
		return err__set(-ret, "sending the command: %s", strerror(-ret));
	t->sent = now_ns();
	while ((ret = recv_frame(fd, &type, &buf, &n, deadline_ns)) == 0) {
		if (type == AGENT_STATUS && n == 4) {
			t->exited = now_ns();
			*status = (int)agent_abi__get32(buf);
			break;
		}
		if (type != AGENT_OUT && type != AGENT_ERR) {
			ret = unexpected(type, buf, "a command");
			break;
		}
		if (!t->first_output)
			t->first_output = now_ns();
		ret = sink(ctx, type == AGENT_OUT ? 1 : 2, buf, n);
		if (ret < 0)
			break;
	}
	free(buf);
	return ret;
}

/* PUT's header, the file in DATA frames, END. */
static int put_body(int fd, int local_fd, uint8_t *buf, size_t hlen,
		    uint64_t deadline_ns)
{
	int ret = send_frame(fd, AGENT_PUT, buf, (uint32_t)hlen, deadline_ns);
	ssize_t got;

	while (ret == 0 && (got = read(local_fd, buf, AGENT_FRAME_MAX)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return err__sys(errno, "reading the file to put");
		ret = send_frame(fd, AGENT_DATA, buf, (uint32_t)got,
				 deadline_ns);
	}
	if (ret == 0)
		ret = send_frame(fd, AGENT_END, NULL, 0, deadline_ns);
	return ret < 0 ? err__set(-ret, "sending a file to the guest agent: "
				  "%s", strerror(-ret))
		       : 0;
}

int agent__put(int fd, int local_fd, const char *path, uint32_t mode,
	       uint64_t deadline_ns)
{
	size_t plen = strlen(path);
	uint8_t *buf, type = 0;
	uint32_t n = 0;
	int ret;

	if (!plen || plen > AGENT_PATH_MAX)
		return err__set(ENAMETOOLONG, "guest path of %zu bytes (1 to "
				"%u)", plen, AGENT_PATH_MAX);
	buf = malloc(AGENT_FRAME_MAX + 1);
	if (!buf)
		return err__set(ENOMEM, "out of memory");
	agent_abi__put32(buf, mode);
	memcpy(buf + 4, path, plen);
	ret = put_body(fd, local_fd, buf, plen + 4, deadline_ns);
	if (ret == 0)
		ret = recv_frame(fd, &type, &buf, &n, deadline_ns);
	if (ret == 0 && type != AGENT_OK)
		ret = unexpected(type, buf, "a put");
	free(buf);
	return ret;
}

int agent__get(int fd, const char *path, int local_fd, uint64_t deadline_ns)
{
	size_t plen = strlen(path);
	uint8_t *buf = NULL, type = 0;
	uint32_t n = 0;
	int ret;

	if (!plen || plen > AGENT_PATH_MAX)
		return err__set(ENAMETOOLONG, "guest path of %zu bytes (1 to "
				"%u)", plen, AGENT_PATH_MAX);
	ret = send_frame(fd, AGENT_GET, path, (uint32_t)plen, deadline_ns);
	if (ret < 0)
		return err__set(-ret, "asking for %s: %s", path, strerror(-ret));
	while ((ret = recv_frame(fd, &type, &buf, &n, deadline_ns)) == 0 &&
	       type == AGENT_DATA)
		if ((ret = write_out(local_fd, buf, n, path)) < 0)
			break;
	if (ret == 0 && type != AGENT_OK)
		ret = unexpected(type, buf, "a get");
	free(buf);
	return ret;
}

int agent__sink_capture(void *ctx, int stream, const uint8_t *p,
			uint32_t len)
{
	struct agent_capture *c = &((struct agent_capture *)ctx)[stream - 1];
	size_t take = len;

	if (!c->buf && !(c->buf = malloc(c->max ? c->max : 1)))
		return err__set(ENOMEM, "out of memory capturing the output");
	if (take > c->max - c->len) {
		take = c->max - c->len;
		c->truncated = true;
	}
	memcpy(c->buf + c->len, p, take);
	c->len += take;
	return 0;
}

json_t *agent__capture_json(const struct agent_capture *c)
{
	json_t *s = json_stringn(c->buf ? c->buf : "", c->len);

	for (size_t i = 0; !s && i < c->len; i++)
		if ((unsigned char)c->buf[i] >= 0x80 || !c->buf[i])
			c->buf[i] = '?';
	return s ? s : json_stringn(c->buf, c->len);
}

bool agent__vm_gone(void *arg)
{
	struct vm *vm = arg;

	return __atomic_load_n(&vm->ending, __ATOMIC_ACQUIRE) ||
	       vm->interrupted;
}
