/* Fuzz target: a compressed memory file (snapshot/zmem.h): its header and
 * chunk index checked by zmem__open against the size the header claims
 * (as a state file saying the same would), then every chunk decompressed. */
#include "fuzz.h"

#include "zmem.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Chunks of larger claims are not read: the index is what matters. */
#define MAX_MEM (256ull << 20)

static int fd;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fd = memfd_create("coldstart-fuzz-zmem", MFD_CLOEXEC);
	return fd < 0 ? -1 : 0;
}

static void read_chunks(const struct zmem *z)
{
	uint8_t *dst = malloc(z->chunk_size);
	uint8_t *scratch = malloc(zmem__scratch_size(z));
	uint64_t read;

	for (uint32_t i = 0; dst && scratch && i < z->nchunks; i++)
		zmem__read_chunk(z, i, dst, scratch, &read);
	free(dst);
	free(scratch);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct zmem_header h = { .mem_size = 0 };
	struct zmem z;

	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	if (size >= sizeof(h))
		memcpy(&h, data, sizeof(h));
	if (zmem__open(&z, fd, h.mem_size) == 0) {
		if (z.mem_size <= MAX_MEM)
			read_chunks(&z);
		zmem__close(&z);
	}
	return 0;
}
