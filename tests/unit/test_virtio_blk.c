/* Unit tests for virtio-blk (vmm/virtio_blk.c), driven as a guest's driver
 * would drive it through the transport, against a scratch image: reads
 * across buffers, writes in each mode (into the file, refused when
 * read-only, into a private view that leaves the file alone), flush,
 * GET_ID, requests past the end or of odd sizes or unknown types, a
 * malformed chain asking for a reset and the device working again after
 * it, and images refused at open. */
#include "err.h"
#include "mem.h"
#include "virtio_blk.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#define MEM_SIZE 0x40000
#define DESC 0x1000
#define AVAIL 0x2000
#define USED 0x3000
#define HDR 0x4000
#define DATA 0x8000
#define STATUS 0x5000
#define QSIZE 16
#define DISK (64 * 1024)

static uint8_t ram[MEM_SIZE] __attribute__((aligned(4096)));
static const struct guest_mem mem = { .host = ram, .size = MEM_SIZE,
				      .fd = -1 };
static struct vblk blk;
static char image[64];
static int raised;

static void raise_irq(void *ctx, uint32_t irq)
{
	(void)ctx;
	(void)irq;
	__atomic_add_fetch(&raised, 1, __ATOMIC_RELAXED);
}

static uint32_t rd(uint64_t off)
{
	uint32_t v;

	virtio_mmio__access(&blk.t, off, 4, false, (uint8_t *)&v);
	return v;
}

static void wr(uint64_t off, uint32_t v)
{
	virtio_mmio__access(&blk.t, off, 4, true, (uint8_t *)&v);
}

static uint8_t pattern(uint64_t at)
{
	return (uint8_t)(at * 7 + at / 512);
}

static void make_image(size_t bytes)
{
	uint8_t *buf = malloc(bytes);
	int fd;

	for (size_t i = 0; i < bytes; i++)
		buf[i] = pattern(i);
	strcpy(image, "/tmp/coldstart-vblk-XXXXXX");
	fd = mkstemp(image);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, bytes), (ssize_t)bytes);
	close(fd);
	free(buf);
}

/* The driver's side: negotiate, set up queue 0, start. */
static void driver_start(void)
{
	uint64_t features;

	memset(ram, 0, sizeof(ram));
	wr(VIRTIO_MMIO_STATUS, 0);
	wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
	wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	features = rd(VIRTIO_MMIO_DEVICE_FEATURES);
	wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	features |= (uint64_t)rd(VIRTIO_MMIO_DEVICE_FEATURES) << 32;
	wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	wr(VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)features);
	wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	wr(VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(features >> 32));
	wr(VIRTIO_MMIO_STATUS, rd(VIRTIO_MMIO_STATUS) |
				       VIRTIO_STATUS_FEATURES_OK);
	wr(VIRTIO_MMIO_QUEUE_SEL, 0);
	wr(VIRTIO_MMIO_QUEUE_NUM, QSIZE);
	wr(VIRTIO_MMIO_QUEUE_DESC_LOW, DESC);
	wr(VIRTIO_MMIO_QUEUE_DRIVER_LOW, AVAIL);
	wr(VIRTIO_MMIO_QUEUE_DEVICE_LOW, USED);
	wr(VIRTIO_MMIO_QUEUE_READY, 1);
	wr(VIRTIO_MMIO_STATUS, rd(VIRTIO_MMIO_STATUS) |
				       VIRTIO_STATUS_DRIVER_OK);
	assert_true(rd(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_DRIVER_OK);
}

static void open_mode(enum vblk_mode mode)
{
	raised = 0;
	assert_int_equal(vblk__open(&blk, image, mode, NULL, &mem, 0xd0000000, 5,
				    raise_irq, NULL), 0);
	driver_start();
}

static int setup(void **state)
{
	(void)state;
	make_image(DISK);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(image);
	return 0;
}

static void set_desc(unsigned int i, uint64_t addr, uint32_t len,
		     uint16_t flags, uint16_t next)
{
	((struct virtq_desc *)(ram + DESC))[i] =
		(struct virtq_desc){ addr, len, flags, next };
}

static volatile uint16_t *used_idx(void)
{
	return (volatile uint16_t *)(ram + USED + 2);
}

/* Offers chain `head`, notifies, waits for it to come back as used;
 * returns the length the device reported. */
static uint32_t submit(uint16_t head)
{
	uint16_t *avail = (uint16_t *)(ram + AVAIL);
	uint16_t want = (uint16_t)(*used_idx() + 1);
	struct virtq_used_elem *e;

	avail[2 + (avail[1] % QSIZE)] = head;
	__atomic_store_n(&avail[1], (uint16_t)(avail[1] + 1),
			 __ATOMIC_RELEASE);
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	for (int i = 0; i < 5000 && *used_idx() != want; i++)
		usleep(1000);
	assert_int_equal(*used_idx(), want);
	e = (struct virtq_used_elem *)(ram + USED + 4) + ((want - 1) % QSIZE);
	assert_int_equal(e->id, head);
	return e->len;
}

