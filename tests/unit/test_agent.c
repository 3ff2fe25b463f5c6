/* The guest agent (vmm/guest/agent) and the host's client of it
 * (vmm/agent_client.c), on the host: the agent binary of this build
 * listens on a Unix socket instead of vsock. A command's stdout, stderr
 * and status, a signal's status, files put and got back byte for byte,
 * a missing file, and hostile frames the agent refuses without harm. */
#include "agent_client.h"
#include "err.h"
#include "guest/agent_abi.h"
#include "units.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

static char dir[] = "/tmp/coldstart-agent-XXXXXX";
static char sock[128];
static pid_t agent;

static uint64_t soon(void)
{
	return now_ns() + 10 * NS_PER_S;
}

static int start_agent(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sock, sizeof(sock), "%s/agent.sock", dir);
	agent = fork();
	if (agent == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDERR_FILENO); /* its "listening" line */
		execl(AGENT_BIN, "coldstart-agent", "--unix", sock,
		      "--no-signal", (char *)NULL);
		_exit(127);
	}
	return agent > 0 ? 0 : -1;
}

static int stop_agent(void **state)
{
	char cmd[256];

	(void)state;
	kill(agent, SIGKILL);
	waitpid(agent, NULL, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static int connect_agent(void)
{
	int fd = agent__connect(sock, AGENT_PORT, true, soon(), NULL, NULL);

	if (fd < 0)
		fail_msg("connect: %s", err__last());
	return fd;
}

/* Reads a temporary file's whole content into buf. */
static void slurp(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size - 1, 0);

	assert_true(n >= 0);
	buf[n] = '\0';
}

static void run(int fd, const char *cmd, char *out, char *err, size_t size,
		int *status)
{
	struct agent_times t;
	FILE *o = tmpfile(), *e = tmpfile();

	assert_non_null(o);
	assert_non_null(e);
	int fds[2] = { fileno(o), fileno(e) };

	if (agent__exec(fd, cmd, agent__sink_fds, fds, soon(), &t, status) < 0)
		fail_msg("exec: %s", err__last());
	assert_true(t.sent > 0 && t.exited >= t.sent);
	slurp(fileno(o), out, size);
	slurp(fileno(e), err, size);
	fclose(o);
	fclose(e);
}

static void test_exec(void **state)
{
	char out[256], err[256];
	int fd = connect_agent(), status = -1;

	(void)state;
	run(fd, "echo hello; echo oops >&2; exit 3", out, err, sizeof(out),
	    &status);
	assert_string_equal(out, "hello\n");
	assert_string_equal(err, "oops\n");
	assert_int_equal(status, 3);
	/* the same connection serves the next request */
	run(fd, "kill -9 $$", out, err, sizeof(out), &status);
	assert_int_equal(status, 128 + 9);
	run(fd, "printf '%s' \"$HOME\"; pwd >&2", out, err, sizeof(out),
	    &status);
	assert_int_equal(status, 0);
	assert_string_equal(out, "/root");
	close(fd);
}

/* A file of a few frames goes in and comes back byte for byte. */
static void test_put_get(void **state)
{
	size_t size = 3 * AGENT_FRAME_MAX + 12345;
	uint8_t *data = malloc(size), *back = malloc(size);
	char remote[256];
	FILE *in = tmpfile(), *out = tmpfile();
	struct stat st;
	int fd = connect_agent();

	(void)state;
	assert_non_null(data);
	assert_non_null(back);
	for (size_t i = 0; i < size; i++)
		data[i] = (uint8_t)(i * 2654435761u >> 13);
	assert_int_equal(fwrite(data, 1, size, in), size);
	fflush(in);
	rewind(in);
	snprintf(remote, sizeof(remote), "%s/put.bin", dir);
	if (agent__put(fd, fileno(in), remote, 0640, soon()) < 0)
		fail_msg("put: %s", err__last());
	assert_int_equal(stat(remote, &st), 0);
	assert_int_equal(st.st_size, (off_t)size);
	assert_int_equal(st.st_mode & 07777, 0640);
	if (agent__get(fd, remote, fileno(out), soon()) < 0)
		fail_msg("get: %s", err__last());
	assert_int_equal(pread(fileno(out), back, size, 0), (ssize_t)size);
	assert_memory_equal(data, back, size);
	fclose(in);
	fclose(out);
	free(data);
	free(back);
	close(fd);
}

static void test_get_missing(void **state)
{
	char remote[256];
	FILE *out = tmpfile();
	int fd = connect_agent();

	(void)state;
	snprintf(remote, sizeof(remote), "%s/no-such-file", dir);
	assert_int_equal(agent__get(fd, remote, fileno(out), soon()), -EIO);
	assert_non_null(strstr(err__last(), "no-such-file"));
	assert_non_null(strstr(err__last(), "No such file"));
	/* a put into a directory that does not exist fails the same way */
	snprintf(remote, sizeof(remote), "%s/none/x", dir);
	assert_int_equal(agent__put(fd, fileno(out), remote, 0644, soon()),
			 -EIO);
	fclose(out);
	close(fd);
}

static void raw_frame(int fd, uint8_t type, uint32_t len)
{
	uint8_t h[AGENT_HEADER_SIZE] = { type };

	agent_abi__put32(h + 1, len);
	assert_int_equal(write(fd, h, sizeof(h)), (ssize_t)sizeof(h));
}

/* Reads until the agent closes the connection; returns what came. */
static size_t drain(int fd, uint8_t *buf, size_t size)
{
	size_t got = 0;
	ssize_t n;

	while (got < size && (n = read(fd, buf + got, size - got)) > 0)
		got += (size_t)n;
	return got;
}

/* An oversized frame, an unknown type and a NUL in a command: the
 * agent refuses each, and serves the next connection as before. */
static void test_hostile(void **state)
{
	uint8_t buf[512];
	char out[64], err[64];
	int fd, status;

	(void)state;
	fd = connect_agent();
	raw_frame(fd, AGENT_EXEC, AGENT_FRAME_MAX + 1);
	assert_int_equal(drain(fd, buf, sizeof(buf)), 0);
	close(fd);

	fd = connect_agent();
	raw_frame(fd, 'Q', 0);
	assert_true(drain(fd, buf, sizeof(buf)) >= AGENT_HEADER_SIZE);
	assert_int_equal(buf[0], AGENT_FAIL);
	close(fd);

	fd = connect_agent();
	raw_frame(fd, AGENT_EXEC, 5);
	assert_int_equal(write(fd, "ls\0rm", 5), 5);
	assert_int_equal(read(fd, buf, AGENT_HEADER_SIZE), AGENT_HEADER_SIZE);
	assert_int_equal(buf[0], AGENT_FAIL);
	close(fd);

	fd = connect_agent();
	run(fd, "echo still", out, err, sizeof(out), &status);
	assert_string_equal(out, "still\n");
	close(fd);
}

/* Nothing listens: connect gives up at its deadline, with a message. */
static void test_connect_deadline(void **state)
{
	char none[160];

	(void)state;
	snprintf(none, sizeof(none), "%s/nobody.sock", dir);
	assert_int_equal(agent__connect(none, AGENT_PORT, true,
					now_ns() + 50 * NS_PER_MS, NULL, NULL),
			 -ETIMEDOUT);
	assert_non_null(strstr(err__last(), "did not answer"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec),
		cmocka_unit_test(test_put_get),
		cmocka_unit_test(test_get_missing),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_connect_deadline),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, start_agent, stop_agent);
}
