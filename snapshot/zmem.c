/* Chunked zstd memory files. */
#include "zmem.h"

#include "err.h"
#include "fileio.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#define ZMEM_LEVEL 1 /* fast: snapshot creation speed matters */
#define PAGE 4096u

static int write_all(int fd, const void *p, size_t len, uint64_t off)
{
	int ret = fileio__pwrite_all(fd, p, len, off);

	return ret < 0 ? err__sys(-ret, "writing the compressed memory file")
		       : 0;
}

static int chunk_is_zero(const uint8_t *p, size_t len,
			 const unsigned char *resident)
{
	for (size_t page = 0; page < len / PAGE; page++) {
		const uint64_t *w = (const uint64_t *)(p + page * PAGE);

		if (resident && !(resident[page] & 1))
			continue;
		for (size_t i = 0; i < PAGE / 8; i++)
			if (w[i])
				return 0;
	}
	return 1;
}

struct zwriter {
	ZSTD_CCtx *cctx;
	void *out;
	size_t out_cap;
	struct zmem_chunk *index;
};

static int compress_chunks(struct zwriter *w, const uint8_t *mem,
			   uint32_t nchunks, const unsigned char *resident,
			   int fd, uint64_t *pos, uint64_t *data)
{
	for (uint32_t i = 0; i < nchunks; i++) {
		const uint8_t *src = mem + (uint64_t)i * ZMEM_CHUNK;
		size_t n;
		int ret;

		if (chunk_is_zero(src, ZMEM_CHUNK,
				  resident ? resident + i * (ZMEM_CHUNK / PAGE)
					   : NULL))
			continue;
		n = ZSTD_compressCCtx(w->cctx, w->out, w->out_cap, src,
				      ZMEM_CHUNK, ZMEM_LEVEL);
		if (ZSTD_isError(n))
			return err__set(EIO, "zstd: %s", ZSTD_getErrorName(n));
		ret = write_all(fd, w->out, n, *pos);
		if (ret < 0)
			return ret;
		w->index[i] = (struct zmem_chunk){ .offset = *pos,
						   .csize = (uint32_t)n };
		*pos += n;
		*data += ZMEM_CHUNK;
	}
	return 0;
}

int zmem__write(const uint8_t *mem, uint64_t size,
		const unsigned char *resident, int fd, uint64_t *data,
		uint64_t *file)
{
	struct zmem_header h = { .chunk_size = ZMEM_CHUNK,
				 .nchunks = (uint32_t)(size / ZMEM_CHUNK),
				 .mem_size = size };
	struct zwriter w = { .out_cap = ZSTD_compressBound(ZMEM_CHUNK) };
	uint64_t index_bytes = (uint64_t)h.nchunks * sizeof(struct zmem_chunk);
	uint64_t pos = sizeof(h) + index_bytes;
	int ret;

	if (size % ZMEM_CHUNK)
		return err__set(EINVAL, "memory size is not a multiple of %u",
				ZMEM_CHUNK);
	memcpy(h.magic, ZMEM_MAGIC, sizeof(h.magic));
	w.cctx = ZSTD_createCCtx();
	w.out = malloc(w.out_cap);
	w.index = calloc(h.nchunks, sizeof(*w.index));
	*data = 0;
	ret = w.cctx && w.out && w.index
		      ? compress_chunks(&w, mem, h.nchunks, resident, fd, &pos,
					data)
		      : err__set(ENOMEM, "allocating the zstd compressor");
	if (ret == 0)
		ret = write_all(fd, &h, sizeof(h), 0);
	if (ret == 0)
		ret = write_all(fd, w.index, index_bytes, sizeof(h));
	*file = pos;
	ZSTD_freeCCtx(w.cctx);
	free(w.out);
	free(w.index);
	return ret;
}

static int by_offset(const void *a, const void *b)
{
	const struct zmem_chunk *x = *(const struct zmem_chunk *const *)a;
	const struct zmem_chunk *y = *(const struct zmem_chunk *const *)b;

	return (x->offset > y->offset) - (x->offset < y->offset);
}

/* Frames may not overlap: a file whose chunks share bytes is not one
 * zmem__write wrote, and would decompress one frame as several chunks. */
static int check_overlap(const struct zmem *z)
{
	const struct zmem_chunk **v = malloc((z->nchunks ? z->nchunks : 1) *
					     sizeof(*v));
	uint32_t n = 0;
	int ret = 0;

	if (!v)
		return err__set(ENOMEM, "checking the chunk index");
	for (uint32_t i = 0; i < z->nchunks; i++)
		if (z->index[i].csize)
			v[n++] = &z->index[i];
	qsort(v, n, sizeof(*v), by_offset);
	for (uint32_t i = 1; i < n && ret == 0; i++)
		if (v[i - 1]->offset + v[i - 1]->csize > v[i]->offset)
			ret = err__set(EINVAL, "compressed memory file: chunks "
				       "%td and %td overlap", v[i - 1] - z->index,
				       v[i] - z->index);
	free(v);
	return ret;
}