/* A request: header, then `n` data buffers of `len` bytes each at DATA,
 * then the status byte; data is device-writable for reads. */
static uint32_t request(uint32_t type, uint64_t sector, unsigned int n,
			uint32_t len)
{
	uint16_t data_flags = type == VIRTIO_BLK_T_OUT ? 0 :
							 VIRTQ_DESC_F_WRITE;
	uint32_t hdr[4] = { type, 0, (uint32_t)sector,
			    (uint32_t)(sector >> 32) };

	memcpy(ram + HDR, hdr, sizeof(hdr));
	ram[STATUS] = 0xff;
	set_desc(0, HDR, 16, VIRTQ_DESC_F_NEXT, 1);
	for (unsigned int k = 0; k < n; k++)
		set_desc(1 + k, DATA + (uint64_t)k * len, len,
			 data_flags | VIRTQ_DESC_F_NEXT, (uint16_t)(2 + k));
	set_desc(1 + n, STATUS, 1, VIRTQ_DESC_F_WRITE, 0);
	return submit(0);
}

static void reads_across_buffers(void **state)
{
	(void)state;
	open_mode(VBLK_COW);
	assert_int_equal(request(VIRTIO_BLK_T_IN, 3, 2, 1024), 2049);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_OK);
	for (unsigned int i = 0; i < 2048; i++)
		if (ram[DATA + i] != pattern(3 * 512 + i))
			fail_msg("byte %u of the read differs", i);
	assert_true(raised > 0);
	/* Capacity in the configuration space, in sectors. */
	uint64_t cap;
	virtio_mmio__access(&blk.t, VIRTIO_MMIO_CONFIG, 8, false,
			    (uint8_t *)&cap);
	assert_int_equal(cap, DISK / 512);
	vblk__close(&blk);
}

static uint8_t file_byte(uint64_t at)
{
	uint8_t v;
	int fd = open(image, O_RDONLY);

	assert_int_equal(pread(fd, &v, 1, (off_t)at), 1);
	close(fd);
	return v;
}

/* Checks `len` bytes read at DATA against the image from `at` on, except
 * [mark, mark + 4096), which must hold `fill`. */
static void check_read(uint64_t at, uint64_t len, uint64_t mark, uint8_t fill)
{
	for (uint64_t i = 0; i < len; i++) {
		uint64_t d = at + i;
		uint8_t want = d >= mark && d < mark + 4096 ? fill : pattern(d);

		if (ram[DATA + i] != want)
			fail_msg("byte %" PRIu64 " of the disk reads %#x, not %#x",
				 d, ram[DATA + i], want);
	}
}

/* A read in many buffers is one vectored read a run of the disk held by
 * one file; buffers that straddle a run's end (an overlay's written
 * block between two of the base's) still get each byte from the right
 * file, in every mode that reads a file. */
static void reads_of_many_buffers(void **state)
{
	(void)state;
	open_mode(VBLK_RO);
	assert_int_equal(request(VIRTIO_BLK_T_IN, 3, 12, 1536), 12 * 1536 + 1);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_OK);
	check_read(3 * 512, 12 * 1536, DISK, 0);
	vblk__close(&blk);

	/* overlay: block 1 written (4096..8191), the rest from the base */
	raised = 0;
	assert_int_equal(vblk__open(&blk, image, VBLK_OVERLAY, NULL, &mem,
				    0xd0000000, 5, raise_irq, NULL), 0);
	driver_start();
	memset(ram + DATA, 0x5a, 4096);
	assert_int_equal(request(VIRTIO_BLK_T_OUT, 8, 2, 2048), 1);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_OK);
	memset(ram + DATA, 0, 12 * 1536);
	assert_int_equal(request(VIRTIO_BLK_T_IN, 0, 12, 1536), 12 * 1536 + 1);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_OK);
	check_read(0, 12 * 1536, 4096, 0x5a);
	/* from inside the written block to past it */
	memset(ram + DATA, 0, 4 * 1536);
	assert_int_equal(request(VIRTIO_BLK_T_IN, 10, 4, 1536), 4 * 1536 + 1);
	check_read(10 * 512, 4 * 1536, 4096, 0x5a);
	vblk__close(&blk);
	assert_int_equal(file_byte(4096 + 10), pattern(4096 + 10));
}

static void writes_in_each_mode(void **state)
{
	(void)state;
	/* rw: into the file. */
	open_mode(VBLK_RW);
	memset(ram + DATA, 0xab, 512);
	assert_int_equal(request(VIRTIO_BLK_T_OUT, 5, 1, 512), 1);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_OK);
	assert_int_equal(request(VIRTIO_BLK_T_FLUSH, 0, 0, 0), 1);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_OK);
	vblk__close(&blk);
	assert_int_equal(file_byte(5 * 512 + 17), 0xab);

	/* ro: refused, the file unchanged, the RO feature offered. */
	open_mode(VBLK_RO);
	wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	assert_true(rd(VIRTIO_MMIO_DEVICE_FEATURES) & VIRTIO_BLK_F_RO);
	memset(ram + DATA, 0xcd, 512);
	request(VIRTIO_BLK_T_OUT, 6, 1, 512);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_IOERR);
	vblk__close(&blk);
	assert_int_equal(file_byte(6 * 512), pattern(6 * 512));

	/* cow: the VM reads its own writes; the file is left alone. */
	open_mode(VBLK_COW);
	memset(ram + DATA, 0xef, 1024);
	request(VIRTIO_BLK_T_OUT, 7, 2, 512);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_OK);
	memset(ram + DATA, 0, 1024);
	request(VIRTIO_BLK_T_IN, 7, 1, 1024);
	assert_int_equal(ram[DATA + 1000], 0xef);
	vblk__close(&blk);
	assert_int_equal(file_byte(7 * 512 + 1000), pattern(7 * 512 + 1000));
}

