/* `coldstart export prometheus RESULTS...`: stored results as Prometheus
 * metrics, on stdout, into node_exporter's textfile directory or pushed
 * to a Pushgateway. */
#include "args.h"
#include "commands.h"
#include "result.h"
#include "err.h"
#include "openmetrics.h"
#include "output.h"
#include "result.h"
#include "push.h"

#include <dirent.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { OPT_TEXTFILE = 0x100, OPT_NAME, OPT_PUSH, OPT_JOB };

struct export_cli {
	char **operands;
	int nr_operands;
	const char *textfile_dir, *name, *push_url, *job;
};

/* The documents read, with the paths they came from. */
struct inputs {
	struct result_doc *docs;
	char **paths;
	size_t n;
};

static void usage_export(FILE *out)
{
	fputs("Usage: coldstart export prometheus RESULTS... [OPTIONS]\n"
	      "Stored results as metrics for other tools. Formats:\n"
	      "  prometheus   the Prometheus text exposition format\n\n"
	      "'coldstart export FORMAT --help' describes each.\n", out);
}

static void usage_prometheus(FILE *out)
{
	fputs("Usage: coldstart export prometheus RESULTS... [OPTIONS]\n"
	      "Writes result documents (`coldstart bench ... --out DIR`: "
	      "every *.json of a\ndirectory RESULTS, or a RESULTS.json "
	      "file) as Prometheus metrics in the text\nexposition format "
	      "(0.0.4), on stdout unless --textfile-dir or --push:\n"
	      "  coldstart_BENCH_seconds (_bytes)  a summary per series: "
	      "quantiles 0.5, 0.9,\n"
	      "                          0.99, 0.999, _sum, _count, in base "
	      "units\n"
	      "  coldstart_rate_vms_per_second, coldstart_lifecycle_vms_per_"
	      "second,\n"
	      "  coldstart_density_vms_per_gibibyte, coldstart_density_"
	      "marginal_bytes,\n"
	      "  coldstart_pool_* (hit ratio, requests, rates, memory), "
	      "coldstart_run_timestamp_seconds\n"
	      "  coldstart_build_info{host, version, commit} 1, once per host "
	      "and build\n"
	      "Labels: host, kernel, kvm_flavour, kvm_mode (native or "
	      "emulated), emulation,\nguest, guest_sha256, strategy, series "
	      "and the series' params.\n\n"
	      "  --textfile-dir DIR  write DIR/coldstart.prom atomically "
	      "(temporary file and\n"
	      "                      rename), for node_exporter's "
	      "--collector.textfile.directory;\n"
	      "                      DIR must exist (it is not made)\n"
	      "  --name NAME         the file's name in DIR (default "
	      "coldstart.prom)\n"
	      "  --push URL          PUT the metrics to the Pushgateway at "
	      "URL, one group per\n"
	      "                      host: URL/metrics/job/JOB/instance/HOST "
	      "(replaces the group)\n"
	      "  --job JOB           the Pushgateway job (default "
	      "coldstart)\n"
	      "  -h, --help          this help\n\n"
	      "Exit codes: 0 ok, 1 the file or the push failed, 2 usage "
	      "error or inputs that\nare missing or not result documents.\n",
	      out);
}

static int parse_option(int c, char *arg, void *ctx)
{
	struct export_cli *cli = ctx;
	switch (c) {
	case OPT_TEXTFILE:
		cli->textfile_dir = arg;
		return 0;
	case OPT_NAME:
		/* node_exporter reads *.prom only, and no hidden file */
		if (strchr(arg, '/') || arg[0] == '.' ||
		    strlen(arg) < 6 ||
		    strcmp(arg + strlen(arg) - 5, ".prom"))
			return err__set(EINVAL, "--name: '%s' is not a file "
					"name NAME.prom", arg);
		cli->name = arg;
		return 0;
	case OPT_PUSH:
		cli->push_url = arg;
		return 0;
	case OPT_JOB:
		if (!*arg)
			return err__set(EINVAL, "--job: the job name is empty");
		cli->job = arg;
		return 0;
	default:
		return err__set(EINVAL, "unknown option");
	}
}

