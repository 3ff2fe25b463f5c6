/* `coldstart compare BASE.json NEW.json`: the regression gate, printed
 * like benchstat, with exports for github-action-benchmark and benchstat
 * itself. */
#include "args.h"
#include "cli.h"
#include "compare.h"
#include "err.h"
#include "output.h"
#include "regfile.h"
#include "sysinfo.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
	OPT_THRESHOLD = 0x100,
	OPT_METRIC,
	OPT_ALPHA,
	OPT_TEST,
	OPT_FORCE,
	OPT_GITHUB,
	OPT_GOBENCH,
	OPT_JSON,
};

struct compare_cli {
	const char *base_path, *new_path;
	struct compare_opts o;
	struct metric_threshold *overrides; /* room for argc entries */
	bool force;
	bool json; /* verdicts as one JSON document on stdout */
	const char *github_path, *gobench_path;
};

static void usage(FILE *out)
{
	fputs("Usage: coldstart compare BASE.json NEW.json [OPTIONS]\n"
	      "Compares two results of one benchmark (as `coldstart bench "
	      "... --out` writes),\nseries by series: median ± spread (half "
	      "the 95 % bootstrap interval of the\nmedian), the change of "
	      "the median, the p-value of a two-sided Mann-Whitney U\ntest "
	      "and the samples per side; '~' when the change is not "
	      "significant.\nA series regresses when p < alpha AND its "
	      "median got worse by more than the\nthreshold. Results from "
	      "different hosts (hostname, CPU model, KVM flavour), an\n"
	      "emulated host against a native one, or different "
	      "configurations (config,\napart from count) are refused.\n\n"
	      "  --threshold PCT          practical threshold in percent "
	      "(default 5)\n"
	      "  --metric-threshold NAME=PCT\n"
	      "                           threshold for series whose name "
	      "matches NAME (a shell\n"
	      "                           pattern); repeatable, the last "
	      "match wins\n"
	      "  --alpha P                significance level (default 0.01)\n"
	      "  --test utest|permutation the U test (default) or a "
	      "permutation test on the\n"
	      "                           difference of medians (10000 "
	      "resamples, seeded)\n"
	      "  --force                  compare results from different "
	      "hosts (emulated or\n                           native) or "
	      "configurations, with a warning\n"
	      "  --export-github FILE     NEW's medians as "
	      "github-action-benchmark\n"
	      "                           customSmallerIsBetter JSON (ns "
	      "series in ms)\n"
	      "  --export-gobench FILE    NEW's samples in Go benchmark "
	      "format, for benchstat\n"
	      "  --json                   the verdicts as one JSON document "
	      "on stdout\n"
	      "  -h, --help               this help\n\n"
	      "Exit codes: 0 no regression, 1 regression (or a failed "
	      "export), 2 usage error\nor inputs that are missing, malformed "
	      "or not comparable.\n", out);
}

/* "5", "5%", "2.5": a fraction in [0, 10]. */
static int parse_pct(const char *opt, const char *text, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (end != text && *end == '%')
		end++;
	if (end == text || *end || errno || !(v >= 0 && v <= 1000))
		return err__set(EINVAL, "%s: '%s' is not a percentage in "
				"0..1000", opt, text);
	*out = v / 100;
	return 0;
}

/* NAME=PCT; NAME is kept in place (argv is writable). */
static int parse_metric(char *text, struct metric_threshold *m)
{
	char *eq = strrchr(text, '=');

	if (!eq || eq == text)
		return err__set(EINVAL, "--metric-threshold: '%s' is not "
				"NAME=PCT", text);
	*eq = '\0';
	m->pattern = text;
	return parse_pct("--metric-threshold", eq + 1, &m->threshold);
}

