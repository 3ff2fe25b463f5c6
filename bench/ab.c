/* `coldstart bench ab`: one driver run alternately as A and B (two
 * coldstart binaries, or two option sets), interleaved in blocks on this
 * host so that drift hits both sides alike, the samples pooled per side
 * and gated with compare's verdict; --until-decided keeps adding blocks
 * until every series is decided or the time budget ends. */
#include "ab.h"
#include "args.h"
#include "cli.h"
#include "compare_cli.h"
#include "err.h"
#include "output.h"
#include "units.h"

#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

#define AB_MAX_ARGS 96

struct side {
	const char *name; /* "A", "B" */
	const char *bin;
	char *opts;       /* extra driver options, split on blanks */
	json_t *first;    /* the first block's document */
	struct result_series *series; /* pooled samples, by first's order */
	size_t nr_series;
	struct result_doc doc; /* first's header with the pooled series */
};

struct ab {
	struct bench_common c; /* DRIVER [OPTIONS]: its operands */
	struct side s[2];
	char **driver; /* DRIVER [OPTIONS] */
	int nr_driver;
	const char *out;
	unsigned int blocks;
	unsigned int nr_blocks; /* run per side */
	bool until_decided;
	uint64_t budget_ns;
	struct compare_cli cli;
	char note[2 * PATH_MAX + 512]; /* the Markdown's: what A and B were */
};

/* BIN bench DRIVER [DRIVER OPTIONS] [SIDE OPTIONS] --out DIR, stdout and
 * stderr into DIR.log; its exit code, or -errno. */
