/* Fuzz target: Azure Functions 2019 traces, counts per minute,
 * read as that format alone (the input's layout: fuzz_trace.h). */
#include "fuzz_trace.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	return fuzz_trace__init("trace_azure2019");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_trace__one(ARRIVALS_AZURE2019, data, size);
}
