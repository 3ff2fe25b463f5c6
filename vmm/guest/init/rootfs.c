/* coldstart.root: loads the virtio modules the image packed, mounts the
 * disk, moves the pseudo file systems over, frees the initramfs and makes
 * the disk the root, then becomes the guest agent (or the user's init),
 * or returns to run coldstart.run there. */
#include "rootfs.h"

#include "err.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NEWROOT "/newroot"
/* How long the disk may take to appear after its driver loads. */
#define DEVICE_WAIT_MS 30000

/* Loads what the image packed. A module that does not load (another
 * kernel than the image's, with the drivers built in) is not an error
 * yet: the disk not appearing is; its message then names the module. */
static void load_modules(char *why, size_t size)
{
	char path[128];

	why[0] = '\0';
	for (size_t i = 0; i < sizeof(guest_modules) / sizeof(*guest_modules);
	     i++) {
		int fd;

		/* a module built into the kernel is simply absent */
		snprintf(path, sizeof(path), "%s/%s", INIT_MODULES_DIR,
			 strrchr(guest_modules[i], '/') + 1);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (syscall(SYS_finit_module, fd, "", 0) < 0 &&
		    errno != EEXIST && !why[0])
			snprintf(why, size, "; loading %s failed: %s", path,
				 strerror(errno));
		close(fd);
	}
}

static int wait_for_device(const char *dev, const char *why)
{
	struct timespec ms = { 0, 1000000 };
	struct stat st;

	for (int i = 0; i < DEVICE_WAIT_MS; i++) {
		if (stat(dev, &st) == 0 && S_ISBLK(st.st_mode))
			return 0;
		nanosleep(&ms, NULL);
	}
	return err__set(ENODEV, "%s did not appear within %d s%s", dev,
			DEVICE_WAIT_MS / 1000, why);
}

/* Removes everything of the initramfs under dirfd, never crossing into
 * another file system (the new root and the moved mounts). */
static void free_tree(int dirfd, dev_t dev)
{
	DIR *d = fdopendir(dirfd);
	struct dirent *de;

	if (!d) {
		close(dirfd);
		return;
	}
	while ((de = readdir(d))) {
		struct stat st;
		int sub;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    st.st_dev != dev)
			continue;
		if (S_ISDIR(st.st_mode)) {
			sub = openat(dirfd, de->d_name,
				     O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					     O_CLOEXEC);
			if (sub >= 0)
				free_tree(sub, dev);
		}
		unlinkat(dirfd, de->d_name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR
							      : 0);
	}
	closedir(d);
}

static int move_to_root(const char *what)
{
	char to[64];

	snprintf(to, sizeof(to), "%s%s", NEWROOT, what);
	mkdir(to, 0755);
	if (mount(what, to, NULL, MS_MOVE, NULL) < 0)
		return err__sys(errno, "moving %s to the new root", what);
	return 0;
}

static int make_root(void)
{
	struct stat st;
	int ret = 0, fd;

	ret = move_to_root("/dev");
	if (ret == 0)
		ret = move_to_root("/proc");
	if (ret == 0)
		ret = move_to_root("/sys");
	if (ret < 0)
		return ret;
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &st) == 0)
		free_tree(fd, st.st_dev);
	else if (fd >= 0)
		close(fd);
	if (chdir(NEWROOT) < 0 || mount(".", "/", NULL, MS_MOVE, NULL) < 0 ||
	    chroot(".") < 0 || chdir("/") < 0)
		return err__sys(errno, "making %s the root", NEWROOT);
	return 0;
}

/* A disk the VMM offers read-only (EROFS, or EACCES when the kernel
 * refuses to open it for writing) is mounted read-only. */
static int mount_root(const char *dev)
{
	if (mount(dev, NEWROOT, "ext4", 0, NULL) == 0)
		return 0;
	if ((errno == EROFS || errno == EACCES) &&
	    mount(dev, NEWROOT, "ext4", MS_RDONLY, NULL) == 0)
		return 0;
	return err__sys(errno, "mounting %s (ext4) on %s", dev, NEWROOT);
}

int init_rootfs__switch(const struct init_config *cfg)
{
	char port[16];
	char *agent_argv[] = { "coldstart-agent", "--port", port, "--signal",
			       NULL };
	char *init_argv[] = { (char *)cfg->init, NULL };
	char *envp[] = { "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:"
			 "/usr/bin:/sbin:/bin",
			 "HOME=/root", "TERM=linux", NULL };
	/* opened before the initramfs is freed: the agent runs from it */
	int agent = open(INIT_AGENT_PATH, O_RDONLY | O_CLOEXEC), ret;
	char why[256];

	if (agent < 0 && !cfg->init[0] && !cfg->has_run)
		return err__sys(errno, "opening %s", INIT_AGENT_PATH);
	load_modules(why, sizeof(why));
	ret = wait_for_device(cfg->root, why);
	if (ret == 0 && mkdir(NEWROOT, 0755) < 0 && errno != EEXIST)
		ret = err__sys(errno, "creating %s", NEWROOT);
	if (ret == 0)
		ret = mount_root(cfg->root);
	if (ret == 0)
		ret = make_root();
	/* coldstart.run: PID 1 stays ours, to run it and end the VM */
	if (ret < 0 || cfg->has_run)
		goto out;
	snprintf(port, sizeof(port), "%u", cfg->agent_port);
	if (cfg->init[0]) {
		execve(cfg->init, init_argv, envp);
		ret = err__sys(errno, "executing coldstart.init=%s", cfg->init);
	} else {
		fexecve(agent, agent_argv, envp);
		ret = err__sys(errno, "executing the guest agent");
	}
out:
	if (agent >= 0)
		close(agent);
	return ret;
}
