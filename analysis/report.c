/* The report generator: reads result documents, writes report.md, the
 * CSV files the gnuplot scripts of plots/ read, and the plots. */
#include "report_driver.h"
#include "report_int.h"

#include "args.h"
#include "capacity.h"
#include "cli.h"
#include "err.h"
#include "hosts.h"
#include "output.h"
#include "plot.h"
#include "report_tune.h"
#include "result.h"
#include "stats.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <inttypes.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- loading ---- */

/* What load_input made of in->root. */
static void free_input(struct input *in)
{
	result__free(&in->doc);
	free(in->groups);
	free(in->stats);
	free(in->stats_ret);
	in->groups = NULL;
	in->stats = NULL;
	in->stats_ret = NULL;
}

/* Loads path (or takes doc, its document parsed, when not NULL) into in:
 * 0 for a driver's document, 1 for a tuner's (only in->root then),
 * -EINVAL naming the file. in->root is the caller's to free either
 * way. */
static int load_input(const char *path, json_t *doc, struct input *in)
{
	char why[400];
	json_error_t e;
	const json_t *schema;
	int ret;

	in->path = path;
	in->root = doc ? json_incref(doc) : output__json_load(path, &e);
	if (!in->root)
		return err__set(EINVAL, "%s: not a readable JSON document: %s",
				path, e.text);
	schema = get(in->root, "schema");
	if (!json_is_object(in->root) || !json_is_string(get(in->root, "bench")))
		return err__set(EINVAL, "%s: not a coldstart result document "
				"(no \"bench\")", path);
	if (!json_is_integer(schema))
		return err__set(EINVAL, "%s: no result schema version; this "
				"coldstart reads schema %d", path,
				RESULT_SCHEMA);
	if (json_integer_value(schema) != RESULT_SCHEMA)
		return err__set(EINVAL, "%s: result schema version %"
				JSON_INTEGER_FORMAT " is not supported (this "
				"coldstart reads %d)", path,
				json_integer_value(schema), RESULT_SCHEMA);
	if (result__is_tune(json_string_value(get(in->root, "bench"))))
		return 1;
	result__drop_empty_series(in->root);
	/* documents from before the VMs/GiB and VMs/s series get them */
	ret = capacity__derive_series(in->root);
	if (ret == 0)
		ret = result__parse(in->root, &in->doc);
	if (ret == 0 && (ret = report__index_series(in)) < 0)
		free_input(in);
	if (ret < 0) {
		snprintf(why, sizeof(why), "%s", err__last());
		return err__set(-ret, "%s: %s", path, why);
	}
	return 0;
}

static bool same_file(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	return realpath(a, ra) && realpath(b, rb) && !strcmp(ra, rb);
}

static bool loaded(const struct report *r, const char *path)
{
	for (size_t i = 0; i < r->n; i++)
		if (same_file(r->in[i].path, path))
			return true;
	for (size_t i = 0; i < r->nr_tune; i++)
		if (same_file(r->tune[i].path, path))
			return true;
	return false;
}

/* Takes the reference to root. */
static int add_tune(struct report *r, const char *path, json_t *root)
{
	if (r->nr_tune == REPORT_MAX_TUNE) {
		json_decref(root);
		return err__set(EINVAL, "%s: more than %d tuner documents",
				path, REPORT_MAX_TUNE);
	}
	snprintf(r->tune[r->nr_tune].path, sizeof(r->tune[0].path), "%s",
		 path);
	r->tune[r->nr_tune++].root = root;
	return 0;
}

/* The tuners' documents lying beside an input (a results directory that
 * `coldstart tune ... --out` wrote into) join the report; one that cannot
 * be read is left out with a warning, as it was not asked for. */