static void bad_requests_get_an_error_status(void **state)
{
	(void)state;
	open_mode(VBLK_COW);
	request(VIRTIO_BLK_T_IN, DISK / 512 - 1, 1, 1024);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_IOERR);
	request(VIRTIO_BLK_T_IN, UINT64_MAX / 256, 1, 512);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_IOERR);
	request(VIRTIO_BLK_T_IN, 0, 1, 100);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_IOERR);
	request(VIRTIO_BLK_T_OUT, DISK / 512, 1, 512);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_IOERR);
	request(77, 0, 0, 0);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_UNSUPP);
	/* A header shorter than 16 bytes. */
	set_desc(0, HDR, 8, VIRTQ_DESC_F_NEXT, 1);
	set_desc(1, STATUS, 1, VIRTQ_DESC_F_WRITE, 0);
	ram[STATUS] = 0xff;
	submit(0);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_IOERR);
	/* GET_ID: the image's file name, at most 20 bytes. */
	assert_int_equal(request(VIRTIO_BLK_T_GET_ID, 0, 1, 20), 21);
	assert_memory_equal(ram + DATA, strrchr(image, '/') + 1, 20);
	assert_true(blk.errors >= 6);
	vblk__close(&blk);
}

static void a_malformed_chain_asks_for_a_reset(void **state)
{
	uint16_t *avail = (uint16_t *)(ram + AVAIL);

	(void)state;
	open_mode(VBLK_COW);
	set_desc(0, HDR, 16, VIRTQ_DESC_F_NEXT, 0); /* a loop */
	avail[2] = 0;
	avail[1] = 1;
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	for (int i = 0; i < 5000 && !(rd(VIRTIO_MMIO_STATUS) &
				      VIRTIO_STATUS_NEEDS_RESET); i++)
		usleep(1000);
	assert_true(rd(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_NEEDS_RESET);
	assert_true(rd(VIRTIO_MMIO_INTERRUPT_STATUS) & VIRTIO_INT_CONFIG);
	/* The driver resets the device and starts again: it works. */
	driver_start();
	assert_int_equal(request(VIRTIO_BLK_T_IN, 0, 1, 512), 513);
	assert_int_equal(ram[STATUS], VIRTIO_BLK_S_OK);
	assert_int_equal(ram[DATA + 100], pattern(100));
	vblk__close(&blk);
}

static void images_refused_at_open(void **state)
{
	char odd[] = "/tmp/coldstart-vblk-odd-XXXXXX";
	int fd = mkstemp(odd);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "abc", 3), 3);
	close(fd);
	assert_int_equal(vblk__open(&blk, odd, VBLK_RW, NULL, &mem, 0, 5, raise_irq,
				    NULL), -EINVAL);
	assert_non_null(strstr(err__last(), "512-byte sectors"));
	unlink(odd);
	assert_int_equal(vblk__open(&blk, "/nonexistent/disk.ext4", VBLK_RO,
				    NULL, &mem, 0, 5, raise_irq, NULL), -ENOENT);
	assert_non_null(strstr(err__last(), "/nonexistent/disk.ext4"));
	assert_int_equal(vblk__open(&blk, "/tmp", VBLK_RO, NULL, &mem, 0, 5,
				    raise_irq, NULL), -EINVAL);
	assert_non_null(strstr(err__last(), "not a regular file"));
	enum vblk_mode m;
	const char *own;
	assert_int_equal(vblk__mode("cow", &m, &own), 0);
	assert_int_equal(m, VBLK_COW);
	assert_null(own);
	assert_int_equal(vblk__mode("overlay=/x/o.img", &m, &own), 0);
	assert_int_equal(m, VBLK_OVERLAY);
	assert_string_equal(own, "/x/o.img");
	assert_int_equal(vblk__mode("reflink=r", &m, &own), 0);
	assert_int_equal(m, VBLK_REFLINK);
	assert_int_equal(vblk__mode("overlay=", &m, &own), -EINVAL);
	assert_int_equal(vblk__mode("rwx", &m, &own), -EINVAL);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(reads_across_buffers),
		T(writes_in_each_mode),
		T(reads_of_many_buffers),
		T(bad_requests_get_an_error_status),
		T(a_malformed_chain_asks_for_a_reset),
		T(images_refused_at_open),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
