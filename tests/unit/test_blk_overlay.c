/* Unit tests for the per-VM overlay of a disk image (vmm/blk_overlay.c):
 * reads and writes across blocks, partial blocks copied up from the base,
 * the base never written, the overlay sparse (disk used about what was
 * written), reopened with the same contents, and overlays refused for
 * another size or through a symbolic link; read-only layers under it (a
 * restored snapshot's disk), the highest winning, refused once the
 * overlay holds blocks; and the blocks saved into a new file, sparse,
 * that reads back as the same disk. */
#include "blk_overlay.h"
#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#define DISK (1024 * 1024 + 512) /* a partial last block */

static char dir[64], base_path[96], ovl_path[96];
static int base_fd;
static uint8_t want[DISK], got[DISK];

static uint8_t pattern(uint64_t at)
{
	return (uint8_t)(at * 13 + at / 4096);
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/coldstart-ovl-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(base_path, sizeof(base_path), "%s/base.img", dir);
	snprintf(ovl_path, sizeof(ovl_path), "%s/vm.ovl", dir);
	for (size_t i = 0; i < DISK; i++)
		want[i] = pattern(i);
	base_fd = open(base_path, O_RDWR | O_CREAT, 0600);
	assert_true(base_fd >= 0);
	assert_int_equal(write(base_fd, want, DISK), DISK);
	close(base_fd);
	base_fd = open(base_path, O_RDONLY);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	close(base_fd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static void write_both(struct blk_overlay *o, uint64_t off, uint64_t len,
		       uint8_t v)
{
	uint8_t buf[3 * 4096];

	memset(buf, v, len);
	memset(want + off, v, len);
	assert_int_equal(blk_overlay__write(o, buf, len, off), 0);
}

static void reads_what_was_written(struct blk_overlay *o)
{
	memset(got, 0, DISK);
	assert_int_equal(blk_overlay__read(o, got, DISK, 0), 0);
	assert_memory_equal(got, want, DISK);
	/* a read starting inside a block, across blocks of both files */
	assert_int_equal(blk_overlay__read(o, got, 3 * 4096, 4096 + 100), 0);
	assert_memory_equal(got, want + 4096 + 100, 3 * 4096);
}

static void writes_stay_in_the_overlay(void **state)
{
	struct blk_overlay o;
	struct stat st;
	uint8_t *base = malloc(DISK);

	(void)state;
	assert_int_equal(blk_overlay__open(&o, base_fd, DISK, ovl_path), 0);
	write_both(&o, 512, 512, 0xaa);              /* part of block 0 */
	write_both(&o, 2 * 4096 - 100, 200, 0xbb);   /* across blocks 1, 2 */
	write_both(&o, 10 * 4096, 3 * 4096, 0xcc);   /* whole blocks */
	write_both(&o, DISK - 512, 512, 0xdd);       /* the partial last */
	write_both(&o, 512 + 16, 16, 0xee);          /* a block already in */
	reads_what_was_written(&o);
	assert_int_equal(o.blocks, 7);
	blk_overlay__close(&o);
	/* the base is the same, the overlay about the 7 blocks written */
	assert_int_equal(pread(base_fd, base, DISK, 0), DISK);
	for (size_t i = 0; i < DISK; i++)
		if (base[i] != pattern(i))
			fail_msg("the base changed at byte %zu", i);
	free(base);
	assert_int_equal(stat(ovl_path, &st), 0);
	assert_int_equal(st.st_size, DISK);
	assert_true(st.st_blocks * 512 <= 16 * 4096);
	/* reopened: the same disk, from the file's extents */
	assert_int_equal(blk_overlay__open(&o, base_fd, DISK, ovl_path), 0);
	assert_int_equal(o.blocks, 7);
	reads_what_was_written(&o);
	blk_overlay__close(&o);
}

/* No file named: an unnamed one in $TMPDIR, gone when closed. */
static void an_unnamed_overlay(void **state)
{
	struct blk_overlay o;
	char cmd[160];

	(void)state;
	setenv("TMPDIR", dir, 1);
	unlink(base_path); /* the base stays open: only the overlay may be here */
	assert_int_equal(blk_overlay__open(&o, base_fd, DISK, NULL), 0);
	unsetenv("TMPDIR");
	write_both(&o, 4096 + 7, 9000, 0x5a);
	reads_what_was_written(&o);
	blk_overlay__close(&o);
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A %s)\"", dir);
	assert_int_equal(system(cmd), 0);
}