static void discover_tune(struct report *r, const char *input)
{
	static const char *const names[] = { "tune-pool.json",
					     "tune-restore.json",
					     "tune-host.json",
					     "tune-session.json" };
	char copy[PATH_MAX], path[PATH_MAX + 32];
	const char *dir;

	snprintf(copy, sizeof(copy), "%s", input);
	dir = dirname(copy);
	for (size_t k = 0; k < sizeof(names) / sizeof(*names); k++) {
		struct input in = { 0 };
		int ret;

		snprintf(path, sizeof(path), "%s/%s", dir, names[k]);
		if (access(path, F_OK) != 0 || loaded(r, path))
			continue;
		ret = load_input(path, NULL, &in);
		if (ret == 1 && add_tune(r, path, in.root) == 0)
			continue;
		if (ret != 1)
			json_decref(in.root);
		fprintf(stderr, "coldstart: report: warning: %s left out: %s\n",
			path, ret < 0 ? err__last() : "not a tuner's document");
	}
}

/* Every input: the drivers' documents into r->in, the tuners' into
 * r->tune; then the tuners' documents beside them. */
static int load_all(struct report *r)
{
	const struct report_opts *o = r->o;
	size_t given;

	for (size_t i = 0; i < o->nr_inputs; i++) {
		struct input *in = &r->in[r->n];
		int ret = load_input(o->inputs[i], o->docs ? o->docs[i] : NULL,
				     in);

		if (ret == 0) {
			r->n++;
			continue;
		}
		if (ret == 1)
			ret = add_tune(r, o->inputs[i], in->root);
		else
			json_decref(in->root);
		memset(in, 0, sizeof(*in));
		if (ret < 0)
			return ret;
	}
	given = r->n;
	for (size_t i = 0; i < given; i++)
		discover_tune(r, r->in[i].path);
	return 0;
}

/* Labels: the bench name, numbered when a bench appears again. */
static void label_inputs(struct report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		unsigned int same = 1;
		char safe[48];

		for (size_t k = 0; k < i; k++)
			same += !strcmp(r->in[k].doc.bench, r->in[i].doc.bench);
		file_part(safe, sizeof(safe), r->in[i].doc.bench);
		if (same > 1)
			snprintf(r->in[i].label, sizeof(r->in[i].label), "%s-%u",
				 safe, same);
		else
			snprintf(r->in[i].label, sizeof(r->in[i].label), "%s",
				 safe);
	}
}



static int write_csv(const struct report *r, const char *name, csv_fn *fn)
{
	struct output_text t;
	int ret = output__text_open(&t);

	if (ret < 0)
		return ret;
	fn(t.f, r);
	return output__text_write(&t, r->o->out_dir, name);
}
/* ---- report.md ---- */

/* First, before any number: whether the results come from an emulated
 * host, whose timings must not be read as native ones. */
static void md_emulated(struct report *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n; i++)
		n += result__emulated_note(r->in[i].root) != NULL;
	if (n && n == r->n) {
		fprintf(r->md, "> **%s**\n\n",
			result__emulated_note(r->in[0].root));
		return;
	}
	if (!n)
		return;
	fputs("> **Measured inside an emulated SVM host (QEMU TCG), so "
	      "functional timings only:", r->md);
	for (size_t i = 0; i < r->n; i++)
		if (result__emulated_note(r->in[i].root))
			fprintf(r->md, " %s", r->in[i].label);
	fputs("; the others are native. Compare only ratios within one "
	      "run.**\n\n", r->md);
}

/* "pvm", "svm (emulated host qemu-tcg-svm)", "none (REASON)"; sysinfo
 * before schema 2 has the flavour alone. */
static void kvm_text(char *buf, size_t len, const json_t *sys)
{
	const json_t *kvm = get(sys, "kvm");
	const char *flavour = str_or(kvm, "flavour", "?");

	if (result__sysinfo_emulated(sys))
		snprintf(buf, len, "%s (emulated host %s)", flavour,
			 result__sysinfo_emulated(sys));
	else if (json_is_false(get(kvm, "usable")))
		snprintf(buf, len, "%s (%s)", flavour,
			 str_or(kvm, "reason", "no usable device"));
	else
		snprintf(buf, len, "%s", flavour);
}

