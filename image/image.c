/* `coldstart image build`: Debian's cloud kernel plus a busybox-static and
 * coldstart-init initramfs, cached with a manifest naming every input.
 * This file: building the image and installing it (its inputs:
 * image_inputs.c; its manifest: image_manifest.c). */
#include "image.h"
#include "image_int.h"
#include "output.h"

#include "cpio.h"
#include "err.h"
#include "guest/guest_initramfs.h"
#include "init_image.h"

#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The modules that make the same kernel the emulated KVM host of
 * `coldstart emulate`: KVM, and virtio for its scratch disk and shared
 * files, fuse and overlay for its root. */
static const char *const kvm_modules[] = {
	"kernel/virt/lib/irqbypass.ko",
	"kernel/arch/x86/kvm/kvm.ko",
	"kernel/arch/x86/kvm/kvm-amd.ko",
	"kernel/drivers/virtio/virtio_ring.ko",
	"kernel/drivers/virtio/virtio.ko",
	"kernel/drivers/virtio/virtio_pci_legacy_dev.ko",
	"kernel/drivers/virtio/virtio_pci_modern_dev.ko",
	"kernel/drivers/virtio/virtio_pci.ko",
	"kernel/drivers/block/virtio_blk.ko",
	"kernel/fs/fuse/fuse.ko",
	"kernel/fs/fuse/virtiofs.ko",
	"kernel/fs/overlayfs/overlay.ko",
};

static void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void progress(const char *fmt, ...)
{
	va_list ap;

	fputs("coldstart image: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];

	if (strlen(path) >= sizeof(buf))
		return err__set(ENAMETOOLONG, "path too long: %s", path);
	strcpy(buf, path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return err__sys(errno, "creating %s", buf);
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return err__sys(errno, "creating %s", buf);
	return 0;
}

/* Copies src to dst and syncs it; a missing src is -ENOENT. */
static int copy_file(const char *src, const char *dst)
{
	uint8_t buf[65536];
	int in = open(src, O_RDONLY | O_CLOEXEC), out, ret = 0;
	ssize_t n;

	if (in < 0)
		return err__sys(errno, "opening %s", src);
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0) {
		ret = err__sys(errno, "creating %s", dst);
		goto close_in;
	}
	while (ret == 0 && (n = read(in, buf, sizeof(buf))) != 0)
		ret = n < 0 ? err__sys(errno, "reading %s", src)
			    : image__write_all(out, buf, (size_t)n, dst);
	if (ret == 0 && fsync(out) < 0)
		ret = err__sys(errno, "syncing %s", dst);
	close(out);
close_in:
	close(in);
	return ret;
}

static int read_file(const char *path, void **data, size_t *size)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return err__sys(errno, "opening %s", path);
	if (fstat(fd, &st) < 0) {
		ret = err__sys(errno, "stat %s", path);
		goto out;
	}
	*size = (size_t)st.st_size;
	*data = malloc(*size ? *size : 1);
	if (!*data)
		ret = err__set(ENOMEM, "out of memory reading %s", path);
	else if (read(fd, *data, *size) != (ssize_t)*size)
		ret = err__set(EIO, "short read of %s", path);
	if (ret < 0 && *data) {
		free(*data);
		*data = NULL;
	}
out:
	close(fd);
	return ret;
}

/* Downloads the kernel package into tmp and unpacks it into tmp/deb. */
static int fetch_kernel(const struct inputs *in, const char *tmp)
{
	char deb[PATH_MAX], root[PATH_MAX], spec[512];
	/* As root apt drops to its _apt user, which cannot write into our
	 * private temporary directory; downloading as root is what it then
	 * does anyway, after a warning. */
	char *download[] = { "apt-get", "download", "-q",
			     "-o", "APT::Sandbox::User=root", spec, NULL };
	struct dirent *de;
	DIR *d;
	int ret;

	if (geteuid() != 0) { /* no sandbox user to switch to */
		download[3] = spec;
		download[4] = NULL;
	}

	/* Name and version: a glob or bare name could fetch another one. */
	snprintf(spec, sizeof(spec), "%s=%s", in->package, in->version);
	progress("downloading %s", spec);
	ret = image__spawn_ok(download, tmp, NULL, 0);
	if (ret < 0)
		return ret;
	d = opendir(tmp);
	if (!d)
		return err__sys(errno, "opening %s", tmp);
	deb[0] = '\0';
	while ((de = readdir(d)))
		if (strstr(de->d_name, ".deb"))
			output__pathf(deb, sizeof(deb), "%s/%s", tmp, de->d_name);
	closedir(d);
	if (!deb[0])
		return err__set(ENOENT, "apt-get download left no .deb in %s",
				tmp);
	output__pathf(root, sizeof(root), "%s/deb", tmp);
	progress("unpacking %s", strrchr(deb, '/') + 1);
	char *extract[] = { "dpkg-deb", "-x", deb, root, NULL };
	return image__spawn_ok(extract, NULL, NULL, 0);
}

