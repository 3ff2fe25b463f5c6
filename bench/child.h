/* Child processes for the process-per-VM benchmarks: run and wait (with
 * the child's resource usage), capture a child's JSON output, and hold a
 * child alive until released. */
#ifndef COLDSTART_CHILD_H
#define COLDSTART_CHILD_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

/* Runs argv (argv[0] a path) with stdout, and stderr when `quiet`,
 * redirected to /dev/null; waits. *status is the waitpid status; `ru`
 * (may be NULL) receives the child's rusage. 0, or -errno when it could
 * not be started. */
int child__run(char *const argv[], bool quiet, int *status,
	       struct rusage *ru);

/* As child__run(), with the child's stderr written to the file err_to
 * (created or truncated; NULL: kept), and a child still running after
 * timeout_ms killed (SIGKILL), reaped, and -ETIMEDOUT returned with a
 * message naming it. */
int child__run_timeout(char *const argv[], const char *err_to,
		       int timeout_ms, int *status, struct rusage *ru);

/* As child__run() with stdout to /dev/null, but the child's stderr is
 * kept for the caller's error message: its first size - 1 bytes go to
 * `err` (NUL-terminated), the rest is read and dropped so that the child
 * never blocks on a full pipe. */
int child__run_stderr(char *const argv[], int *status, char *err,
		      size_t size);

/* Runs argv with stdout to a pipe and parses it as one JSON document.
 * *doc is NULL when the output is not JSON; *status as above. */
int child__capture(char *const argv[], json_t **doc, int *status);

/* A child kept alive at a point it announces by writing one line on its
 * stdout (`coldstart run --hold`); it exits when its stdin closes. */
struct child_held {
	pid_t pid;
	int in_fd; /* the child's stdin; closing it releases the child */
	char name[96]; /* argv[0]'s base name and up to 3 arguments */
};

/* Starts argv and waits (up to timeout_ms) for its first line on stdout,
 * which is stored in `line` (without the newline, truncated to size).
 * 0, or -errno with a message naming the child when it exited first or
 * did not announce itself in time. */
int child__hold(char *const argv[], int timeout_ms, struct child_held *h,
		char *line, size_t size);

/* Releases a held child and waits up to timeout_ms for it to exit; its
 * wait status, or -ETIMEDOUT with a message once it has been killed
 * (SIGKILL) and reaped, or -errno. */
int child__release(struct child_held *h, int timeout_ms);

/* The held child's side: blocks until `fd` (its stdin) reaches end of
 * file, the parent's release, retrying reads a signal interrupted. 0, or
 * -errno when reading fails. */
int child__await_release(int fd);

/* A description of a wait status for messages ("exit 1", "signal 9"). */
const char *child__status_text(int status, char *buf, size_t size);

#endif
