/* A warm pool's configuration as JSON, both ways (pool_config.h): the
 * result documents' "config", and `--config FILE`, read before the other
 * options, which sets what it names through the option table's own
 * setters and checks. */
#include "pool_config.h"

#include "err.h"
#include "output.h"
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A guest's files, as the result documents name them (result__new
 * names them by sha256). */
static int guest_json(const struct pool_config *c, json_t *j)
{
	if (c->source == POOL_FROM_SNAPSHOT && c->snap_linux)
		return json_object_update_new(j, json_pack(
			"{s:s, s:s, s:o, s:s, s:b}", "guest", "linux", "kernel",
			c->snap_guest.kernel, "initrd",
			*c->snap_guest.initrd ? json_string(c->snap_guest.initrd)
					      : json_null(),
			"cmdline", c->snap_guest.cmdline, "allow_pvm",
			c->allow_pvm));
	if (c->source == POOL_FROM_LINUX)
		return json_object_update_new(j, json_pack(
			"{s:s, s:s, s:o, s:s?, s:I, s:I, s:b}", "guest", "linux",
			"kernel", c->kernel, "initrd",
			c->initrd ? json_string(c->initrd) : json_null(),
			"cmdline", c->cmdline, "mem_bytes",
			(json_int_t)c->linux_mem, "vcpus",
			(json_int_t)c->nr_vcpus, "allow_pvm", c->allow_pvm));
	if (c->source == POOL_FROM_PROBE)
		return json_object_set_new(j, "probe", json_pack(
			"{s:I, s:I, s:I, s:I}", "init_bytes",
			(json_int_t)c->probe.init_bytes, "ws_bytes",
			(json_int_t)c->probe.ws_bytes, "vcpus",
			(json_int_t)c->nr_vcpus, "mem_bytes",
			(json_int_t)c->mem_size));
	return 0;
}

/* The policies' parameters: those of no group in j itself (grouped
 * false), else those of c's policy's group (its name) in an object of
 * that name, made if it has any. */
static int params_json(const struct pool_config *c, json_t *j, bool grouped)
{
	const char *group = policy__name(c->policy), *option;
	const struct pool_param *p;
	json_t *in = NULL;

	for (size_t i = 0; (p = pool_config__param(i, &option)); i++) {
		double v = *pool_config__param_value((struct pool_config *)c, p);

		if (grouped != !!p->group || (p->group && strcmp(p->group, group)))
			continue;
		if (grouped && !in &&
		    json_object_set_new(j, group, in = json_object()) < 0)
			return -ENOMEM;
		if (json_object_set_new(grouped ? in : j, p->json,
					json_real(v)) < 0)
			return -ENOMEM;
	}
	return 0;
}

json_t *pool_config__to_json(const struct pool_config *c)
{
	json_t *j = json_pack(
		"{s:s, s:s?, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I}",
		"source", c->source == POOL_FROM_SNAPSHOT ? "snapshot"
			  : c->source == POOL_FROM_LINUX ? "linux" : "probe",
		"snapshot", c->source == POOL_FROM_SNAPSHOT ? c->snapshot_dir
							    : NULL,
		"mem_restore", c->source == POOL_FROM_SNAPSHOT
				       ? c->strategy->name : "none",
		"hold", c->hold == POOL_HOLD_SHELL ? "shell" : "warm",
		"policy", policy__name(c->policy),
		"on_empty", c->on_empty == POOL_WAIT ? "wait" : "make",
		"size", (json_int_t)c->size, "min", (json_int_t)c->min,
		"max", (json_int_t)c->max, "workers", (json_int_t)c->workers);

	/* in the result documents' order: the parameters of every policy,
	 * the timeout, the policy's own, the guest */
	if (j && (params_json(c, j, false) < 0 ||
		  json_object_set_new(j, "timeout_s", json_real(
			  (double)c->timeout_ns / 1e9)) < 0 ||
		  (c->exec && json_object_set_new(j, "exec",
						  json_string(c->exec)) < 0) ||
		  params_json(c, j, true) < 0 || guest_json(c, j) < 0)) {
		json_decref(j);
		return NULL;
	}
	return j;
}