/* The kernel release, from the package's boot/vmlinuz-RELEASE. */
static int find_release(const char *root, char *release, size_t size)
{
	char boot[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int ret = -ENOENT;

	output__pathf(boot, sizeof(boot), "%s/boot", root);
	d = opendir(boot);
	if (!d)
		return err__set(ENOENT, "the kernel package has no /boot");
	while ((de = readdir(d)) && ret < 0)
		if (!strncmp(de->d_name, "vmlinuz-", 8) &&
		    strlen(de->d_name + 8) < size) {
			strcpy(release, de->d_name + 8);
			ret = 0;
		}
	closedir(d);
	if (ret < 0)
		return err__set(ENOENT, "the kernel package has no "
				"boot/vmlinuz-*");
	return 0;
}

/* One symlink per busybox applet, in the directories it names. */
static int add_applets(struct cpio *c, int *count)
{
	char list[65536];
	char *argv[] = { BUSYBOX_PATH, "--list-full", NULL };
	int ret = image__spawn_ok(argv, NULL, list, sizeof(list));

	*count = 0;
	for (char *line = strtok(ret < 0 ? NULL : list, "\n"); line;
	     line = strtok(NULL, "\n")) {
		bool known = !strncmp(line, "bin/", 4) ||
			     !strncmp(line, "sbin/", 5) ||
			     !strncmp(line, "usr/bin/", 8) ||
			     !strncmp(line, "usr/sbin/", 9);

		if (!known || !strcmp(line, "bin/busybox"))
			continue; /* e.g. "linuxrc" at the root */
		ret = cpio__symlink(c, line, BUSYBOX_PATH);
		if (ret < 0)
			return ret;
		(*count)++;
	}
	if (ret == 0 && *count == 0)
		return err__set(EIO, "%s --list-full listed no applets",
				BUSYBOX_PATH);
	return ret;
}

/* The guest modules the kernel package has, into GUEST_MODULES_DIR
 * (a module built into another kernel is simply absent). */
static int add_guest_modules(struct cpio *c, const char *root,
			     const char *release)
{
	char src[PATH_MAX], dst[PATH_MAX];
	void *data = NULL;
	size_t size = 0;
	int ret = 0;

	for (size_t i = 0; ret == 0 && i < sizeof(guest_modules) /
						  sizeof(*guest_modules); i++) {
		ret = output__pathf(src, sizeof(src), "%s/lib/modules/%s/%s",
				    root, release, guest_modules[i]);
		if (ret < 0 || access(src, R_OK) < 0)
			continue;
		ret = output__pathf(dst, sizeof(dst), GUEST_MODULES_DIR "/%s",
				    strrchr(guest_modules[i], '/') + 1);
		if (ret == 0)
			ret = read_file(src, &data, &size);
		if (ret == 0)
			ret = cpio__file(c, dst, 0644, data, size);
		free(data);
		data = NULL;
	}
	return ret;
}

static int fill_initramfs(struct cpio *c, const char *root,
			  const char *release, int *applets)
{
	static const char *const dirs[] = { "bin", "dev", "etc", "lib",
					     "lib/modules",
					     GUEST_MODULES_DIR, "proc",
					     "root", "sbin", "sys", "tmp",
					     "usr", "usr/bin", "usr/sbin" };
	void *busybox = NULL;
	size_t size = 0;
	int ret = 0;

	for (size_t i = 0; ret == 0 && i < sizeof(dirs) / sizeof(*dirs); i++)
		ret = cpio__dir(c, dirs[i], strcmp(dirs[i], "tmp") ? 0755
								   : 01777);
	/* The kernel opens /dev/console for init before devtmpfs exists. */
	if (ret == 0)
		ret = cpio__chardev(c, "dev/console", 0600, 5, 1);
	if (ret == 0)
		ret = cpio__file(c, "init", 0755, init_image_start,
				 (size_t)(init_image_end - init_image_start));
	if (ret == 0)
		ret = cpio__file(c, GUEST_AGENT_FILE, 0755,
				 agent_image_start,
				 (size_t)(agent_image_end - agent_image_start));
	if (ret == 0)
		ret = add_guest_modules(c, root, release);
	if (ret == 0)
		ret = read_file(BUSYBOX_PATH, &busybox, &size);
	if (ret == 0)
		ret = cpio__file(c, "bin/busybox", 0755, busybox, size);
	free(busybox);
	if (ret == 0)
		ret = add_applets(c, applets);
	return ret;
}

static int write_initramfs(const char *path, const char *root,
			   const char *release, int *applets)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	struct cpio *c;
	int ret;

	if (fd < 0)
		return err__sys(errno, "creating %s", path);
	ret = cpio__open(&c, fd);
	if (ret == 0) {
		ret = fill_initramfs(c, root, release, applets);
		if (ret < 0)
			cpio__abort(c);
		else
			ret = cpio__finish(c);
	}
	if (ret == 0 && fsync(fd) < 0)
		ret = err__sys(errno, "syncing %s", path);
	close(fd);
	return ret;
}

