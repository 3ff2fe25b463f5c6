/* The VMM's jail: namespaces, pivot_root into an empty directory, cgroup
 * limits (v1 or v2), uid/gid drop, no capabilities, no_new_privs. */
#include "jail.h"

#include "err.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define CG_ROOT "/sys/fs/cgroup"
#define CFS_PERIOD 100000 /* us */

/* The jail jail__start() prepared, entered at the first thread start */
static struct jail_opts pending;
static bool is_pending;
static bool entered; /* jail__enter_pending() succeeded */
static char cg_paths[2][PATH_MAX]; /* v2: [0]; v1: cpu, memory */
static int uffd_dev = -1;
static int selftest_fd = -1; /* the hook's file, for the threads' lines */
static int private_parent = -1; /* the parent of a private DIR */
static volatile pid_t child_pid;
/* Socket files the child binds on the host's filesystem before the jail,
 * which it cannot remove once jailed: the parent does, after it. */
static struct {
	char path[108];
	bool existed; /* before the child: not its own, never removed */
} sockets[2];
static unsigned int nr_sockets;
static const int ended_by[] = { SIGINT, SIGTERM, SIGHUP }; /* forwarded */

void jail__init(struct jail_opts *o)
{
	*o = (struct jail_opts){ .uid = JAIL_DEFAULT_ID,
				 .gid = JAIL_DEFAULT_ID, .dir_fd = -1 };
}

/* Who may change `st` (DIR, or its parent when `parent`): root or this
 * process's user alone, so nobody else can fill DIR, or swap it for
 * another directory or a link to one, between the checks and the jail.
 * A parent others may write is fine with the sticky bit (/tmp): they
 * cannot rename or remove a DIR they do not own there. */
static int check_owner(const char *dir, const struct stat *st, bool parent)
{
	const char *what = parent ? "its parent directory" : "it";
	unsigned int mode = (unsigned int)(st->st_mode & 07777);

	if (st->st_uid != 0 && st->st_uid != geteuid())
		return err__set(EPERM, "--jail %s: %s is owned by uid %u, not "
				"by root or this user (uid %u), who alone may "
				"change the jail's root", dir, what,
				(unsigned int)st->st_uid,
				(unsigned int)geteuid());
	if ((mode & (S_IWGRP | S_IWOTH)) && !(parent && (mode & S_ISVTX)))
		return err__set(EPERM, "--jail %s: %s (mode %03o) is writable "
				"by group or others (chmod go-w%s)", dir, what,
				mode, parent ? ", or the sticky bit, as /tmp "
				"has" : "");
	return 0;
}

/* DIR opened, the path resolved this once: O_NOFOLLOW refuses a link
 * as DIR itself (trailing slashes dropped, which would follow it). */
static int open_dir(const char *dir)
{
	char path[PATH_MAX];
	size_t n = strlen(dir);
	struct stat st;
	int fd;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n >= sizeof(path))
		return err__set(ENAMETOOLONG, "--jail %s: path too long", dir);
	memcpy(path, dir, n);
	path[n] = '\0';
	fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	if ((errno == ENOTDIR || errno == ELOOP) &&
	    fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode))
		return err__set(ELOOP, "--jail %s: a symbolic link (the jail's "
				"root must be a directory itself)", dir);
	if (errno == ENOTDIR)
		return err__set(ENOTDIR, "--jail %s: not a directory", dir);
	return err__sys(errno, "--jail %s", dir);
}