/* How a JSON value becomes an option's text. */
enum json_kind { J_STRING, J_COUNT, J_NUMBER, J_SECONDS };

/* A key of the JSON and the option it sets. */
struct json_key {
	const char *key, *option;
	enum json_kind kind;
};

static const struct json_key top_keys[] = {
	{ "policy", "policy", J_STRING },
	{ "size", "size", J_COUNT },
	{ "min", "min", J_COUNT },
	{ "max", "max", J_COUNT },
	{ "workers", "workers", J_COUNT },
	{ "on_empty", "on-empty", J_STRING },
	{ "hold", "hold", J_STRING },
	{ "timeout_s", "timeout", J_SECONDS },
	{ "exec", "exec", J_STRING },
	{ NULL, NULL, J_STRING },
};

static const struct json_key probe_keys[] = {
	{ "init_bytes", "init", J_COUNT },
	{ "ws_bytes", "ws", J_COUNT },
	{ "vcpus", "vcpus", J_COUNT },
	{ NULL, NULL, J_STRING },
};

static const struct json_key linux_keys[] = {
	{ "kernel", "kernel", J_STRING },
	{ "initrd", "initrd", J_STRING },
	{ "cmdline", "cmdline", J_STRING },
	{ "mem_bytes", "mem", J_COUNT },
	{ "vcpus", "vcpus", J_COUNT },
	{ NULL, NULL, J_STRING },
};

/* A duration in its largest whole unit, as args__duration reads it. */
static void duration_text(char *buf, size_t size, unsigned long long ns)
{
	static const struct { const char *unit; unsigned long long ns; } u[] = {
		{ "s", 1000000000ull }, { "ms", 1000000ull }, { "us", 1000ull },
	};

	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++)
		if (ns % u[i].ns == 0) {
			snprintf(buf, size, "%llu%s", ns / u[i].ns, u[i].unit);
			return;
		}
	snprintf(buf, size, "%lluns", ns);
}

/* A value as its option's text (*t: text, or the string's own); 0, or
 * -EINVAL naming the key when its type is not the option's. */
static int value_text(const json_t *v, const struct json_key *k,
		      const char *what, char *text, size_t size,
		      const char **t)
{
	double x = json_number_value(v);

	*t = text;
	if (k->kind == J_STRING && json_is_string(v))
		*t = json_string_value(v);
	else if (k->kind == J_COUNT && json_is_integer(v) &&
		 json_integer_value(v) >= 0)
		snprintf(text, size, "%lld", (long long)json_integer_value(v));
	else if (k->kind == J_NUMBER && json_is_number(v))
		double_text(text, size, x);
	else if (k->kind == J_SECONDS && json_is_number(v) && x >= 0 &&
		 x < 1e9)
		duration_text(text, size, (unsigned long long)llround(x * 1e9));
	else
		return err__set(EINVAL, "%s: field %s: not %s", what, k->key,
				k->kind == J_STRING ? "a string"
				: k->kind == J_COUNT ? "a whole number >= 0"
				: k->kind == J_NUMBER ? "a number"
				: "a number of seconds >= 0");
	return 0;
}

/* One value through its option's setter (its checks and messages). A
 * null initrd or command line is the option not given. */
static int from_value(struct pool_config *c, const json_t *v,
		      const struct json_key *k, const char *what)
{
	char text[64], why[512];
	const char *t;
	int ret;

	if (json_is_null(v) && !strcmp(k->key, "initrd")) {
		c->initrd = NULL;
		return 0;
	}
	if (json_is_null(v) && !strcmp(k->key, "cmdline")) {
		c->cmdline = NULL;
		return 0;
	}
	ret = value_text(v, k, what, text, sizeof(text), &t);
	if (ret == 0)
		ret = pool_config__set(c, k->option, t);
	if (ret < 0 && strncmp(err__last(), what, strlen(what))) {
		snprintf(why, sizeof(why), "%s", err__last());
		return err__set(-ret, "%s: field %s: %s", what, k->key, why);
	}
	return ret;
}

