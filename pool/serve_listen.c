/* The pool server's socket file (serve_listen.h): made and bound once, a
 * stale one replaced, a live server's or another kind of file left
 * alone, and removed at the end only while it is still the one bound. */
#include "serve_listen.h"

#include "err.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Makes room at the path: nothing there, or a socket nobody listens on
 * (a server that died), which is removed. */
static int clear_path(const char *path, const struct sockaddr_un *addr)
{
	struct stat st;
	int fd, err;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : err__sys(errno, "%s", path);
	if (!S_ISSOCK(st.st_mode))
		return err__set(EEXIST, "%s exists and is not a socket; not "
				"replacing it", path);
	/* non-blocking: a live server with a full backlog says EAGAIN */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return err__sys(errno, "socket(AF_UNIX)");
	err = connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) ? errno
									   : 0;
	close(fd);
	if (err == 0 || err == EAGAIN)
		return err__set(EADDRINUSE, "a server already listens on %s",
				path);
	if (err != ECONNREFUSED)
		return err__sys(err, "looking for a server on %s", path);
	if (unlink(path) < 0 && errno != ENOENT)
		return err__sys(errno, "removing the stale socket %s", path);
	return 0;
}

/* Removes the socket file, unless someone else's replaced it. */
static void remove_socket(struct pool_listener *l)
{
	struct stat st;

	if (l->bound && lstat(l->path, &st) == 0 && st.st_dev == l->dev &&
	    st.st_ino == l->ino)
		unlink(l->path);
	l->bound = false;
}

void pool_serve__unlisten(struct pool_listener *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	remove_socket(l);
}

static int bind_socket(struct pool_listener *l, const struct sockaddr_un *addr)
{
	struct stat st;

	/* bind() gives the file the socket's mode less the umask: it is
	 * never open to others, not even for a moment */
	if (fchmod(l->fd, 0600) < 0)
		return err__sys(errno, "fchmod(0600) of the socket for %s",
				l->path);
	if (bind(l->fd, (const struct sockaddr *)addr, sizeof(*addr)) < 0)
		return errno == EADDRINUSE
			? err__set(EADDRINUSE, "another server took %s first",
				   l->path)
			: err__sys(errno, "bind to %s", l->path);
	if (lstat(l->path, &st) < 0)
		return err__sys(errno, "%s after bind", l->path);
	l->bound = true;
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	if (listen(l->fd, SOMAXCONN) < 0)
		return err__sys(errno, "listen on %s", l->path);
	return 0;
}

int pool_serve__listen(struct pool_listener *l, const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	size_t len = path ? strlen(path) : 0;
	int ret;

	*l = (struct pool_listener){
		.path = path, .fd = -1,
		.idle_timeout_ns = SERVE_IDLE_TIMEOUT_S * 1000000000ull,
		.client_conns = SERVE_CLIENT_CONNS,
	};
	if (!len)
		return err__set(EINVAL, "no socket path");
	if (len >= sizeof(addr.sun_path))
		return err__set(ENAMETOOLONG, "socket path %s is longer than "
				"%zu bytes", path, sizeof(addr.sun_path) - 1);
	memcpy(addr.sun_path, path, len);
	ret = clear_path(path, &addr);
	if (ret < 0)
		return ret;
	l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (l->fd < 0)
		return err__sys(errno, "socket(AF_UNIX)");
	ret = bind_socket(l, &addr);
	if (ret < 0)
		pool_serve__unlisten(l);
	return ret;
}