static int parse_option(int c, struct compare_cli *cli)
{
	static const char *const tests[] = { "utest", "permutation", NULL };
	unsigned int test;
	int ret;

	switch (c) {
	case OPT_THRESHOLD:
		return parse_pct("--threshold", optarg, &cli->o.threshold);
	case OPT_METRIC:
		return parse_metric(optarg,
				    &cli->overrides[cli->o.nr_overrides++]);
	case OPT_ALPHA:
		return args__probability("--alpha", optarg, &cli->o.alpha);
	case OPT_TEST:
		ret = args__choice("--test", optarg, tests, &test);
		cli->o.test = test ? COMPARE_PERMUTATION : COMPARE_UTEST;
		return ret;
	case OPT_FORCE:
		cli->force = true;
		return 0;
	case OPT_GITHUB:
		cli->github_path = optarg;
		return 0;
	case OPT_GOBENCH:
		cli->gobench_path = optarg;
		return 0;
	case OPT_JSON:
		cli->json = true;
		return 0;
	default:
		return err__set(EINVAL, "unknown option");
	}
}

/* 0 to go on, 1 for --help, -EINVAL with a message. */
static int parse_args(int argc, char **argv, struct compare_cli *cli)
{
	static const struct option opts[] = {
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ "metric-threshold", required_argument, NULL, OPT_METRIC },
		{ "alpha", required_argument, NULL, OPT_ALPHA },
		{ "test", required_argument, NULL, OPT_TEST },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "export-github", required_argument, NULL, OPT_GITHUB },
		{ "export-gobench", required_argument, NULL, OPT_GOBENCH },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, ret = 0;

	optind = 0;
	opterr = 0;
	while (ret == 0 &&
	       (c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h')
			return 1;
		if (c == '?')
			return args__bad_option(argv);
		ret = parse_option(c, cli);
	}
	if (ret < 0)
		return ret;
	if (argc - optind < 2)
		return err__set(EINVAL, "needs two result files, BASE and NEW");
	if (argc - optind > 2)
		return err__set(EINVAL, "unexpected argument '%s'",
				argv[optind + 2]);
	cli->base_path = argv[optind];
	cli->new_path = argv[optind + 1];
	return 0;
}

static int load(const char *path, struct result_doc *doc)
{
	char why[400];
	json_error_t e;
	json_t *root;
	FILE *f = regfile__fopen(path); /* a FIFO must not hang compare */
	int ret;

	if (!f)
		return err__set(errno, "cannot read %s: %s", path,
				errno == EINVAL ? "not a regular file"
						: strerror(errno));
	root = json_loadf(f, 0, &e);
	fclose(f);
	if (!root)
		return err__set(EINVAL, "%s is not JSON: %s (line %d, column "
				"%d)", path, e.text, e.line, e.column);
	ret = compare__parse(root, doc);
	json_decref(root);
	if (ret < 0) {
		snprintf(why, sizeof(why), "%s", err__last());
		return err__set(-ret, "%s: %s", path, why);
	}
	return 0;
}

/* ---- the table ---- */

struct scale {
	double div;
	const char *unit;
};

static struct scale scale_for(const char *unit, double v)
{
	if (strcmp(unit, "ns"))
		return (struct scale){ 1, unit };
	if (v >= 1e9)
		return (struct scale){ 1e9, "s" };
	if (v >= 1e6)
		return (struct scale){ 1e6, "ms" };
	if (v >= 1e3)
		return (struct scale){ 1e3, "us" };
	return (struct scale){ 1, "ns" };
}

static void format_value(char *buf, size_t len, double v, double spread,
			 struct scale sc)
{
	snprintf(buf, len, "%.4g %s ± %.0f%%", v / sc.div, sc.unit,
		 100 * spread);
}

static void format_delta(char *buf, size_t len, const struct compare_row *r)
{
	if (r->verdict == COMPARE_SAME)
		snprintf(buf, len, "~");
	else
		snprintf(buf, len, "%+.2f%%", 100 * r->delta);
}

