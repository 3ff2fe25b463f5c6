/* A driver's new result document: what this process knows about its
 * host, build, seccomp filters and guest, handed to result__make. */
#include "result_new.h"

#include "err.h"
#include "hash.h"
#include "probe.h"
#include "result.h"
#include "seccomp.h"
#include "sysinfo.h"

/* {"path", "bytes", "sha256"} of a guest file, or null when unnamed; a
 * file that cannot be read keeps its path with an "error". */
static json_t *file_identity(const json_t *path)
{
	char sum[HASH_SHA256_HEX];
	uint64_t size;

	if (!json_is_string(path))
		return json_null();
	if (hash__sha256_file(json_string_value(path), sum, &size) < 0)
		return json_pack("{s:O, s:s}", "path", path, "error",
				 err__last());
	return json_pack("{s:O, s:I, s:s}", "path", path, "bytes",
			 (json_int_t)size, "sha256", sum);
}

/* The exact guest a document measured: the Linux kernel and initrd its
 * config names, or the probe guest built into this binary. */
static json_t *guest_identity(const json_t *config)
{
	const json_t *kernel = json_object_get(config, "kernel");
	size_t size = (size_t)(probe_image_end - probe_image_start);
	char sum[HASH_SHA256_HEX];

	if (json_is_string(kernel))
		return json_pack("{s:s, s:o, s:o}", "name", "linux", "kernel",
				 file_identity(kernel), "initrd",
				 file_identity(json_object_get(config,
							       "initrd")));
	hash__sha256_mem(probe_image_start, size, sum);
	return json_pack("{s:s, s:I, s:s}", "name", "probe", "bytes",
			 (json_int_t)size, "sha256", sum);
}

/* Whether the run's threads had seccomp filters: the mode, and how many
 * filters each role loaded so far (an in-process driver's VM threads
 * load theirs; its own thread stays unfiltered). */
static json_t *seccomp_json(void)
{
	uint64_t n[SECCOMP_NR_ROLES], ns;
	json_t *roles = json_object();

	seccomp__stats(n, &ns);
	for (int r = 0; r < SECCOMP_NR_ROLES; r++)
		json_object_set_new(roles, seccomp__role_name(r),
				    json_integer((json_int_t)n[r]));
	return json_pack("{s:s, s:o, s:I}", "mode",
			 seccomp__mode_name(seccomp__mode()), "installed",
			 roles, "install_ns", (json_int_t)ns);
}

json_t *result__new(const char *name, json_t *config)
{
	struct result_origin o = { .seccomp = seccomp_json(),
				   .guest = guest_identity(config) };

	if (sysinfo__collect(&o.sysinfo) < 0)
		o.sysinfo = NULL;
	return result__make(name, config, &o);
}
