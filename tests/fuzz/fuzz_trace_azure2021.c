/* Fuzz target: Azure Functions 2021 traces, one row per invocation,
 * read as that format alone (the input's layout: fuzz_trace.h). */
#include "fuzz_trace.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	return fuzz_trace__init("trace_azure2021");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_trace__one(ARRIVALS_AZURE2021, data, size);
}