static void format_verdict(char *buf, size_t len, const struct compare_row *r)
{
	static const char *const what[] = {
		[COMPARE_SAME] = "",
		[COMPARE_WITHIN] = "within ",
		[COMPARE_IMPROVED] = "improved beyond ",
		[COMPARE_REGRESSED] = "REGRESSION beyond ",
	};

	if (r->verdict == COMPARE_SAME)
		buf[0] = '\0';
	else
		snprintf(buf, len, "%s%g%%", what[r->verdict],
			 100 * r->threshold);
}

static int name_width(const struct compare_result *res)
{
	size_t w = strlen("series");

	for (size_t i = 0; i < res->nr_rows; i++)
		if (strlen(res->rows[i].name) > w)
			w = strlen(res->rows[i].name);
	return (int)w;
}

/* Cells hold one "±", two bytes wide in UTF-8 but one column on screen. */
static void print_row(int w, const struct compare_row *r)
{
	struct scale sc = scale_for(r->unit, r->base_median);
	char base[48], new_[48], delta[24], n[48], verdict[48];

	format_value(base, sizeof(base), r->base_median, r->base_spread, sc);
	format_value(new_, sizeof(new_), r->new_median, r->new_spread, sc);
	format_delta(delta, sizeof(delta), r);
	snprintf(n, sizeof(n), "%zu+%zu", r->n_base, r->n_new);
	format_verdict(verdict, sizeof(verdict), r);
	printf("%-*s  %-22s  %-22s  %8s  %7.3f  ", w, r->name, base, new_,
	       delta, r->p);
	if (*verdict)
		printf("%-9s  %s\n", n, verdict);
	else
		printf("%s\n", n);
}

static void print_table(const struct compare_cli *cli,
			const struct result_doc *base,
			const struct compare_result *res)
{
	int w = name_width(res);

	printf("%s: BASE %s, NEW %s (%s, alpha %g, threshold %g%%)\n",
	       base->bench, cli->base_path, cli->new_path,
	       cli->o.test == COMPARE_UTEST ? "Mann-Whitney U" :
					      "permutation test",
	       cli->o.alpha, 100 * cli->o.threshold);
	printf("%-*s  %-21s  %-21s  %8s  %7s  %s\n", w, "series",
	       "base median", "new median", "delta", "p", "n");
	for (size_t i = 0; i < res->nr_rows; i++)
		print_row(w, &res->rows[i]);
}

static void print_names(const char *what, const char **names, size_t n)
{
	if (!n)
		return;
	printf("only in %s:", what);
	for (size_t i = 0; i < n; i++)
		printf(" %s", names[i]);
	putchar('\n');
}

static void warn_outliers(const struct compare_row *r)
{
	if (r->base_out.count || r->new_out.count)
		fprintf(stderr, "warning: %s: outliers (beyond %g robust sd "
			"of the median): %zu of %zu in BASE, %zu of %zu in "
			"NEW\n", r->name, STATS_OUTLIER_K, r->base_out.count,
			r->n_base, r->new_out.count, r->n_new);
}

static void warn_first(const char *name, const char *side,
		       const struct outliers *o, const char *unit)
{
	struct scale sc = scale_for(unit, o->median);

	if (o->first_slow)
		fprintf(stderr, "warning: %s: the first sample in %s is much "
			"slower than the median %.4g %s: more warmup?\n",
			name, side, o->median / sc.div, sc.unit);
}

static void print_warnings(const struct compare_cli *cli,
			   const struct compare_result *res)
{
	for (size_t i = 0; i < res->nr_rows; i++) {
		const struct compare_row *r = &res->rows[i];

		warn_outliers(r);
		warn_first(r->name, "BASE", &r->base_out, r->unit);
		warn_first(r->name, "NEW", &r->new_out, r->unit);
		if (r->min_p >= cli->o.alpha)
			fprintf(stderr, "warning: %s: %zu+%zu samples can "
				"never reach p < %g; take more (at least 10 "
				"per side)\n", r->name, r->n_base, r->n_new,
				cli->o.alpha);
	}
}

