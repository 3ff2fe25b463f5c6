/* `coldstart compare BASE NEW`: the regression gate between two results
 * or two directories of results, printed like benchstat, with exports
 * for github-action-benchmark and benchstat itself; and `compare --hosts
 * DIR...`, the cross-host table. */
#include "args.h"
#include "commands.h"
#include "compare_cli.h"
#include "err.h"
#include "output.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum {
	OPT_THRESHOLD = 0x100,
	OPT_METRIC,
	OPT_ALPHA,
	OPT_TEST,
	OPT_FORCE,
	OPT_GITHUB,
	OPT_GOBENCH,
	OPT_JSON,
	OPT_MIN_SAMPLES,
	OPT_MAX_SAMPLES,
	OPT_HOSTS,
	OPT_STRICT,
	OPT_STRICT_HOST,
	OPT_FORMAT,
};

static void usage(FILE *out)
{
	fputs("Usage: coldstart compare BASE NEW [OPTIONS]\n"
	      "       coldstart compare --hosts DIR DIR...\n"
	      "Compares two results of one benchmark (BASE.json NEW.json, as "
	      "`coldstart bench\n... --out` writes) or two directories of "
	      "results (series matched by driver\nand name), series by "
	      "series: median ± spread (half the 95 % bootstrap\ninterval "
	      "of the median), the change of the median, the confidence "
	      "bound of the\nchange in the worse direction, the p-value of a "
	      "two-sided Mann-Whitney U test\nand the samples per side; '~' "
	      "when the change is not significant; a geomean\nrow per unit. "
	      "A series regresses when p < alpha AND its median got worse by\n"
	      "more than the threshold. It passes only on evidence: when the "
	      "one-sided\n1 - alpha confidence bound of its change "
	      "(Hodges-Lehmann ratio NEW / BASE, the\nMoses interval the U "
	      "test inverts to) lies below the threshold. Any other\nseries "
	      "is INCONCLUSIVE ('?'), as is one with fewer than --min-samples; "
	      "it then\nsays how many samples per side it needs at this "
	      "noise. A series or a driver\nof BASE that NEW lacks or left "
	      "without samples is never a pass (listed as\nMISSING). Results "
	      "from different hosts (hostname, CPU model, KVM flavour), an\n"
	      "emulated host against a native one, or different configurations "
	      "(config,\napart from count) are refused.\n\n"
	      "  --threshold PCT          practical threshold in percent "
	      "(default 5)\n"
	      "  --metric-threshold NAME=PCT\n"
	      "                           threshold for series whose name "
	      "matches NAME (a shell\n"
	      "                           pattern); repeatable, the last "
	      "match wins\n"
	      "  --alpha P                significance level (default 0.01)\n"
	      "  --min-samples N          fewer samples on a side: "
	      "inconclusive (default 0)\n"
	      "  --max-samples N          more samples on a side: refused, "
	      "exit 2 (default\n"
	      "                           4000000, about 8 s; 0: no bound)\n"
	      "  --test utest|permutation the U test (default) or a "
	      "permutation test on the\n"
	      "                           difference of medians (10000 "
	      "resamples, seeded;\n"
	      "                           at most 20000 samples per series, "
	      "both sides)\n"
	      "  --strict                 a series missing from NEW fails "
	      "(exit 1, not 3)\n"
	      "  --strict-host            refuse (exit 2) a host whose kernel, "
	      "CPU microcode or\n                           KVM module "
	      "parameters changed (default: a warning)\n"
	      "  --force                  compare results from different "
	      "hosts (emulated or\n                           native) or "
	      "configurations, with a warning\n"
	      "  --export-github FILE     NEW's medians as "
	      "github-action-benchmark\n"
	      "                           customSmallerIsBetter JSON (ns "
	      "series in ms); its\n"
	      "                           higher-is-better series as "
	      "customBiggerIsBetter\n"
	      "                           JSON in FILE-bigger.json "
	      "(FILE without .json)\n"
	      "  --export-gobench FILE    NEW's samples in Go benchmark "
	      "format, for benchstat\n"
	      "  --format text|markdown|json|junit\n"
	      "                           stdout: the table (default), "
	      "Markdown for a job\n"
	      "                           summary or a pull-request comment, "
	      "one JSON document,\n"
	      "                           or JUnit XML for CI test tabs\n"
	      "  --json                   the same as --format json\n"
	      "  --hosts DIR DIR...       instead: a Markdown table of the "
	      "hosts whose result\n                           directories "
	      "are given, grouped by CPU model, kernel\n"
	      "                           and KVM flavour, with each "
	      "driver's headline medians\n"
	      "  -h, --help               this help\n\n"
	      "Exit codes: 0 every series shown within its threshold, 1 "
	      "regression (or a\nseries missing from NEW with --strict), 2 "
	      "usage error or inputs that are\nmissing, malformed or not "
	      "comparable, 3 inconclusive (no regression found,\nbut a series "
	      "could not be shown within its threshold, or is missing from "
	      "NEW),\n4 an export "
	      "could not be written (the verdicts were no regression or\n"
	      "inconclusive; a regression keeps 1).\n", out);
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

static int parse_option(int c, char *arg, void *ctx)
{
	struct compare_cli *cli = ctx;
	static const char *const tests[] = { "utest", "permutation", NULL };
	unsigned int test, format;
	uint64_t n;
	int ret;

	switch (c) {
	case OPT_THRESHOLD:
		return parse_pct("--threshold", arg, &cli->o.threshold);
	case OPT_METRIC:
		return parse_metric(arg,
				    &cli->overrides[cli->o.nr_overrides++]);
	case OPT_ALPHA:
		return args__probability("--alpha", arg, &cli->o.alpha);
	case OPT_MIN_SAMPLES:
		ret = args__u64("--min-samples", arg, 0, 1000000000, &n);
		cli->o.min_samples = (size_t)n;
		return ret;
	case OPT_MAX_SAMPLES:
		ret = args__u64("--max-samples", arg, 0, 1000000000, &n);
		cli->o.max_samples = (size_t)n;
		return ret;
	case OPT_TEST:
		ret = args__choice("--test", arg, tests, &test);
		cli->o.test = test ? COMPARE_PERMUTATION : COMPARE_UTEST;
		return ret;
	case OPT_FORCE:
		cli->force = true;
		return 0;
	case OPT_STRICT:
		cli->strict = true;
		return 0;
	case OPT_STRICT_HOST:
		cli->strict_host = true;
		return 0;
	case OPT_GITHUB:
		cli->github_path = arg;
		return 0;
	case OPT_GOBENCH:
		cli->gobench_path = arg;
		return 0;
	case OPT_JSON:
		cli->format = COMPARE_JSON;
		return 0;
	case OPT_FORMAT:
		ret = args__choice("--format", arg, compare_print__formats,
				   &format);
		if (ret == 0)
			cli->format = (enum compare_format)format;
		return ret;
	case OPT_HOSTS:
		cli->nr_hosts = 1; /* the operands are the directories */
		return 0;
	default:
		return err__set(EINVAL, "unknown option");
	}
}

static int operands(int argc, char **argv, struct compare_cli *cli)
{
	if (cli->nr_hosts) {
		if (argc - optind < 1)
			return err__set(EINVAL, "--hosts needs result "
					"directories");
		cli->hosts = argv + optind;
		cli->nr_hosts = (size_t)(argc - optind);
		return 0;
	}
	if (argc - optind < 2)
		return err__set(EINVAL, "needs two results (files or "
				"directories), BASE and NEW");
	if (argc - optind > 2)
		return err__set(EINVAL, "unexpected argument '%s'",
				argv[optind + 2]);
	cli->base_path = argv[optind];
	cli->new_path = argv[optind + 1];
	return 0;
}

/* 0 to go on, 1 for --help, -EINVAL with a message. */
static int parse_args(int argc, char **argv, struct compare_cli *cli)
{
	static const struct option opts[] = {
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ "metric-threshold", required_argument, NULL, OPT_METRIC },
		{ "alpha", required_argument, NULL, OPT_ALPHA },
		{ "min-samples", required_argument, NULL, OPT_MIN_SAMPLES },
		{ "max-samples", required_argument, NULL, OPT_MAX_SAMPLES },
		{ "test", required_argument, NULL, OPT_TEST },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "strict-host", no_argument, NULL, OPT_STRICT_HOST },
		{ "export-github", required_argument, NULL, OPT_GITHUB },
		{ "export-gobench", required_argument, NULL, OPT_GOBENCH },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "hosts", no_argument, NULL, OPT_HOSTS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ret = args__getopt(argc, argv, "h", opts, parse_option, cli);

	return ret ? ret : operands(argc, argv, cli);
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

/* One direction's github-action-benchmark entries of every document;
 * *n: how many. */
static int github_text(const struct result_set *set, bool bigger,
		       char **text, size_t *n)
{
	json_t *arr = json_array(), *one;

	for (size_t i = 0; arr && i < set->n; i++) {
		one = compare__github_json(&set->docs[i].doc, bigger);
		if (!one || json_array_extend(arr, one) < 0) {
			json_decref(one);
			json_decref(arr);
			return err__set(ENOMEM, "building the github JSON");
		}
		json_decref(one);
	}
	if (!arr)
		return err__set(ENOMEM, "building the github JSON");
	*n = json_array_size(arr);
	*text = json_dumps(arr, JSON_INDENT(2));
	json_decref(arr);
	return *text ? 0 : err__set(ENOMEM, "formatting the github JSON");
}

/* FILE.json's bigger-is-better sibling: FILE-bigger.json. */
static char *bigger_path(const char *path)
{
	size_t len = strlen(path);
	char *p = NULL;

	if (len > 5 && !strcmp(path + len - 5, ".json"))
		return asprintf(&p, "%.*s-bigger.json", (int)(len - 5), path) < 0
			       ? NULL : p;
	return asprintf(&p, "%s-bigger", path) < 0 ? NULL : p;
}

/* customSmallerIsBetter into `path`, and when NEW has higher-is-better
 * series (VMs/s, VMs/GiB) customBiggerIsBetter beside it. */
static int export_github(const struct result_set *set, const char *path)
{
	char *text, *bigger;
	size_t n;
	int ret = github_text(set, false, &text, &n);

	if (ret < 0)
		return ret;
	ret = write_path(path, text, strlen(text));
	free(text);
	if (ret == 0)
		ret = github_text(set, true, &text, &n);
	if (ret < 0)
		return ret;
	if (n == 0) {
		free(text);
		return 0;
	}
	bigger = bigger_path(path);
	ret = bigger ? write_path(bigger, text, strlen(text))
		     : err__set(ENOMEM, "allocating a path");
	free(bigger);
	free(text);
	return ret;
}

static int export_gobench(const struct result_set *set, const char *path)
{
	struct output_text t;
	int ret = output__text_open(&t);

	if (ret < 0)
		return ret;
	for (size_t i = 0; i < set->n; i++)
		compare__write_gobench(&set->docs[i].doc, t.f);
	ret = output__text_close(&t, "the Go benchmark text");
	if (ret < 0)
		return ret;
	ret = write_path(path, t.text, t.len);
	free(t.text);
	return ret;
}

static int exports(const struct compare_cli *cli, const struct result_set *set)
{
	const char *opt = "--export-github", *path = cli->github_path;
	char why[400];
	int ret = 0;

	if (path)
		ret = export_github(set, path);
	if (ret == 0 && cli->gobench_path) {
		opt = "--export-gobench";
		path = cli->gobench_path;
		ret = export_gobench(set, path);
	}
	if (ret < 0) {
		snprintf(why, sizeof(why), "%s", err__last());
		return err__set(-ret, "%s %s: %s", opt, path, why);
	}
	return 0;
}

/* ---- the command ---- */

/* A kernel, microcode or KVM parameter change between BASE and NEW: a
 * warning naming it, or with --strict-host a refusal (-EINVAL). */
static int host_changes(const struct compare_cli *cli,
			const struct compare_pair *p)
{
	char what[1024];
	size_t n = compare__host_changes(&p->base->doc, &p->new_->doc, what,
					 sizeof(what));

	if (!n)
		return 0;
	if (cli->strict_host)
		return err__set(EINVAL, "%s and %s: the host changed (%s); "
				"--strict-host refuses it", p->base->path,
				p->new_->path, what);
	fprintf(stderr, "warning: %s: the host changed between BASE and NEW, "
		"timings may move with it: %s\n", p->base->doc.bench, what);
	return 0;
}

/* 0 when the pair may be compared (with a warning when emulated,
 * forced or on a changed host), else -EINVAL with a message. */
static int comparable(const struct compare_cli *cli,
		      const struct compare_pair *p)
{
	const struct result_doc *b = &p->base->doc, *n = &p->new_->doc;
	char why[512];

	if (compare__same_setup(b, n) == 0) {
		if (result__sysinfo_emulated(b->sysinfo))
			fprintf(stderr, "warning: %s: both results were "
				"measured inside an emulated host (%s): timings "
				"are functional; compare only ratios within a "
				"run\n", b->bench,
				result__sysinfo_emulated(b->sysinfo));
		return host_changes(cli, p);
	}
	if (!cli->force) {
		snprintf(why, sizeof(why), "%s", err__last());
		return err__set(EINVAL, "%s and %s are not comparable: %s; use "
				"--force to compare anyway", p->base->path,
				p->new_->path, why);
	}
	fprintf(stderr, "warning: comparing anyway (--force): %s\n",
		err__last());
	return 0;
}

static int compare_pair(const struct compare_cli *cli, struct compare_run *r,
			struct compare_pair *p)
{
	int ret = comparable(cli, p);

	if (ret == 0)
		ret = compare__docs(&p->base->doc, &p->new_->doc, &cli->o,
				    &p->res);
	if (ret < 0)
		return ret;
	p->compared = true;
	r->missing += p->res.nr_only_base;
	r->rows += p->res.nr_rows;
	r->regressions += p->res.regressions;
	r->inconclusive += p->res.inconclusive;
	return 0;
}

/* Pairs the documents by bench: BASE's in order, then NEW's alone. */
static int pair_up(struct compare_run *r)
{
	r->pairs = calloc(r->base.n + r->new_.n, sizeof(*r->pairs));
	if (!r->pairs)
		return err__set(ENOMEM, "allocating the comparison");
	for (size_t i = 0; i < r->base.n; i++) {
		struct compare_pair *p = &r->pairs[r->nr_pairs++];

		p->base = &r->base.docs[i];
		p->new_ = result__set_find(&r->new_, p->base->doc.bench);
	}
	for (size_t i = 0; i < r->new_.n; i++)
		if (!result__set_find(&r->base, r->new_.docs[i].doc.bench))
			r->pairs[r->nr_pairs++].new_ = &r->new_.docs[i];
	return 0;
}

/* A file against a directory is refused before either is read, so the
 * message is this one whatever they hold. */
static int same_kind(const struct compare_cli *cli)
{
	struct stat b, n;

	if (stat(cli->base_path, &b) < 0 || stat(cli->new_path, &n) < 0)
		return 0; /* result__load_set names the path */
	if (S_ISDIR(b.st_mode) == S_ISDIR(n.st_mode))
		return 0;
	return err__set(EINVAL, "BASE and NEW must both be result files or "
			"both directories (%s is a %s, %s a %s)", cli->base_path,
			S_ISDIR(b.st_mode) ? "directory" : "file", cli->new_path,
			S_ISDIR(n.st_mode) ? "directory" : "file");
}

static void note_skipped(const struct result_set *set)
{
	for (size_t i = 0; i < set->nr_skipped; i++)
		fprintf(stderr, "note: %s skipped: a tuner's document, not a "
			"benchmark result\n", set->skipped[i]);
}

/* Two files: one bench (no --force makes different benches
 * comparable). Two directories: matched by bench. */
static int load_run(const struct compare_cli *cli, struct compare_run *r)
{
	int ret = same_kind(cli);

	if (ret == 0)
		ret = result__load_set(cli->base_path, &r->base);
	if (ret == 0)
		ret = result__load_set(cli->new_path, &r->new_);
	if (ret < 0)
		return ret;
	note_skipped(&r->base);
	note_skipped(&r->new_);
	r->dirs = r->base.is_dir;
	if (!r->dirs && compare__same_bench(&r->base.docs[0].doc,
					    &r->new_.docs[0].doc) < 0)
		return -EINVAL;
	return pair_up(r);
}

static int compare_all(const struct compare_cli *cli, struct compare_run *r)
{
	int ret = load_run(cli, r);

	for (size_t i = 0; ret == 0 && i < r->nr_pairs; i++) {
		if (r->pairs[i].base && r->pairs[i].new_)
			ret = compare_pair(cli, r, &r->pairs[i]);
		else if (r->pairs[i].base) /* a driver NEW lacks */
			r->missing += r->pairs[i].base->doc.nr_series;
	}
	if (ret == 0 && r->rows == 0)
		ret = err__set(EINVAL, "no bench in common between %s and %s",
			       cli->base_path, cli->new_path);
	return ret;
}

static void free_run(struct compare_run *r)
{
	for (size_t i = 0; r->pairs && i < r->nr_pairs; i++)
		compare__free_result(&r->pairs[i].res);
	free(r->pairs);
	result__free_set(&r->base);
	result__free_set(&r->new_);
}

static int verdict_code(const struct compare_cli *cli,
			const struct compare_run *r)
{
	if (r->regressions || (r->missing && cli->strict))
		return COMPARE_EXIT_REGRESSION;
	return r->inconclusive || r->missing ? COMPARE_EXIT_INCONCLUSIVE
					     : COMPARE_EXIT_OK;
}

static int run(const struct compare_cli *cli)
{
	struct compare_run r = { 0 };
	int code;

	if (compare_all(cli, &r) < 0) {
		code = cli__error(COMPARE_EXIT_USAGE, "compare: %s",
				  err__last());
		goto out;
	}
	compare_print__as(cli, &r);
	code = verdict_code(cli, &r);
	if (exports(cli, &r.new_) < 0) {
		cli__error(COMPARE_EXIT_EXPORT, "compare: %s", err__last());
		if (code != COMPARE_EXIT_REGRESSION)
			code = COMPARE_EXIT_EXPORT;
	}
out:
	free_run(&r);
	return code;
}

static int run_hosts(const struct compare_cli *cli)
{
	if (hosts__table(cli->hosts, cli->nr_hosts, stdout) < 0)
		return cli__error(COMPARE_EXIT_USAGE, "compare --hosts: %s",
				  err__last());
	return COMPARE_EXIT_OK;
}

int cmd_compare(int argc, char **argv)
{
	struct compare_cli cli = { 0 };
	int ret;

	compare__default_opts(&cli.o);
	cli.overrides = calloc((size_t)argc, sizeof(*cli.overrides));
	if (!cli.overrides)
		return cli__error(COMPARE_EXIT_USAGE, "compare: out of memory");
	cli.o.overrides = cli.overrides;
	ret = parse_args(argc, argv, &cli);
	if (ret)
		ret = cli__parsed(ret, "compare", usage);
	else
		ret = cli.hosts ? run_hosts(&cli) : run(&cli);
	free(cli.overrides);
	return ret;
}
