/* `coldstart compare`'s (and `bench ab`'s) verdicts for CI: Markdown for
 * a job summary or a pull-request comment, JUnit XML for CI test tabs. */
#include "compare_cli.h"

#include <stdlib.h>
#include <string.h>

typedef void series_fn(const struct compare_cli *cli, const char *name,
		       const struct compare_row *r, void *ctx);
typedef void missing_fn(const char *name, void *ctx);

/* fn on every compared row, miss on every series of BASE that NEW
 * lacks, with the names they are shown under. */
static void each(const struct compare_cli *cli, const struct compare_run *run,
		 series_fn *fn, missing_fn *miss, void *ctx)
{
	char name[256];

	for (size_t i = 0; i < run->nr_pairs; i++) {
		const struct compare_pair *p = &run->pairs[i];

		if (p->base && !p->new_) {
			for (size_t k = 0; miss && k < p->base->doc.nr_series;
			     k++) {
				snprintf(name, sizeof(name), "%s/%s",
					 p->base->doc.bench,
					 p->base->doc.series[k].name);
				miss(run->dirs ? name : strchr(name, '/') + 1,
				     ctx);
			}
			continue;
		}
		for (size_t k = 0; fn && p->compared && k < p->res.nr_rows;
		     k++) {
			compare_print__row_name(name, sizeof(name), run, p,
						p->res.rows[k].name);
			fn(cli, name, &p->res.rows[k], ctx);
		}
		for (size_t k = 0; miss && p->compared &&
				   k < p->res.nr_only_base; k++) {
			compare_print__row_name(name, sizeof(name), run, p,
						p->res.only_base[k]);
			miss(name, ctx);
		}
	}
}

static const char *title(const struct compare_cli *cli)
{
	return cli->title ? cli->title : "coldstart compare";
}

static const char *outcome(const struct compare_cli *cli,
			   const struct compare_run *run)
{
	if (run->regressions || (run->missing && cli->strict))
		return "REGRESSION";
	if (run->inconclusive || run->missing)
		return "INCONCLUSIVE";
	return "no regression";
}

/* ---- Markdown ---- */

/* Table cells hold no '|' (a series name could). */
static void md_cell(const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			putchar('\\');
		putchar(*s);
	}
}

static void md_row(const struct compare_cli *cli, const char *name,
		   const struct compare_row *r, void *ctx)
{
	struct compare_cells c;

	(void)cli;
	(void)ctx;
	compare_print__cells(r, &c);
	fputs("| ", stdout);
	md_cell(name);
	printf(" | %s | %s | %s | %s | %s | %s | %s%s |\n", c.base, c.new_,
	       c.delta, c.bound, c.p, c.n,
	       r->verdict == COMPARE_REGRESSED ? ":x: "
	       : r->verdict == COMPARE_INCONCLUSIVE ? ":grey_question: " : "",
	       *c.verdict ? c.verdict : "~");
}

static void md_why(const struct compare_cli *cli, const char *name,
		   const struct compare_row *r, void *ctx)
{
	(void)ctx;
	if (r->verdict != COMPARE_INCONCLUSIVE)
		return;
	fputs("- `", stdout);
	md_cell(name);
	fputs("`: ", stdout);
	compare_print__why(stdout, cli, r);
	putchar('\n');
}

static void md_missing(const char *name, void *ctx)
{
	(void)ctx;
	fputs("- `", stdout);
	md_cell(name);
	fputs("`\n", stdout);
}

void compare_ci__markdown(const struct compare_cli *cli,
			  const struct compare_run *run)
{
	printf("### %s: %s\n\n", title(cli), outcome(cli, run));
	if (cli->note)
		printf("%s\n\n", cli->note);
	printf("BASE `%s`, NEW `%s` (%s, alpha %g, threshold %g%%; bound: "
	       "the change's one-sided %.12g%% confidence bound, which must "
	       "lie below the threshold to pass)\n\n", cli->base_path,
	       cli->new_path, cli->o.test == COMPARE_UTEST ? "Mann-Whitney U"
							  : "permutation test",
	       cli->o.alpha, 100 * cli->o.threshold,
	       100 * (1 - cli->o.alpha));
	puts("| series | base median | new median | delta | bound | p | n | "
	     "verdict |\n|---|---:|---:|---:|---:|---:|---:|---|");
	each(cli, run, md_row, NULL, NULL);
	if (run->inconclusive) {
		printf("\n**Inconclusive** (%zu of %zu series cannot rule out "
		       "a regression beyond their threshold):\n\n",
		       run->inconclusive, run->rows);
		each(cli, run, md_why, NULL, NULL);
	}
	if (run->missing) {
		printf("\n**Missing from NEW** (%zu series absent or without "
		       "samples: never a pass%s):\n\n", run->missing,
		       cli->strict ? "; --strict: a failure" : "");
		each(cli, run, NULL, md_missing, NULL);
	}
}