static void md_host(struct report *r)
{
	const json_t *first = r->n ? r->in[0].root : r->tune[0].root;
	const json_t *sys = get(first, "sysinfo"), *cpu = get(sys, "cpu");
	const json_t *build = get(first, "coldstart");
	char kvm[400];

	kvm_text(kvm, sizeof(kvm), sys);
	fputs("# coldstart benchmark report\n\n", r->md);
	md_emulated(r);
	fprintf(r->md, "- host: %s, %s, %" JSON_INTEGER_FORMAT " CPUs, %.1f "
		"GiB, kernel %s, KVM %s\n",
		str_or(sys, "hostname", "?"), str_or(cpu, "model", "?"),
		json_integer_value(get(cpu, "online_cpus")),
		(double)json_integer_value(get(get(sys, "memory"),
					       "total_kib")) / 1048576.0,
		str_or(get(sys, "kernel"), "release", "?"), kvm);
	fprintf(r->md, "- coldstart %s, commit %s\n",
		str_or(build ? build : get(sys, "coldstart"), "version", "?"),
		str_or(build ? build : get(sys, "coldstart"), "commit", "?"));
	fputs("- results:", r->md);
	for (size_t i = 0; i < r->n; i++) {
		char *copy = strdup(r->in[i].path);

		fprintf(r->md, " `%s`", copy ? basename(copy) : r->in[i].path);
		free(copy);
	}
	for (size_t i = 0; i < r->nr_tune; i++) {
		char *copy = strdup(r->tune[i].path);

		fprintf(r->md, " `%s`", copy ? basename(copy) : r->tune[i].path);
		free(copy);
	}
	fputs("\n\nTimes are medians unless marked; the 95 % interval of the "
	      "median is a bootstrap percentile interval (1000 resamples). "
	      "Raw samples are in the JSON documents; plotted data in the "
	      "CSV files beside this report.\n", r->md);
}

static void left_out_heading(struct report *r, bool *any)
{
	if (!*any)
		fputs("\n## Left out\n\nWhat this host could not do, and "
		      "why; the rest ran.\n\n", r->md);
	*any = true;
}

/* Everything the drivers left out, in one place near the top: each
 * document's "skipped" entries and the suite's drivers that could not
 * run at all. */
static void md_left_out(struct report *r)
{
	const json_t *x;
	bool any = false;
	size_t k;

	for (size_t i = 0; i < r->n; i++) {
		const struct input *in = &r->in[i];

		json_array_foreach(get(in->root, "skipped"), k, x) {
			left_out_heading(r, &any);
			fprintf(r->md, "- %s: %s: %s\n", in->label,
				str_or(x, "what", "?"), str_or(x, "why", "?"));
		}
		json_array_foreach(get(in->root, "drivers"), k, x) {
			if (strcmp(str_or(x, "status", ""), "skipped"))
				continue;
			left_out_heading(r, &any);
			fprintf(r->md, "- %s: bench %s: this host cannot run "
				"it (exit 77)\n", in->label,
				str_or(x, "name", "?"));
		}
	}
}

/* ---- the whole report ---- */

/* The generic CSV files, then each driver's when its documents are
 * among the inputs. */
static int write_all_csv(const struct report *r)
{
	int ret = write_csv(r, "series.csv", report__series_csv);

	if (ret == 0)
		ret = write_csv(r, "cdf.csv", report__cdf_csv);
	for (size_t i = 0; ret == 0 && i < report__nr_drivers; i++) {
		const struct report_driver *d = report__drivers[i];

		if (d->csv && report__find_input(r, d->name) >= 0)
			ret = write_csv(r, d->csv_name, d->csv);
	}
	return ret;
}

/* Whether the tuner's own Markdown report lies beside report.md. */
static bool tune_md_beside(const struct report *r, const struct tune_doc *t)
{
	char copy[PATH_MAX + 32], mine[PATH_MAX + 64], there[PATH_MAX + 64];
	const char *name = report_tune__file(json_string_value(
		get(t->root, "bench")));

	snprintf(copy, sizeof(copy), "%s", t->path);
	snprintf(mine, sizeof(mine), "%s/%s", dirname(copy), name);
	snprintf(there, sizeof(there), "%s/%s", r->o->out_dir, name);
	return access(mine, R_OK) == 0 && same_file(mine, there);
}

