/* Loading result documents from files and directories. */
#include "result_set.h"

#include "err.h"
#include "regfile.h"
#include "result.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* jansson's reader: a buffer's worth at a time, as json_loadf takes a
 * character at a time (a locked getc), seconds on a document of
 * millions of samples. */
static size_t read_some(void *buf, size_t len, void *arg)
{
	FILE *f = arg;
	size_t n = fread(buf, 1, len, f);

	return n == 0 && ferror(f) ? (size_t)-1 : n;
}

int result__load_file(const char *path, struct result_doc *doc)
{
	char why[400];
	const char *bench;
	json_error_t e;
	json_t *root;
	FILE *f = regfile__fopen(path); /* a FIFO must not hang compare */
	int ret;

	*doc = (struct result_doc){ 0 };
	if (!f)
		return err__set(errno, "cannot read %s: %s", path,
				errno == EINVAL ? "not a regular file"
						: strerror(errno));
	root = json_load_callback(read_some, f, 0, &e);
	fclose(f);
	if (!root)
		return err__set(EINVAL, "%s is not JSON: %s (line %d, column "
				"%d)", path, e.text, e.line, e.column);
	bench = json_string_value(json_object_get(root, "bench"));
	if (bench && result__is_tune(bench)) {
		ret = err__set(ENOMSG, "%s is a tuner's document (%s), not a "
			       "benchmark result", path, bench);
		json_decref(root);
		return ret;
	}
	/* a pool run without misses has an empty .miss series: nothing to
	 * compare, not a malformed document */
	result__drop_empty_series(root);
	ret = result__parse(root, doc);
	json_decref(root);
	if (ret < 0) {
		snprintf(why, sizeof(why), "%s", err__last());
		return err__set(-ret, "%s: %s", path, why);
	}
	return 0;
}

static int is_json_name(const struct dirent *d)
{
	size_t len = strlen(d->d_name);

	return d->d_name[0] != '.' && len > 5 &&
	       !strcmp(d->d_name + len - 5, ".json");
}

static int add_file(struct result_set *set, const char *dir,
		    const char *name)
{
	struct result_entry *e = &set->docs[set->n];
	const struct result_entry *twin;
	int ret;

	if (asprintf(&e->path, "%s/%s", dir, name) < 0) {
		e->path = NULL;
		return err__set(ENOMEM, "allocating a path");
	}
	ret = result__load_file(e->path, &e->doc);
	if (ret == -ENOMSG) /* a tuner's document beside the results */
		set->skipped[set->nr_skipped++] = e->path;
	if (ret == -ENOMSG)
		return 0;
	if (ret < 0) {
		free(e->path);
		return ret;
	}
	twin = result__set_find(set, e->doc.bench);
	set->n++;
	if (twin)
		return err__set(EINVAL, "%s and %s are both results of bench "
				"'%s'; keep one per directory", twin->path,
				e->path, e->doc.bench);
	return 0;
}

static int load_dir(const char *path, struct result_set *set)
{
	struct dirent **names;
	int n = scandir(path, &names, is_json_name, alphasort), ret = 0;

	if (n < 0)
		return err__sys(errno, "cannot list %s", path);
	set->docs = calloc((size_t)n + 1, sizeof(*set->docs));
	set->skipped = calloc((size_t)n + 1, sizeof(*set->skipped));
	if (!set->docs || !set->skipped)
		ret = err__set(ENOMEM, "allocating results");
	for (int i = 0; i < n; i++) {
		if (ret == 0)
			ret = add_file(set, path, names[i]->d_name);
		free(names[i]);
	}
	free(names);
	if (ret == 0 && set->n == 0)
		ret = err__set(EINVAL, "%s holds no result documents (*.json)",
			       path);
	return ret;
}

static int load_one(const char *path, struct result_set *set)
{
	int ret;

	set->docs = calloc(1, sizeof(*set->docs));
	if (!set->docs || !(set->docs->path = strdup(path)))
		return err__set(ENOMEM, "allocating results");
	ret = result__load_file(path, &set->docs->doc);
	if (ret < 0) {
		free(set->docs->path);
		return ret;
	}
	set->n = 1;
	return 0;
}

int result__load_set(const char *path, struct result_set *set)
{
	struct stat st;
	int ret;

	*set = (struct result_set){ .where = path };
	if (stat(path, &st) < 0)
		return err__sys(errno, "cannot read %s", path);
	set->is_dir = S_ISDIR(st.st_mode);
	ret = set->is_dir ? load_dir(path, set) : load_one(path, set);
	if (ret < 0)
		result__free_set(set);
	return ret;
}

void result__free_set(struct result_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		result__free(&set->docs[i].doc);
		free(set->docs[i].path);
	}
	free(set->docs);
	for (size_t i = 0; i < set->nr_skipped; i++)
		free(set->skipped[i]);
	free(set->skipped);
	*set = (struct result_set){ 0 };
}

const struct result_entry *result__set_find(const struct result_set *set,
					     const char *bench)
{
	for (size_t i = 0; i < set->n; i++)
		if (!strcmp(set->docs[i].doc.bench, bench))
			return &set->docs[i];
	return NULL;
}
