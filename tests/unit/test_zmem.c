/* Unit tests for compressed memory files (snapshot/zmem.c): a written
 * file reads back, and an index that does not describe frames zmem__write
 * could have written is refused at open, before any chunk is read into
 * the scratch buffer. */
#include "err.h"
#include "zmem.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#define SIZE (8u * ZMEM_CHUNK)

/* A file of SIZE bytes of memory, every chunk non-zero (each has a
 * frame), with chunk 2 all zeros; its index in idx. */
static int written(struct zmem_chunk idx[8])
{
	uint8_t *mem = calloc(1, SIZE);
	uint64_t data, file;
	int fd;

	assert_non_null(mem);
	for (uint32_t i = 0; i < SIZE; i += 512)
		if (i / ZMEM_CHUNK != 2)
			mem[i] = (uint8_t)(i / 512 + 1);
	fd = memfd_create("zmem", 0);
	assert_true(fd >= 0);
	assert_int_equal(zmem__write(mem, SIZE, NULL, fd, &data, &file), 0);
	free(mem);
	assert_int_equal(pread(fd, idx, 8 * sizeof(*idx),
			       sizeof(struct zmem_header)),
			 8 * sizeof(*idx));
	return fd;
}

static void set_index(int fd, const struct zmem_chunk idx[8])
{
	assert_int_equal(pwrite(fd, idx, 8 * sizeof(*idx),
				sizeof(struct zmem_header)),
			 8 * sizeof(*idx));
}

static void expect_refused(int fd, const char *what)
{
	struct zmem z;
	int ret = zmem__open(&z, fd, SIZE);

	if (ret != -EINVAL || !strstr(err__last(), what))
		fail_msg("zmem__open returned %d, message '%s' (want '%s')",
			 ret, err__last(), what);
}

static void round_trip(void **state)
{
	struct zmem_chunk idx[8];
	int fd = written(idx);
	uint8_t *chunk = malloc(ZMEM_CHUNK);
	struct zmem z;
	void *scratch;
	uint64_t read;

	(void)state;
	assert_int_equal(idx[2].csize, 0);
	assert_int_equal(zmem__open(&z, fd, SIZE), 0);
	scratch = malloc(zmem__scratch_size(&z));
	assert_int_equal(zmem__read_chunk(&z, 3, chunk, scratch, &read), 0);
	assert_int_equal(chunk[0], (uint8_t)(3 * ZMEM_CHUNK / 512 + 1));
	assert_int_equal(read, idx[3].csize);
	zmem__close(&z);
	free(scratch);
	free(chunk);
	close(fd);
}

/* A frame larger than the scratch buffer, wholly inside the file: the
 * size used to be checked against the file alone, and the read overran
 * the heap buffer (eager restore and the uffd handler alike). */
static void oversized_frame_refused(void **state)
{
	struct zmem_chunk idx[8];
	int fd = written(idx);

	(void)state;
	idx[0].csize = 2 * ZMEM_CHUNK;
	set_index(fd, idx);
	assert_int_equal(ftruncate(fd, (off_t)(idx[0].offset + idx[0].csize)),
			 0);
	expect_refused(fd, "more than a 65536-byte chunk can take");
	close(fd);
}

static void overlapping_frames_refused(void **state)
{
	struct zmem_chunk idx[8];
	int fd = written(idx);

	(void)state;
	idx[5].offset = idx[4].offset + 1; /* inside 4's frame */
	set_index(fd, idx);
	expect_refused(fd, "chunks 4 and 5 overlap");
	idx[5].offset = idx[1].offset; /* the very same frame */
	set_index(fd, idx);
	expect_refused(fd, "overlap");
	close(fd);
}

static void frame_in_header_or_past_end_refused(void **state)
{
	struct zmem_chunk idx[8];
	int fd = written(idx);
	uint64_t end = (uint64_t)lseek(fd, 0, SEEK_END);

	(void)state;
	idx[1].offset = 8; /* inside the header */
	set_index(fd, idx);
	expect_refused(fd, "chunk 1 lies outside the file");
	idx[1].offset = end - 1;
	set_index(fd, idx);
	expect_refused(fd, "chunk 1 lies outside the file");
	close(fd);
}

/* A header claiming more chunks than the file holds index entries for
 * is refused before the index is allocated by the header's word. */
static void index_past_end_refused(void **state)
{
	struct zmem_header h = { .chunk_size = ZMEM_CHUNK,
				 .nchunks = 1u << 24,
				 .mem_size = (uint64_t)ZMEM_CHUNK << 24 };
	int fd = memfd_create("zmem", 0);
	struct zmem z;

	(void)state;
	memcpy(h.magic, ZMEM_MAGIC, sizeof(h.magic));
	assert_int_equal(pwrite(fd, &h, sizeof(h), 0), sizeof(h));
	assert_int_equal(zmem__open(&z, fd, h.mem_size), -EINVAL);
	assert_non_null(strstr(err__last(), "index is truncated"));
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(oversized_frame_refused),
		cmocka_unit_test(overlapping_frames_refused),
		cmocka_unit_test(frame_in_header_or_past_end_refused),
		cmocka_unit_test(index_past_end_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
