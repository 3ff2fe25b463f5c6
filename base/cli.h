/* The coldstart command line's generic part: exit codes and the helpers
 * the commands share to print errors and usage lines. Only the command
 * layer prints fatal errors and chooses exit codes. */
#ifndef COLDSTART_CLI_H
#define COLDSTART_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum cli_exit {
	CLI_OK = 0,
	CLI_FAIL = 1,  /* the run failed, or a regression was found */
	CLI_USAGE = 2, /* bad arguments or incomparable inputs */
	CLI_SKIP = 77, /* this host cannot run it (no KVM, no huge pages...) */
};

/* CLOCK_MONOTONIC ns at the top of main(): the timeline's origin. */
extern uint64_t cli_process_start;

/* Prints "coldstart: <message>" to stderr and returns `code`. */
int cli__error(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The exit code for a -errno from opening KVM or creating a VM: CLI_SKIP
 * when the host cannot run VMs (-ENODEV no device, -EACCES no permission,
 * -ENOTSUP missing capability or resource), CLI_FAIL otherwise. */
int cli__exit_for(int err);

/* Absolute path of the running binary, for process-per-VM runs. */
const char *cli__self_exe(void);

/* Prints a usage line, "Try 'coldstart CMD --help'", returns CLI_USAGE. */
int cli__usage_error(const char *cmd);

/* A parser's error: "coldstart: WHAT: <err__last()>" and the usage line
 * for CMD; returns CLI_USAGE. */
int cli__parse_error(const char *what, const char *cmd);

/* What a command does with a parser's non-zero result: 1 (--help) prints
 * `usage` on stdout and returns CLI_OK; -errno is cli__parse_error(CMD,
 * CMD). */
int cli__parsed(int ret, const char *cmd, void (*usage)(FILE *out));

#endif