/* Every frame inside the file, after the index, no larger than the
 * decompression scratch buffer (zmem__scratch_size), and on its own. */
static int check_index(const struct zmem *z, uint64_t file_size)
{
	uint64_t first = sizeof(struct zmem_header) +
			 (uint64_t)z->nchunks * sizeof(struct zmem_chunk);
	size_t bound = zmem__scratch_size(z);

	for (uint32_t i = 0; i < z->nchunks; i++) {
		const struct zmem_chunk *c = &z->index[i];

		if (c->csize > bound)
			return err__set(EINVAL, "compressed memory file: chunk "
					"%u claims %u compressed bytes, more "
					"than a %u-byte chunk can take (%zu)",
					i, c->csize, z->chunk_size, bound);
		if (c->csize && (c->offset < first || c->offset > file_size ||
				 c->csize > file_size - c->offset))
			return err__set(EINVAL, "compressed memory file: chunk "
					"%u lies outside the file (truncated?)",
					i);
	}
	return check_overlap(z);
}

int zmem__open(struct zmem *z, int fd, uint64_t mem_size)
{
	struct zmem_header h;
	off_t file_size = lseek(fd, 0, SEEK_END);
	size_t index_bytes;
	int ret;

	memset(z, 0, sizeof(*z));
	if (file_size < 0)
		return err__sys(errno, "seeking in the compressed memory file");
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h.magic, ZMEM_MAGIC, sizeof(h.magic)))
		return err__set(EINVAL, "the memory file is not a compressed "
				"coldstart memory file");
	if (h.mem_size != mem_size || h.chunk_size != ZMEM_CHUNK ||
	    (uint64_t)h.nchunks * h.chunk_size != mem_size)
		return err__set(EINVAL, "compressed memory file describes %llu "
				"bytes in %u chunks of %u, the state says %llu",
				(unsigned long long)h.mem_size, h.nchunks,
				h.chunk_size, (unsigned long long)mem_size);
	index_bytes = (size_t)h.nchunks * sizeof(struct zmem_chunk);
	if (index_bytes > (uint64_t)file_size - sizeof(h))
		return err__set(EINVAL, "compressed memory file: the chunk index "
				"is truncated");
	z->index = malloc(index_bytes ? index_bytes : 1);
	if (!z->index)
		return err__set(ENOMEM, "reading the chunk index");
	if (pread(fd, z->index, index_bytes, sizeof(h)) != (ssize_t)index_bytes) {
		zmem__close(z);
		return err__set(EINVAL, "compressed memory file: the chunk index "
				"is truncated");
	}
	z->fd = fd;
	z->chunk_size = h.chunk_size;
	z->nchunks = h.nchunks;
	z->mem_size = h.mem_size;
	ret = check_index(z, (uint64_t)file_size);
	if (ret < 0)
		zmem__close(z);
	return ret;
}

void zmem__close(struct zmem *z)
{
	free(z->index);
	z->index = NULL;
}

size_t zmem__scratch_size(const struct zmem *z)
{
	(void)z;
	return ZSTD_compressBound(ZMEM_CHUNK);
}

int zmem__read_chunk(const struct zmem *z, uint32_t i, void *dst,
		     void *scratch, uint64_t *read)
{
	const struct zmem_chunk *c = &z->index[i];
	size_t n;

	*read = 0;
	if (!c->csize) {
		memset(dst, 0, z->chunk_size);
		return 0;
	}
	if (c->csize > zmem__scratch_size(z)) /* zmem__open refuses these */
		return err__set(EINVAL, "compressed memory chunk %u is larger "
				"than its scratch buffer", i);
	if (pread(z->fd, scratch, c->csize, (off_t)c->offset) !=
	    (ssize_t)c->csize)
		return err__set(EIO, "the compressed memory file could not be "
				"read at chunk %u: was it truncated or removed?",
				i);
	*read = c->csize;
	n = ZSTD_decompress(dst, z->chunk_size, scratch, c->csize);
	if (ZSTD_isError(n) || n != z->chunk_size)
		return err__set(EIO, "compressed memory chunk %u is corrupt (%s)",
				i, ZSTD_isError(n) ? ZSTD_getErrorName(n)
						   : "short");
	return 0;
}