static int run_block(const struct ab *ab, const struct side *s,
		     const char *dir)
{
	char *argv[AB_MAX_ARGS], *copy = s->opts ? strdup(s->opts) : NULL;
	char log[PATH_MAX + 8], *save = NULL;
	posix_spawn_file_actions_t fa;
	int argc = 0, status, ret;
	pid_t pid;

	argv[argc++] = (char *)s->bin;
	argv[argc++] = "bench";
	for (int i = 0; i < ab->nr_driver && argc < AB_MAX_ARGS - 8; i++)
		argv[argc++] = ab->driver[i];
	for (char *t = copy ? strtok_r(copy, " \t", &save) : NULL;
	     t && argc < AB_MAX_ARGS - 4; t = strtok_r(NULL, " \t", &save))
		argv[argc++] = t;
	argv[argc++] = "--out";
	argv[argc++] = (char *)dir;
	argv[argc] = NULL;
	snprintf(log, sizeof(log), "%s.log", dir);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT |
					 O_TRUNC, 0644);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	ret = posix_spawn(&pid, s->bin, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	free(copy);
	if (ret != 0)
		return err__set(ret, "cannot run %s: %s", s->bin, strerror(ret));
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* Appends the samples of `doc` to the side's pooled series; the first
 * block fixes which series there are. */
static int pool_doc(struct side *s, const struct result_doc *doc)
{
	if (!s->first) {
		s->first = json_incref(doc->root);
		s->series = calloc(doc->nr_series, sizeof(*s->series));
		if (!s->series)
			return err__set(ENOMEM, "allocating series");
		s->nr_series = doc->nr_series;
		for (size_t i = 0; i < doc->nr_series; i++)
			s->series[i] = (struct result_series){
				.name = strdup(doc->series[i].name),
				.unit = strdup(doc->series[i].unit),
				.higher_is_better =
					doc->series[i].higher_is_better };
	}
	for (size_t i = 0; i < s->nr_series; i++) {
		const struct result_series *in =
			result__find(doc, s->series[i].name);
		struct result_series *p = &s->series[i];
		double *grown;

		if (!in || !p->name || !p->unit)
			continue; /* missing in a block: compare says so */
		grown = realloc(p->samples, (p->n + in->n) * sizeof(double));
		if (!grown)
			return err__set(ENOMEM, "pooling samples");
		memcpy(grown + p->n, in->samples, in->n * sizeof(double));
		p->samples = grown;
		p->n += in->n;
	}
	return 0;
}

static int one_block(struct ab *ab, unsigned int block, int which)
{
	struct side *s = &ab->s[which];
	char dir[PATH_MAX], path[PATH_MAX + 64];
	struct result_doc doc;
	int code, ret;

	snprintf(dir, sizeof(dir), "%s/%s-%03u", ab->out, which ? "b" : "a",
		 block);
	code = run_block(ab, s, dir);
	if (code < 0)
		return code;
	if (code != 0)
		return err__set(EIO, "block %u of %s exited %d (see %s.log)",
				block, s->name, code, dir);
	snprintf(path, sizeof(path), "%s/%s.json", dir, ab->driver[0]);
	ret = result__load_file(path, &doc);
	if (ret < 0)
		return ret;
	ret = pool_doc(s, &doc);
	result__free(&doc);
	return ret;
}

/* The side's pooled samples as a document compare__docs reads: the
 * first block's header, series with samples. */
static void side_doc(struct side *s)
{
	s->doc = (struct result_doc){
		.root = s->first,
		.bench = json_string_value(json_object_get(s->first, "bench")),
		.config = json_null(),
		.sysinfo = json_object_get(s->first, "sysinfo"),
		.series = s->series,
		.nr_series = s->nr_series,
	};
}

static int verdicts(struct ab *ab, struct compare_result *res)
{
	side_doc(&ab->s[0]);
	side_doc(&ab->s[1]);
	return compare__docs(&ab->s[0].doc, &ab->s[1].doc, &ab->cli.o, res);
}

/* Blocks in A B, B A order (linear drift cancels over each pair), then
 * with --until-decided more pairs until nothing is inconclusive or the
 * budget is spent; *why says which ended it. */
static int run_blocks(struct ab *ab, const char **why)
{
	uint64_t t0 = now_ns();
	unsigned int b = 0;
	int ret = 0;

	*why = "blocks done";
	for (;; b++) {
		struct compare_result res;
		bool decided;

		if (b >= ab->blocks && !ab->until_decided)
			break;
		if (b >= ab->blocks && b % 2 == 0) {
			ret = verdicts(ab, &res);
			if (ret < 0)
				return ret;
			decided = res.inconclusive == 0;
			compare__free_result(&res);
			if (decided) {
				*why = "decided";
				break;
			}
			if (now_ns() - t0 >= ab->budget_ns) {
				*why = "budget spent";
				break;
			}
		}
		ret = one_block(ab, b, (int)(b % 2));
		if (ret == 0)
			ret = one_block(ab, b, (int)(1 - b % 2));
		if (ret < 0)
			return ret;
		ab->nr_blocks = b + 1;
		fprintf(stderr, "bench ab: block %u done (%.0f s)\n", b + 1,
			(double)(now_ns() - t0) / 1e9);
	}
	return 0;
}

static int write_side(const struct ab *ab, const struct side *s,
		      const char *name)
{
	json_t *doc = json_deep_copy(s->first);
	json_t *series = json_object_get(doc, "series"), *js;
	size_t i;
	int ret;

	if (!doc)
		return err__set(ENOMEM, "copying a document");
	json_array_foreach(series, i, js) {
		const char *n = json_string_value(json_object_get(js, "name"));
		json_t *arr = json_array();

		for (size_t k = 0; k < s->nr_series; k++)
			if (n && !strcmp(n, s->series[k].name))
				for (size_t j = 0; j < s->series[k].n; j++)
					json_array_append_new(arr, json_real(
						s->series[k].samples[j]));
		json_object_del(js, "summary"); /* of the first block */
		json_object_del(js, "samples");
		json_object_set_new(js, "samples_ns", arr);
	}
	ret = output__write_json(ab->out, name, doc);
	json_decref(doc);
	return ret;
}

/* One side for the note: its binary and its own options. */
static void side_text(char *buf, size_t len, const struct side *s)
{
	snprintf(buf, len, "%s: `%s bench`%s%s%s", s->name, s->bin,
		 s->opts ? " with `" : "", s->opts ? s->opts : "",
		 s->opts ? "`" : "");
}

/* The Markdown's paragraph: the driver, what A and B ran, the blocks. */
static void describe(struct ab *ab, const char *why)
{
	char a[PATH_MAX + 128], b[PATH_MAX + 128];

	side_text(a, sizeof(a), &ab->s[0]);
	side_text(b, sizeof(b), &ab->s[1]);
	snprintf(ab->note, sizeof(ab->note), "`%s`, %s; %s; interleaved in "
		 "blocks on one host (%s, %u per side)", ab->driver[0], a, b,
		 why, ab->nr_blocks);
	ab->cli.note = ab->note;
}

static int report(struct ab *ab, const char *why)
{
	struct compare_run run = { 0 };
	struct result_entry e[2] = { { .path = "A" }, { .path = "B" } };
	struct compare_pair pair = { &e[0], &e[1], { 0 }, true };
	int ret = verdicts(ab, &pair.res);

	if (ret < 0)
		return ret;
	e[0].doc = ab->s[0].doc;
	e[1].doc = ab->s[1].doc;
	run.base = (struct result_set){ "A", false, &e[0], 1, NULL, 0 };
	run.new_ = (struct result_set){ "B", false, &e[1], 1, NULL, 0 };
	run.pairs = &pair;
	run.nr_pairs = 1;
	run.rows = pair.res.nr_rows;
	run.regressions = pair.res.regressions;
	run.inconclusive = pair.res.inconclusive;
	run.missing = pair.res.nr_only_base;
	/* the other formats are documents: the line goes to stderr */
	fprintf(ab->cli.format == COMPARE_TEXT ? stdout : stderr,
		"bench ab: %s, %s; A and B interleaved on this host\n", why,
		ab->out);
	describe(ab, why);
	compare_print__as(&ab->cli, &run);
	ret = run.regressions ? COMPARE_EXIT_REGRESSION
	      : run.inconclusive || run.missing ? COMPARE_EXIT_INCONCLUSIVE
						: COMPARE_EXIT_OK;
	compare__free_result(&pair.res);
	return ret;
}

static void free_side(struct side *s)
{
	for (size_t i = 0; i < s->nr_series; i++) {
		free((char *)s->series[i].name);
		free((char *)s->series[i].unit);
		free(s->series[i].samples);
	}
	free(s->series);
	json_decref(s->first);
}

static int prepare(struct ab *ab, char *tmpl)
{
	const char *self = cli__self_exe();

	for (int i = 0; i < 2; i++)
		if (!ab->s[i].bin)
			ab->s[i].bin = self;
	if (!ab->s[0].bin || !ab->s[1].bin)
		return err__set(ENOENT, "cannot find the coldstart binary");
	if (!ab->out) {
		ab->out = mkdtemp(tmpl);
		if (!ab->out)
			return err__sys(errno, "making a directory");
		return 0;
	}
	return output__mkdirs(ab->out);
}

static int run(void *opts)
{
	char tmpl[] = "/tmp/coldstart-ab-XXXXXX";
	struct ab *ab = opts;
	const char *why;
	int ret, code;

	if (prepare(ab, tmpl) < 0)
		return cli__error(CLI_USAGE, "bench ab: %s", err__last());
	ret = run_blocks(ab, &why);
	if (ret == 0)
		ret = write_side(ab, &ab->s[0], "a.json");
	if (ret == 0)
		ret = write_side(ab, &ab->s[1], "b.json");
	code = ret < 0 ? cli__error(CLI_USAGE, "bench ab: %s", err__last())
		       : report(ab, why);
	if (code < 0)
		code = cli__error(CLI_USAGE, "bench ab: %s", err__last());
	free_side(&ab->s[0]);
	free_side(&ab->s[1]);
	return code;
}

/* ---- options ---- */

static void init(void *opts)
{
	struct ab *ab = opts;

	*ab = (struct ab){ .s = { { .name = "A" }, { .name = "B" } },
			   .blocks = 10, .budget_ns = 600000000000ull,
			   .cli = { .base_path = "A", .new_path = "B",
				    .title = "coldstart bench ab" } };
	compare__default_opts(&ab->cli.o);
}

static int set_a_bin(void *opts, const char *arg)
{
	((struct ab *)opts)->s[0].bin = arg;
	return 0;
}

static int set_b_bin(void *opts, const char *arg)
{
	((struct ab *)opts)->s[1].bin = arg;
	return 0;
}

static int set_a_opts(void *opts, const char *arg)
{
	((struct ab *)opts)->s[0].opts = (char *)arg;
	return 0;
}

static int set_b_opts(void *opts, const char *arg)
{
	((struct ab *)opts)->s[1].opts = (char *)arg;
	return 0;
}

static int set_blocks(void *opts, const char *arg)
{
	uint64_t v;
	int ret = args__u64("--blocks", arg, 1, 100000, &v);

	((struct ab *)opts)->blocks = (unsigned int)v;
	return ret;
}

static int set_until(void *opts, const char *arg)
{
	(void)arg;
	((struct ab *)opts)->until_decided = true;
	return 0;
}

static int set_budget(void *opts, const char *arg)
{
	return args__duration("--budget", arg, &((struct ab *)opts)->budget_ns);
}

static int set_out(void *opts, const char *arg)
{
	((struct ab *)opts)->out = arg;
	return 0;
}

static int set_threshold(void *opts, const char *arg)
{
	char *end;
	double pct = strtod(arg, &end);

	if (end != arg && *end == '%')
		end++;
	if (end == arg || *end || !(pct >= 0 && pct <= 1000))
		return err__set(EINVAL, "--threshold: '%s' is not a "
				"percentage in 0..1000", arg);
	((struct ab *)opts)->cli.o.threshold = pct / 100;
	return 0;
}

static int set_alpha(void *opts, const char *arg)
{
	return args__probability("--alpha", arg,
				 &((struct ab *)opts)->cli.o.alpha);
}

static int set_format(void *opts, const char *arg)
{
	unsigned int f = 0;
	int ret = args__choice("--format", arg, compare_print__formats, &f);

	((struct ab *)opts)->cli.format = (enum compare_format)f;
	return ret;
}

static int check(void *opts)
{
	struct ab *ab = opts;

	if (ab->c.nr_operands == 0)
		return err__set(EINVAL, "needs a driver: bench ab [OPTIONS] -- "
				"DRIVER [DRIVER OPTIONS]");
	if (!strcmp(ab->c.operands[0], "ab") ||
	    !strcmp(ab->c.operands[0], "suite"))
		return err__set(EINVAL, "'%s' cannot be run as A and B",
				ab->c.operands[0]);
	ab->driver = ab->c.operands;
	ab->nr_driver = ab->c.nr_operands;
	return 0;
}

static const struct opt table[] = {
	{ "a-bin", 0, "PATH", false, "the coldstart binary of side A "
	  "(default: this one)", set_a_bin, NULL },
	{ "b-bin", 0, "PATH", false, "the coldstart binary of side B "
	  "(default: this one)", set_b_bin, NULL },
	{ "a-opts", 0, "OPTS", false, "driver options of side A only (split "
	  "on blanks)", set_a_opts, NULL },
	{ "b-opts", 0, "OPTS", false, "driver options of side B only (split "
	  "on blanks),\ne.g. --b-opts '--strategy uffd'", set_b_opts, NULL },
	{ "blocks", 0, "N", false, "blocks per side (default 10)", set_blocks,
	  NULL },
	{ "until-decided", 0, NULL, false, "then more blocks until every "
	  "series is decided", set_until, NULL },
	{ "budget", 0, "DUR", false, "...or this much time has passed "
	  "(default 10m)", set_budget, NULL },
	{ "out", 0, "DIR", false, "each block's output, and a.json, b.json "
	  "(the pooled\nsamples), in DIR (default: a new temporary "
	  "directory)", set_out, NULL },
	{ "threshold", 0, "PCT", false, "as for compare (default 5)",
	  set_threshold, NULL },
	{ "alpha", 0, "P", false, "as for compare (default 0.01)", set_alpha,
	  NULL },
	{ "format", 0, "FMT", false, "text, markdown, json or junit: the "
	  "verdicts on stdout as\n"
	  "compare --format prints them (a job summary, a pull-request\n"
	  "comment, CI test tabs)", set_format, NULL },
	OPT_END,
};

const struct bench_driver ab_driver = {
	.name = "ab",
	.summary = "one driver as A and B (two binaries or option sets), "
		   "interleaved, gated",
	.usage = "Usage: coldstart bench ab [OPTIONS] -- DRIVER [DRIVER "
		 "OPTIONS]\n"
		 "Runs `coldstart bench DRIVER` alternately as A and B, in "
		 "blocks interleaved\nA B, B A, A B... on this host (drift "
		 "then hits both sides alike), pools each\nside's samples per "
		 "series and gates B against A as `coldstart compare` does\n(B "
		 "passes only when each change's confidence bound lies below "
		 "the\nthreshold).\n",
	.epilog = "\nExit codes: those of compare (0 B within the threshold, "
		  "1 regression, 3\ninconclusive); 2 usage error or a block "
		  "of the driver that failed.\n",
	.operands = true,
	.opts = table,
	.size = sizeof(struct ab),
	.common_at = offsetof(struct ab, c),
	.init = init,
	.check = check,
	.run = run,
};
