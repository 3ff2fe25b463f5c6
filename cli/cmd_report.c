/* `coldstart report`: Markdown, CSV and plots from stored results, or a
 * cross-host report from several results directories. */
#include "commands.h"

#include "args.h"
#include "compare_cli.h"
#include "err.h"
#include "output.h"
#include "report.h"
#include "report_driver.h"

#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Prints text's words, wrapped before column 80, and a newline. */
static void wrap(FILE *out, const char *text)
{
	int col = 0;

	while (*text) {
		int len = (int)strcspn(text, " ");

		if (col && col + 1 + len >= 80) {
			fputc('\n', out);
			col = 0;
		} else if (col) {
			fputc(' ', out);
			col++;
		}
		col += fprintf(out, "%.*s", len, text);
		text += len + (text[len] == ' ');
	}
	fputc('\n', out);
}

/* The CSV files and plots come from the drivers' descriptors, so the
 * help names each one the report can write. */
static void usage(FILE *out)
{
	char csvs[256] = "", plots[512] = "", text[1024];

	fputs("Usage: coldstart report RESULTS.json... | RESULTS_DIR [--out DIR] "
	      "[--format LIST]\n"
	      "       coldstart report RESULTS_DIR RESULTS_DIR... --out DIR\n", out);
	for (size_t i = 0; i < report__nr_drivers; i++) {
		const struct report_driver *d = report__drivers[i];
		size_t len = strlen(csvs);

		if (d->csv_name)
			snprintf(csvs + len, sizeof(csvs) - len, ", %s",
				 d->csv_name);
		len = strlen(plots);
		if (d->plot && d->plot_what)
			snprintf(plots + len, sizeof(plots) - len, ", %s",
				 d->plot_what);
	}
	snprintf(text, sizeof(text), "Reads result documents of any "
		 "`coldstart bench` driver (schema 1) and writes DIR/report.md "
		 "(host, version, a summary, tables per driver, warnings), CSV "
		 "files for plotting (series.csv, cdf.csv%s) and gnuplot plots "
		 "(latency CDFs%s), each when its data is present.", csvs,
		 plots);
	wrap(out, text);
	fputs("\n"
	      "  --out DIR       output directory (default: the first "
	      "input's directory,\n                  unless it already "
	      "holds a report.md: then --out is needed)\n"
	      "  --format LIST   md, png, svg (default md,png,svg); CSV is "
	      "always written;\n                  without gnuplot the plots "
	      "are skipped with a warning\n"
	      "  -q, --quiet     print nothing on success\n\n"
	      "A results directory stands for every result document in it "
	      "(the tuners'\ntoo). Several results directories, one per host, "
	      "make a cross-host report:\nDIR/report.md with one row per "
	      "host, grouped by CPU model, kernel and KVM\nflavour, each "
	      "driver's headline median (as `coldstart compare --hosts`).\n",
	      out);
}

static int parse_formats(const char *text, struct report_opts *o)
{
	static const char *const names[] = { "md", "png", "svg", NULL };
	char buf[64], *save = NULL;
	unsigned int k;
	int ret = 0;

	snprintf(buf, sizeof(buf), "%s", text);
	o->md = o->png = o->svg = false;
	for (char *t = strtok_r(buf, ",", &save); ret == 0 && t;
	     t = strtok_r(NULL, ",", &save)) {
		ret = args__choice("--format", t, names, &k);
		if (ret == 0)
			*(k == 0 ? &o->md : k == 1 ? &o->png : &o->svg) = true;
	}
	return ret;
}

static int parse(int argc, char **argv, struct report_opts *o,
		 char *dir_buf)
{
	static const struct option opts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, ret = 0;

	*o = (struct report_opts){ .md = true, .png = true, .svg = true };
	dir_buf[0] = '\0'; /* stays empty when --out is given */
	optind = 0;
	opterr = 0;
	while (ret == 0 && (c = getopt_long(argc, argv, "o:f:qh", opts, NULL)) != -1) {
		if (c == 'h')
			return 1;
		if (c == 'o')
			o->out_dir = optarg;
		else if (c == 'f')
			ret = parse_formats(optarg, o);
		else if (c == 'q')
			o->quiet = true;
		else
			ret = args__bad_option(argv);
	}
	if (ret < 0)
		return ret;
	if (optind >= argc)
		return err__set(EINVAL, "no result documents given");
	o->inputs = argv + optind;
	o->nr_inputs = (size_t)(argc - optind);
	if (!o->out_dir) {
		snprintf(dir_buf, PATH_MAX, "%s", o->inputs[0]);
		o->out_dir = dirname(dir_buf);
	}
	return 0;
}