/* DIR (`fd`) holds nothing but . and .. */
static int check_empty(const char *dir, int fd)
{
	int rfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = rfd < 0 ? NULL : fdopendir(rfd);
	struct dirent *e;

	if (!d) {
		if (rfd >= 0)
			close(rfd);
		return err__sys(errno, "--jail %s", dir);
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			break;
	closedir(d);
	if (e)
		return err__set(ENOTEMPTY, "--jail %s: not empty (the jail's "
				"root must be an empty directory)", dir);
	return 0;
}

/* The checks of DIR and its parent, on the directories themselves: the
 * parent is DIR's "..", not a path. */
static int check_dir(const struct jail_opts *o, int fd)
{
	struct stat st, up;
	int pfd = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int ret;

	if (pfd < 0 || fstat(pfd, &up) < 0 || fstat(fd, &st) < 0) {
		ret = err__sys(errno, "--jail %s", o->dir);
		if (pfd >= 0)
			close(pfd);
		return ret;
	}
	close(pfd);
	ret = check_owner(o->dir, &st, false);
	if (ret == 0)
		ret = check_owner(o->dir, &up, true);
	if (ret < 0)
		return ret;
	/* its root: the jailed user must search it to reach /proc */
	if (!(st.st_mode & (st.st_uid == o->uid ? S_IXUSR
			    : st.st_gid == o->gid ? S_IXGRP : S_IXOTH)))
		return err__set(EACCES, "--jail %s: mode %03o: uid %u cannot "
				"search it (chmod o+x)", o->dir,
				(unsigned int)(st.st_mode & 0777),
				(unsigned int)o->uid);
	return check_empty(o->dir, fd);
}

/* DIR opened into o->dir_fd and checked. */
static int open_checked(struct jail_opts *o)
{
	int fd = open_dir(o->dir), ret;

	if (fd < 0)
		return fd;
	ret = check_dir(o, fd);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	o->dir_fd = fd;
	return 0;
}

int jail__check(struct jail_opts *o)
{
	if (!o->dir && !o->private_dir && (o->id_given || o->limit_given))
		return err__set(EINVAL, "--uid, --gid, --cpus and --memory "
				"need --jail DIR");
	if (!o->dir || o->private_dir || o->dir_fd >= 0)
		return 0;
	return open_checked(o);
}

static int write_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX + 64];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		ret = err__sys(errno, "--jail: cgroup: writing '%s' to %s",
			       text, path);
	if (fd >= 0)
		close(fd);
	return ret;
}

/* One cgroup directory, coldstart-<pid> under `parent`. */
static int make_cgroup(const char *parent, char *path)
{
	int n = snprintf(path, PATH_MAX, "%s/coldstart-%d", parent,
			 (int)getpid());

	if (n < 0 || n >= PATH_MAX) {
		path[0] = '\0';
		return err__set(ENAMETOOLONG, "--jail: cgroup: %s: name too "
				"long", parent);
	}
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return err__sys(errno, "--jail: cgroup: mkdir %s", path);
	return 0;
}

/* `word` is one of the items of `list`, separated by `sep`. */
static bool has_word(const char *list, const char *word, const char *sep)
{
	size_t n = strlen(word);

	for (const char *p = list; *p; p += strcspn(p, sep), p += !!*p)
		if (!strncmp(p, word, n) && (!p[n] || strchr(sep, p[n])))
			return true;
	return false;
}

/* The directory of this process's own cgroup in the hierarchy mounted at
 * `root`: the /proc/self/cgroup line whose controllers include
 * `controller` (v1), or the unified one ("0::", controller NULL). Where
 * that path is not below `root` here (a container that sees its own
 * cgroup as the mount's root), or the line is missing: `root`. The jail's
 * cgroup goes inside it, so the limits of the cgroup coldstart was
 * started in (a service's, a container's) still hold for the VMM. */
static void own_cgroup(const char *root, const char *controller,
		       char *dir, size_t len)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[PATH_MAX + 128], *list, *path;
	struct stat st;

	snprintf(dir, len, "%s", root);
	while (f && fgets(line, sizeof(line), f)) {
		list = strchr(line, ':');
		if (!list)
			continue;
		*list++ = '\0'; /* line: the hierarchy's ID */
		path = strchr(list, ':');
		if (!path || path[1] != '/')
			continue;
		*path++ = '\0';
		path[strcspn(path, "\n")] = '\0';
		if (controller ? !has_word(list, controller, ",")
			       : *list || strcmp(line, "0"))
			continue;
		if (strcmp(path, "/") &&
		    (size_t)snprintf(dir, len, "%s%s", root, path) < len &&
		    stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
			break;
		snprintf(dir, len, "%s", root);
		break;
	}
	if (f)
		fclose(f);
}

