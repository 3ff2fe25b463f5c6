/* Fuzz target: plain CSV traces, a column of timestamps (seconds or UTC
 * date-times), read as that format alone (the input's layout: fuzz_trace.h). */
#include "fuzz_trace.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	return fuzz_trace__init("trace_csv");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_trace__one(ARRIVALS_CSV, data, size);
}
