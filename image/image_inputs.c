/* The inputs that decide an image's bytes, from Debian's apt and dpkg;
 * and the tool and tree helpers the image's and the rootfs's builders
 * share. */
#include "image.h"
#include "image_int.h"

#include "err.h"
#include "hash.h"
#include "init_image.h"

#include <elf.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int remove_entry(const char *path, const struct stat *st, int type,
			struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (type == FTW_DP ? rmdir(path) : unlink(path)) < 0 ? -1 : 0;
}

void image__remove_tree(const char *path)
{
	nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Is `name` an executable in $PATH? */
static bool have_tool(const char *name)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (!path)
		path = "/usr/bin:/bin:/usr/sbin:/sbin";
	while (*path) {
		size_t len = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, path, name);
		if (access(buf, X_OK) == 0)
			return true;
		path += len + (path[len] == ':');
	}
	return false;
}

int image__need_tool(const char *name, const char *package)
{
	if (have_tool(name))
		return 0;
	return err__set(ENOENT, "'%s' not found: install the Debian package "
			"%s (apt-get install %s)", name, package, package);
}

/* Runs argv[0] from $PATH in `cwd` (NULL: ours). Its stdout goes to `out`
 * (NUL-terminated, truncated to `size`) or, with out == NULL, to our
 * stderr so our stdout stays clean. Returns its exit status or -errno. */
static int spawn(char *const argv[], const char *cwd, char *out, size_t size)
{
	int pipefd[2] = { -1, -1 }, status;
	size_t used = 0;
	ssize_t n;
	pid_t pid;

	if (out && pipe2(pipefd, O_CLOEXEC) < 0)
		return err__sys(errno, "pipe");
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		if ((cwd && chdir(cwd) < 0) ||
		    dup2(out ? pipefd[1] : STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (out)
		close(pipefd[1]);
	if (pid < 0) {
		if (out)
			close(pipefd[0]);
		return err__sys(errno, "fork");
	}
	while (out && (n = read(pipefd[0], out + used, size - 1 - used)) > 0)
		used += (size_t)n;
	if (out) {
		out[used] = '\0';
		close(pipefd[0]);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return err__sys(errno, "waitpid(%s)", argv[0]);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Runs a command that must succeed; the message names it. */
int image__spawn_ok(char *const argv[], const char *cwd, char *out,
		    size_t size)
{
	int ret = spawn(argv, cwd, out, size);

	if (ret > 0)
		return err__set(EIO, "'%s %s' failed with exit status %d",
				argv[0], argv[1], ret);
	return ret;
}

/* The value of the first "Key: value" line of `text` (in place). */
static char *field(char *text, const char *key)
{
	size_t klen = strlen(key);

	for (char *line = text; line && *line;) {
		char *next = strchr(line, '\n');

		if (next)
			*next++ = '\0';
		while (*line == ' ')
			line++;
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			line += klen + 1;
			while (*line == ' ')
				line++;
			return line;
		}
		line = next;
	}
	return NULL;
}

static int copy_string(char *dst, size_t size, const char *src,
		       const char *what)
{
	if (!src || !*src || strlen(src) >= size)
		return err__set(EINVAL, "could not determine %s", what);
	memcpy(dst, src, strlen(src) + 1);
	return 0;
}

static int resolve_kernel(struct inputs *in, const char *wanted)
{
	char out[8192], *dep;
	char *depends[] = { "apt-cache", "depends", IMAGE_META_PACKAGE, NULL };
	int ret;

	if (wanted)
		return copy_string(in->package, sizeof(in->package), wanted,
				   "the kernel package");
	ret = image__spawn_ok(depends, NULL, out, sizeof(out));
	if (ret < 0)
		return err__set(ENOENT, "'apt-cache depends %s' failed; is "
				"Debian's archive in the apt sources and "
				"'apt-get update' done?", IMAGE_META_PACKAGE);
	dep = field(out, "Depends");
	if (!dep || strncmp(dep, "linux-image-", 12))
		return err__set(ENOENT, "%s does not depend on a "
				"linux-image-* package", IMAGE_META_PACKAGE);
	return copy_string(in->package, sizeof(in->package), dep,
			   "the kernel package");
}

static int kernel_version(struct inputs *in)
{
	char out[65536];
	char *show[] = { "apt-cache", "show", "--no-all-versions", in->package,
			 NULL };

	if (spawn(show, NULL, out, sizeof(out)) != 0 ||
	    strncmp(out, "Package:", 8))
		return err__set(ENOENT, "kernel package '%s' is not in the "
				"apt archive (try 'apt-get update')",
				in->package);
	return copy_string(in->version, sizeof(in->version),
			   field(out, "Version"), "the kernel's version");
}

/* busybox-static's /bin/busybox: installed and really static. */
static int busybox_version(struct inputs *in)
{
	char out[256];
	char *query[] = { "dpkg-query", "-W", "-f=${db:Status-Status} "
			  "${Version}", BUSYBOX_PACKAGE, NULL };
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd, ret = 0;

	if (spawn(query, NULL, out, sizeof(out)) != 0 ||
	    strncmp(out, "installed ", 10) || access(BUSYBOX_PATH, X_OK))
		return err__set(ENOENT, "%s is missing: install the Debian "
				"package %s (apt-get install %s)",
				BUSYBOX_PATH, BUSYBOX_PACKAGE, BUSYBOX_PACKAGE);
	fd = open(BUSYBOX_PATH, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err__sys(errno, "opening %s", BUSYBOX_PATH);
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG))
		ret = err__set(ENOEXEC, "%s is not an ELF file", BUSYBOX_PATH);
	for (unsigned i = 0; ret == 0 && i < eh.e_phnum; i++)
		if (pread(fd, &ph, sizeof(ph),
			  (off_t)(eh.e_phoff + i * (uint64_t)eh.e_phentsize)) ==
			    sizeof(ph) &&
		    ph.p_type == PT_INTERP)
			ret = err__set(ENOEXEC, "%s is dynamically linked: "
				       "install %s, not busybox",
				       BUSYBOX_PATH, BUSYBOX_PACKAGE);
	close(fd);
	if (ret < 0)
		return ret;
	return copy_string(in->busybox_version, sizeof(in->busybox_version),
			   out + 10, "busybox-static's version");
}

int image__gather_inputs(struct inputs *in, const char *wanted)
{
	int ret = image__need_tool("apt-get", "apt");

	if (ret == 0)
		ret = image__need_tool("apt-cache", "apt");
	if (ret == 0)
		ret = image__need_tool("dpkg-deb", "dpkg");
	if (ret == 0)
		ret = image__need_tool("dpkg-query", "dpkg");
	if (ret == 0)
		ret = resolve_kernel(in, wanted);
	if (ret == 0)
		ret = kernel_version(in);
	if (ret == 0)
		ret = busybox_version(in);
	hash__sha256_mem(init_image_start,
		   (size_t)(init_image_end - init_image_start),
		   in->init_sha256);
	hash__sha256_mem(agent_image_start,
			 (size_t)(agent_image_end - agent_image_start),
			 in->agent_sha256);
	return ret;
}