/* Copies the KVM modules the package has into dir/modules and returns
 * their manifest entries in *out. */
static int module_entries(const char *dir, const char *root,
			  const char *release, json_t **out)
{
	char src[PATH_MAX], dst[PATH_MAX], name[PATH_MAX];
	json_t *mods = json_array(), *entry;
	int ret = mods ? 0 : err__set(ENOMEM, "out of memory");

	for (size_t i = 0; ret == 0 && i < sizeof(kvm_modules) /
						  sizeof(*kvm_modules); i++) {
		ret = output__pathf(src, sizeof(src), "%s/lib/modules/%s/%s", root,
			    release, kvm_modules[i]);
		if (ret == 0)
			ret = output__pathf(name, sizeof(name), "modules/%s",
				    strrchr(kvm_modules[i], '/') + 1);
		if (ret == 0)
			ret = output__pathf(dst, sizeof(dst), "%s/%s", dir, name);
		if (ret < 0 || access(src, R_OK) < 0)
			continue; /* another kernel may build KVM in */
		ret = copy_file(src, dst);
		entry = ret == 0 ? file_entry(dir, name) : NULL;
		if (ret == 0 && json_array_append_new(mods, entry) < 0)
			ret = err__set(EIO, "listing %s in the manifest", name);
	}
	if (ret < 0) {
		json_decref(mods);
		return ret;
	}
	*out = mods;
	return 0;
}

int image__default_root(char *buf, size_t size)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (geteuid() == 0)
		n = snprintf(buf, size, "/var/cache/coldstart/images");
	else if (xdg && *xdg == '/')
		n = snprintf(buf, size, "%s/coldstart/images", xdg);
	else if (home && *home == '/')
		n = snprintf(buf, size, "%s/.cache/coldstart/images", home);
	else
		return err__set(ENOENT, "no cache directory: set HOME or "
				"XDG_CACHE_HOME, or pass --out");
	if (n < 0 || (size_t)n >= size)
		return err__set(ENAMETOOLONG, "cache directory path too long");
	return 0;
}

/* Copies boot/vmlinuz-RELEASE, and its config if packaged, into `dir`. */
static int copy_kernel(const char *root, const char *release, const char *dir)
{
	char src[PATH_MAX], dst[PATH_MAX];
	int ret;

	ret = output__pathf(src, sizeof(src), "%s/boot/vmlinuz-%s", root, release);
	if (ret == 0)
		ret = output__pathf(dst, sizeof(dst), "%s/%s", dir, IMAGE_KERNEL);
	if (ret == 0)
		ret = copy_file(src, dst);
	if (ret == 0)
		ret = output__pathf(src, sizeof(src), "%s/boot/config-%s", root,
			    release);
	if (ret == 0)
		ret = output__pathf(dst, sizeof(dst), "%s/config", dir);
	if (ret == 0 && access(src, R_OK) == 0)
		ret = copy_file(src, dst);
	return ret;
}

static int make_image_dirs(const char *staged)
{
	char modules[PATH_MAX];
	int ret = output__pathf(modules, sizeof(modules), "%s/modules", staged);

	if (ret == 0 && mkdir(staged, 0755) < 0)
		ret = err__sys(errno, "creating %s", staged);
	if (ret == 0 && mkdir(modules, 0755) < 0)
		ret = err__sys(errno, "creating %s", modules);
	return ret;
}

/* Builds the complete image in tmp/image from the inputs. */
static int build_into(const char *tmp, const struct inputs *in,
		      const char *mirror, char *staged, size_t size)
{
	char root[PATH_MAX], release[256], initramfs[PATH_MAX];
	json_t *mods = NULL, *rootfs = NULL;
	int ret, applets = 0;

	ret = output__pathf(root, sizeof(root), "%s/deb", tmp);
	if (ret == 0)
		ret = output__pathf(staged, size, "%s/image", tmp);
	if (ret == 0)
		ret = fetch_kernel(in, tmp);
	if (ret == 0)
		ret = find_release(root, release, sizeof(release));
	if (ret == 0)
		ret = make_image_dirs(staged);
	if (ret == 0)
		ret = copy_kernel(root, release, staged);
	if (ret == 0)
		ret = output__pathf(initramfs, sizeof(initramfs), "%s/%s", staged,
			    IMAGE_INITRAMFS);
	if (ret == 0) {
		progress("writing %s (busybox-static %s, coldstart-init, "
			 "coldstart-agent, virtio modules)",
			 IMAGE_INITRAMFS, in->busybox_version);
		ret = write_initramfs(initramfs, root, release, &applets);
	}
	if (ret == 0)
		ret = module_entries(staged, root, release, &mods);
	if (ret == 0 && in->rootfs)
		ret = image__build_rootfs(staged, tmp, mirror, &rootfs);
	if (ret == 0)
		return image__write_manifest(staged, in, release, applets, mods,
					     rootfs);
	json_decref(mods);
	json_decref(rootfs);
	return ret;
}

