/* emulate.c's own: one run's state and its files (emulate.c: the tools,
 * processes, watching the run and the interface; emulate_initrd.c, below
 * it, has its own header: the host's initramfs). Not for use outside the
 * emulated host. */
#ifndef COLDSTART_EMULATE_INT_H
#define COLDSTART_EMULATE_INT_H

#include "emulate.h"
#include "emulate_initrd.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

extern char **environ;

/* One run's moving parts. */
struct run {
	const struct emulate_options *o;
	char work[PATH_MAX];
	char path[6][PATH_MAX]; /* see enum file */
	char console[PATH_MAX];
	char image[PATH_MAX];
	char virtiofsd[PATH_MAX];
	pid_t virtiofsd_pid, qemu_pid;
	int out_fd, err_fd, con_fd;
	char line[1024]; /* the console's unfinished line */
	size_t line_len;
	unsigned boot; /* 1: the first boot; 2: its one retry */
	bool ready, exited, failed, stalled;
	int exit_status;
	char fail_text[256];
	struct timespec start, boot_start, ready_at, last_console, last_beat, stalled_at;
};

enum file { F_DISK, F_INITRD, F_SOCK, F_STDOUT, F_STDERR, F_LOG };

#endif
