/* Internals shared by the report generator's files (report.c and
 * report_*.c): the loaded documents, small JSON and naming helpers, and
 * each part's entry points. Not for use outside the report. */
#ifndef COLDSTART_REPORT_INT_H
#define COLDSTART_REPORT_INT_H

#include "report.h"
#include "result.h"
#include "stats.h"

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Resamples of each series' bootstrap interval. The fuzz build takes the
 * same paths with fewer (CMakeLists.txt): the intervals' precision is not
 * what it checks, and 1,000 per series were most of its time per input. */
#ifndef REPORT_CI_RESAMPLES
#define REPORT_CI_RESAMPLES 1000
#endif

struct sstat {
	struct summary s;
	double lo, hi;
};

static inline int series_stats(const struct result_series *rs, struct sstat *st)
{
	int ret = stats__summarize(rs->samples, rs->n, &st->s);

	if (ret == 0 && stats__bootstrap_median_ci(rs->samples, rs->n,
						   REPORT_CI_RESAMPLES, 0.95, 1,
						   &st->lo, &st->hi) < 0)
		st->lo = st->hi = st->s.p50;
	return ret;
}

#define REPORT_GROUP_LEN 96

struct input {
	const char *path;
	char label[64];
	json_t *root;
	struct result_doc doc;
	/* found once per series at load (report__index_series), as each
	 * part asked again per series: its CDF group (a search of every
	 * series each time) and its summary with the bootstrap interval of
	 * its median (series_stats; 0 or -errno in stats_ret) */
	char (*groups)[REPORT_GROUP_LEN];
	struct sstat *stats;
	int *stats_ret;
};

/* A tuner's document: rendered in "Tuning", not as series. */
struct tune_doc {
	char path[PATH_MAX + 32];
	json_t *root;
};

#define REPORT_MAX_TUNE 8

struct report {
	const struct report_opts *o;
	struct input *in;
	size_t n;
	struct tune_doc tune[REPORT_MAX_TUNE];
	size_t nr_tune;
	FILE *md;
	bool gnuplot;
	unsigned int plots, failed;
};
/* ---- small helpers, shared by the report_*.c files ---- */

static inline const json_t *get(const json_t *o, const char *key)
{
	return json_object_get(o, key);
}

static inline const char *str_or(const json_t *o, const char *key, const char *def)
{
	const char *s = json_string_value(get(o, key));

	return s ? s : def;
}

/* ns series are shown in ms; others in their unit. */
static inline double scale_of(const char *unit)
{
	return !strcmp(unit, "ns") ? 1e6 : 1;
}

static inline const char *shown_unit(const char *unit)
{
	return !strcmp(unit, "ns") ? "ms" : unit;
}

/* CSV fields and gnuplot words must not hold separators or quotes. */
static inline void safe_name(char *out, size_t len, const char *name)
{
	size_t i = 0;

	for (; name[i] && i + 1 < len; i++)
		out[i] = strchr(",\"' \t\n\\", name[i]) ? '_' : name[i];
	out[i] = '\0';
}

/* A file name part: safe_name plus '/' -> '-'. */
static inline void file_part(char *out, size_t len, const char *name)
{
	safe_name(out, len, name);
	for (char *p = out; *p; p++)
		if (*p == '/' || *p == '=')
			*p = '-';
}

/* A series' median, 0 when it has no samples. */
static inline double median_ns(const struct result_series *rs)
{
	struct summary sm;

	return stats__summarize(rs->samples, rs->n, &sm) == 0 ? sm.p50 : 0;
}

/* series_stats of in's series k, as found at load. */
static inline int report__stats(const struct input *in, size_t k,
				struct sstat *st)
{
	*st = in->stats[k];
	return in->stats_ret[k];
}

/* median_ns of in's series k, as found at load. */
static inline double report__median(const struct input *in, size_t k)
{
	return in->stats_ret[k] == 0 ? in->stats[k].s.p50 : 0;
}


typedef void csv_fn(FILE *f, const struct report *r);

/* report_inputs.c: the index of the input of driver `bench`, or -1 */
int report__find_input(const struct report *r, const char *bench);

/* report_csv.c: the generic CSV files */
void report__series_csv(FILE *f, const struct report *r);
void report__cdf_csv(FILE *f, const struct report *r);
/* in->groups: each series' CDF group, its phase (cache state, memory
 * size), or "all"; in->stats. 0 or -ENOMEM with a message. */
int report__index_series(struct input *in);

/* report_plot.c: running the plots/ scripts, images in report.md */
void report__plot_cdfs(struct report *r, const struct input *in);
/* Space-separated distinct values of CSV column `col` (0-based) of the
 * CSV text that fn writes, header skipped, with a space either side
 * (" a b "); NULL without memory. Free it. */
char *report__csv_column(const struct report *r, csv_fn *fn, int col);
/* Draws plots/`script`.gp with `vars` into `base`.png/.svg (the formats
 * asked for) and shows the first in report.md under `title`. */
void report__plot_show(struct report *r, const char *script,
		       const char *base, const char *vars, const char *title);
/* report__plot_show of `script` (reading `script`.csv) when fn's CSV has
 * data in column `col`, its distinct values passed as `var`. */
void report__plot_table(struct report *r, const char *script, csv_fn *fn,
			int col, const char *var, const char *extra,
			const char *title);

/* report_md.c: one document's section of report.md, with the parts of
 * its driver `d` (NULL: the generic series table) */
struct report_driver;
void report__md_doc(struct report *r, const struct input *in,
		    const struct report_driver *d);
/* One unit for a table column: chosen once from a reference value (the
 * median of the rows' medians), so a column never mixes us and ms. */
struct col {
	const char *unit;
	double div;
	int prec;
};
void report__col_for(const char *unit, double ref, struct col *c);
const char *report__col_text(char *buf, size_t len, const struct col *c,
			     double v);
/* The median of the medians of in's series in `unit` (all series when
 * unit is NULL) that `pick` accepts (all when NULL). */
double report__median_of_medians(const struct input *in, const char *unit,
				 bool (*pick)(const struct input *, size_t));

/* report_summary.c: the Summary section, each driver's lines */
void report__time_text(char *buf, size_t len, double ns);
void report__md_summary(struct report *r);
/* "rate (probe `d1cac105`)": the document's label and the guest it
 * measured (report__guest_text), which each driver's Summary line starts
 * with, as the user's own Linux guest differs by far from the probe; the
 * label alone for a document without a "guest" object. */
#define REPORT_NAME_LEN 192
const char *report__summary_name(char *buf, size_t len,
				 const struct input *in);

/* report_inputs.c: "probe `d1cac105`", a document's guest object as
 * its name and the start of its sha256 (a Linux guest's: its kernel's). */
void report__guest_text(char *buf, size_t len, const json_t *g);

/* report_rate.c: among rate's series of `mode` and `kind` ("sustained",
 * "burst") the level with the highest "vms_per_s", or NULL. */
const json_t *report__peak_rate(const json_t *series, const char *mode,
				const char *kind);

/* report_capacity.c: VMs per host for each measured guest and variant */
void report__md_capacity(struct report *r);

#endif
