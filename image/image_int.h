/* What the image builder's files share (image.c: building and installing
 * an image; image_inputs.c: the inputs, from apt and dpkg;
 * image_manifest.c: the manifest, written and checked): the inputs, the
 * busybox paths, small file helpers and the functions one file calls in
 * another. Not for use outside the image builder. */
#ifndef COLDSTART_IMAGE_INT_H
#define COLDSTART_IMAGE_INT_H

#include "image.h"

#include "err.h"
#include "hash.h"
#include "output.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#define BUSYBOX_PACKAGE "busybox-static"
#define BUSYBOX_PATH "/bin/busybox"

/* Everything that decides an image's bytes; equal inputs, equal image. */
struct inputs {
	char package[256];     /* linux-image-6.1.0-NN-cloud-amd64 */
	char version[128];     /* its archive version */
	char busybox_version[128];
	char init_sha256[HASH_SHA256_HEX];
	char agent_sha256[HASH_SHA256_HEX];
	bool rootfs; /* an IMAGE_ROOTFS is wanted */
};

/* output__write_all with the message naming `path`. */
static inline int image__write_all(int fd, const void *data, size_t size,
				   const char *path)
{
	int ret = output__write_all(fd, data, size);

	return ret < 0 ? err__sys(-ret, "writing %s", path) : 0;
}

/* {"file", "size", "sha256"} of dir/file. */
static inline json_t *file_entry(const char *dir, const char *file)
{
	char path[PATH_MAX], sum[HASH_SHA256_HEX];
	uint64_t size;

	output__pathf(path, sizeof(path), "%s/%s", dir, file);
	if (hash__sha256_file(path, sum, &size) < 0)
		return NULL;
	return json_pack("{s:s, s:I, s:s}", "file", file, "size",
			 (json_int_t)size, "sha256", sum);
}

/* image_inputs.c */
/* Runs a command that must succeed (stdout to `out`, or to our stderr
 * with out == NULL); the message names it. 0 or -errno. */
int image__spawn_ok(char *const argv[], const char *cwd, char *out,
		    size_t size);
/* Removes the tree at path, never following a link; what it cannot
 * remove stays. */
void image__remove_tree(const char *path);
/* 0 if `name` is in $PATH, else -ENOENT naming the package to install. */
int image__need_tool(const char *name, const char *package);
/* The kernel package (`wanted`, or the one IMAGE_META_PACKAGE depends on)
 * and its version, busybox-static's version and coldstart-init's hash. */
int image__gather_inputs(struct inputs *in, const char *wanted);

/* rootfs.c */
/* Builds dir/IMAGE_ROOTFS with debootstrap in tmp/rootfs and mkfs.ext4
 * -d, with the agent at /usr/sbin/coldstart-agent; *entry: its manifest
 * entry. */
int image__build_rootfs(const char *dir, const char *tmp, const char *mirror,
			json_t **entry);

/* image_manifest.c */
/* Was the image at `dir` built from `in`, and do its files still hash to
 * what its manifest records? */
bool image__is_fresh(const char *dir, const struct inputs *in);
/* Writes dir's manifest; takes `mods` (the modules' entries) and
 * `rootfs` (its entry, or NULL). */
int image__write_manifest(const char *dir, const struct inputs *in,
			  const char *release, int applets, json_t *mods,
			  json_t *rootfs);

#endif
