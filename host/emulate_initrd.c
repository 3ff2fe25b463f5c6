/* The emulated host's initramfs: busybox, its init, modules, the command;
 * and reading a host file whole, which emulate.c does for the console. */
#include "emulate_initrd.h"

#include "cpio.h"
#include "err.h"
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The host's /init, bench/emulate_init.sh (emulate_embed.S). */
extern const char emulate_init_sh[];

/* The modules the host's init loads, in this order (dependencies first):
 * virtio for the scratch disk and the shared files, overlay for the
 * writable root, then KVM. */
static const char *const host_modules[] = {
	"virtio_ring.ko", "virtio.ko", "virtio_pci_legacy_dev.ko",
	"virtio_pci_modern_dev.ko", "virtio_pci.ko", "virtio_blk.ko",
	"fuse.ko", "virtiofs.ko", "overlay.ko",
	"irqbypass.ko", "kvm.ko", "kvm-amd.ko",
};

/* ---- host files, read whole (the console log, the initramfs's) ---- */

int emulate__read_whole(const char *path, char **data, size_t *size)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	size_t got = 0;

	if (fd < 0)
		return err__sys(errno, "opening %s", path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return err__set(EINVAL, "%s is not a regular file", path);
	}
	*data = malloc((size_t)st.st_size + 1);
	if (!*data) {
		close(fd);
		return err__set(ENOMEM, "reading %s: out of memory", path);
	}
	while (got < (size_t)st.st_size &&
	       (n = read(fd, *data + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	close(fd);
	if (got != (size_t)st.st_size) {
		free(*data);
		return err__set(EIO, "reading %s: short read", path);
	}
	*size = got;
	return 0;
}

/* Adds the host file `src` to the initramfs as `name`. */
static int add_file(struct cpio *c, const char *name, uint32_t perm,
		    const char *src)
{
	char *data;
	size_t size;
	int ret = emulate__read_whole(src, &data, &size);

	if (ret < 0)
		return ret;
	ret = cpio__file(c, name, perm, data, size);
	free(data);
	return ret;
}

/* ---- the host's initramfs ---- */

static int add_text(struct cpio *c, const char *name, const char *text)
{
	return cpio__file(c, name, 0644, text, strlen(text));
}

static bool shell_name(const char *s, size_t n)
{
	if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

/* The script that runs the command inside: this directory, this
 * environment, then exec. */
static int command_script(char *const *argv, char **out)
{
	struct output_text t;
	char cwd[PATH_MAX];
	int ret;

	if (!getcwd(cwd, sizeof(cwd)))
		return err__sys(errno, "getcwd");
	ret = output__text_open(&t);
	if (ret < 0)
		return ret;
	fputs("cd ", t.f);
	output__shell_word(t.f, cwd);
	fputs(" || exit 127\n", t.f);
	for (char **e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');

		if (!eq || !shell_name(*e, (size_t)(eq - *e)))
			continue;
		fprintf(t.f, "export %.*s=", (int)(eq - *e), *e);
		output__shell_word(t.f, eq + 1);
		fputc('\n', t.f);
	}
	fputs("exec", t.f);
	for (char *const *a = argv; *a; a++) {
		fputc(' ', t.f);
		output__shell_word(t.f, *a);
	}
	fputc('\n', t.f);
	ret = output__text_close(&t, "the emulated command's script");
	*out = t.text;
	return ret;
}

/* The --out directories, one absolute path a line; made if missing. */
static int outs_list(const char *const *outs, size_t nr_outs, char **out)
{
	struct output_text t;
	char real[PATH_MAX];
	int ret = output__text_open(&t);

	if (ret < 0)
		return ret;
	for (size_t i = 0; ret == 0 && i < nr_outs; i++) {
		if (mkdir(outs[i], 0755) < 0 && errno != EEXIST)
			ret = err__sys(errno, "creating --out %s", outs[i]);
		else if (!realpath(outs[i], real))
			ret = err__sys(errno, "--out %s", outs[i]);
		else if (!strcmp(real, "/") || strchr(real, '\n'))
			ret = err__set(EINVAL, "--out %s: not a directory that "
				       "can be shared", outs[i]);
		else
			fprintf(t.f, "%s\n", real);
	}
	if (ret < 0) {
		output__text_close(&t, "--out");
		free(t.text);
		return ret;
	}
	ret = output__text_close(&t, "the --out list");
	*out = t.text;
	return ret;
}

static int add_modules(struct cpio *c, const char *image)
{
	char src[PATH_MAX], name[PATH_MAX], order[1024] = "";
	int ret = cpio__dir(c, "modules", 0755);

	for (size_t i = 0; ret == 0 && i < sizeof(host_modules) /
						sizeof(*host_modules); i++) {
		if (output__pathf(src, sizeof(src), "%s/modules/%s", image,
			  host_modules[i]) < 0)
			return -ENAMETOOLONG;
		if (access(src, R_OK) < 0)
			return err__set(ENOENT, "the guest image %s lacks "
					"modules/%s: rebuild it with "
					"'coldstart image build --force'",
					image, host_modules[i]);
		snprintf(name, sizeof(name), "modules/%s", host_modules[i]);
		ret = add_file(c, name, 0644, src);
		strncat(order, host_modules[i], sizeof(order) - strlen(order) - 2);
		strcat(order, "\n");
	}
	return ret ? ret : add_text(c, "modules/order", order);
}

int emulate__build_initrd(const char *path, const char *image,
			  char *const *argv, const char *const *outs,
			  size_t nr_outs)
{
	char self[PATH_MAX], host[256] = "", *cmd = NULL, *list = NULL;
	struct cpio *c;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int fd, ret;

	if (n <= 0)
		return err__sys(errno, "readlink /proc/self/exe");
	self[n] = '\0';
	ret = command_script(argv, &cmd);
	if (ret == 0)
		ret = outs_list(outs, nr_outs, &list);
	fd = ret ? -1 : open(path, O_WRONLY | O_CREAT | O_TRUNC |
						   O_CLOEXEC, 0600);
	if (ret == 0 && fd < 0)
		ret = err__sys(errno, "creating %s", path);
	if (ret == 0)
		ret = cpio__open(&c, fd);
	if (ret == 0) {
		ret = cpio__dir(c, "bin", 0755);
		ret = ret ? ret : add_file(c, "bin/busybox", 0755,
					   BUSYBOX);
		ret = ret ? ret : cpio__file(c, "init", 0755, emulate_init_sh,
					     strlen(emulate_init_sh));
		ret = ret ? ret : add_modules(c, image);
		ret = ret ? ret : cpio__dir(c, "emulate", 0755);
		ret = ret ? ret : add_text(c, "emulate/cmd.sh", cmd);
		ret = ret ? ret : add_text(c, "emulate/outs", list);
		ret = ret ? ret : add_text(c, "emulate/self", self);
		gethostname(host, sizeof(host) - 1);
		ret = ret ? ret : add_text(c, "emulate/hostname", host);
		/* The command's stdout and stderr are terminals inside when
		 * they are here, so progress lines behave the same. */
		ret = ret ? ret : add_text(c, "emulate/tty", isatty(1) ?
					   (isatty(2) ? "11" : "10") :
					   (isatty(2) ? "01" : "00"));
		if (ret)
			cpio__abort(c);
		else
			ret = cpio__finish(c);
	}
	if (fd >= 0 && close(fd) < 0 && ret == 0)
		ret = err__sys(errno, "writing %s", path);
	free(cmd);
	free(list);
	return ret;
}
