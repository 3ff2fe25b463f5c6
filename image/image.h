/* Guest images for `coldstart run --kernel`: Debian's stock cloud kernel
 * and an initramfs of busybox-static plus coldstart-init, built from the
 * apt archive into a cached directory with a manifest of hashes. */
#ifndef COLDSTART_IMAGE_H
#define COLDSTART_IMAGE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* The meta-package whose single dependency names the kernel to use. */
#define IMAGE_META_PACKAGE "linux-image-cloud-amd64"
#define IMAGE_MANIFEST "manifest.json"
#define IMAGE_KERNEL "vmlinuz"
#define IMAGE_INITRAMFS "initramfs.cpio.gz"
/* With --rootfs: a Debian root file system with python3 and the agent. */
#define IMAGE_ROOTFS "rootfs.ext4"
#define IMAGE_ROOTFS_SUITE "bookworm"
#define IMAGE_ROOTFS_PACKAGES "python3"
#define IMAGE_ROOTFS_MIRROR "http://deb.debian.org/debian"
/* The command line the image's kernel and init are meant to boot with. */
#define IMAGE_CMDLINE "console=ttyS0 reboot=k panic=-1 quiet"

struct image_options {
	const char *out_dir;        /* NULL: the default cache directory */
	const char *kernel_package; /* NULL: what IMAGE_META_PACKAGE needs */
	bool force;                 /* rebuild even if the cache is fresh */
	bool rootfs;                /* also IMAGE_ROOTFS (needs root) */
	const char *mirror;         /* NULL: IMAGE_ROOTFS_MIRROR */
};

struct image_result {
	char dir[PATH_MAX]; /* holds IMAGE_KERNEL, IMAGE_INITRAMFS, ... */
	bool cached;        /* the directory was fresh, nothing was built */
};

/* The default parent of image directories: /var/cache/coldstart/images
 * for root, else $XDG_CACHE_HOME (or ~/.cache)/coldstart/images. */
int image__default_root(char *buf, size_t size);

/* Builds (or finds fresh in the cache) the image; progress on stderr. The
 * directory is replaced atomically: readers see the old image or the new
 * one, never a mix. -ENOENT with a message naming the Debian package to
 * install when a tool is missing. */
int image__build(const struct image_options *o, struct image_result *r);

#endif
