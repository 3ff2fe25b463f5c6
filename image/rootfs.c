/* `coldstart image build --rootfs`: a Debian root file system (debootstrap
 * minbase plus python3) with the guest agent, as an ext4 image made by
 * mkfs.ext4 -d: no loop mount, no privileges beyond debootstrap's own. */
#include "image.h"
#include "image_int.h"

#include "init_image.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Free space left in the image for what guests write (in MiB), beyond a
 * quarter of what the files use. */
#define ROOTFS_SLACK_MIB 128

static uint64_t tree_bytes;

static int add_size(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	(void)path;
	(void)type;
	(void)ftw;
	tree_bytes += (uint64_t)st->st_blocks * 512;
	return 0;
}

/* Empties dir (apt's downloads and lists: not needed in a guest). */
static void empty_dir(const char *root, const char *dir)
{
	char path[PATH_MAX];

	if (output__pathf(path, sizeof(path), "%s/%s", root, dir) < 0)
		return;
	image__remove_tree(path);
	mkdir(path, 0755);
}

static int install_agent(const char *root)
{
	char path[PATH_MAX];
	int fd, ret;

	ret = output__pathf(path, sizeof(path), "%s/usr/sbin/coldstart-agent",
			    root);
	if (ret < 0)
		return ret;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0755);
	if (fd < 0)
		return err__sys(errno, "creating %s", path);
	ret = image__write_all(fd, agent_image_start,
			       (size_t)(agent_image_end - agent_image_start),
			       path);
	close(fd);
	return ret;
}

/* The installed version of python3, for the manifest. */
static void python_version(const char *root, char *out, size_t size)
{
	char admin[PATH_MAX];
	char *argv[] = { "dpkg-query", "--admindir", admin, "-W",
			 "-f=${Version}", "python3", NULL };

	out[0] = '\0';
	if (output__pathf(admin, sizeof(admin), "%s/var/lib/dpkg", root) == 0)
		image__spawn_ok(argv, NULL, out, size);
}

static int make_ext4(const char *root, const char *image)
{
	char size[32];
	char *argv[] = { "mkfs.ext4", "-q", "-F", "-m", "0", "-L",
			 "coldstart-root", "-E", "root_owner=0:0", "-d",
			 (char *)root, (char *)image, size, NULL };
	uint64_t mib;

	tree_bytes = 0;
	if (nftw(root, add_size, 16, FTW_PHYS) < 0)
		return err__sys(errno, "measuring %s", root);
	mib = (tree_bytes + tree_bytes / 4) / (1024 * 1024) + ROOTFS_SLACK_MIB;
	snprintf(size, sizeof(size), "%lluM", (unsigned long long)mib);
	fprintf(stderr, "coldstart image: writing %s (%s, files %llu MiB)\n",
		IMAGE_ROOTFS, size,
		(unsigned long long)(tree_bytes / (1024 * 1024)));
	return image__spawn_ok(argv, NULL, NULL, 0);
}

int image__build_rootfs(const char *dir, const char *tmp, const char *mirror,
			json_t **entry)
{
	char root[PATH_MAX], image[PATH_MAX], python[64];
	char *argv[] = { "debootstrap", "--variant=minbase",
			 "--include=" IMAGE_ROOTFS_PACKAGES, IMAGE_ROOTFS_SUITE,
			 root, (char *)(mirror ? mirror : IMAGE_ROOTFS_MIRROR),
			 NULL };
	int ret;

	*entry = NULL;
	if (geteuid() != 0)
		return err__set(EPERM, "--rootfs needs root (debootstrap "
				"installs packages as root into the tree)");
	ret = image__need_tool("debootstrap", "debootstrap");
	if (ret == 0)
		ret = image__need_tool("mkfs.ext4", "e2fsprogs");
	if (ret == 0)
		ret = output__pathf(root, sizeof(root), "%s/rootfs", tmp);
	if (ret == 0)
		ret = output__pathf(image, sizeof(image), "%s/%s", dir,
				    IMAGE_ROOTFS);
	if (ret < 0)
		return ret;
	fprintf(stderr, "coldstart image: debootstrap %s (minbase, %s) from "
		"%s; this takes a few minutes\n", IMAGE_ROOTFS_SUITE,
		IMAGE_ROOTFS_PACKAGES, argv[5]);
	ret = image__spawn_ok(argv, NULL, NULL, 0);
	if (ret == 0)
		ret = install_agent(root);
	if (ret < 0)
		return ret;
	empty_dir(root, "var/cache/apt/archives");
	empty_dir(root, "var/lib/apt/lists");
	python_version(root, python, sizeof(python));
	ret = make_ext4(root, image);
	if (ret == 0)
		*entry = file_entry(dir, IMAGE_ROOTFS);
	if (ret == 0 && !*entry)
		ret = err__set(EIO, "hashing %s", image);
	if (ret == 0)
		json_object_update_new(
			*entry, json_pack("{s:s, s:s, s:s, s:s, s:s}", "suite",
					  IMAGE_ROOTFS_SUITE, "variant",
					  "minbase", "packages",
					  IMAGE_ROOTFS_PACKAGES, "python3",
					  python, "agent",
					  "/usr/sbin/coldstart-agent"));
	return ret;
}
