/* Fuzz target: a result document read by `coldstart report`
 * (report__generate): its checks, then report.md and the CSV files
 * written for it (no plots: gnuplot is not part of the reader). */
#include "fuzz.h"

#include "report.h"

#include <limits.h>
#include <stdio.h>

static char input[PATH_MAX], out[PATH_MAX];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fuzz__report_paths("report", input, out, sizeof(input));
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