/* The v1 hierarchy of controller `name` at CG_ROOT/name, where systemd
 * and the other init systems mount it (or link it, cpu to cpu,cpuacct),
 * with the control file `file` the limit needs: its coldstart-<pid>,
 * in this process's own cgroup there. */
static int make_v1_cgroup(const char *opt, const char *name,
			  const char *file, char *path)
{
	char root[64], ctl[128], dir[PATH_MAX];

	snprintf(root, sizeof(root), CG_ROOT "/%s", name);
	snprintf(ctl, sizeof(ctl), "%s/%s", root, file);
	if (access(ctl, F_OK) < 0)
		return err__set(ENOENT, "--jail: %s: no cgroup v2 at " CG_ROOT
				" (no cgroup.controllers) and no cgroup v1 %s "
				"hierarchy at %s (no %s)", opt, name, root,
				file);
	own_cgroup(root, name, dir, sizeof(dir));
	return make_cgroup(dir, path);
}

/* Lets the children of v2 cgroup `dir` have each controller of `want`
 * (space-separated) that its cgroup.subtree_control lacks, in one write,
 * which Linux applies whole or not at all; -errno of a refused write:
 * where processes are in `dir` (v2 gives domain controllers such as
 * memory to the children of a group without processes only, the root
 * aside: EBUSY, or EOPNOTSUPP), or ENOENT where `dir`'s parent does not
 * give it one. */
static int delegate(const char *dir, const char *want)
{
	char path[PATH_MAX + 32], have[256] = "", w[32], text[64] = "";
	size_t len = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", dir);
	f = fopen(path, "re");
	if (!f || !fgets(have, sizeof(have), f))
		have[0] = '\0';
	if (f)
		fclose(f);
	have[strcspn(have, "\n")] = '\0';
	for (const char *p = want; sscanf(p, "%31s", w) == 1;
	     p += strspn(p, " "), p += strlen(w), p += strspn(p, " "))
		if (!has_word(have, w, " ") && len < sizeof(text))
			len += snprintf(text + len, sizeof(text) - len, "%s+%s",
					len ? " " : "", w);
	return len ? write_file(dir, "cgroup.subtree_control", text) : 0;
}

/* Processes are in cgroup `dir` (its cgroup.procs lists one). */
static bool has_procs(const char *dir)
{
	char path[PATH_MAX + 16], line[32];
	FILE *f;
	bool any;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	any = f && fgets(line, sizeof(line), f);
	if (f)
		fclose(f);
	return any;
}

/* Why v2 cgroup `dir` could not give its children a controller, its
 * delegate() having failed with `err`. */
static const char *why_no_controllers(const char *dir, int err)
{
	/* Linux checks what the parent gives before the processes: ENOENT
	 * names the cause even where processes are in `dir` too (as this
	 * process is in its own group) */
	if (err == -ENOENT)
		return "its parent does not give them to it (its "
		       "cgroup.controllers)";
	if (has_procs(dir))
		return "processes are in it, and cgroup v2 gives controllers "
		       "to the children of a group without processes only";
	return strerror(-err);
}

/* The v2 cgroup: coldstart-<pid> in this process's own cgroup, or, where
 * that cannot give its children the controllers the limits need, in the
 * nearest ancestor that can (said on stderr: the limits of the groups
 * in between do not hold for the VMM). */
static int make_v2_cgroup(const struct jail_opts *o, char *path)
{
	char own[PATH_MAX], dir[PATH_MAX], want[16] = "";
	int ret, first = 0;

	if (o->cpus > 0)
		strcat(want, "cpu ");
	if (o->memory)
		strcat(want, "memory ");
	own_cgroup(CG_ROOT, NULL, own, sizeof(own));
	snprintf(dir, sizeof(dir), "%s", own);
	while ((ret = delegate(dir, want)) < 0) {
		first = first ? first : ret;
		if (!strcmp(dir, CG_ROOT))
			return err__set(-first, "--jail: --cpus/--memory: no "
					"cgroup v2 group from this process's "
					"own %s up to the root seen here, "
					CG_ROOT ", can let a child have the "
					"%scontroller(s): %s: %s", own, want,
					own, why_no_controllers(own, first));
		*strrchr(dir, '/') = '\0';
	}
	if (first)
		fprintf(stderr, "coldstart: --jail: the VMM's cgroup is made "
			"in %s, not in this process's own %s, which cannot "
			"let a child have the %scontroller(s): %s; the limits "
			"of the groups in between do not hold for it\n", dir,
			own, want, why_no_controllers(own, first));
	return make_cgroup(dir, path);
}

