/* One connection of the agent: frames in, a command run with its output
 * streamed back, files written atomically or read back. */
#include "agent_io.h"

#include "../guest_line.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static uint8_t buf[AGENT_FRAME_MAX + 1];

void agent__say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	guest__vline(STDERR_FILENO, "coldstart-agent: ", fmt, ap);
	va_end(ap);
}

static int full(int fd, void *p, size_t len, int writing)
{
	uint8_t *b = p;

	while (len) {
		ssize_t n = writing ? write(fd, b, len) : read(fd, b, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

static int send_frame(int fd, uint8_t type, const void *p, uint32_t len)
{
	uint8_t h[AGENT_HEADER_SIZE] = { type };

	agent_abi__put32(h + 1, len);
	if (full(fd, h, sizeof(h), 1) < 0)
		return -1;
	return len ? full(fd, (void *)p, len, 1) : 0;
}

static int fail(int fd, const char *what, const char *path)
{
	char msg[512];
	int n = snprintf(msg, sizeof(msg), "%s %s: %s", what, path,
			 strerror(errno));

	return send_frame(fd, AGENT_FAIL, msg, (uint32_t)n);
}

/* Reads one frame into buf (NUL-terminated); -1 on EOF or a bad frame. */
static int recv_frame(int fd, uint8_t *type, uint32_t *len)
{
	uint8_t h[AGENT_HEADER_SIZE];

	if (full(fd, h, sizeof(h), 0) < 0)
		return -1;
	*type = h[0];
	*len = agent_abi__get32(h + 1);
	if (*len > AGENT_FRAME_MAX) {
		agent__say("error: a frame of %u bytes (at most %u)", *len,
			   AGENT_FRAME_MAX);
		return -1;
	}
	if (full(fd, buf, *len, 0) < 0)
		return -1;
	buf[*len] = '\0';
	return 0;
}

static void child(const char *cmd, int out[2], int err[2])
{
	char *envp[] = { "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:"
			 "/usr/bin:/sbin:/bin",
			 "HOME=/root", "TERM=dumb", "LANG=C.UTF-8", NULL };
	int null = open("/dev/null", O_RDONLY);

	if (null >= 0)
		dup2(null, STDIN_FILENO);
	dup2(out[1], STDOUT_FILENO);
	dup2(err[1], STDERR_FILENO);
	if (chdir("/root") < 0 && chdir("/") < 0)
		_exit(127);
	setsid();
	execle("/bin/sh", "sh", "-c", cmd, (char *)NULL, envp);
	dprintf(STDERR_FILENO, "coldstart-agent: exec /bin/sh: %s\n",
		strerror(errno));
	_exit(127);
}

/* Forwards what the command writes until both pipes are closed. */
static int stream(int fd, int out, int err)
{
	struct pollfd p[2] = { { out, POLLIN, 0 }, { err, POLLIN, 0 } };
	int open_pipes = 2;

	while (open_pipes) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		for (int i = 0; i < 2; i++) {
			ssize_t n;

			if (p[i].fd < 0 || !p[i].revents)
				continue;
			n = read(p[i].fd, buf, AGENT_FRAME_MAX);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				close(p[i].fd);
				p[i].fd = -1;
				open_pipes--;
			} else if (send_frame(fd, i ? AGENT_ERR : AGENT_OUT,
					      buf, (uint32_t)n) < 0) {
				return -1;
			}
		}
	}
	return 0;
}

static int exec_cmd(int fd, const char *cmd)
{
	int out[2], err[2], status = 0, ret;
	uint8_t st[4];
	pid_t pid;

	if (pipe2(out, O_CLOEXEC) < 0)
		return fail(fd, "pipe for", "stdout");
	if (pipe2(err, O_CLOEXEC) < 0) {
		close(out[0]);
		close(out[1]);
		return fail(fd, "pipe for", "stderr");
	}
	pid = fork();
	if (pid == 0)
		child(cmd, out, err);
	close(out[1]);
	close(err[1]);
	if (pid < 0) {
		close(out[0]);
		close(err[0]);
		return fail(fd, "fork for", cmd);
	}
	ret = stream(fd, out[0], err[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (ret < 0)
		return -1;
	agent_abi__put32(st, WIFSIGNALED(status) ? 128u + (uint32_t)WTERMSIG(status)
						 : (uint32_t)WEXITSTATUS(status));
	return send_frame(fd, AGENT_STATUS, st, sizeof(st));
}

/* PUT: DATA frames into a new file beside the path, renamed over it at
 * END, so a reader sees the old file or the whole new one. */
static int put_file(int fd, uint32_t len)
{
	char path[AGENT_PATH_MAX + 1], tmp[AGENT_PATH_MAX + 32];
	mode_t mode;
	uint8_t type;
	int out, bad = 0;

	if (len < 5 || len - 4 > AGENT_PATH_MAX || memchr(buf + 4, 0, len - 4))
		return send_frame(fd, AGENT_FAIL, "malformed PUT", 13);
	mode = (mode_t)(agent_abi__get32(buf) & 07777);
	memcpy(path, buf + 4, len - 4);
	path[len - 4] = '\0';
	snprintf(tmp, sizeof(tmp), "%s.coldstart-XXXXXX", path);
	out = mkstemp(tmp);
	if (out < 0)
		bad = errno;
	for (;;) {
		if (recv_frame(fd, &type, &len) < 0)
			goto broken;
		if (type == AGENT_END)
			break;
		if (type != AGENT_DATA)
			goto broken;
		if (!bad && full(out, buf, len, 1) < 0)
			bad = errno ? errno : EIO;
	}
	if (!bad && (fchmod(out, mode) < 0 || fsync(out) < 0 ||
		     rename(tmp, path) < 0))
		bad = errno;
	if (out >= 0)
		close(out);
	if (bad) {
		if (out >= 0)
			unlink(tmp);
		errno = bad;
		return fail(fd, "writing", path);
	}
	return send_frame(fd, AGENT_OK, NULL, 0);
broken:
	if (out >= 0) {
		close(out);
		unlink(tmp);
	}
	return -1;
}

static int get_file(int fd, const char *path)
{
	int in = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (in < 0)
		return fail(fd, "opening", path);
	while ((n = read(in, buf, AGENT_FRAME_MAX)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			close(in);
			errno = e;
			return fail(fd, "reading", path);
		}
		if (send_frame(fd, AGENT_DATA, buf, (uint32_t)n) < 0) {
			close(in);
			return -1;
		}
	}
	close(in);
	return send_frame(fd, AGENT_OK, NULL, 0);
}

int agent__serve(int fd)
{
	uint8_t type;
	uint32_t len;
	int ret = 0;

	while (ret == 0 && recv_frame(fd, &type, &len) == 0) {
		switch (type) {
		case AGENT_EXEC:
			/* a NUL would cut the command short */
			ret = memchr(buf, 0, len)
				      ? send_frame(fd, AGENT_FAIL,
						   "a NUL in the command", 20)
				      : exec_cmd(fd, (const char *)buf);
			break;
		case AGENT_PUT:
			ret = put_file(fd, len);
			break;
		case AGENT_GET:
			ret = memchr(buf, 0, len) || !len
				      ? send_frame(fd, AGENT_FAIL,
						   "malformed GET", 13)
				      : get_file(fd, (const char *)buf);
			break;
		default:
			send_frame(fd, AGENT_FAIL, "unknown request", 15);
			ret = -1;
		}
	}
	close(fd);
	return ret < 0 ? 1 : 0;
}
