/* Fuzz target: a compressed memory file (snapshot/zmem.h): its header and
 * chunk index checked by zmem__open against the size the header claims
 * (as a state file saying the same would), then every chunk decompressed.
 * The input is the head of the file: it goes on with zeros up to the
 * furthest frame end its index claims (at most MAX_FILE bytes), so frame
 * sizes beyond what an input holds are tried too. */
#include "fuzz.h"

#include "zmem.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Chunks of larger claims are not read: the index is what matters. */
#define MAX_MEM (256ull << 20)
#define MAX_FILE (1ull << 20)

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

/* The furthest frame end of the index entries the input holds. */
static uint64_t claimed_end(const uint8_t *data, size_t size)
{
	uint64_t end = size;
	struct zmem_chunk c;

	for (size_t at = sizeof(struct zmem_header); at + sizeof(c) <= size;
	     at += sizeof(c)) {
		memcpy(&c, data + at, sizeof(c));
		if (c.offset < MAX_FILE && c.csize <= MAX_FILE - c.offset &&
		    c.offset + c.csize > end)
			end = c.offset + c.csize;
	}
	return end;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct zmem_header h = { .mem_size = 0 };
	struct zmem z;

	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size ||
	    ftruncate(fd, (off_t)claimed_end(data, size)) < 0)
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
