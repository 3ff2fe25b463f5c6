/* Fuzz target: arrival traces (sim/arrivals.c, read with libcsv): a
 * plain CSV column of timestamps (seconds or UTC date-times), the Azure
 * Functions 2019 per-minute counts and the 2021 invocation rows. The
 * first input byte picks the format (bits 0-1: auto, csv, azure2019,
 * azure2021), a 60 s window (bit 2) and a time scale of 0.1 (bit 3); the
 * rest is the file. */
#include "fuzz.h"

#include "arrivals.h"

#include <limits.h>
#include <stdio.h>

static const char *const formats[] = { "", ",format=csv",
				       ",format=azure2019",
				       ",format=azure2021" };
static char path[PATH_MAX];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	snprintf(path, sizeof(path), "%s/trace.csv", fuzz__scratch("arrivals"));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[PATH_MAX + 64];
	struct arrivals_spec spec;
	struct arrivals a;

	if (size < 1)
		return 0;
	fuzz__write(path, data + 1, size - 1);
	snprintf(text, sizeof(text), "trace:%s%s", path, formats[data[0] & 3]);
	if (arrivals__parse_spec(text, &spec) < 0)
		return 0;
	if (arrivals__make(&spec, data[0] & 4 ? 60 : 0, data[0] & 8 ? 0.1 : 1,
			   data[0], &a) == 0) {
		arrivals__mean_rate(&a);
		arrivals__free(&a);
	}
	return 0;
}
