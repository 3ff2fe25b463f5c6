/* `coldstart compare`'s internal interface between its command
 * (cmd_compare.c), its table and JSON output (compare_print.c) and the
 * cross-host table (hosts.c). */
#ifndef COLDSTART_COMPARE_CLI_H
#define COLDSTART_COMPARE_CLI_H

#include "compare_set.h"

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

struct compare_cli {
	const char *base_path, *new_path;
	struct compare_opts o;
	struct metric_threshold *overrides; /* room for argc entries */
	bool force;
	bool strict; /* a series missing from NEW is a failure (exit 1) */
	bool strict_host; /* a changed kernel, microcode, KVM: exit 2 */
	bool json; /* verdicts as one JSON document on stdout */
	const char *github_path, *gobench_path;
	char **hosts; /* --hosts DIR...: the cross-host table instead */
	size_t nr_hosts;
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

/* `compare --hosts DIR...`: one row per host, grouped by CPU model,
 * kernel and KVM flavour, with each driver's headline medians, as
 * Markdown on `out`. -errno with a message (a directory that is not
 * readable or holds something that is not a result). */
int hosts__table(char *const dirs[], size_t n, FILE *out);

#endif