static void overlays_refused(void **state)
{
	struct blk_overlay o;
	char link[128];

	(void)state;
	assert_int_equal(blk_overlay__open(&o, base_fd, DISK, ovl_path), 0);
	blk_overlay__close(&o);
	assert_int_equal(blk_overlay__open(&o, base_fd, DISK - 512, ovl_path),
			 -EINVAL);
	assert_non_null(strstr(err__last(), "an overlay of another disk"));
	snprintf(link, sizeof(link), "%s/link.ovl", dir);
	assert_int_equal(symlink(ovl_path, link), 0);
	assert_int_equal(blk_overlay__open(&o, base_fd, DISK, link), -ELOOP);
	assert_non_null(strstr(err__last(), "a symbolic link"));
	assert_int_equal(blk_overlay__open(&o, base_fd, DISK, dir), -EISDIR);
}

#define BLOCK BLK_OVERLAY_BLOCK
#define NBLOCKS ((DISK + BLOCK - 1) / BLOCK)
#define LAST (NBLOCKS - 1) /* 512 bytes */

static uint64_t block_len(uint64_t b)
{
	return b == LAST ? DISK - LAST * BLOCK : BLOCK;
}

/* A layer file of the disk's size holding `n` whole blocks, block
 * blks[i] filled with byte vals[i]; `want` made to show them. */
static void make_layer(const char *name, const uint64_t *blks,
		       const uint8_t *vals, size_t n, char path[128])
{
	uint8_t buf[BLOCK];
	int fd;

	snprintf(path, 128, "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, DISK), 0);
	for (size_t i = 0; i < n; i++) {
		uint64_t len = block_len(blks[i]);

		memset(buf, vals[i], len);
		memset(want + blks[i] * BLOCK, vals[i], len);
		assert_int_equal(pwrite(fd, buf, len, blks[i] * BLOCK),
				 (ssize_t)len);
	}
	close(fd);
}

static uint8_t *slurp(const char *path)
{
	uint8_t *p = malloc(DISK);
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, p, DISK, 0), DISK);
	close(fd);
	return p;
}

static void unchanged(const char *path, uint8_t *before)
{
	uint8_t *now = slurp(path);

	assert_memory_equal(now, before, DISK);
	free(now);
	free(before);
}

/* A layer under an empty overlay: its blocks over the base's, the
 * overlay's over its; a partial write copies the layer's block up; the
 * layer and the base are only read. */
static void a_layer_under_the_overlay(void **state)
{
	static const uint64_t blks[] = { 1, 3, 7, LAST };
	static const uint8_t vals[] = { 0x11, 0x13, 0x17, 0x1f };
	struct blk_overlay o;
	char layer[128];
	uint8_t *layer_was, *base_was = slurp(base_path);

	(void)state;
	make_layer("l1", blks, vals, 4, layer);
	layer_was = slurp(layer);
	assert_int_equal(blk_overlay__open(&o, base_fd, DISK, ovl_path), 0);
	assert_int_equal(blk_overlay__add_lower(&o, layer), 0);
	assert_int_equal(o.nr_lower, 1);
	assert_int_equal(o.blocks, 0);
	reads_what_was_written(&o);
	/* into blocks only the layer holds: the rest of each is the
	 * layer's, not the base's */
	write_both(&o, 3 * BLOCK + 50, 100, 0xe3);
	write_both(&o, DISK - 100, 10, 0xef);
	write_both(&o, 5 * BLOCK + 8, 8, 0xe5); /* the base's block */
	write_both(&o, 7 * BLOCK, BLOCK, 0xe7); /* all of a layer block */
	reads_what_was_written(&o);
	assert_int_equal(o.blocks, 4);
	assert_int_equal(want[3 * BLOCK], 0x13);
	assert_int_equal(want[DISK - 1], 0x1f);
	assert_int_equal(want[5 * BLOCK], pattern(5 * BLOCK));
	blk_overlay__close(&o);
	unchanged(layer, layer_was);
	unchanged(base_path, base_was);
}