static void md_tuning(struct report *r)
{
	if (r->nr_tune)
		fputs("\n## Tuning\n\nWhat `coldstart tune` recommends from "
		      "these measurements.\n", r->md);
	for (size_t i = 0; i < r->nr_tune; i++) {
		char *copy = strdup(r->tune[i].path);

		report_tune__section(r->md, r->tune[i].root,
				     copy ? basename(copy) : r->tune[i].path,
				     tune_md_beside(r, &r->tune[i]));
		free(copy);
	}
}

static int write_md(struct report *r)
{
	struct output_text t;
	int ret = output__text_open(&t);

	if (ret < 0)
		return ret;
	r->md = t.f;
	md_host(r);
	report__md_summary(r);
	report__md_capacity(r);
	md_left_out(r);
	for (size_t i = 0; i < r->n; i++)
		report__md_doc(r, &r->in[i], report__driver(r->in[i].doc.bench));
	md_tuning(r);
	r->md = NULL;
	if (r->o->md)
		return output__text_write(&t, r->o->out_dir, "report.md");
	ret = output__text_close(&t, "report.md");
	free(t.text);
	return ret;
}

int report__generate(const struct report_opts *o, bool *plots_skipped)
{
	struct report r = { .o = o };
	int ret = 0;

	*plots_skipped = false;
	r.in = calloc(o->nr_inputs, sizeof(*r.in));
	if (!r.in)
		return err__set(ENOMEM, "loading results");
	ret = load_all(&r);
	if (ret == 0) {
		label_inputs(&r);
		ret = output__mkdirs(o->out_dir);
	}
	if (ret == 0)
		ret = write_all_csv(&r);
	if (ret == 0) {
		r.gnuplot = (o->png || o->svg) && plot__available();
		*plots_skipped = (o->png || o->svg) && !r.gnuplot;
		ret = write_md(&r);
	}
	if (ret == 0 && r.failed)
		ret = err__set(EIO, "%u plot(s) failed", r.failed);
	for (size_t i = 0; i < r.n; i++) {
		free_input(&r.in[i]);
		json_decref(r.in[i].root);
	}
	for (size_t i = 0; i < r.nr_tune; i++)
		json_decref(r.tune[i].root);
	free(r.in);
	return ret;
}

int report__classify(const char *path)
{
	json_error_t e;
	json_t *root = output__json_load(path, &e);
	bool yes = json_is_object(root) &&
		   json_is_string(get(root, "bench")) &&
		   json_is_integer(get(root, "schema"));

	if (!root)
		return err__set(EINVAL, "%s is not JSON: %s (line %d, column "
				"%d)", path, e.text, e.line, e.column);
	json_decref(root);
	return yes;
}

static bool is_result(const char *path)
{
	return report__classify(path) == 1;
}

int report__refresh_dir(const char *dir, bool *refreshed)
{
	struct report_opts o = { .out_dir = dir, .md = true, .png = true,
				 .svg = true, .quiet = true };
	char pattern[PATH_MAX + 16], md[PATH_MAX + 16];
	glob_t g = { 0 };
	bool skipped;
	int ret = 0;

	*refreshed = false;
	snprintf(md, sizeof(md), "%s/report.md", dir);
	if (access(md, F_OK) != 0)
		return 0;
	snprintf(pattern, sizeof(pattern), "%s/*.json", dir);
	if (glob(pattern, 0, NULL, &g) != 0)
		return 0;
	o.inputs = calloc(g.gl_pathc, sizeof(*o.inputs));
	if (!o.inputs)
		ret = err__set(ENOMEM, "refreshing %s", md);
	for (size_t i = 0; ret == 0 && i < g.gl_pathc; i++)
		if (is_result(g.gl_pathv[i]))
			o.inputs[o.nr_inputs++] = g.gl_pathv[i];
	if (ret == 0 && o.nr_inputs)
		ret = report__generate(&o, &skipped);
	*refreshed = ret == 0 && o.nr_inputs;
	free(o.inputs);
	globfree(&g);
	return ret;
}

void report__join(const char *who, const char *dir, bool quiet)
{
	bool refreshed;

	if (report__refresh_dir(dir, &refreshed) < 0)
		fprintf(stderr, "coldstart: %s: warning: %s/report.md not "
			"updated: %s\n", who, dir, err__last());
	else if (refreshed && !quiet)
		printf("%s/report.md now includes it\n", dir);
}
