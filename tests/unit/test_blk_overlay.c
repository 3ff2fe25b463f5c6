/* Unit tests for the per-VM overlay of a disk image (vmm/blk_overlay.c):
 * reads and writes across blocks, partial blocks copied up from the base,
 * the base never written, the overlay sparse (disk used about what was
 * written), reopened with the same contents, and overlays refused for
 * another size or through a symbolic link. */
#include "blk_overlay.h"
#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(writes_stay_in_the_overlay,
						setup, teardown),
		cmocka_unit_test_setup_teardown(overlays_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(an_unnamed_overlay, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
