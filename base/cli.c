/* Helpers shared by the commands: error printing and exit-code mapping. */
#include "cli.h"

#include "err.h"

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
