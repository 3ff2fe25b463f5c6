/* The VMM's jail (--jail DIR): once its files are open, the process gets
 * new mount, PID, network, IPC and UTS namespaces, an empty root (DIR)
 * with only a fresh /proc, optional cgroup limits, and a plain user with
 * no capabilities and no_new_privs.
 *
 * Two steps. jail__start() runs before KVM is touched: it creates the
 * cgroup, enters a new PID namespace and forks, so the VMM runs as PID 1
 * of that namespace while the parent waits, passes its exit status
 * through and cleans up. jail__enter() runs in the child once setup is
 * done and before any thread of the VMM exists (a new mount namespace
 * and a uid drop cover only the calling thread's view otherwise): the
 * first thread start calls jail__enter_pending(), which vm__start, the
 * uffd handler's start and a pool's refill workers do. */
#ifndef COLDSTART_JAIL_H
#define COLDSTART_JAIL_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define JAIL_DEFAULT_ID 65534 /* nobody / nogroup */

struct jail_opts {
	const char *dir;  /* NULL: no jail */
	bool off;         /* --jail off given (pool serve's default is on) */
	bool private_dir; /* jail__start creates DIR and removes it after */
	int dir_fd;       /* DIR, opened and checked by jail__check; -1 */
	uid_t uid;
	gid_t gid;
	double cpus;      /* 0: no CPU limit */
	uint64_t memory;  /* bytes, 0: no memory limit */
	bool id_given, limit_given;
};

/* getopt_long codes and rows of the jail's options, for the commands'
 * option tables. */
enum {
	JAIL_OPT_DIR = 0x4a00, JAIL_OPT_UID, JAIL_OPT_GID, JAIL_OPT_CPUS,
	JAIL_OPT_MEMORY,
};
#define JAIL_LONG_OPTIONS \
	{ "jail", required_argument, NULL, JAIL_OPT_DIR }, \
	{ "uid", required_argument, NULL, JAIL_OPT_UID }, \
	{ "gid", required_argument, NULL, JAIL_OPT_GID }, \
	{ "cpus", required_argument, NULL, JAIL_OPT_CPUS }, \
	{ "memory", required_argument, NULL, JAIL_OPT_MEMORY }

/* The --help lines of those options. */
#define JAIL_HELP \
	"  --jail DIR          after setup, confine the VMM: new namespaces "\
	"(mount, PID,\n                      network, IPC, UTS), DIR (empty) "\
	"as its root, no\n                      capabilities, no_new_privs; "\
	"off: no jail\n"\
	"  --uid N, --gid N    the jailed VMM's user and group (default "\
	"65534, nobody)\n"\
	"  --cpus N            jailed: cgroup CPU limit, N CPUs (1.5 allowed)\n"\
	"  --memory SIZE       jailed: cgroup memory limit (e.g. 512M)\n"

/* Sets everything to no jail, uid and gid 65534. */
void jail__init(struct jail_opts *o);

/* Parses one of the options above (`opt`, a JAIL_OPT_* code): 0, -EINVAL
 * with a message, or 1 when `opt` is not a jail option. */
int jail__parse_option(struct jail_opts *o, int opt, const char *arg);

/* The usage checks, before KVM is touched: --uid, --gid, --cpus and
 * --memory need a jail; DIR exists, is a directory, not a symbolic link,
 * and is empty; DIR and its parent are owned by root or this user, and
 * neither is writable by group or others (the parent may be, with the
 * sticky bit, as /tmp). DIR is opened once, here, into o->dir_fd: the
 * jail works from that descriptor and never looks the path up again.
 * 0 or -errno with a message. */
int jail__check(struct jail_opts *o);

/* Without a jail: returns 0. With one: creates the cgroup if limits are
 * asked for (and DIR if private), enters a new PID namespace and forks.
 * The child returns 0 (it joined the cgroup; it goes on with setup and
 * will call jail__enter_pending()); the parent waits for it, forwards
 * SIGINT, SIGTERM and SIGHUP, removes what it created, sets *exit_code
 * (the child's, or 128 + signal) and returns 1. -errno with a message
 * when a step fails. */
int jail__start(const struct jail_opts *o, int *exit_code);

/* Before jail__start: `path` is a Unix socket the VMM will bind before
 * the jail (a vsock device's); once jailed it cannot reach it, so the
 * parent removes it after the child exits, if it is a socket there and
 * nothing was there before. At most two. */
void jail__remove_after(const char *path);

/* Files opened read-only before the jail, for what opens them by path
 * after it (a pool's VMs' drive images and snapshot disk layers, made
 * by its refill workers once the pool is jailed): jail__keep_file()
 * opens `path` with `flags` (read-only, no O_CREAT) and keeps it;
 * jail__open() of that path with those flags then returns a duplicate
 * of it (sharing its file offset: readers use pread), and is open()
 * for anything else. 0, or -errno with a message; at most
 * JAIL_MAX_FILES (jail_files.c). */
#define JAIL_MAX_FILES 256
int jail__keep_file(const char *path, int flags);
int jail__open(const char *path, int flags);

/* Enters the jail (the calling process must be single-threaded): new
 * mount, network, IPC and UTS namespaces, cgroup join, pivot_root into
 * DIR (o->dir_fd, which it closes: it would reach the host's tree), a
 * fresh /proc, the uid/gid drop, no capabilities, no_new_privs.
 * 0 or -errno with a message naming the step ("--jail DIR: pivot_root:
 * ..."). */
int jail__enter(const struct jail_opts *o);

/* Enters the jail jail__start() prepared in this process, once; 0 and
 * nothing done when there is none or it was entered. */
int jail__enter_pending(void);

/* Whether jail__start() prepared a jail not entered yet: the process
 * must stay single-threaded until then. */
bool jail__pending(void);

/* The host's path of the directory this process is jailed in (it sees
 * it as /), or NULL when it entered no jail. */
const char *jail__dir(void);

/* Test hook (jail_selftest.c): writes to `fd` what the process sees:
 * uid, gid, pid, capabilities, network interfaces, whether a host file
 * (/etc/passwd) opens, /proc/self, its cgroup, no_new_privs. */
void jail__selftest(int fd);

/* Test hook: writes to `fd` each thread of the process (/proc/self/task)
 * against the calling one: its uid, capabilities, no_new_privs, root
 * and namespaces, and how many differ (threads_outside=N). Closes fd. */
void jail__selftest_tasks(int fd);

/* With the hook on, once a jail was entered: jail__selftest_tasks() on
 * the file jail__enter wrote, once, from the process's first thread (a
 * VM's start calls it when its threads are made; other threads: no-op). */
void jail__selftest_threads(void);

/* /dev/userfaultfd opened before the jail (uffds for VMs made later, by
 * USERFAULTFD_IOC_NEW), or -1. */
int jail__uffd_dev(void);

#endif