/* Layers added lowest first: a block is the highest holder's. */
static void the_highest_layer_wins(void **state)
{
	static const uint64_t b1[] = { 1, 2, 3, 9 }, b2[] = { 2, 3, 10 },
			      b3[] = { 3, LAST };
	static const uint8_t v1[] = { 0x11, 0x12, 0x13, 0x19 },
			     v2[] = { 0x22, 0x23, 0x2a }, v3[] = { 0x33, 0x3f };
	char l1[128], l2[128], l3[128];
	struct blk_overlay o;

	(void)state;
	make_layer("l1", b1, v1, 4, l1);
	make_layer("l2", b2, v2, 3, l2);
	make_layer("l3", b3, v3, 2, l3);
	assert_int_equal(blk_overlay__open(&o, base_fd, DISK, ovl_path), 0);
	assert_int_equal(blk_overlay__add_lower(&o, l1), 0);
	assert_int_equal(blk_overlay__add_lower(&o, l2), 0);
	assert_int_equal(blk_overlay__add_lower(&o, l3), 0);
	reads_what_was_written(&o);
	assert_int_equal(want[BLOCK], 0x11);
	assert_int_equal(want[2 * BLOCK], 0x22);
	assert_int_equal(want[3 * BLOCK], 0x33);
	/* a partial write copies up the highest layer's block */
	write_both(&o, 2 * BLOCK + 1, 1, 0xee);
	reads_what_was_written(&o);
	assert_int_equal(want[2 * BLOCK + 2], 0x22);
	blk_overlay__close(&o);
}

