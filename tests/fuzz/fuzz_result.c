/* Fuzz target: a result document (JSON, schema 1) as `coldstart compare`
 * reads it: result__parse, the checks that two documents are comparable
 * (here the document and itself), series lookup by name and the Go
 * benchmark text export. The statistics on the samples (bootstrap
 * intervals: 1000 resamples a series) run in the report target, whose
 * inputs are the same documents; here they would cost 50 times the
 * parsing. */
#include "fuzz.h"

#include "compare.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

static FILE *null_out;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	null_out = fopen("/dev/null", "w");
	return null_out ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct result_doc doc;
	json_t *root = json_loadb((const char *)data, size, 0, NULL);

	if (!root)
		return 0;
	if (result__parse(root, &doc) == 0) {
		compare__same_bench(&doc, &doc);
		compare__same_setup(&doc, &doc);
		for (size_t i = 0; i < doc.nr_series; i++)
			if (result__find(&doc, doc.series[i].name) !=
			    &doc.series[i])
				abort();
		compare__write_gobench(&doc, null_out);
		result__free(&doc);
	}
	json_decref(root);
	return 0;
}