/* ---- JUnit XML ---- */

static void xml_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			/* XML 1.0 has no other control characters */
			if ((unsigned char)*s >= 0x20 || *s == '\t' ||
			    *s == '\n')
				fputc(*s, out);
		}
	}
}

/* <testcase classname="BENCH" name="SERIES"> for "BENCH/SERIES" (the
 * bench alone names a file's rows). */
static void case_open(const struct compare_run *run, const char *name)
{
	const char *slash = run->dirs ? strchr(name, '/') : NULL;

	fputs("    <testcase classname=\"coldstart.", stdout);
	if (slash) {
		char bench[128];

		snprintf(bench, sizeof(bench), "%.*s", (int)(slash - name),
			 name);
		xml_text(stdout, bench);
	} else
		xml_text(stdout, run->base.docs[0].doc.bench);
	fputs("\" name=\"", stdout);
	xml_text(stdout, slash ? slash + 1 : name);
	fputs("\">\n", stdout);
}

struct junit_ctx {
	const struct compare_run *run;
};

static void junit_row(const struct compare_cli *cli, const char *name,
		      const struct compare_row *r, void *ctx)
{
	const struct compare_run *run = ((struct junit_ctx *)ctx)->run;
	struct compare_cells c;
	char line[320], *why = NULL;
	size_t len = 0;
	FILE *f;

	compare_print__cells(r, &c);
	case_open(run, name);
	if (r->verdict == COMPARE_REGRESSED) {
		snprintf(line, sizeof(line), "%s %s, p=%s", c.delta,
			 c.verdict, c.p);
		fputs("      <failure message=\"", stdout);
		xml_text(stdout, line);
		fputs("\" type=\"regression\"/>\n", stdout);
	} else if (r->verdict == COMPARE_INCONCLUSIVE &&
		   (f = open_memstream(&why, &len))) {
		compare_print__why(f, cli, r);
		fclose(f);
		fputs("      <error message=\"inconclusive: ", stdout);
		xml_text(stdout, why);
		fputs("\" type=\"inconclusive\"/>\n", stdout);
		free(why);
	}
	snprintf(line, sizeof(line), "base %s, new %s, delta %s, bound %s, "
		 "p %s, n %s", c.base, c.new_, c.delta, c.bound, c.p, c.n);
	fputs("      <system-out>", stdout);
	xml_text(stdout, line);
	fputs("</system-out>\n    </testcase>\n", stdout);
}

static void junit_missing(const char *name, void *ctx)
{
	case_open(((struct junit_ctx *)ctx)->run, name);
	fputs("      <error message=\"missing from NEW (absent or without "
	      "samples)\" type=\"missing\"/>\n    </testcase>\n", stdout);
}

void compare_ci__junit(const struct compare_cli *cli,
		       const struct compare_run *run)
{
	struct junit_ctx ctx = { run };
	size_t errors = run->inconclusive + run->missing;
	size_t tests = run->rows + run->missing;

	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	      "<testsuites name=\"", stdout);
	xml_text(stdout, title(cli));
	printf("\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\">\n"
	       "  <testsuite name=\"", tests, run->regressions, errors);
	xml_text(stdout, title(cli));
	printf("\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\">\n",
	       tests, run->regressions, errors);
	each(cli, run, junit_row, junit_missing, &ctx);
	puts("  </testsuite>\n</testsuites>");
}

const char *const compare_print__formats[] = { "text", "markdown", "json",
					       "junit", NULL };

void compare_print__as(const struct compare_cli *cli,
		       const struct compare_run *run)
{
	if (cli->format == COMPARE_JSON)
		compare_print__json(cli, run);
	else if (cli->format == COMPARE_MARKDOWN)
		compare_ci__markdown(cli, run);
	else if (cli->format == COMPARE_JUNIT)
		compare_ci__junit(cli, run);
	else
		compare_print__table(cli, run);
}
