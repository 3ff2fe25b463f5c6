/* Host metadata: reads uname, proc and sysfs into one JSON object. */
#include "sysinfo.h"

#include "err.h"
#include "kvm.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#ifndef COLDSTART_VERSION
#define COLDSTART_VERSION "unknown"
#endif
#ifndef COLDSTART_GIT_COMMIT
#define COLDSTART_GIT_COMMIT "unknown"
#endif

/* sysfs attributes are at most a page; /proc/cmdline is smaller still. */
#define TEXT_MAX 8192
/* cpuinfo's flags line grows with every CPU generation. */
#define FLAGS_MAX 16384

#define CPUINFO "/proc/cpuinfo"
#define MEMINFO "/proc/meminfo"
#define CPU_DIR "/sys/devices/system/cpu"
#define THP_DIR "/sys/kernel/mm/transparent_hugepage"
#define KSM_DIR "/sys/kernel/mm/ksm"
#define HUGE_2M_DIR "/sys/kernel/mm/hugepages/hugepages-2048kB"
#define CGROUP_DIR "/sys/fs/cgroup"

struct names {
	char **v;
	size_t n, cap;
};

static bool path_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		end--;
	*end = '\0';
	return s;
}

static int copy_text(char *buf, size_t size, const char *text)
{
	size_t len = strlen(text);

	if (len >= size)
		return -EFBIG;
	memmove(buf, text, len + 1);
	return 0;
}

/* Fills buf with up to size bytes; a full buffer means the file was longer
 * than we allow, and a cut value would be worse than none. */
