/* Running gnuplot on embedded scripts, writing each plot atomically. */
#include "plot.h"

#include "err.h"
#include "output.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

extern const char plot_cdf_gp[], plot_restore_gp[], plot_rate_gp[],
	plot_density_gp[], plot_pool_gp[], plot_pareto_gp[],
	plot_session_gp[];

static const struct {
	const char *name;
	const char *text;
} scripts[] = {
	{ "cdf", plot_cdf_gp },
	{ "restore", plot_restore_gp },
	{ "rate", plot_rate_gp },
	{ "density", plot_density_gp },
	{ "pool", plot_pool_gp },
	{ "pareto", plot_pareto_gp },
	{ "session", plot_session_gp },
};

const char *plot__script(const char *name)
{
	for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++)
		if (!strcmp(scripts[i].name, name))
			return scripts[i].text;
	return NULL;
}

bool plot__available(void)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX], dirs[4096], *save = NULL;

	snprintf(dirs, sizeof(dirs), "%s", path && *path ? path
							  : "/usr/bin:/bin");
	for (char *d = strtok_r(dirs, ":", &save); d;
	     d = strtok_r(NULL, ":", &save)) {
		snprintf(buf, sizeof(buf), "%s/gnuplot", d);
		if (access(buf, X_OK) == 0)
			return true;
	}
	return false;
}

/* Writes the whole script to gnuplot's stdin; a gnuplot that quit early
 * gives EPIPE, which its exit status then explains. */
static void feed(int fd, const char *text)
{
	size_t len = strlen(text);
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);

	while (len) {
		ssize_t n = write(fd, text, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		text += n;
		len -= (size_t)n;
	}
	close(fd);
	signal(SIGPIPE, old);
}

/* Copies what gnuplot said to our stderr. */
static void show_stderr(int fd)
{
	char buf[4096];
	ssize_t n;

	lseek(fd, 0, SEEK_SET);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, stderr);
}

/* gnuplot draws to its stdout, `out_fd`: it never opens a plot file by
 * name (the scripts "set output" with no file when out is ''). */
static int spawn_gnuplot(const char *dir, const char *expr, int out_fd,
			 int err_fd, int *in_fd, pid_t *pid)
{
	char *argv[] = { "gnuplot", "-e", (char *)expr, "/dev/stdin", NULL };
	posix_spawn_file_actions_t fa;
	int fds[2], ret;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return err__sys(errno, "pipe for gnuplot");
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[0], STDIN_FILENO);
	posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, err_fd, STDERR_FILENO);
	posix_spawn_file_actions_addchdir_np(&fa, dir);
	ret = posix_spawnp(pid, "gnuplot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[0]);
	if (ret) {
		close(fds[1]);
		return ret == ENOENT ? err__set(ENOENT, "gnuplot is not "
						"installed")
				     : err__sys(ret, "starting gnuplot");
	}
	*in_fd = fds[1];
	return 0;
}

static bool name_byte(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '+' || c == '-' ||
	       (c == '.' && !first);
}

void plot__file_name(char *out, size_t len, const char *base,
		     const char *ext)
{
	size_t keep = strlen(ext) + 2, i = 0;

	if (len < keep + 1) {
		if (len)
			out[0] = '\0';
		return;
	}
	for (; base[i] && i < len - keep; i++)
		out[i] = name_byte(base[i], i == 0) ? base[i] : '-';
	snprintf(out + i, len - i, ".%s", ext);
}

/* A plot is written only under a name plot__file_name would make, since
 * it also goes into a gnuplot command inside quotes. */
static bool plain_name(const char *name)
{
	if (!name[0])
		return false;
	for (size_t i = 0; name[i]; i++)
		if (!name_byte(name[i], i == 0))
			return false;
	return true;
}

/* Runs gnuplot on script `name` with `expr`, drawing `out` into out_fd;
 * gnuplot's stderr is shown when it failed or drew nothing. */
static int draw(const char *dir, const char *name, const char *expr,
		const char *out, int out_fd)
{
	struct stat st;
	int fd = -1, err_fd, status, ret;
	pid_t pid;

	/* gnuplot's chatter ("empty x range") is shown only on failure */
	err_fd = memfd_create("gnuplot-stderr", MFD_CLOEXEC);
	ret = err_fd < 0 ? err__sys(errno, "memfd_create")
			 : spawn_gnuplot(dir, expr, out_fd, err_fd, &fd, &pid);
	if (ret < 0)
		goto out;
	feed(fd, plot__script(name));
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			ret = err__sys(errno, "waiting for gnuplot");
			goto out;
		}
	if (!WIFEXITED(status) || WEXITSTATUS(status) ||
	    fstat(out_fd, &st) < 0 || st.st_size == 0) {
		show_stderr(err_fd);
		ret = err__set(EIO, "gnuplot failed to draw %s (plots/%s.gp, "
			       "status 0x%x)", out, name, status);
	}
out:
	if (err_fd >= 0)
		close(err_fd);
	return ret;
}

int plot__run(const char *dir, const char *name, const char *vars,
	      const char *out)
{
	struct output_file f;
	char final[PATH_MAX], *expr = NULL;
	int ret;

	if (!plot__script(name))
		return err__set(EINVAL, "no plot script '%s'", name);
	if (!plain_name(out))
		return err__set(EINVAL, "plot file name '%s' is not a plain "
				"file name", out);
	if (snprintf(final, sizeof(final), "%s/%s", dir, out) >=
	    (int)sizeof(final))
		return err__set(ENAMETOOLONG, "plot path %s/%s is too long",
				dir, out);
	if (asprintf(&expr, "%s; out=''", vars) < 0)
		return err__set(ENOMEM, "gnuplot arguments");
	ret = output__file_open(&f, final, 0666);
	if (ret < 0)
		ret = err__sys(-ret, "creating a temporary file for %s", final);
	else
		ret = draw(dir, name, expr, out, f.fd);
	free(expr);
	if (ret < 0) {
		output__file_abort(&f);
		return ret;
	}
	ret = output__file_commit(&f, false);
	return ret < 0 ? err__sys(-ret, "writing %s", final) : 0;
}
