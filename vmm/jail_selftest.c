/* The jail's test hook: what a jailed VMM sees, written to the file
 * COLDSTART_JAIL_SELFTEST names right after it entered the jail, one
 * KEY=VALUE per line (tests/cli/test_cli_jail.sh reads them); a
 * cgroup_in=PATH line for each coldstart-PID cgroup it is in; once the
 * first VM's threads are made, a thread=... line for each thread and
 * threads_outside=N, those whose view is not the jail's. */
#include "jail.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <linux/capability.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

void jail__selftest(int fd)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct c[2] = { { 0 } };
	int host = open("/etc/passwd", O_RDONLY | O_CLOEXEC), host_err = errno;
	int self = open("/proc/self/smaps_rollup", O_RDONLY | O_CLOEXEC);
	FILE *cg = fopen("/proc/self/cgroup", "re");
	char line[512], in[1024] = "", *p;
	size_t len = 0;

	/* the coldstart-PID cgroups it is in, as paths from their roots */
	while (cg && fgets(line, sizeof(line), cg)) {
		p = strchr(line, ':');
		p = p ? strchr(p + 1, ':') : NULL;
		if (!p || !strstr(p, "/coldstart-"))
			continue;
		p[1 + strcspn(p + 1, "\n")] = '\0';
		if (len < sizeof(in))
			len += (size_t)snprintf(in + len, sizeof(in) - len,
						"cgroup_in=%s\n", p + 1);
	}
	if (cg)
		fclose(cg);
	syscall(SYS_capget, &h, c);
	dprintf(fd, "uid=%u\ngid=%u\npid=%d\ncaps=%08x%08x\nnet=",
		(unsigned int)getuid(), (unsigned int)getgid(), (int)getpid(),
		c[1].effective | c[1].permitted,
		c[0].effective | c[0].permitted);
	for (i = ifs; i && i->if_index; i++)
		dprintf(fd, "%s%s", i == ifs ? "" : ",", i->if_name);
	dprintf(fd, "\nhost_file=%s\nproc_self=%s\ncgroup=%s\n"
		"no_new_privs=%d\n",
		host >= 0 ? "opened" : strerrorname_np(host_err),
		self >= 0 ? "ok" : "unreadable", in[0] ? "joined" : "none",
		prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
	dprintf(fd, "%s", in);
	if (ifs)
		if_freenameindex(ifs);
	if (host >= 0)
		close(host);
	if (self >= 0)
		close(self);
}


/* What decides whether a thread is jailed: its root and namespaces (by
 * inode: a thread made before the jail keeps the host's), its ids,
 * capabilities and no_new_privs (/proc/self/task/TID/status). */
struct task_view {
	ino_t ns[5]; /* root, mnt, net, ipc, uts */
	char uid[64], eff[20], prm[20], bnd[20], nnp[4], name[20];
};

static const char *const task_ns[] = { "root", "ns/mnt", "ns/net",
				       "ns/ipc", "ns/uts" };

/* KEY's value in a status line, its tabs made commas (Uid's four). */
static void status_value(const char *line, const char *key, char *out,
			 size_t len)
{
	size_t n = strlen(key);

	if (strncmp(line, key, n))
		return;
	line += n + strspn(line + n, "\t ");
	snprintf(out, len, "%.*s", (int)strcspn(line, "\n"), line);
	for (char *p = out; (p = strchr(p, '\t')); )
		*p = ',';
}

static void task_view(const char *tid, struct task_view *v)
{
	char path[96], line[256];
	struct stat st;
	FILE *f;

	memset(v, 0, sizeof(*v));
	for (size_t i = 0; i < sizeof(task_ns) / sizeof(*task_ns); i++) {
		int fd;

		snprintf(path, sizeof(path), "/proc/self/task/%s/%s", tid,
			 task_ns[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && fstat(fd, &st) == 0)
			v->ns[i] = st.st_ino;
		if (fd >= 0)
			close(fd);
	}
	snprintf(path, sizeof(path), "/proc/self/task/%s/status", tid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		status_value(line, "Name:", v->name, sizeof(v->name));
		status_value(line, "Uid:", v->uid, sizeof(v->uid));
		status_value(line, "CapEff:", v->eff, sizeof(v->eff));
		status_value(line, "CapPrm:", v->prm, sizeof(v->prm));
		status_value(line, "CapBnd:", v->bnd, sizeof(v->bnd));
		status_value(line, "NoNewPrivs:", v->nnp, sizeof(v->nnp));
	}
	if (f)
		fclose(f);
}

static bool no_caps(const char *mask)
{
	return mask[0] && strspn(mask, "0") == strlen(mask);
}

void jail__selftest_tasks(int fd)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	struct task_view me, t;
	char self[16];
	int n = 0, outside = 0;

	snprintf(self, sizeof(self), "%d", (int)gettid());
	task_view(self, &me);
	while (d && (e = readdir(d))) {
		bool same;

		if (e->d_name[0] == '.')
			continue;
		task_view(e->d_name, &t);
		same = !memcmp(t.ns, me.ns, sizeof(t.ns)) && me.ns[0] &&
		       !strcmp(t.uid, me.uid) && no_caps(t.eff) &&
		       no_caps(t.prm) && no_caps(t.bnd) && !strcmp(t.nnp, "1");
		dprintf(fd, "thread=%s name=%s uid=%s caps=%s/%s/%s nnp=%s "
			"root_ns=%s\n", e->d_name, t.name, t.uid, t.eff, t.prm,
			t.bnd, t.nnp, !memcmp(t.ns, me.ns, sizeof(t.ns))
			? "jail" : "other");
		n++;
		outside += !same;
	}
	if (d)
		closedir(d);
	dprintf(fd, "threads=%d\nthreads_outside=%d\n", n, outside);
	close(fd);
}