/* 0 to go on, 1 for --help, -EINVAL with a message. */
static int parse_args(int argc, char **argv, struct export_cli *cli)
{
	static const struct option opts[] = {
		{ "textfile-dir", required_argument, NULL, OPT_TEXTFILE },
		{ "name", required_argument, NULL, OPT_NAME },
		{ "push", required_argument, NULL, OPT_PUSH },
		{ "job", required_argument, NULL, OPT_JOB },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ret;

	*cli = (struct export_cli){ .name = "coldstart.prom",
				    .job = "coldstart" };
	ret = args__getopt(argc, argv, "h", opts, parse_option, cli);
	if (ret)
		return ret;
	if (optind >= argc)
		return err__set(EINVAL, "needs result directories or files");
	cli->operands = argv + optind;
	cli->nr_operands = argc - optind;
	return 0;
}

/* ---- reading ---- */

static void inputs_free(struct inputs *in)
{
	for (size_t i = 0; i < in->n; i++) {
		result__free(&in->docs[i]);
		free(in->paths[i]);
	}
	free(in->docs);
	free(in->paths);
	*in = (struct inputs){ 0 };
}

/* A tuner's document (tune-pool.json beside the results that `tune pool
 * --out` wrote into a results directory) is no result to export. */
static bool is_tuner_doc(const json_t *root)
{
	const char *bench = json_string_value(json_object_get(root, "bench"));

	return bench && result__is_tune(bench);
}

/* `in_dir`: found in a directory, where a tuner's document is skipped
 * with a note; named on the command line, it is an error. */
static int load_file(struct inputs *in, const char *path, bool in_dir)
{
	struct result_doc *docs;
	char **paths, why[400];
	json_error_t e;
	json_t *root;
	int ret;

	docs = realloc(in->docs, (in->n + 1) * sizeof(*docs));
	if (docs)
		in->docs = docs;
	paths = realloc(in->paths, (in->n + 1) * sizeof(*paths));
	if (paths)
		in->paths = paths;
	if (!docs || !paths || !(in->paths[in->n] = strdup(path)))
		return err__set(ENOMEM, "reading %s", path);
	root = output__json_load(path, &e);
	if (!root) {
		free(in->paths[in->n]);
		return err__set(EINVAL, "%s is not a readable JSON document: %s "
				"(line %d)", path, e.text, e.line);
	}
	if (in_dir && is_tuner_doc(root)) {
		fprintf(stderr, "note: %s skipped: a tuner's document, not a "
			"benchmark result\n", path);
		free(in->paths[in->n]);
		json_decref(root);
		return 0;
	}
	ret = result__parse_all(root, &in->docs[in->n]);
	json_decref(root);
	if (ret < 0) {
		snprintf(why, sizeof(why), "%s", err__last());
		free(in->paths[in->n]);
		return err__set(-ret, "%s: %s", path, why);
	}
	in->n++;
	return 0;
}

static int json_name(const struct dirent *de)
{
	size_t len = strlen(de->d_name);

	return de->d_name[0] != '.' && len > 5 &&
	       !strcmp(de->d_name + len - 5, ".json");
}

/* Every *.json of `dir`, in name order. */
static int load_dir(struct inputs *in, const char *dir)
{
	struct dirent **names;
	char path[PATH_MAX];
	int n = scandir(dir, &names, json_name, alphasort), ret = 0;

	if (n < 0)
		return err__sys(errno, "cannot read %s", dir);
	if (n == 0)
		ret = err__set(EINVAL, "%s holds no result documents (*.json)",
			       dir);
	for (int i = 0; i < n; i++) {
		if (ret == 0)
			ret = output__pathf(path, sizeof(path), "%s/%s", dir,
					    names[i]->d_name);
		if (ret == 0)
			ret = load_file(in, path, true);
		free(names[i]);
	}
	free(names);
	return ret;
}

static int load_all(struct inputs *in, const struct export_cli *cli)
{
	struct stat st;
	int ret = 0;

	for (int i = 0; ret == 0 && i < cli->nr_operands; i++) {
		const char *p = cli->operands[i];

		if (stat(p, &st) < 0)
			ret = err__sys(errno, "cannot read %s", p);
		else if (S_ISDIR(st.st_mode))
			ret = load_dir(in, p);
		else
			ret = load_file(in, p, false);
	}
	return ret;
}

/* ---- writing ---- */

/* The metrics of the documents from `host` (NULL: all) as text. */
static int render(const struct inputs *in, const char *host,
		  struct output_text *t)
{
	int ret = output__text_open(t);

	if (ret < 0)
		return ret;
	ret = openmetrics__write(t->f, in->docs,
				 (const char *const *)in->paths, in->n, host);
	if (ret < 0) {
		fclose(t->f);
		free(t->text);
		*t = (struct output_text){ 0 };
		return ret;
	}
	return output__text_close(t, "the metrics");
}

static bool seen_before(const struct inputs *in, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (!strcmp(openmetrics__host(&in->docs[k]),
			    openmetrics__host(&in->docs[i])))
			return true;
	return false;
}

/* One PUT per host, each the group of that host's documents. */
static int push_all(const struct inputs *in, const struct export_cli *cli)
{
	struct output_text t;
	int ret = 0;

	for (size_t i = 0; ret == 0 && i < in->n; i++) {
		const char *host = openmetrics__host(&in->docs[i]);
		char *url;

		if (seen_before(in, i))
			continue;
		url = push__group_url(cli->push_url, cli->job, host);
		if (!url)
			return err__set(ENOMEM, "building the push URL");
		ret = render(in, host, &t);
		if (ret == 0)
			ret = push__put(url, t.text, t.len);
		if (ret == 0)
			fprintf(stderr, "pushed to %s\n", url);
		free(t.text);
		free(url);
	}
	return ret;
}

static int write_outputs(const struct inputs *in,
			 const struct export_cli *cli)
{
	struct output_text t;
	int ret = render(in, NULL, &t);

	if (ret < 0)
		return cli__error(CLI_USAGE, "export: %s", err__last());
	if (!cli->textfile_dir && !cli->push_url &&
	    (fwrite(t.text, 1, t.len, stdout) != t.len || fflush(stdout)))
		ret = err__sys(errno, "writing the metrics to stdout");
	if (ret == 0 && cli->textfile_dir)
		ret = output__write_file(cli->textfile_dir, cli->name, t.text,
					 t.len);
	free(t.text);
	if (ret == 0 && cli->push_url)
		ret = push_all(in, cli);
	return ret < 0 ? cli__error(CLI_FAIL, "export: %s", err__last())
		       : CLI_OK;
}

/* node_exporter reads only the directory it was given: one made here
 * (a typo, another path) would hold metrics nobody collects. */
static int textfile_dir_exists(const struct export_cli *cli)
{
	struct stat st;

	if (!cli->textfile_dir)
		return 0;
	if (stat(cli->textfile_dir, &st) < 0)
		return err__sys(errno, "--textfile-dir %s", cli->textfile_dir);
	if (!S_ISDIR(st.st_mode))
		return err__set(ENOTDIR, "--textfile-dir %s: not a directory",
				cli->textfile_dir);
	return 0;
}

static int run_prometheus(int argc, char **argv)
{
	struct export_cli cli;
	struct inputs in = { 0 };
	int ret = parse_args(argc, argv, &cli);

	if (ret)
		return cli__parsed(ret, "export", usage_prometheus);
	if (textfile_dir_exists(&cli) < 0 || load_all(&in, &cli) < 0)
		ret = cli__error(CLI_USAGE, "export: %s", err__last());
	else
		ret = write_outputs(&in, &cli);
	inputs_free(&in);
	return ret;
}

int cmd_export(int argc, char **argv)
{
	if (argc < 2) {
		usage_export(stderr);
		return CLI_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage_export(stdout);
		return CLI_OK;
	}
	if (!strcmp(argv[1], "prometheus"))
		return run_prometheus(argc - 1, argv + 1);
	cli__error(CLI_USAGE, "export: no format '%s' (formats: prometheus)",
		   argv[1]);
	return CLI_USAGE;
}
