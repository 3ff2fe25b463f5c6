/* Opening untrusted input files as regular files only. */
#include "regfile.h"

#include "err.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int regfile__open(const char *path, uint64_t *size)
{
	struct stat st;
	int flags, ret = 0;
	/* O_NONBLOCK: opening a FIFO for reading would wait for a writer. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return err__sys(errno, "cannot open %s", path);
	if (fstat(fd, &st) < 0)
		ret = err__sys(errno, "stat of %s", path);
	else if (!S_ISREG(st.st_mode))
		ret = err__set(EINVAL, "%s is not a regular file", path);
	else if ((flags = fcntl(fd, F_GETFL)) < 0 ||
		 fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
		ret = err__sys(errno, "fcntl of %s", path);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	if (size)
		*size = (uint64_t)st.st_size;
	return fd;
}

FILE *regfile__fopen(const char *path)
{
	int fd = regfile__open(path, NULL);
	FILE *f;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	f = fdopen(fd, "r");
	if (!f) {
		int e = errno;

		close(fd);
		err__sys(e, "cannot open %s", path);
		errno = e;
	}
	return f;
}
