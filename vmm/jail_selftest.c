/* The jail's test hook: what a jailed VMM sees, written to the file
 * COLDSTART_JAIL_SELFTEST names right after it entered the jail, one
 * KEY=VALUE per line (tests/cli/test_cli_jail.sh reads them); a
 * cgroup_in=PATH line for each coldstart-PID cgroup it is in. */
#include "jail.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
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
	close(fd);
}