static int read_all(int fd, char *buf, size_t size, size_t *len)
{
	ssize_t n;

	*len = 0;
	while (*len < size) {
		n = read(fd, buf + *len, size - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		*len += (size_t)n;
	}
	return -EFBIG;
}

/* Reads a small proc or sysfs file whole into buf, trimmed. */
static int read_trimmed(const char *path, char *buf, size_t size)
{
	size_t len;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = read_all(fd, buf, size - 1, &len);
	close(fd);
	if (ret < 0)
		return ret;
	buf[len] = '\0';
	return copy_text(buf, size, trim(buf));
}

/* Copies the trimmed value of the first "key : value" line whose key is
 * `key` (cpuinfo lists one block per CPU; the first speaks for all). */
static int read_keyed(const char *path, const char *key, char *buf,
		      size_t size)
{
	FILE *f = fopen(path, "re");
	char *line = NULL, *colon;
	size_t cap = 0;
	int ret = -ENODATA;

	if (!f)
		return -errno;
	while (ret == -ENODATA && getline(&line, &cap, f) >= 0) {
		colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = '\0';
		if (!strcmp(trim(line), key))
			ret = copy_text(buf, size, trim(colon + 1));
	}
	free(line);
	fclose(f);
	return ret;
}

/* Parses a decimal integer at the start of text; *rest points past it. */
static int parse_ll(const char *text, long long *out, const char **rest)
{
	char *end;

	errno = 0;
	*out = strtoll(text, &end, 10);
	if (errno || end == text)
		return -EINVAL;
	*rest = end;
	return 0;
}

/* A JSON string, or null for text jansson refuses (not UTF-8); NULL only
 * when out of memory. */
static json_t *text_value(const char *text)
{
	json_t *v = json_string(text);

	if (v)
		return v;
	v = json_string(""); /* tells bad encoding from no memory */
	if (!v)
		return NULL;
	json_decref(v);
	return json_null();
}

static json_t *int_value(const char *text)
{
	const char *rest;
	long long v;

	if (parse_ll(text, &v, &rest) || *rest)
		return json_null();
	return json_integer(v);
}

static json_t *file_text(const char *path)
{
	char buf[TEXT_MAX];

	if (read_trimmed(path, buf, sizeof(buf)))
		return json_null();
	return text_value(buf);
}

static json_t *file_int(const char *path)
{
	char buf[64];

	if (read_trimmed(path, buf, sizeof(buf)))
		return json_null();
	return int_value(buf);
}

/* A sysfs "0"/"1" switch. */
static json_t *file_bool(const char *path)
{
	char buf[16];

	if (read_trimmed(path, buf, sizeof(buf)) ||
	    (strcmp(buf, "0") && strcmp(buf, "1")))
		return json_null();
	return json_boolean(buf[0] == '1');
}

/* The selected word of a sysfs choice list: "always [madvise] never". */
static json_t *file_choice(const char *path)
{
	char buf[256], *lb, *rb;

	if (read_trimmed(path, buf, sizeof(buf)))
		return json_null();
	lb = strchr(buf, '[');
	rb = lb ? strchr(lb, ']') : NULL;
	if (!rb)
		return json_null();
	*rb = '\0';
	return text_value(lb + 1);
}

static json_t *cpuinfo_text(const char *key)
{
	char buf[TEXT_MAX];

	if (read_keyed(CPUINFO, key, buf, sizeof(buf)))
		return json_null();
	return text_value(buf);
}

/* meminfo prints "%8lu kB" (KiB); another unit would mean another format. */
static json_t *meminfo_kib(const char *key)
{
	const char *rest;
	char buf[64];
	long long v;

	if (read_keyed(MEMINFO, key, buf, sizeof(buf)) ||
	    parse_ll(buf, &v, &rest) || strcmp(rest, " kB"))
		return json_null();
	return json_integer(v);
}

/* Drops obj when any of its members could not be added (out of memory). */
static json_t *finish(json_t *obj, int bad)
{
	if (!bad)
		return obj;
	json_decref(obj);
	return NULL;
}

static json_t *build_info(void)
{
	return json_pack("{s:s, s:s}", "version", COLDSTART_VERSION, "commit",
			 COLDSTART_GIT_COMMIT);
}

static json_t *kernel_info(const struct utsname *u)
{
	json_t *o = json_object();
	int bad = 0;

	if (!o)
		return NULL;
	bad |= json_object_set_new(o, "release",
				   u ? text_value(u->release) : json_null());
	bad |= json_object_set_new(o, "version",
				   u ? text_value(u->version) : json_null());
	bad |= json_object_set_new(o, "machine",
				   u ? text_value(u->machine) : json_null());
	bad |= json_object_set_new(o, "cmdline", file_text("/proc/cmdline"));
	return finish(o, bad);
}

/* Which of the flags that decide how KVM can work here `flags` lists. */
static json_t *virt_flag_array(char *flags)
{
	static const char *const wanted[] = { "vmx", "svm", "hypervisor" };
	bool seen[sizeof(wanted) / sizeof(wanted[0])] = { false };
	char *tok, *save;
	json_t *arr;
	int bad = 0;

	for (tok = strtok_r(flags, " \t", &save); tok;
	     tok = strtok_r(NULL, " \t", &save))
		for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
			seen[i] |= !strcmp(tok, wanted[i]);
	arr = json_array();
	if (!arr)
		return NULL;
	for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
		if (seen[i])
			bad |= json_array_append_new(arr,
						     json_string(wanted[i]));
	return finish(arr, bad);
}

static json_t *virt_flags(void)
{
	char *flags = malloc(FLAGS_MAX);
	json_t *arr;

	if (!flags)
		return NULL;
	if (read_keyed(CPUINFO, "flags", flags, FLAGS_MAX))
		arr = json_null();
	else
		arr = virt_flag_array(flags);
	free(flags);
	return arr;
}

static json_t *cpu_info(void)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	json_t *o = json_object();
	int bad = 0;

	if (!o)
		return NULL;
	bad |= json_object_set_new(o, "model", cpuinfo_text("model name"));
	bad |= json_object_set_new(o, "microcode", cpuinfo_text("microcode"));
	bad |= json_object_set_new(o, "online_cpus", online > 0 ?
				   json_integer(online) : json_null());
	bad |= json_object_set_new(o, "smt", file_bool(CPU_DIR "/smt/active"));
	bad |= json_object_set_new(o, "governor", file_text(CPU_DIR
				   "/cpu0/cpufreq/scaling_governor"));
	bad |= json_object_set_new(o, "flags_virt", virt_flags());
	return finish(o, bad);
}

