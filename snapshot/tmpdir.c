/* Temporaries of snapshot directories: names that carry the writer's
 * pid, and removing the ones whose writer is gone. */
#include "tmpdir.h"

#include "err.h"
#include "snapshot.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TMP_INFIX ".tmp."
#define RANDOM_LEN 6 /* mkdtemp's XXXXXX */

/* `dir` without trailing slashes ("/" stays), so the temporary lands
 * beside the snapshot and not inside it. */
static int trimmed(const char *dir, char out[PATH_MAX])
{
	size_t len = strlen(dir);

	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (len >= PATH_MAX)
		return err__set(ENAMETOOLONG, "snapshot path is too long");
	memcpy(out, dir, len);
	out[len] = '\0';
	return 0;
}

int tmpdir__template(const char *dir, char out[PATH_MAX])
{
	char path[PATH_MAX];
	int ret = trimmed(dir, path);

	if (ret == 0 && snprintf(out, PATH_MAX, "%s" TMP_INFIX "%ld.XXXXXX",
				 path, (long)getpid()) >= PATH_MAX)
		ret = err__set(ENAMETOOLONG, "snapshot path %s is too long",
			       dir);
	return ret;
}

/* Whether s is exactly mkdtemp's random part. */
static bool random_part(const char *s)
{
	size_t i;

	for (i = 0; s[i] && i <= RANDOM_LEN; i++)
		if (!isalnum((unsigned char)s[i]))
			return false;
	return i == RANDOM_LEN;
}

/* The writer's pid in what follows "NAME.tmp." in a temporary's name:
 * > 0; 0 for a name without one ("NAME.tmp.XXXXXX"); -1 when the entry
 * is not a temporary of this snapshot (another snapshot "NAME.tmp.5",
 * say). */
static long writer_of(const char *suffix)
{
	char *end;
	long pid;

	if (random_part(suffix))
		return 0;
	if (!isdigit((unsigned char)suffix[0]))
		return -1;
	errno = 0;
	pid = strtol(suffix, &end, 10);
	if (errno || pid <= 0 || pid > INT_MAX || *end != '.' ||
	    !random_part(end + 1))
		return -1;
	return pid;
}

static bool alive(long pid)
{
	return pid == (long)getpid() || kill((pid_t)pid, 0) == 0 ||
	       errno == EPERM;
}

/* Whether the directory open at fd holds snapshot files only: anything
 * else in a temporary is not ours to delete. */
static int only_snapshot_files(int fd)
{
	int copy = dup(fd);
	DIR *d = copy >= 0 ? fdopendir(copy) : NULL;
	struct dirent *e;
	int ret = 0;

	if (!d) {
		ret = -errno;
		if (copy >= 0)
			close(copy);
		return ret;
	}
	while (ret == 0 && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    !snapshot__is_file(e->d_name))
			ret = -ENOTEMPTY;
	closedir(d);
	return ret;
}

/* Removes the temporary `name` in the directory open at `parent`: its
 * snapshot files, then itself. 0 or -errno (-ENOTEMPTY: it holds other
 * files and is left whole; -ENOTDIR: not a directory). */
static int remove_temp(int parent, const char *name)
{
	int fd = openat(parent, name,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int ret = fd < 0 ? (errno == ELOOP ? -ENOTDIR : -errno)
			 : only_snapshot_files(fd);
	const char *file;

	for (unsigned int i = 0; ret == 0 && (file = snapshot__file_name(i));
	     i++)
		if (unlinkat(fd, file, 0) < 0 && errno != ENOENT)
			ret = -errno;
	if (fd >= 0)
		close(fd);
	if (ret == 0 && unlinkat(parent, name, AT_REMOVEDIR) < 0)
		ret = -errno;
	return ret;
}

/* One directory entry: reported (and removed) when it is a stale
 * temporary of the snapshot `name`; `prefix` is the path up to and
 * including the parent's slash. Returns 1 when removed. */
static int visit(int parent, const char *prefix, int prefix_len,
		 const char *name, const char *entry,
		 tmpdir_report_fn *on_stale, void *arg)
{
	size_t len = strlen(name);
	char full[PATH_MAX];
	struct tmpdir_stale s = { .path = full };

	if (strncmp(entry, name, len) ||
	    strncmp(entry + len, TMP_INFIX, strlen(TMP_INFIX)))
		return 0;
	s.pid = writer_of(entry + len + strlen(TMP_INFIX));
	if (s.pid < 0 || (s.pid > 0 && alive(s.pid)))
		return 0;
	snprintf(full, sizeof(full), "%.*s%s", prefix_len, prefix, entry);
	if (s.pid > 0) {
		s.err = remove_temp(parent, entry);
		if (s.err == -ENOENT) /* another writer cleaned it first */
			return 0;
		s.removed = s.err == 0;
	}
	if (on_stale)
		on_stale(arg, &s);
	return s.removed;
}

int tmpdir__clean_stale(const char *dir, tmpdir_report_fn *on_stale,
			void *arg)
{
	char path[PATH_MAX], parent[PATH_MAX];
	const char *slash, *name;
	struct dirent *e;
	int fd, copy, removed = 0, ret = trimmed(dir, path);
	DIR *d;

	if (ret < 0)
		return ret;
	slash = strrchr(path, '/');
	name = slash ? slash + 1 : path;
	if (!*name)
		return 0;
	snprintf(parent, sizeof(parent), "%.*s", slash ? (int)(slash - path) + 1
						       : 1, slash ? path : ".");
	fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : err__sys(errno, "reading %s", parent);
	copy = dup(fd);
	d = copy >= 0 ? fdopendir(copy) : NULL;
	if (!d) {
		ret = err__sys(errno, "reading %s", parent);
		if (copy >= 0)
			close(copy);
		close(fd);
		return ret;
	}
	while ((e = readdir(d)))
		removed += visit(fd, path, (int)(name - path), name, e->d_name,
				 on_stale, arg);
	closedir(d);
	close(fd);
	return removed;
}

void tmpdir__print_stale(void *arg, const struct tmpdir_stale *s)
{
	(void)arg;
	if (s->removed)
		fprintf(stderr, "coldstart: removed %s: a temporary left by "
			"process %ld, which is gone (killed while writing)\n",
			s->path, s->pid);
	else if (s->pid)
		fprintf(stderr, "coldstart: warning: %s was left by process "
			"%ld, which is gone, but cannot be removed: %s\n",
			s->path, s->pid, s->err == -ENOTEMPTY
			? "it holds files that are not a snapshot's"
			: strerror(-s->err));
	else
		fprintf(stderr, "coldstart: warning: %s looks like a temporary "
			"left by an older coldstart; remove it by hand unless "
			"a snapshot is being written there\n", s->path);
}
