/* The image's manifest: written with the image, checked for a cached one. */
#include "image.h"
#include "image_int.h"

#include "hash.h"
#include "guest/guest_initramfs.h"
#include "init_image.h"
#include "output.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MANIFEST_SCHEMA "coldstart-image/3"

static const char *jstr(json_t *root, const char *obj, const char *key)
{
	return json_string_value(json_object_get(json_object_get(root, obj),
						 key));
}

/* Does the file that manifest entry `e` names under dir have the sha256
 * it records? `sub` is the only subdirectory the name may contain. */
static bool entry_matches(const char *dir, const json_t *e, const char *sub)
{
	char path[PATH_MAX], sum[HASH_SHA256_HEX];
	const char *file = json_string_value(json_object_get(e, "file"));
	const char *want = json_string_value(json_object_get(e, "sha256"));
	const char *base = file;
	uint64_t size;

	if (file && sub && !strncmp(file, sub, strlen(sub)) &&
	    file[strlen(sub)] == '/')
		base = file + strlen(sub) + 1;
	if (!file || !want || !*base || strchr(base, '/') || base[0] == '.')
		return false;
	output__pathf(path, sizeof(path), "%s/%s", dir, file);
	return hash__sha256_file(path, sum, &size) == 0 && !strcmp(sum, want);
}

static bool file_matches(const char *dir, json_t *root, const char *obj)
{
	return entry_matches(dir, json_object_get(root, obj), NULL);
}

/* Every module the manifest lists is there with its recorded hash (the
 * e2e host loads them from the cached image). */
static bool modules_match(const char *dir, json_t *root)
{
	const json_t *mods = json_object_get(root, "modules");
	size_t i;
	json_t *e;

	if (!json_is_array(mods))
		return false;
	json_array_foreach(mods, i, e)
		if (!entry_matches(dir, e, "modules"))
			return false;
	return true;
}

/* A cached image is fresh if it was built from the same inputs and its
 * files still hash to what its manifest records. */
bool image__is_fresh(const char *dir, const struct inputs *in)
{
	char path[PATH_MAX];
	json_t *root;
	bool fresh;

	output__pathf(path, sizeof(path), "%s/%s", dir, IMAGE_MANIFEST);
	root = output__json_load(path, &(json_error_t){ 0 });
	if (!root)
		return false;
	fresh = json_is_string(json_object_get(root, "schema")) &&
		!strcmp(json_string_value(json_object_get(root, "schema")),
			MANIFEST_SCHEMA) &&
		jstr(root, "kernel", "package") &&
		!strcmp(jstr(root, "kernel", "package"), in->package) &&
		jstr(root, "kernel", "version") &&
		!strcmp(jstr(root, "kernel", "version"), in->version) &&
		jstr(root, "busybox", "version") &&
		!strcmp(jstr(root, "busybox", "version"),
			in->busybox_version) &&
		jstr(root, "init", "sha256") &&
		!strcmp(jstr(root, "init", "sha256"), in->init_sha256) &&
		jstr(root, "agent", "sha256") &&
		!strcmp(jstr(root, "agent", "sha256"), in->agent_sha256) &&
		(!in->rootfs || file_matches(dir, root, "rootfs")) &&
		file_matches(dir, root, "kernel") &&
		file_matches(dir, root, "initramfs") && modules_match(dir, root);
	json_decref(root);
	return fresh;
}

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	int ret;

	if (fd < 0)
		return err__sys(errno, "creating %s", path);
	ret = image__write_all(fd, text, strlen(text), path);
	if (ret == 0 && fsync(fd) < 0)
		ret = err__sys(errno, "syncing %s", path);
	close(fd);
	return ret;
}

static json_t *kernel_entry(const char *dir, const struct inputs *in,
			    const char *release)
{
	json_t *k = file_entry(dir, IMAGE_KERNEL);

	if (k && json_object_update_new(k, json_pack("{s:s, s:s, s:s}", "package",
						   in->package, "version",
						   in->version, "release",
						   release)) < 0) {
		json_decref(k);
		return NULL;
	}
	return k;
}

int image__write_manifest(const char *dir, const struct inputs *in,
			  const char *release, int applets, json_t *mods,
			  json_t *rootfs)
{
	char path[PATH_MAX], busybox_sum[HASH_SHA256_HEX], stamp[32], *text;
	uint64_t busybox_size;
	time_t now = time(NULL);
	json_t *root;
	int ret;

	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	ret = hash__sha256_file(BUSYBOX_PATH, busybox_sum, &busybox_size);
	if (ret < 0) {
		json_decref(mods);
		json_decref(rootfs);
		return ret;
	}
	root = json_pack(
		"{s:s, s:s, s:s, s:o, s:o, s:{s:s, s:I, s:s}, "
		"s:{s:s, s:s, s:I, s:s, s:i}, s:o}",
		"schema", MANIFEST_SCHEMA, "created", stamp, "cmdline",
		IMAGE_CMDLINE, "kernel", kernel_entry(dir, in, release),
		"initramfs", file_entry(dir, IMAGE_INITRAMFS), "init", "path",
		"/init", "size",
		(json_int_t)(init_image_end - init_image_start), "sha256",
		in->init_sha256, "busybox", "package", BUSYBOX_PACKAGE,
		"version", in->busybox_version, "size",
		(json_int_t)busybox_size, "sha256", busybox_sum, "applets",
		applets, "modules", mods);
	if (root)
		json_object_set_new(
			root, "agent",
			json_pack("{s:s, s:I, s:s}", "path",
				  "/" GUEST_AGENT_FILE, "size",
				  (json_int_t)(agent_image_end -
					       agent_image_start),
				  "sha256", in->agent_sha256));
	if (root && rootfs)
		json_object_set_new(root, "rootfs", rootfs);
	else
		json_decref(rootfs);
	if (!root)
		return err__set(EIO, "building the manifest of %s", dir);
	text = json_dumps(root, JSON_INDENT(2));
	json_decref(root);
	if (!text)
		return err__set(ENOMEM, "formatting the manifest");
	output__pathf(path, sizeof(path), "%s/%s", dir, IMAGE_MANIFEST);
	ret = write_text(path, text);
	free(text);
	return ret;
}
