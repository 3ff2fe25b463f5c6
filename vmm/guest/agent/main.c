/* coldstart-agent: runs the host's commands in a guest, over vsock (or a
 * Unix socket, to test it on the host). It listens, tells the VMM it is
 * ready with the boot-complete signal, and serves each connection in its
 * own process: a command's stdout and stderr stream back as they come,
 * then its status; files go in and out whole (agent_abi.h). As PID 1 it
 * also reaps every orphan. */
#include "agent_io.h"

#include "../guest_line.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/vm_sockets.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>


struct agent_opts {
	const char *unix_path; /* listen there instead of on vsock */
	unsigned int port;
	int signal; /* write the boot-complete byte once listening */
};

static int usage(void)
{
	fputs("usage: coldstart-agent [--port N] [--unix PATH] "
	      "[--signal|--no-signal]\n", stderr);
	return 2;
}

static int parse(int argc, char **argv, struct agent_opts *o)
{
	*o = (struct agent_opts){ NULL, AGENT_PORT, getpid() == 1 };
	for (int i = 1; i < argc; i++) {
		char *end;

		if (!strcmp(argv[i], "--port") && i + 1 < argc) {
			unsigned long v = strtoul(argv[++i], &end, 10);

			if (*end || !v || v > 0xffffffffu)
				return -1;
			o->port = (unsigned int)v;
		} else if (!strcmp(argv[i], "--unix") && i + 1 < argc) {
			o->unix_path = argv[++i];
		} else if (!strcmp(argv[i], "--signal")) {
			o->signal = 1;
		} else if (!strcmp(argv[i], "--no-signal")) {
			o->signal = 0;
		} else {
			return -1;
		}
	}
	return 0;
}

static int listen_on(const struct agent_opts *o)
{
	int fd;

	if (o->unix_path) {
		struct sockaddr_un a = { .sun_family = AF_UNIX };

		if (strlen(o->unix_path) >= sizeof(a.sun_path))
			return -ENAMETOOLONG;
		strcpy(a.sun_path, o->unix_path);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
			goto fail;
	} else {
		struct sockaddr_vm a = { .svm_family = AF_VSOCK,
					 .svm_cid = VMADDR_CID_ANY,
					 .svm_port = o->port };

		fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
			goto fail;
	}
	if (fd < 0 || listen(fd, 16) < 0)
		goto fail;
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -errno;
}

static void signal_ready(void)
{
	if (ioperm(GUEST_TIMER_PORT, 1, 1) < 0) {
		agent__say("error: ioperm(0x%x): %s", GUEST_TIMER_PORT,
			   strerror(errno));
		return;
	}
	outb(GUEST_TIMER_BOOT_COMPLETE, GUEST_TIMER_PORT);
}

int main(int argc, char **argv)
{
	struct agent_opts o;
	int lfd;

	if (parse(argc, argv, &o) < 0)
		return usage();
	/* Connections' processes and, as PID 1, every orphan are reaped by
	 * the kernel; a connection puts the default back for its command. */
	signal(SIGCHLD, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	lfd = listen_on(&o);
	if (lfd < 0) {
		agent__say("error: listening: %s", strerror(-lfd));
		return 1;
	}
	if (o.unix_path)
		agent__say("listening on %s", o.unix_path);
	else
		agent__say("listening on vsock port %u", o.port);
	if (o.signal)
		signal_ready();
	for (;;) {
		int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		pid_t pid;

		if (c < 0) {
			if (errno != EINTR && errno != ECONNABORTED)
				agent__say("error: accept: %s", strerror(errno));
			continue;
		}
		pid = fork();
		if (pid == 0) {
			close(lfd);
			signal(SIGCHLD, SIG_DFL);
			_exit(agent__serve(c));
		}
		if (pid < 0)
			agent__say("error: fork: %s", strerror(errno));
		close(c);
	}
}
