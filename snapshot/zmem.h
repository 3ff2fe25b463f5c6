/* Compressed guest memory: the memory file as independently decompressible
 * zstd chunks, so a lazy restore decompresses only the chunk a fault needs.
 *
 *   header  struct zmem_header (32 bytes)
 *   index   struct zmem_chunk[nchunks]: where each frame is; csize 0 means
 *           the chunk is all zeros and has no frame
 *   frames  one zstd frame per non-zero chunk
 */
#ifndef COLDSTART_ZMEM_H
#define COLDSTART_ZMEM_H

#include <stddef.h>
#include <stdint.h>

#define ZMEM_MAGIC "CSZMEM01"
#define ZMEM_CHUNK (64u << 10)

struct zmem_header {
	char magic[8];
	uint32_t chunk_size;
	uint32_t nchunks;
	uint64_t mem_size;
	uint64_t reserved;
};
_Static_assert(sizeof(struct zmem_header) == 32, "zmem header layout");

struct zmem_chunk {
	uint64_t offset; /* of the frame in the file */
	uint32_t csize;  /* frame bytes; 0 = all zeros */
	uint32_t reserved;
};
_Static_assert(sizeof(struct zmem_chunk) == 16, "zmem index layout");

struct zmem {
	int fd; /* borrowed */
	uint32_t chunk_size, nchunks;
	uint64_t mem_size;
	struct zmem_chunk *index;
};

/* Compresses `size` bytes at `mem` into `fd` (empty, seekable). Pages
 * whose `resident` byte lacks bit 0 are known zero (NULL: read all).
 * *data gets the bytes of non-zero chunks, *file the file's size. */
int zmem__write(const uint8_t *mem, uint64_t size,
		const unsigned char *resident, int fd, uint64_t *data,
		uint64_t *file);

/* Reads and validates the header and index against `mem_size`. */
int zmem__open(struct zmem *z, int fd, uint64_t mem_size);
void zmem__close(struct zmem *z);

/* Decompresses chunk `i` into `dst` (chunk_size bytes) using `scratch`
 * (zmem__scratch_size() bytes); *read gets the compressed bytes read. */
int zmem__read_chunk(const struct zmem *z, uint32_t i, void *dst,
		     void *scratch, uint64_t *read);
size_t zmem__scratch_size(const struct zmem *z);

#endif
