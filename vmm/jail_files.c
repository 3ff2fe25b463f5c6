/* Files a jailed VMM opens by path after it entered the jail (jail.h):
 * opened before it, each later open of the same path with the same flags
 * gets a duplicate of that descriptor. */
#include "jail.h"

#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct kept {
	char *path;
	int flags, fd;
} kept[JAIL_MAX_FILES];
static unsigned int nr_kept;

static struct kept *find(const char *path, int flags)
{
	for (unsigned int i = 0; i < nr_kept; i++)
		if (kept[i].flags == flags && !strcmp(kept[i].path, path))
			return &kept[i];
	return NULL;
}

int jail__keep_file(const char *path, int flags)
{
	struct kept *k = find(path, flags);
	int fd;

	if (k)
		return 0;
	if (nr_kept == JAIL_MAX_FILES)
		return err__set(E2BIG, "%s: more than %d files to keep open "
				"for the jail", path, JAIL_MAX_FILES);
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TMPFILE)))
		return err__set(EINVAL, "%s: only files opened read-only are "
				"kept for the jail", path);
	fd = open(path, flags | O_CLOEXEC);
	if (fd < 0)
		return err__sys(errno, "%s", path);
	kept[nr_kept] = (struct kept){ strdup(path), flags, fd };
	if (!kept[nr_kept].path) {
		close(fd);
		return err__set(ENOMEM, "%s: out of memory", path);
	}
	nr_kept++;
	return 0;
}

int jail__open(const char *path, int flags)
{
	struct kept *k = find(path, flags);

	if (!k)
		return open(path, flags);
	return fcntl(k->fd, F_DUPFD_CLOEXEC, 0);
}