static int from_keys(struct pool_config *c, const json_t *obj,
		     const struct json_key *keys, const char *what)
{
	int ret = 0;

	if (obj && !json_is_object(obj))
		return err__set(EINVAL, "%s: not an object where the pool's "
				"settings were expected", what);
	for (const struct json_key *k = keys; ret == 0 && k->key; k++) {
		const json_t *v = json_object_get(obj, k->key);

		if (v)
			ret = from_value(c, v, k, what);
	}
	return ret;
}

/* "source" and what it names. */
static int from_source(struct pool_config *c, const json_t *j,
		       const char *what)
{
	const json_t *v = json_object_get(j, "source");
	const char *src = json_string_value(v);
	static const struct json_key dir = { "snapshot", "snapshot", J_STRING },
		strategy = { "mem_restore", "mem-restore", J_STRING };
	int ret;

	if (!v)
		return 0;
	if (src && !strcmp(src, "probe")) {
		c->source = POOL_FROM_PROBE;
		c->snapshot_dir = c->kernel = NULL;
		return from_keys(c, json_object_get(j, "probe"), probe_keys,
				 what);
	}
	if (src && !strcmp(src, "linux")) {
		if (!json_object_get(j, "kernel"))
			return err__set(EINVAL, "%s: source linux without its "
					"field kernel", what);
		c->source = POOL_FROM_LINUX;
		c->snapshot_dir = NULL;
		return from_keys(c, j, linux_keys, what);
	}
	if (!src || strcmp(src, "snapshot"))
		return err__set(EINVAL, "%s: field source: not one of probe, "
				"snapshot, linux", what);
	c->kernel = NULL;
	if (!json_object_get(j, "snapshot"))
		return err__set(EINVAL, "%s: source snapshot without its "
				"field snapshot (the directory)", what);
	ret = from_value(c, json_object_get(j, "snapshot"), &dir, what);
	if (ret == 0 && json_object_get(j, "mem_restore"))
		ret = from_value(c, json_object_get(j, "mem_restore"),
				 &strategy, what);
	return ret;
}

/* The policies' parameters, each where params_json writes it (a group's
 * whatever the policy: it may come later). */
static int from_params(struct pool_config *c, const json_t *j,
		       const char *what)
{
	const struct pool_param *p;
	const char *option;
	int ret = 0;

	for (size_t i = 0; ret == 0 && (p = pool_config__param(i, &option));
	     i++) {
		const json_t *in = p->group ? json_object_get(j, p->group) : j;
		struct json_key k = { p->json, option,
				      p->seconds ? J_SECONDS : J_NUMBER };

		if (in && !json_is_object(in))
			return err__set(EINVAL, "%s: field %s: not an object",
					what, p->group);
		if (json_object_get(in, p->json))
			ret = from_value(c, json_object_get(in, p->json), &k,
					 what);
	}
	return ret;
}

int pool_config__from_json(struct pool_config *c, const json_t *j,
			   const char *what)
{
	const json_t *pvm = json_object_get(j, "allow_pvm");
	int ret;

	if (!json_is_object(j))
		return err__set(EINVAL, "%s: not a JSON object", what);
	ret = from_source(c, j, what);
	if (ret == 0)
		ret = from_keys(c, j, top_keys, what);
	if (ret == 0)
		ret = from_params(c, j, what);
	if (ret == 0 && pvm && !json_is_boolean(pvm))
		ret = err__set(EINVAL, "%s: field allow_pvm: not true or "
			       "false", what);
	if (ret == 0 && pvm)
		c->allow_pvm = json_is_true(pvm);
	return ret;
}

/* The configuration a document holds: its "pool_config" (`tune pool`'s
 * tune-pool.json), a pool result's "config", or the document itself. */