static int cgroup_create(const struct jail_opts *o)
{
	char text[64];
	bool v2 = access(CG_ROOT "/cgroup.controllers", F_OK) == 0;
	char *cpu = cg_paths[0], *mem = v2 ? cg_paths[0] : cg_paths[1];
	/* rounded: 0.29 CPUs is 28999.999... us of each period */
	long long quota = (long long)(o->cpus * CFS_PERIOD + 0.5);
	int ret = 0;

	if (v2)
		ret = make_v2_cgroup(o, cpu);
	if (ret == 0 && o->cpus > 0 && v2) {
		snprintf(text, sizeof(text), "%lld %d", quota, CFS_PERIOD);
		ret = write_file(cpu, "cpu.max", text);
	} else if (ret == 0 && o->cpus > 0) {
		ret = make_v1_cgroup("--cpus", "cpu", "cpu.cfs_quota_us", cpu);
		snprintf(text, sizeof(text), "%d", CFS_PERIOD);
		if (ret == 0)
			ret = write_file(cpu, "cpu.cfs_period_us", text);
		snprintf(text, sizeof(text), "%lld", quota);
		if (ret == 0)
			ret = write_file(cpu, "cpu.cfs_quota_us", text);
	}
	if (ret == 0 && o->memory) {
		if (!v2)
			ret = make_v1_cgroup("--memory", "memory",
					     "memory.limit_in_bytes", mem);
		snprintf(text, sizeof(text), "%llu",
			 (unsigned long long)o->memory);
		if (ret == 0)
			ret = write_file(mem, v2 ? "memory.max"
					 : "memory.limit_in_bytes", text);
	}
	return ret;
}

/* Removes the cgroups. EBUSY is retried for a second: KVM's worker
 * thread of the VM (kvm-nx-lpage-recovery) is in them until the VM's
 * last reference is gone, which can be just after the VMM's exit. */
static void cgroup_remove(void)
{
	for (int i = 0; i < 2; i++) {
		int tries = 0, ret;

		if (!cg_paths[i][0])
			continue;
		while ((ret = rmdir(cg_paths[i])) < 0 && errno == EBUSY &&
		       ++tries < 50)
			usleep(20000);
		if (ret < 0 && errno != ENOENT)
			fprintf(stderr, "coldstart: --jail: cgroup %s stays: "
				"%s\n", cg_paths[i], strerror(errno));
	}
}

static int cgroup_join(void)
{
	for (int i = 0; i < 2; i++)
		if (cg_paths[i][0] &&
		    write_file(cg_paths[i], "cgroup.procs", "0") < 0)
			return -EIO;
	return 0;
}

/* The parent forwards these signals; the child, until the command sets
 * its handlers, ends by them as their default action would. */
static void on_signal(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
	else
		_exit(128 + sig);
}

/* Removes the private DIR (empty again), by its name in its parent. */
static void remove_private(void)
{
	if (private_parent < 0)
		return;
	unlinkat(private_parent, strrchr(pending.dir, '/') + 1, AT_REMOVEDIR);
	close(private_parent);
	private_parent = -1;
}

void jail__remove_after(const char *path)
{
	struct stat st;

	if (nr_sockets == sizeof(sockets) / sizeof(*sockets) ||
	    strlen(path) >= sizeof(sockets[0].path))
		return;
	snprintf(sockets[nr_sockets].path, sizeof(sockets[0].path), "%s",
		 path);
	sockets[nr_sockets++].existed = lstat(path, &st) == 0;
}