static int sync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return err__sys(errno, "opening %s", path);
	if (fsync(fd) < 0)
		ret = err__sys(errno, "syncing %s", path);
	close(fd);
	return ret;
}

/* Puts the staged directory at `dir`: an atomic exchange with an old image,
 * whose files then lie in the temporary directory that is removed next. */
static int install(const char *staged, const char *dir, const char *parent)
{
	struct stat st;

	if (stat(dir, &st) < 0)
		return rename(staged, dir) < 0
			       ? err__sys(errno, "renaming %s to %s", staged,
					  dir)
			       : sync_dir(parent);
	if (renameat2(AT_FDCWD, staged, AT_FDCWD, dir, RENAME_EXCHANGE) < 0)
		return err__sys(errno, "exchanging %s with %s", staged, dir);
	return sync_dir(parent);
}

/* Only an image directory (or an empty one) may be replaced: --out
 * pointing at a user's directory must never delete it. */
static int check_replaceable(const char *dir)
{
	char manifest[PATH_MAX + sizeof(IMAGE_MANIFEST) + 1];
	struct dirent *de;
	int entries = 0;
	DIR *d;

	if (access(dir, F_OK) < 0)
		return 0;
	d = opendir(dir);
	if (!d)
		return err__sys(errno, "opening %s", dir);
	while ((de = readdir(d)))
		entries += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	snprintf(manifest, sizeof(manifest), "%s/%s", dir, IMAGE_MANIFEST);
	if (entries && access(manifest, F_OK) < 0)
		return err__set(EEXIST, "refusing to replace %s: it is not a "
				"coldstart image directory (no %s)", dir,
				IMAGE_MANIFEST);
	return 0;
}

static int out_dir(const struct image_options *o, const struct inputs *in,
		   struct image_result *r)
{
	char root[PATH_MAX];
	int n, ret;

	if (o->out_dir)
		n = snprintf(r->dir, sizeof(r->dir), "%s", o->out_dir);
	else {
		ret = image__default_root(root, sizeof(root));
		if (ret < 0)
			return ret;
		n = snprintf(r->dir, sizeof(r->dir), "%s/%s", root,
			     in->package);
	}
	if (n < 0 || (size_t)n >= sizeof(r->dir) - 64)
		return err__set(ENAMETOOLONG, "image directory path too long");
	while (n > 1 && r->dir[n - 1] == '/')
		r->dir[--n] = '\0';
	return 0;
}

int image__build(const struct image_options *o, struct image_result *r)
{
	char parent[PATH_MAX], tmp[PATH_MAX], staged[PATH_MAX];
	struct inputs in = { 0 };
	int ret;

	r->cached = false;
	in.rootfs = o->rootfs;
	ret = image__gather_inputs(&in, o->kernel_package);
	if (ret == 0)
		ret = out_dir(o, &in, r);
	if (ret < 0)
		return ret;
	if (!o->force && image__is_fresh(r->dir, &in)) {
		progress("%s is up to date (%s %s)", r->dir, in.package,
			 in.version);
		r->cached = true;
		return 0;
	}
	ret = check_replaceable(r->dir);
	if (ret < 0)
		return ret;
	output__pathf(parent, sizeof(parent), "%s", r->dir);
	*(strrchr(parent, '/') ? strrchr(parent, '/') : parent) = '\0';
	if (!parent[0])
		strcpy(parent, r->dir[0] == '/' ? "/" : ".");
	ret = mkdir_p(parent);
	if (ret < 0)
		return ret;
	output__pathf(tmp, sizeof(tmp), "%s/.%s.tmp-XXXXXX", parent,
		 strrchr(r->dir, '/') ? strrchr(r->dir, '/') + 1 : r->dir);
	if (!mkdtemp(tmp))
		return err__sys(errno, "creating a temporary directory in %s",
				parent);
	ret = build_into(tmp, &in, o->mirror, staged, sizeof(staged));
	if (ret == 0)
		ret = install(staged, r->dir, parent);
	if (ret == 0)
		progress("built %s", r->dir);
	image__remove_tree(tmp);
	return ret;
}
