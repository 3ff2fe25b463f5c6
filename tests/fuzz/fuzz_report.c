/* Fuzz target: a result document read by `coldstart report`
 * (report__generate): its checks, then report.md and the CSV files
 * written for it (no plots: gnuplot is not part of the reader). */
#include "fuzz.h"

#include "report.h"

#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

static char input[PATH_MAX], out[PATH_MAX];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = fuzz__scratch("report");

	(void)argc, (void)argv;
	snprintf(input, sizeof(input), "%s/result.json", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	mkdir(out, 0700);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *inputs[] = { input };
	struct report_opts o = { .out_dir = out, .md = true,
				 .inputs = inputs, .nr_inputs = 1,
				 .quiet = true };
	bool plots_skipped;

	fuzz__write(input, data, size);
	report__generate(&o, &plots_skipped);
	return 0;
}