static void remove_sockets(void)
{
	struct stat st;

	for (unsigned int i = 0; i < nr_sockets; i++)
		if (!sockets[i].existed && lstat(sockets[i].path, &st) == 0 &&
		    S_ISSOCK(st.st_mode))
			unlink(sockets[i].path);
}

/* The parent's side: waits, passes the status through, cleans up. */
static int wait_child(pid_t pid)
{
	int status = 0;

	child_pid = pid;
	for (size_t i = 0; i < sizeof(ended_by) / sizeof(*ended_by); i++)
		signal(ended_by[i], on_signal);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	remove_sockets();
	cgroup_remove();
	/* the child's mount point, its mount gone with it */
	unlinkat(pending.dir_fd, "proc", AT_REMOVEDIR);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* A private DIR: made in /tmp, where the sticky bit keeps others from
 * renaming or removing it, then opened and checked as a given one; its
 * parent kept open to remove it by name there. */
static int make_private(void)
{
	static char dir[] = "/tmp/coldstart-jail-XXXXXX";
	int ret;

	if (!mkdtemp(dir))
		return err__sys(errno, "--jail: mkdtemp %s", dir);
	pending.dir = dir;
	ret = chmod(dir, 0711) < 0 ? err__sys(errno, "--jail %s: chmod", dir)
				   : open_checked(&pending);
	if (ret == 0)
		private_parent = openat(pending.dir_fd, "..",
					O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (ret == 0 && private_parent < 0)
		ret = err__sys(errno, "--jail %s: its parent", dir);
	if (ret < 0)
		rmdir(dir); /* ours, in sticky /tmp: not swapped */
	return ret;
}

/* The parent, once the child is gone or was never made. */
static void parent_done(void)
{
	remove_private();
	if (pending.dir_fd >= 0)
		close(pending.dir_fd);
	pending.dir_fd = -1;
}

int jail__start(const struct jail_opts *o, int *exit_code)
{
	pid_t pid;
	int ret, own_ns;

	if (!o->dir && !o->private_dir)
		return 0;
	pending = *o;
	if (o->private_dir)
		ret = make_private();
	else
		ret = pending.dir_fd < 0 ? open_checked(&pending) : 0;
	if (ret < 0)
		return ret;
	ret = o->limit_given ? cgroup_create(o) : 0;
	/* the parent returns to its own after the fork: one whose init has
	 * exited refuses new processes (LeakSanitizer's tracer at exit) */
	own_ns = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
	if (ret == 0 && own_ns < 0)
		ret = err__sys(errno, "--jail: /proc/self/ns/pid");
	if (ret == 0 && unshare(CLONE_NEWPID) < 0)
		ret = err__sys(errno, "--jail %s: unshare(CLONE_NEWPID)",
			       pending.dir);
	fflush(NULL);
	pid = ret == 0 ? fork() : -1;
	if (ret == 0 && pid < 0)
		ret = err__sys(errno, "--jail %s: fork", pending.dir);
	if (pid != 0 && own_ns >= 0) /* best effort: for the parent's forks */
		setns(own_ns, CLONE_NEWPID);
	if (own_ns >= 0)
		close(own_ns);
	if (ret < 0 || pid > 0) {
		if (ret == 0)
			*exit_code = wait_child(pid);
		else
			cgroup_remove();
		parent_done();
		return ret < 0 ? ret : 1;
	}
	/* the child: PID 1 of the new namespace, gone if the parent dies;
	 * as PID 1 it gets only the signals it handles */
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (private_parent >= 0) /* a way out of the jail: never kept */
		close(private_parent);
	private_parent = -1;
	for (size_t i = 0; i < sizeof(ended_by) / sizeof(*ended_by); i++)
		signal(ended_by[i], on_signal);
	if (cgroup_join() < 0)
		return -EIO;
	is_pending = true;
	return 0;
}

static int fail(const struct jail_opts *o, const char *step)
{
	return err__sys(errno, "--jail %s: %s", o->dir, step);
}

/* The mount namespace and the new root, from DIR's descriptor alone:
 * DIR is the working directory before the new namespace (which carries
 * the working directory over, not other descriptors), a copy of its
 * mount tree is attached on it (open_tree, move_mount) and entered by
 * that copy's descriptor, then pivoted into with the old root stacked
 * under it and detached, and a fresh /proc of the new PID namespace is
 * mounted (the memory figures read /proc/self). */
static int enter_root(const struct jail_opts *o)
{
	int tree;

	if (fchdir(o->dir_fd) < 0)
		return fail(o, "fchdir");
	if (unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC |
		    CLONE_NEWUTS) < 0)
		return fail(o, "unshare(mount, network, IPC, UTS)");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return fail(o, "making mounts private");
	tree = open_tree(AT_FDCWD, ".", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
			 AT_RECURSIVE);
	if (tree < 0)
		return fail(o, "open_tree (a bind mount of it)");
	if (move_mount(tree, "", AT_FDCWD, ".", MOVE_MOUNT_F_EMPTY_PATH) < 0 ||
	    fchdir(tree) < 0) {
		close(tree);
		return fail(o, "bind mount on itself");
	}
	close(tree);
	if (mkdir("proc", 0555) < 0 && errno != EEXIST)
		return fail(o, "mkdir proc");
	/* pivot_root(".", "."): the old root ends up under the new one,
	 * at the same place; it is detached at once (no directory left) */
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		return fail(o, "pivot_root");
	if (umount2(".", MNT_DETACH) < 0)
		return fail(o, "unmounting the old root");
	if (chdir("/") < 0)
		return fail(o, "chdir /");
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL) < 0)
		return fail(o, "mounting /proc");
	if (sethostname("coldstart", 9) < 0)
		return fail(o, "sethostname");
	return 0;
}