/* Without --out the report goes next to its first input; a report
 * already there (say a suite's, of every driver) must not be replaced by
 * one of fewer documents. */
static bool holds_report(const char *dir)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/report.md", dir);
	return access(path, F_OK) == 0;
}

static int refuse_default_dir(const char *dir)
{
	return cli__error(CLI_USAGE, "report: %s already holds a report "
			  "(report.md, CSV, plots) that this one would "
			  "replace; nothing written. Give --out DIR: a new "
			  "directory, or %s itself to replace it on purpose",
			  dir, dir);
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* `report DIR DIR...`: many hosts' results directories side by side in
 * OUT/report.md (the table of `compare --hosts`). */
static int hosts_report(const struct report_opts *o, bool out_given)
{
	struct output_text t;
	int ret;

	if (!out_given)
		return cli__error(CLI_USAGE, "report: several results "
				  "directories make a cross-host report; give "
				  "--out DIR for it");
	ret = output__mkdirs(o->out_dir);
	if (ret == 0)
		ret = output__text_open(&t);
	if (ret < 0)
		return cli__error(CLI_FAIL, "report: %s", err__last());
	ret = hosts__table(o->inputs, o->nr_inputs, t.f);
	if (ret == 0)
		ret = output__text_write(&t, o->out_dir, "report.md");
	else if (output__text_close(&t, "report.md") == 0)
		free(t.text);
	if (ret < 0)
		return cli__error(ret == -EINVAL ? CLI_USAGE : CLI_FAIL,
				  "report: %s", err__last());
	if (!o->quiet)
		printf("cross-host report written to %s/report.md\n",
		       o->out_dir);
	return CLI_OK;
}

/* `report DIR`: every result document in DIR (inputs point into g). */
static int dir_inputs(struct report_opts *o, glob_t *g)
{
	char pattern[PATH_MAX + 16];
	char **in;

	snprintf(pattern, sizeof(pattern), "%s/*.json", o->inputs[0]);
	if (glob(pattern, 0, NULL, g) != 0)
		return err__set(EINVAL, "no result documents in it");
	in = calloc(g->gl_pathc, sizeof(*in));
	if (!in)
		return err__set(ENOMEM, "out of memory");
	o->nr_inputs = 0;
	o->inputs = in;
	/* other JSON may lie beside the results; a broken document is
	 * named rather than left out of the report without a word */
	for (size_t i = 0; i < g->gl_pathc; i++) {
		int kind = report__classify(g->gl_pathv[i]);

		if (kind < 0)
			return kind;
		if (kind)
			in[o->nr_inputs++] = g->gl_pathv[i];
	}
	return o->nr_inputs ? 0
			    : err__set(EINVAL, "no result documents in it");
}

static int generate(const struct report_opts *o, bool default_out)
{
	bool skipped;
	int ret;

	if (default_out && holds_report(o->out_dir))
		return refuse_default_dir(o->out_dir);
	ret = report__generate(o, &skipped);
	if (ret < 0)
		return cli__error(ret == -EINVAL ? CLI_USAGE : CLI_FAIL,
				  "report: %s", err__last());
	if (skipped)
		fprintf(stderr, "coldstart: report: warning: gnuplot is not "
			"installed; wrote Markdown and CSV without plots "
			"(apt-get install gnuplot-nox)\n");
	if (!o->quiet)
		printf("report written to %s/\n", o->out_dir);
	return CLI_OK;
}

int cmd_report(int argc, char **argv)
{
	char dir_buf[PATH_MAX];
	struct report_opts o;
	glob_t g = { 0 };
	char **given;
	size_t dirs = 0;
	int ret = parse(argc, argv, &o, dir_buf);

	if (ret != 0)
		return cli__parsed(ret, "report", usage);
	for (size_t i = 0; i < o.nr_inputs; i++)
		dirs += is_dir(o.inputs[i]);
	if (dirs && dirs != o.nr_inputs)
		return cli__error(CLI_USAGE, "report: give result documents or "
				  "results directories, not both");
	if (dirs > 1)
		return hosts_report(&o, !dir_buf[0]);
	if (!dirs)
		return generate(&o, dir_buf[0] != '\0');
	given = o.inputs;
	if (dir_buf[0]) /* by default the directory's own report */
		o.out_dir = given[0];
	ret = dir_inputs(&o, &g);
	if (ret < 0)
		ret = cli__error(CLI_USAGE, "report: %s: %s", given[0],
				 err__last());
	else
		ret = generate(&o, dir_buf[0] != '\0');
	if (o.inputs != given)
		free(o.inputs);
	globfree(&g);
	return ret;
}