static void print_summary(const struct compare_result *res)
{
	if (!res->regressions) {
		printf("no regression in %zu series\n", res->nr_rows);
		return;
	}
	printf("REGRESSION in %zu of %zu series:", res->regressions,
	       res->nr_rows);
	for (size_t i = 0; i < res->nr_rows; i++)
		if (res->rows[i].verdict == COMPARE_REGRESSED)
			printf(" %s (%+.1f%%)", res->rows[i].name,
			       100 * res->rows[i].delta);
	putchar('\n');
}

/* ---- machine-readable verdicts ---- */

static const char *verdict_key(enum compare_verdict v)
{
	static const char *const keys[] = {
		[COMPARE_SAME] = "same", [COMPARE_WITHIN] = "within_threshold",
		[COMPARE_IMPROVED] = "improved",
		[COMPARE_REGRESSED] = "regressed",
	};

	return keys[v];
}

static json_t *names_json(const char **names, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(names[i]));
	return a;
}

/* {"bench", "base", "new", "test", "alpha", "threshold", "regressions",
 *  "series": [{name, unit, verdict, delta, p, threshold, n_base, n_new,
 *  base_median, new_median, base_spread, new_spread}], "only_base",
 *  "only_new"}; spreads and thresholds are fractions. */
static void print_json(const struct compare_cli *cli,
		       const struct result_doc *base,
		       const struct compare_result *res)
{
	json_t *rows = json_array(), *doc;

	for (size_t i = 0; i < res->nr_rows; i++) {
		const struct compare_row *r = &res->rows[i];

		json_array_append_new(rows, json_pack(
			"{s:s, s:s, s:s, s:f, s:f, s:f, s:I, s:I, s:f, s:f, "
			"s:f, s:f}", "name", r->name, "unit", r->unit,
			"verdict", verdict_key(r->verdict), "delta", r->delta,
			"p", r->p, "threshold", r->threshold, "n_base",
			(json_int_t)r->n_base, "n_new", (json_int_t)r->n_new,
			"base_median", r->base_median, "new_median",
			r->new_median, "base_spread", r->base_spread,
			"new_spread", r->new_spread));
	}
	doc = json_pack("{s:s, s:s, s:s, s:s, s:f, s:f, s:I, s:o, s:o, s:o}",
			"bench", base->bench, "base", cli->base_path, "new",
			cli->new_path, "test", cli->o.test == COMPARE_UTEST
				? "utest" : "permutation",
			"alpha", cli->o.alpha, "threshold", cli->o.threshold,
			"regressions", (json_int_t)res->regressions, "series",
			rows, "only_base",
			names_json(res->only_base, res->nr_only_base),
			"only_new", names_json(res->only_new, res->nr_only_new));
	json_dumpf(doc, stdout, JSON_INDENT(2));
	putchar('\n');
	json_decref(doc);
}

/* ---- exports ---- */

/* Writes `data` to `path` atomically (output__write_file). */
static int write_path(const char *path, const char *data, size_t len)
{
	char *copy = strdup(path), *slash;
	int ret;

	if (!copy)
		return err__set(ENOMEM, "allocating a path");
	slash = strrchr(copy, '/');
	if (!slash)
		ret = output__write_file(".", copy, data, len);
	else if (slash == copy)
		ret = output__write_file("/", slash + 1, data, len);
	else {
		*slash = '\0';
		ret = output__write_file(copy, slash + 1, data, len);
	}
	free(copy);
	return ret;
}

static int export_github(const struct result_doc *doc, const char *path)
{
	json_t *arr = compare__github_json(doc);
	char *text;
	int ret;

	if (!arr)
		return -ENOMEM;
	text = json_dumps(arr, JSON_INDENT(2));
	json_decref(arr);
	if (!text)
		return err__set(ENOMEM, "formatting the github JSON");
	ret = write_path(path, text, strlen(text));
	free(text);
	return ret;
}