static void layers_refused(void **state)
{
	static const uint64_t blks[] = { 1 };
	static const uint8_t vals[] = { 0x11 };
	struct blk_overlay o;
	char layer[128], small[128], link[128];
	uint8_t byte = 1;
	int fd;

	(void)state;
	make_layer("l1", blks, vals, 1, layer);
	snprintf(small, sizeof(small), "%s/small", dir);
	fd = open(small, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_int_equal(ftruncate(fd, DISK - 512), 0);
	close(fd);
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(symlink(layer, link), 0);

	assert_int_equal(blk_overlay__open(&o, base_fd, DISK, ovl_path), 0);
	assert_int_equal(blk_overlay__add_lower(&o, small), -EINVAL);
	assert_non_null(strstr(err__last(), "an overlay of another disk"));
	assert_int_equal(blk_overlay__add_lower(&o, link), -ELOOP);
	assert_non_null(strstr(err__last(), "a symbolic link"));
	assert_int_equal(o.nr_lower, 0);
	assert_int_equal(blk_overlay__write(&o, &byte, 1, 0), 0);
	assert_int_equal(blk_overlay__add_lower(&o, layer), -EBUSY);
	assert_non_null(strstr(err__last(), "holds blocks already"));
	assert_int_equal(o.nr_lower, 0);
	blk_overlay__close(&o);
}

/* The blocks file `path` holds by its data extents, a bit per block. */
static void data_blocks(const char *path, bool *has)
{
	int fd = open(path, O_RDONLY);
	off_t data = 0, hole;

	assert_true(fd >= 0);
	memset(has, 0, NBLOCKS * sizeof(*has));
	while ((data = lseek(fd, data, SEEK_DATA)) >= 0) {
		hole = lseek(fd, data, SEEK_HOLE);
		assert_true(hole > data);
		for (off_t b = data / BLOCK; b * BLOCK < hole; b++)
			has[b] = true;
		data = hole;
	}
	close(fd);
}

/* Saves `o` into `name`; checks the file's size, its data blocks (those
 * `kept` marks) and their contents, what the disk shows (holes zero). */
static void save_and_check(const struct blk_overlay *o, bool all,
			   const char *name, const bool *kept,
			   uint64_t want_bytes, char path[128])
{
	bool has[NBLOCKS];
	struct stat st;
	uint64_t bytes = 0;
	uint8_t *out;
	int fd;

	snprintf(path, 128, "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(blk_overlay__save(o, fd, all, &bytes), 0);
	close(fd);
	assert_int_equal(bytes, want_bytes);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, DISK);
	data_blocks(path, has);
	out = slurp(path);
	for (uint64_t b = 0; b < NBLOCKS; b++) {
		if (has[b] != kept[b])
			fail_msg("block %llu: %s in the saved file, %s",
				 (unsigned long long)b, has[b] ? "data" : "a hole",
				 kept[b] ? "kept" : "not kept");
		for (uint64_t i = b * BLOCK; i < b * BLOCK + block_len(b); i++)
			if (out[i] != (kept[b] ? want[i] : 0))
				fail_msg("byte %llu of the saved file",
					 (unsigned long long)i);
	}
	free(out);
}

/* A new overlay over the base with `layers` under it shows `want`. */
static void reopened_shows_the_disk(const char *const *layers, size_t n)
{
	char path[128];
	struct blk_overlay o;

	snprintf(path, sizeof(path), "%s/fresh.ovl", dir);
	unlink(path);
	assert_int_equal(blk_overlay__open(&o, base_fd, DISK, path), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(blk_overlay__add_lower(&o, layers[i]), 0);
	reads_what_was_written(&o);
	assert_int_equal(o.blocks, 0);
	blk_overlay__close(&o);
}

static void saved_blocks(void **state)
{
	static const uint64_t blks[] = { 1, 3, LAST };
	static const uint8_t vals[] = { 0x11, 0x13, 0x1f };
	bool own[NBLOCKS] = { false }, every[NBLOCKS] = { false };
	char layer[128], part[128], whole[128];
	struct blk_overlay o;

	(void)state;
	make_layer("l1", blks, vals, 3, layer);
	assert_int_equal(blk_overlay__open(&o, base_fd, DISK, ovl_path), 0);
	assert_int_equal(blk_overlay__add_lower(&o, layer), 0);
	write_both(&o, 100, 10, 0xa0);                 /* block 0 */
	write_both(&o, 3 * BLOCK + 7, 1, 0xa3);        /* a layer's */
	write_both(&o, 10 * BLOCK, 3 * BLOCK, 0xaa);   /* 10 to 12 */
	own[0] = own[3] = own[10] = own[11] = own[12] = true;
	memcpy(every, own, sizeof(every));
	every[1] = every[LAST] = true;
	save_and_check(&o, false, "part", own, 5 * BLOCK, part);
	save_and_check(&o, true, "whole", every, 6 * BLOCK + 512, whole);
	blk_overlay__close(&o);
	/* round trips: the whole disk's blocks alone, or the overlay's
	 * over the layer it was above */
	reopened_shows_the_disk((const char *const[]){ whole }, 1);
	reopened_shows_the_disk((const char *const[]){ layer, part }, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(writes_stay_in_the_overlay,
						setup, teardown),
		cmocka_unit_test_setup_teardown(overlays_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(an_unnamed_overlay, setup,
						teardown),
		cmocka_unit_test_setup_teardown(a_layer_under_the_overlay,
						setup, teardown),
		cmocka_unit_test_setup_teardown(the_highest_layer_wins, setup,
						teardown),
		cmocka_unit_test_setup_teardown(layers_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(saved_blocks, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
