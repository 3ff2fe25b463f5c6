/* Fuzz target: the working-set file the prefetch restore strategies
 * record and replay (mem_uffd__wset_read), for 64 Ki pages of guest
 * memory. */
#include "fuzz.h"

#include "mem_uffd.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

static char path[PATH_MAX];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	snprintf(path, sizeof(path), "%s/wset", fuzz__scratch("wset"));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t *pages, n;

	fuzz__write(path, data, size);
	if (mem_uffd__wset_read(path, 1u << 16, &pages, &n) == 0)
		free(pages);
	return 0;
}
