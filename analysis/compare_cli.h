/* `coldstart compare`'s internal interface between its command
 * (cmd_compare.c), its table and JSON output (compare_print.c) and the
 * cross-host table (hosts.c). */
#ifndef COLDSTART_COMPARE_CLI_H
#define COLDSTART_COMPARE_CLI_H

#include "compare.h"
#include "hosts.h"
#include "result_set.h"

/* Exit codes of `coldstart compare` (README "Exit codes"). */
enum compare_exit {
	COMPARE_EXIT_OK = 0,           /* every series decided, none worse */
	COMPARE_EXIT_REGRESSION = 1,   /* a series regressed */
	COMPARE_EXIT_USAGE = 2,        /* usage, unreadable or incomparable */
	COMPARE_EXIT_INCONCLUSIVE = 3, /* no regression, but some series
					* could not show it was within its
					* threshold, or is missing from NEW */
	COMPARE_EXIT_EXPORT = 4,       /* the verdicts stand, an export
					* could not be written */
};

enum compare_format {
	COMPARE_TEXT,     /* the benchstat-like table */
	COMPARE_MARKDOWN, /* for a job summary or a pull-request comment */
	COMPARE_JSON,
	COMPARE_JUNIT,    /* JUnit XML for CI test tabs */
};

struct compare_cli {
	const char *base_path, *new_path;
	struct compare_opts o;
	struct metric_threshold *overrides; /* room for argc entries */
	bool force;
	bool strict; /* a series missing from NEW is a failure (exit 1) */
	bool strict_host; /* a changed kernel, microcode, KVM: exit 2 */
	enum compare_format format; /* of stdout */
	const char *github_path, *gobench_path;
	char **hosts; /* --hosts DIR...: the cross-host table instead */
	size_t nr_hosts;
	/* the Markdown heading's and JUnit suite's command (NULL: "coldstart
	 * compare"), and a paragraph under the heading (NULL: none) */
	const char *title, *note;
};

/* One bench: its document in BASE and in NEW (either may be missing)
 * and, when both are there, their comparison. */
struct compare_pair {
	const struct result_entry *base, *new_;
	struct compare_result res;
	bool compared;
};

struct compare_run {
	struct result_set base, new_;
	struct compare_pair *pairs;
	size_t nr_pairs;
	bool dirs; /* directories were compared: names are BENCH/SERIES */
	size_t rows, regressions, inconclusive;
	size_t missing; /* BASE's series that NEW lacks or left empty */
};

/* The table (benchstat-like), geomean rows, one-sided series and the
 * summary on stdout; warnings on stderr. */
void compare_print__table(const struct compare_cli *cli,
			  const struct compare_run *run);
/* The verdicts as one JSON document on stdout. */
void compare_print__json(const struct compare_cli *cli,
			 const struct compare_run *run);
/* The verdicts as Markdown (a job summary, a pull-request comment) or
 * JUnit XML (one test case per series, missing ones included) on
 * stdout (compare_ci.c). */
void compare_ci__markdown(const struct compare_cli *cli,
			  const struct compare_run *run);
void compare_ci__junit(const struct compare_cli *cli,
		       const struct compare_run *run);

/* The formats' names for --format, in enum compare_format's order,
 * NULL-terminated. */
extern const char *const compare_print__formats[];

/* The verdicts on stdout in cli->format: one of the four above. */
void compare_print__as(const struct compare_cli *cli,
		       const struct compare_run *run);

/* A row's cells as the table prints them. */
struct compare_cells {
	char base[48], new_[48], delta[24], bound[24], p[16], n[48];
	char verdict[48]; /* "" for a change that is not significant */
};
void compare_print__cells(const struct compare_row *r,
			  struct compare_cells *c);
/* The name a row is shown under: BENCH/SERIES when directories were
 * compared. */
void compare_print__row_name(char *buf, size_t len,
			     const struct compare_run *run,
			     const struct compare_pair *p, const char *series);
/* Why an inconclusive series is, and what would decide it: one line
 * without its end. */
void compare_print__why(FILE *out, const struct compare_cli *cli,
			const struct compare_row *r);

#endif