static int export_gobench(const struct result_doc *doc, const char *path)
{
	struct output_text t;
	int ret = output__text_open(&t);

	if (ret < 0)
		return ret;
	compare__write_gobench(doc, t.f);
	ret = output__text_close(&t, "the Go benchmark text");
	if (ret < 0)
		return ret;
	ret = write_path(path, t.text, t.len);
	free(t.text);
	return ret;
}

static int exports(const struct compare_cli *cli, const struct result_doc *doc)
{
	const char *opt = "--export-github", *path = cli->github_path;
	char why[400];
	int ret = 0;

	if (path)
		ret = export_github(doc, path);
	if (ret == 0 && cli->gobench_path) {
		opt = "--export-gobench";
		path = cli->gobench_path;
		ret = export_gobench(doc, path);
	}
	if (ret < 0) {
		snprintf(why, sizeof(why), "%s", err__last());
		return err__set(-ret, "%s %s: %s", opt, path, why);
	}
	return 0;
}

/* ---- the command ---- */

/* Loads both documents and checks they may be compared; an exit code or
 * -1 to go on. */
static int load_both(const struct compare_cli *cli, struct result_doc *base,
		     struct result_doc *new_)
{
	if (load(cli->base_path, base) < 0)
		return cli__error(CLI_USAGE, "compare: %s", err__last());
	if (load(cli->new_path, new_) < 0)
		return cli__error(CLI_USAGE, "compare: %s", err__last());
	if (compare__same_bench(base, new_) < 0)
		return cli__error(CLI_USAGE, "compare: %s", err__last());
	if (compare__same_setup(base, new_) == 0) {
		if (sysinfo__emulated(base->sysinfo))
			fprintf(stderr, "warning: both results were measured "
				"inside an emulated host (%s): timings are "
				"functional; compare only ratios within a run\n",
				sysinfo__emulated(base->sysinfo));
		return -1;
	}
	if (!cli->force)
		return cli__error(CLI_USAGE, "compare: %s and %s are not "
				  "comparable: %s; use --force to compare "
				  "anyway", cli->base_path, cli->new_path,
				  err__last());
	fprintf(stderr, "warning: comparing anyway (--force): %s\n",
		err__last());
	return -1;
}

static int run(const struct compare_cli *cli)
{
	struct result_doc base = { 0 }, new_ = { 0 };
	struct compare_result res = { 0 };
	int code = load_both(cli, &base, &new_);

	if (code >= 0)
		goto out;
	if (compare__docs(&base, &new_, &cli->o, &res) < 0) {
		code = cli__error(CLI_USAGE, "compare: %s", err__last());
		goto out;
	}
	if (cli->json) {
		print_json(cli, &base, &res);
	} else {
		print_table(cli, &base, &res);
		print_names("BASE", res.only_base, res.nr_only_base);
		print_names("NEW", res.only_new, res.nr_only_new);
	}
	fflush(stdout);
	print_warnings(cli, &res);
	if (!cli->json)
		print_summary(&res);
	code = res.regressions ? CLI_FAIL : CLI_OK;
	if (exports(cli, &new_) < 0)
		code = cli__error(CLI_FAIL, "compare: %s", err__last());
	compare__free_result(&res);
out:
	compare__free(&base);
	compare__free(&new_);
	return code;
}

int cmd_compare(int argc, char **argv)
{
	struct compare_cli cli = { 0 };
	int ret;

	compare__default_opts(&cli.o);
	cli.overrides = calloc((size_t)argc, sizeof(*cli.overrides));
	if (!cli.overrides)
		return cli__error(CLI_FAIL, "compare: out of memory");
	cli.o.overrides = cli.overrides;
	ret = parse_args(argc, argv, &cli);
	ret = ret ? cli__parsed(ret, "compare", usage) : run(&cli);
	free(cli.overrides);
	return ret;
}