static json_t *memory_info(void)
{
	json_t *o = json_object();
	int bad = 0;

	if (!o)
		return NULL;
	bad |= json_object_set_new(o, "total_kib", meminfo_kib("MemTotal"));
	bad |= json_object_set_new(o, "thp_enabled",
				   file_choice(THP_DIR "/enabled"));
	bad |= json_object_set_new(o, "thp_defrag",
				   file_choice(THP_DIR "/defrag"));
	bad |= json_object_set_new(o, "ksm_run", file_int(KSM_DIR "/run"));
	bad |= json_object_set_new(o, "ksm_pages_sharing",
				   file_int(KSM_DIR "/pages_sharing"));
	bad |= json_object_set_new(o, "hugepages_2m_total",
				   file_int(HUGE_2M_DIR "/nr_hugepages"));
	bad |= json_object_set_new(o, "hugepages_2m_free",
				   file_int(HUGE_2M_DIR "/free_hugepages"));
	return finish(o, bad);
}

static void names_free(struct names *names)
{
	for (size_t i = 0; i < names->n; i++)
		free(names->v[i]);
	free(names->v);
}

static int names_add(struct names *names, const char *name)
{
	char **v;

	if (names->n == names->cap) {
		size_t cap = names->cap ? names->cap * 2 : 16;

		v = realloc(names->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		names->v = v;
		names->cap = cap;
	}
	names->v[names->n] = strdup(name);
	if (!names->v[names->n])
		return -ENOMEM;
	names->n++;
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of `path` but dot files, sorted so the output is stable. */
static int list_dir(const char *path, struct names *names)
{
	DIR *dir = opendir(path);
	struct dirent *de;
	int ret = 0;

	memset(names, 0, sizeof(*names));
	if (!dir)
		return -errno;
	for (;;) {
		errno = 0;
		de = readdir(dir);
		if (!de) {
			ret = -errno;
			break;
		}
		if (de->d_name[0] != '.' && (ret = names_add(names, de->d_name)))
			break;
	}
	closedir(dir);
	if (ret) {
		names_free(names);
		return ret;
	}
	if (names->n)
		qsort(names->v, names->n, sizeof(names->v[0]), cmp_names);
	return 0;
}

/* Adds dir/name's text under `name`. Unreadable files are left out:
 * write-only module parameters, attributes without a show method. */
static int add_file_text(json_t *obj, const char *dir, const char *name)
{
	char path[PATH_MAX], buf[TEXT_MAX];
	int n = snprintf(path, sizeof(path), "%s/%s", dir, name);

	if (n < 0 || (size_t)n >= sizeof(path) ||
	    read_trimmed(path, buf, sizeof(buf)))
		return 0;
	return json_object_set_new(obj, name, text_value(buf));
}

/* Maps each readable file in `dir` to its trimmed text; null when the
 * directory cannot be listed, NULL when out of memory. */
static json_t *dir_texts(const char *dir)
{
	struct names names;
	json_t *o;
	int bad = 0, ret = list_dir(dir, &names);

	if (ret == -ENOMEM)
		return NULL;
	if (ret)
		return json_null();
	o = json_object();
	for (size_t i = 0; o && !bad && i < names.n; i++)
		bad = add_file_text(o, dir, names.v[i]);
	names_free(&names);
	return finish(o, bad);
}

/* A loaded module without parameters has no parameters directory: that is
 * an empty set, not an unknown one. */
static json_t *module_params(const char *module)
{
	char path[PATH_MAX];
	json_t *p;

	snprintf(path, sizeof(path), "/sys/module/%s/parameters", module);
	p = dir_texts(path);
	return json_is_null(p) ? json_object() : p;
}

/* Built-in modules show in /sys/module too, which is what we want: their
 * parameters shape KVM just the same. */
static json_t *kvm_modules(void)
{
	static const char *const modules[] = { "kvm", "kvm_intel", "kvm_amd",
					       "kvm_pvm" };
	char path[PATH_MAX];
	json_t *o = json_object();
	int bad = 0;

	if (!o)
		return NULL;
	for (size_t i = 0; i < sizeof(modules) / sizeof(modules[0]); i++) {
		snprintf(path, sizeof(path), "/sys/module/%s", modules[i]);
		if (path_exists(path))
			bad |= json_object_set_new(o, modules[i],
						   module_params(modules[i]));
	}
	return finish(o, bad);
}

/* Where KVM runs for this process (kvm__where): a device counts only when
 * it opened and answered KVM_GET_API_VERSION, so a loaded module that did
 * not bind reads as "none" with the reason, not as its flavour. */
static json_t *kvm_info(void)
{
	struct kvm_where w;
	json_t *o = json_object();
	int bad = 0;

	if (!o)
		return NULL;
	kvm__where(&w, NULL);
	bad |= json_object_set_new(o, "device", w.usable ?
				   json_string(KVM_DEVICE_PATH) : json_null());
	bad |= json_object_set_new(o, "usable", json_boolean(w.usable));
	bad |= json_object_set_new(o, "flavour",
				   json_string(kvm__flavour_name(w.flavour)));
	bad |= json_object_set_new(o, "api_version", w.api_version ?
				   json_integer(w.api_version) : json_null());
	bad |= json_object_set_new(o, "reason", w.usable ? json_null() :
				   text_value(w.reason));
	bad |= json_object_set_new(o, "modules", kvm_modules());
	bad |= json_object_set_new(o, "emulated", w.emulated[0] ?
				   text_value(w.emulated) : json_null());
	return finish(o, bad);
}

static bool has_v1_controllers(void)
{
	static const char *const dirs[] = {
		CGROUP_DIR "/cpu", CGROUP_DIR "/memory", CGROUP_DIR "/cpuset",
		CGROUP_DIR "/blkio", CGROUP_DIR "/pids",
	};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (path_exists(dirs[i]))
			return true;
	return false;
}

/* Hybrid means cgroup2 is really mounted at unified/, not that an empty
 * directory of that name exists. */
static const char *cgroup_version(void)
{
	bool v1 = has_v1_controllers();

	if (path_exists(CGROUP_DIR "/cgroup.controllers"))
		return "v2";
	if (v1 && path_exists(CGROUP_DIR "/unified/cgroup.controllers"))
		return "hybrid";
	return v1 ? "v1" : NULL;
}

static json_t *cgroup_info(void)
{
	const char *version = cgroup_version();
	json_t *o = json_object();

	if (!o)
		return NULL;
	return finish(o, json_object_set_new(o, "version", version ?
					     json_string(version) :
					     json_null()));
}

static json_t *time_utc(void)
{
	struct timespec ts;
	struct tm tm;
	char buf[32];

	if (clock_gettime(CLOCK_REALTIME, &ts) || !gmtime_r(&ts.tv_sec, &tm) ||
	    !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm))
		return json_null();
	return json_string(buf);
}

/* Adds the sections in the documented order; -ENOMEM if any is missing. */
static int fill(json_t *root)
{
	struct utsname uts;
	const struct utsname *u = uname(&uts) ? NULL : &uts;
	int bad;

	bad = json_object_set_new(root, "schema", json_integer(SYSINFO_SCHEMA));
	bad |= json_object_set_new(root, "coldstart", build_info());
	bad |= json_object_set_new(root, "hostname",
				   u ? text_value(u->nodename) : json_null());
	bad |= json_object_set_new(root, "kernel", kernel_info(u));
	bad |= json_object_set_new(root, "cpu", cpu_info());
	bad |= json_object_set_new(root, "memory", memory_info());
	bad |= json_object_set_new(root, "kvm", kvm_info());
	bad |= json_object_set_new(root, "cgroup", cgroup_info());
	bad |= json_object_set_new(root, "mitigations",
				   dir_texts(CPU_DIR "/vulnerabilities"));
	bad |= json_object_set_new(root, "time_utc", time_utc());
	return bad ? -ENOMEM : 0;
}

int sysinfo__collect(json_t **out)
{
	json_t *root = json_object();

	if (!root || fill(root)) {
		json_decref(root);
		return err__set(ENOMEM,
				"collecting host information: out of memory");
	}
	*out = root;
	return 0;
}