/* The bounding set first (needs CAP_SETPCAP), then the ids (which
 * clear the permitted and effective sets), then whatever is left. */
static int drop_privileges(const struct jail_opts *o)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct none[2] = { { 0 } };

	for (int cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
			return fail(o, "PR_CAPBSET_DROP");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 &&
	    errno != EINVAL)
		return fail(o, "clearing ambient capabilities");
	if (setgroups(0, NULL) < 0)
		return fail(o, "setgroups(0)");
	if (setresgid(o->gid, o->gid, o->gid) < 0)
		return fail(o, "setresgid");
	if (setresuid(o->uid, o->uid, o->uid) < 0)
		return fail(o, "setresuid");
	if (syscall(SYS_capset, &h, none) < 0)
		return fail(o, "capset (clearing capabilities)");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return fail(o, "PR_SET_NO_NEW_PRIVS");
#if defined(__SANITIZE_ADDRESS__)
	/* the uid change made the process non-dumpable, and LeakSanitizer's
	 * check at exit could then not ptrace its threads: test builds only */
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
#endif
	return 0;
}

int jail__enter(const struct jail_opts *o)
{
	const char *test = getenv("COLDSTART_JAIL_SELFTEST");
	int ret, fd = -1;

	if (test) {
		fd = open(test, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			return err__sys(errno, "COLDSTART_JAIL_SELFTEST %s",
					test);
	}
	if (uffd_dev < 0) /* absent on kernels before 6.1: fine */
		uffd_dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	ret = enter_root(o);
	/* DIR's descriptor reaches the host's tree by "..": never kept */
	close(o->dir_fd);
	if (ret == 0)
		ret = drop_privileges(o);
	if (fd >= 0 && ret == 0) {
		jail__selftest(fd);
		selftest_fd = fd;
	} else if (fd >= 0) {
		close(fd);
	}
	return ret;
}

void jail__selftest_threads(void)
{
	if (selftest_fd < 0 || gettid() != getpid())
		return;
	jail__selftest_tasks(selftest_fd);
	selftest_fd = -1;
}

int jail__enter_pending(void)
{
	int ret;

	if (!is_pending)
		return 0;
	is_pending = false;
	ret = jail__enter(&pending);
	pending.dir_fd = -1;
	entered = ret == 0;
	return ret;
}

int jail__uffd_dev(void)
{
	return uffd_dev;
}

bool jail__pending(void)
{
	return is_pending;
}

const char *jail__dir(void)
{
	return entered ? pending.dir : NULL;
}