static const json_t *config_in(const json_t *j)
{
	const char *bench = json_string_value(json_object_get(j, "bench"));

	if (json_object_get(j, "pool_config"))
		return json_object_get(j, "pool_config");
	if (bench && !strcmp(bench, "pool") && json_object_get(j, "config"))
		return json_object_get(j, "config");
	return j;
}

/* One FILE of --config, its document kept in c->loaded. */
static int load_file(struct pool_config *c, const char *path)
{
	json_error_t e;
	json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &e);

	if (!j && e.line > 0)
		return err__set(EINVAL, "--config %s: %s (line %d)", path,
				e.text, e.line);
	if (!j)
		return err__set(EINVAL, "--config %s: %s", path, e.text);
	/* every document read stays: the strings point into it */
	if (!c->loaded)
		c->loaded = json_array();
	if (!c->loaded || json_array_append_new(c->loaded, j) < 0)
		return err__set(ENOMEM, "--config %s", path);
	return pool_config__from_json(c, config_in(j), path);
}

int pool_config__load_args(struct pool_config *c, int argc, char **argv)
{
	static const char opt[] = "--config";
	const size_t len = sizeof(opt) - 1;
	int ret = 0;

	for (int i = 1; ret == 0 && i < argc && strcmp(argv[i], "--"); i++) {
		const char *file;

		if (!strcmp(argv[i], opt) && i + 1 < argc)
			file = argv[++i];
		else if (!strncmp(argv[i], opt, len) && argv[i][len] == '=')
			file = argv[i] + len + 1;
		else
			continue;
		if (c->nr_configs == POOL_CONFIGS_MAX)
			return err__set(EINVAL, "--config %s: at most %d files",
					file, POOL_CONFIGS_MAX);
		/* the parser's optarg: the same pointer (set_config) */
		c->config_args[c->nr_configs++] = file;
		ret = load_file(c, file);
	}
	return ret;
}

/* Appends " --option VALUE" to the stream, VALUE in single quotes unless
 * the shell reads it as it is. */
static void append_option(FILE *f, const char *option, const char *value)
{
	fprintf(f, " --%s", option);
	if (!value)
		return;
	fputc(' ', f);
	output__shell_word(f, value);
}

static void append_keys(FILE *f, const json_t *obj,
			const struct json_key *keys)
{
	char text[64];
	const char *t;

	for (const struct json_key *k = keys; k->key; k++) {
		const json_t *v = json_object_get(obj, k->key);

		if (v && value_text(v, k, "", text, sizeof(text), &t) == 0)
			append_option(f, k->option, t);
	}
}

char *pool_config__options_text(const struct pool_config *c)
{
	const struct pool_param *p;
	const char *option, *t;
	char value[64];
	json_t *j = pool_config__to_json(c);
	char *text = NULL;
	size_t len = 0;
	FILE *f = j ? open_memstream(&text, &len) : NULL;

	if (!f) {
		json_decref(j);
		return NULL;
	}
	if (c->source == POOL_FROM_SNAPSHOT) {
		append_option(f, "snapshot", c->snapshot_dir);
		append_option(f, "mem-restore", c->strategy->name);
	} else if (c->source == POOL_FROM_LINUX) {
		append_keys(f, j, linux_keys);
	} else {
		append_keys(f, json_object_get(j, "probe"), probe_keys);
	}
	append_keys(f, j, top_keys);
	for (size_t i = 0; (p = pool_config__param(i, &option)); i++) {
		const json_t *in = p->group ? json_object_get(j, p->group) : j;
		struct json_key k = { p->json, option,
				      p->seconds ? J_SECONDS : J_NUMBER };

		if (json_object_get(in, p->json) &&
		    value_text(json_object_get(in, p->json), &k, "", value,
			       sizeof(value), &t) == 0)
			append_option(f, option, t);
	}
	if (c->allow_pvm)
		append_option(f, "allow-pvm", NULL);
	json_decref(j);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}
