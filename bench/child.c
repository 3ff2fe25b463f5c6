/* posix_spawn with pipes and rusage, for the process-per-VM drivers. */
#include "child.h"

#include "cli.h"
#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int wait_child(pid_t pid, int *status, struct rusage *ru)
{
	struct rusage dummy;

	while (wait4(pid, status, 0, ru ? ru : &dummy) < 0)
		if (errno != EINTR)
			return err__sys(errno, "waiting for a child");
	return 0;
}

/* stdout to /dev/null, stderr to err_to (NULL: kept). */
static int spawn_quiet(char *const argv[], const char *err_to, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	int ret;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null",
					 O_WRONLY, 0);
	if (err_to)
		posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, err_to,
						 O_WRONLY | O_CREAT | O_TRUNC,
						 0600);
	ret = posix_spawn(pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (ret)
		return err__sys(ret, "spawning %s", argv[0]);
	return 0;
}

int child__run(char *const argv[], bool quiet, int *status,
	       struct rusage *ru)
{
	pid_t pid;
	int ret = spawn_quiet(argv, quiet ? "/dev/null" : NULL, &pid);

	if (ret < 0)
		return ret;
	return wait_child(pid, status, ru);
}

/* A pidfd wakes the poll the moment the child exits, so the timeout
 * costs the measured wall time nothing (a sleep-and-check loop would). */
int child__run_timeout(char *const argv[], const char *err_to,
		       int timeout_ms, int *status, struct rusage *ru)
{
	struct pollfd p = { .events = POLLIN };
	pid_t pid;
	int ret = spawn_quiet(argv, err_to, &pid), n;

	if (ret < 0)
		return ret;
	p.fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (p.fd < 0) {
		ret = err__sys(errno, "pidfd_open of %s", argv[0]);
		kill(pid, SIGKILL);
		wait_child(pid, status, ru);
		return ret;
	}
	do
		n = poll(&p, 1, timeout_ms);
	while (n < 0 && errno == EINTR);
	close(p.fd);
	if (n == 0) {
		kill(pid, SIGKILL);
		wait_child(pid, status, ru);
		return err__set(ETIMEDOUT, "%s did not end within %d s; "
				"killed", argv[0], timeout_ms / 1000);
	}
	return wait_child(pid, status, ru);
}

/* Reads fd to its end, keeping what fits in err[size]. */
static void read_all(int fd, char *err, size_t size)
{
	size_t len = 0;
	char buf[512];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		size_t keep;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		keep = size - 1 - len < (size_t)n ? size - 1 - len : (size_t)n;
		memcpy(err + len, buf, keep);
		len += keep;
	}
	err[len] = '\0';
}

int child__run_stderr(char *const argv[], int *status, char *err,
		      size_t size)
{
	posix_spawn_file_actions_t fa;
	int fd[2], ret;
	pid_t pid;

	if (size == 0)
		return err__set(EINVAL, "no room for the child's stderr");
	err[0] = '\0';
	if (pipe2(fd, O_CLOEXEC) < 0)
		return err__sys(errno, "pipe");
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null",
					 O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fd[1], STDERR_FILENO);
	ret = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	if (ret) {
		close(fd[0]);
		return err__sys(ret, "spawning %s", argv[0]);
	}
	read_all(fd[0], err, size);
	close(fd[0]);
	return wait_child(pid, status, NULL);
}

