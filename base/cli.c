/* Helpers shared by the commands: error printing and exit-code mapping. */
#include "cli.h"

#include "err.h"
#include "seccomp.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <unistd.h>

uint64_t cli_process_start;

int cli__error(int code, const char *fmt, ...)
{
	va_list ap;

	fputs("coldstart: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

int cli__exit_for(int err)
{
	switch (-err) {
	case ENODEV:  /* no /dev/kvm */
	case EACCES:  /* no permission */
	case ENOTSUP: /* missing capability, API version, huge pages */
		return CLI_SKIP;
	default:
		return CLI_FAIL;
	}
}

const char *cli__self_exe(void)
{
	static char path[PATH_MAX];
	ssize_t n;

	if (path[0])
		return path;
	n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	if (n <= 0)
		return NULL;
	path[n] = '\0';
	return path;
}

int cli__usage_error(const char *cmd)
{
	fprintf(stderr, "Try 'coldstart %s --help'.\n", cmd);
	return CLI_USAGE;
}

int cli__parse_error(const char *what, const char *cmd)
{
	cli__error(CLI_USAGE, "%s: %s", what, err__last());
	return cli__usage_error(cmd);
}

int cli__parsed(int ret, const char *cmd, void (*usage)(FILE *out))
{
	if (ret == 1) {
		usage(stdout);
		return CLI_OK;
	}
	return cli__parse_error(cmd, cmd);
}

int cli__seccomp_start(const char *cmd, enum seccomp_mode mode,
		       bool main_thread)
{
	if (seccomp__configure(mode, main_thread) < 0)
		return cli__error(CLI_FAIL, "%s: %s", cmd, err__last());
	return 0;
}

void cli__seccomp_report(void)
{
	struct seccomp_hit hits[32];
	int n;

	if (seccomp__mode() != SECCOMP_LOG)
		return;
	n = seccomp__logged(hits, 32, 300);
	if (n < 0) {
		fprintf(stderr, "coldstart: seccomp log: %s; the kernel logs "
			"each call outside the lists as an audit record "
			"(type=1326, in dmesg or the audit log)\n",
			err__last());
		return;
	}
	for (int i = 0; i < n; i++) {
		const char *name = seccomp__syscall_name(hits[i].nr);

		fprintf(stderr, "coldstart: seccomp log: thread %s made "
			"system call %s (%ld) outside its list (%u times)\n",
			hits[i].comm, name ? name : "?", hits[i].nr,
			hits[i].count);
	}
}