/* Spawns argv with stdout (and stdin when in_fd) connected to pipes. */
static int spawn_piped(char *const argv[], int *out_fd, int *in_fd,
		       pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	int out[2], in[2] = { -1, -1 }, ret;

	if (pipe2(out, O_CLOEXEC) < 0)
		return err__sys(errno, "pipe");
	if (in_fd && pipe2(in, O_CLOEXEC) < 0) {
		ret = err__sys(errno, "pipe");
		goto close_out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
	if (in_fd)
		posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
	ret = posix_spawn(pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (ret) {
		ret = err__sys(ret, "spawning %s", argv[0]);
		goto close_in;
	}
	close(out[1]);
	*out_fd = out[0];
	if (in_fd) {
		close(in[0]);
		*in_fd = in[1];
	}
	return 0;
close_in:
	if (in_fd) {
		close(in[0]);
		close(in[1]);
	}
close_out:
	close(out[0]);
	close(out[1]);
	return ret;
}

int child__capture(char *const argv[], json_t **doc, int *status)
{
	pid_t pid;
	FILE *f;
	int fd, ret = spawn_piped(argv, &fd, NULL, &pid);

	if (ret < 0)
		return ret;
	f = fdopen(fd, "r");
	*doc = f ? json_loadf(f, JSON_DISABLE_EOF_CHECK, NULL) : NULL;
	if (f) {
		while (fgetc(f) != EOF) /* drain, so the child never blocks */
			;
		fclose(f);
	} else {
		close(fd);
	}
	return wait_child(pid, status, NULL);
}

/* Reads the child's first line, up to timeout_ms; 0 when it came. */
static int await_line(int fd, int timeout_ms, char *line, size_t size)
{
	size_t len = 0;
	char c;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	for (;;) {
		int n = poll(&p, 1, timeout_ms);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -ETIMEDOUT;
		n = (int)read(fd, &c, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EPIPE;
		if (c == '\n')
			return 0;
		if (len + 1 < size) {
			line[len++] = c;
			line[len] = '\0';
		}
	}
}

/* "coldstart bench density --hold-fresh": argv[0]'s base name and up to
 * 3 arguments, to name the child in messages. */
static void describe(char *const argv[], char *buf, size_t size)
{
	const char *base = strrchr(argv[0], '/');

	snprintf(buf, size, "%s", base ? base + 1 : argv[0]);
	for (int i = 1; i <= 3 && argv[i]; i++) {
		size_t len = strlen(buf);

		snprintf(buf + len, size - len, " %s", argv[i]);
	}
}

int child__hold(char *const argv[], int timeout_ms, struct child_held *h,
		char *line, size_t size)
{
	int out_fd, status, ret = spawn_piped(argv, &out_fd, &h->in_fd, &h->pid);
	char buf[32];

	if (ret < 0)
		return ret;
	describe(argv, h->name, sizeof(h->name));
	if (size)
		line[0] = '\0';
	ret = await_line(out_fd, timeout_ms, line, size);
	close(out_fd);
	if (ret == 0)
		return 0;
	if (ret == -ETIMEDOUT)
		kill(h->pid, SIGKILL);
	close(h->in_fd);
	wait_child(h->pid, &status, NULL);
	/* a child that says this host cannot run it (77) makes the
	 * caller's exit 77 too, not a failure */
	return err__set(ret == -ETIMEDOUT ? ETIMEDOUT
			: WIFEXITED(status) && WEXITSTATUS(status) == CLI_SKIP
			? ENOTSUP : EIO,
			"'%s' %s before it was held", h->name,
			ret == -ETIMEDOUT ? "timed out"
					  : child__status_text(status, buf,
							       sizeof(buf)));
}

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Reaps pid once it exited, polling with naps from 1 ms growing to
 * 64 ms, so quick exits cost little; 1 when reaped, 0 when it still ran
 * after timeout_ms, or -errno. */
static int wait_bounded(pid_t pid, int timeout_ms, int *status)
{
	struct timespec nap = { .tv_nsec = 1000000 };
	int64_t deadline = now_ms() + timeout_ms;

	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return 1;
		if (r < 0 && errno != EINTR)
			return err__sys(errno, "waiting for a child");
		if (now_ms() >= deadline)
			return 0;
		nanosleep(&nap, NULL);
		if (nap.tv_nsec < 64000000)
			nap.tv_nsec *= 2;
	}
}

int child__release(struct child_held *h, int timeout_ms)
{
	int status, ret;

	close(h->in_fd);
	ret = wait_bounded(h->pid, timeout_ms, &status);
	if (ret < 0)
		return ret;
	if (ret == 1)
		return status;
	/* A child that ignores its release would hang every caller. */
	kill(h->pid, SIGKILL);
	ret = wait_child(h->pid, &status, NULL);
	if (ret < 0)
		return ret;
	return err__set(ETIMEDOUT, "'%s' (pid %d) did not exit within %d ms "
			"of its release; killed it", h->name, (int)h->pid,
			timeout_ms);
}

int child__await_release(int fd)
{
	char buf[64];

	/* Checks errno only right after a failed read: a stale EINTR must
	 * not turn end of file into a busy loop. */
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n == 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return err__sys(errno, "reading the release pipe");
	}
}

const char *child__status_text(int status, char *buf, size_t size)
{
	if (WIFEXITED(status))
		snprintf(buf, size, "exited %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, size, "died of signal %d", WTERMSIG(status));
	else
		snprintf(buf, size, "status 0x%x", status);
	return buf;
}
