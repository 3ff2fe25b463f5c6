/* Unit tests for section vm.virtio (snapshot/guest.c): its parser
 * refuses each malformed field and takes a valid record; a drive's image
 * is the one snapshotted when its size and mtime match, or its size and
 * CRC-32 after a touch; another image, changed, resized or gone, is
 * refused naming the drive. Whether the guest has an agent: the record's
 * flag, or for a version 1 record (no flags), its vsock device. */
#include "err.h"
#include "guest.h"

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

static struct snap_virtio_rec valid(void)
{
	struct snap_virtio_rec r = {
		.version = SNAP_VIRTIO_VERSION, .nr_drives = 2, .vsock = 1,
		.vsock_cid = 3,
	};

	strcpy(r.drive[0].path, "/var/lib/img/root.ext4");
	r.drive[0].bytes = 64 << 20;
	r.drive[0].layer_bytes = 8192;
	r.drive[0].mode = SNAP_DRIVE_OVERLAY;
	strcpy(r.drive[1].path, "/var/lib/img/data.ext4");
	r.drive[1].bytes = 1 << 20;
	r.drive[1].mode = SNAP_DRIVE_RO;
	return r;
}

static void refused(const struct snap_virtio_rec *r, const char *msg)
{
	struct snap_virtio_rec out;

	assert_int_equal(snapguest__parse_virtio(r, sizeof(*r), &out),
			 -EINVAL);
	if (!strstr(err__last(), msg))
		fail_msg("expected \"%s\" in: %s", msg, err__last());
}

static void a_valid_record(void **state)
{
	struct snap_virtio_rec r = valid(), out;

	(void)state;
	memset(&r.drive[5], 0xff, sizeof(r.drive[5])); /* past nr_drives */
	assert_int_equal(snapguest__parse_virtio(&r, sizeof(r), &out), 0);
	assert_memory_equal(&out, &r, sizeof(r));
	r.vsock = 0;
	r.vsock_cid = 0; /* no device: no CID */
	r.nr_drives = SNAP_MAX_DRIVES;
	for (unsigned int i = 2; i < SNAP_MAX_DRIVES; i++)
		r.drive[i] = r.drive[i % 2];
	assert_int_equal(snapguest__parse_virtio(&r, sizeof(r), &out), 0);
	r.drive[0].layer_bytes = r.drive[0].bytes; /* every block written */
	assert_int_equal(snapguest__parse_virtio(&r, sizeof(r), &out), 0);
}

static void wrong_size(void **state)
{
	uint8_t buf[sizeof(struct snap_virtio_rec) + 1] = { 0 };
	struct snap_virtio_rec r = valid(), out;

	(void)state;
	memcpy(buf, &r, sizeof(r));
	assert_int_equal(snapguest__parse_virtio(buf, sizeof(r) - 1, &out),
			 -EINVAL);
	assert_non_null(strstr(err__last(), "bytes, expected"));
	assert_int_equal(snapguest__parse_virtio(buf, sizeof(buf), &out),
			 -EINVAL);
	assert_int_equal(snapguest__parse_virtio(buf, 0, &out), -EINVAL);
}

static void header_fields(void **state)
{
	struct snap_virtio_rec r;

	(void)state;
	r = valid(), r.version = 0;
	refused(&r, "version 0");
	r = valid(), r.version = SNAP_VIRTIO_VERSION + 1;
	refused(&r, "version 3");
	r = valid(), r.nr_drives = SNAP_MAX_DRIVES + 1;
	refused(&r, "names 9 drives");
	r = valid(), r.nr_drives = UINT32_MAX;
	refused(&r, "drives");
	r = valid(), r.vsock = 2;
	refused(&r, "vsock 2");
	for (uint64_t cid = 0; cid < 3; cid++) {
		r = valid(), r.vsock_cid = cid;
		refused(&r, "CID");
	}
	r = valid(), r.vsock_cid = UINT32_MAX;
	refused(&r, "CID 4294967295");
}

/* A vsock device alone is no agent; the flag says there is one; an
 * older record, which has no flags, keeps taking the device for one. */
static void agent_flag(void **state)
{
	struct snap_virtio_rec r = valid(), out, none = { 0 };

	(void)state;
	assert_int_equal(snapguest__parse_virtio(&r, sizeof(r), &out), 0);
	assert_false(snapguest__has_agent(&out));
	r.flags = SNAP_VIRTIO_AGENT;
	assert_int_equal(snapguest__parse_virtio(&r, sizeof(r), &out), 0);
	assert_true(snapguest__has_agent(&out));
	r.version = SNAP_VIRTIO_VERSION_NOFLAGS;
	r.flags = 0;
	assert_int_equal(snapguest__parse_virtio(&r, sizeof(r), &out), 0);
	assert_true(snapguest__has_agent(&out));
	r.flags = 0xdead; /* reserved then: not read */
	assert_int_equal(snapguest__parse_virtio(&r, sizeof(r), &out), 0);
	assert_int_equal(out.flags, 0);
	assert_true(snapguest__has_agent(&out));
	r.vsock = 0, r.vsock_cid = 0;
	assert_int_equal(snapguest__parse_virtio(&r, sizeof(r), &out), 0);
	assert_false(snapguest__has_agent(&out));
	assert_false(snapguest__has_agent(&none)); /* no vm.virtio */
	r = valid(), r.flags = 2;
	refused(&r, "flags 0x2");
	r = valid(), r.flags = SNAP_VIRTIO_AGENT, r.vsock = 0, r.vsock_cid = 0;
	refused(&r, "flags 0x1");
}

static void drive_fields(void **state)
{
	struct snap_virtio_rec r;

	(void)state;
	r = valid();
	memset(r.drive[1].path, 'a', sizeof(r.drive[1].path));
	r.drive[1].path[0] = '/';
	refused(&r, "drive 1's path is not an absolute, terminated");
	r = valid(), strcpy(r.drive[0].path, "img/root.ext4");
	refused(&r, "drive 0's path is not an absolute");
	r = valid(), r.drive[0].path[0] = '\0';
	refused(&r, "drive 0's path");
	r = valid(), r.drive[1].mode = 0;
	refused(&r, "drive 1 has mode 0");
	r = valid(), r.drive[0].mode = 3;
	refused(&r, "drive 0 has mode 3");
	r = valid(), r.drive[1].bytes = 0;
	refused(&r, "drive 1 has 0 bytes");
	r = valid(), r.drive[1].bytes = (1 << 20) + 1;
	refused(&r, "drive 1 has 1048577 bytes");
	r = valid(), r.drive[1].bytes = 511;
	refused(&r, "drive 1 has 511 bytes");
	r = valid(), r.drive[0].layer_bytes = r.drive[0].bytes + 512;
	refused(&r, "drive 0 has 67108864 bytes, 67109376 in its layer");
	r = valid(), r.drive[1].layer_bytes = 512; /* ro: nothing written */
	refused(&r, "drive 1 has 1048576 bytes, 512 in its layer");
}

/* ---- a drive's image against its record ---- */

#define IMAGE (256 * 1024)

static char dir[64], image[96];

static void set_mtime(time_t sec)
{
	struct timespec t[2] = { { sec, 0 }, { sec, 0 } };

	assert_int_equal(utimensat(AT_FDCWD, image, t, 0), 0);
}

static void put_byte(off_t at, uint8_t v)
{
	int fd = open(image, O_WRONLY);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, &v, 1, at), 1);
	close(fd);
}

static int image_setup(void **state)
{
	uint8_t *buf = malloc(IMAGE);
	int fd;

	(void)state;
	strcpy(dir, "/tmp/coldstart-snapguest-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(image, sizeof(image), "%s/root.ext4", dir);
	for (size_t i = 0; i < IMAGE; i++)
		buf[i] = (uint8_t)(i * 7 + i / 512);
	fd = open(image, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, IMAGE), IMAGE);
	close(fd);
	free(buf);
	set_mtime(1000000000);
	return 0;
}

static int image_teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static void the_same_image_passes(void **state)
{
	struct snap_drive_rec d;

	(void)state;
	assert_int_equal(snapguest__describe_drive(&d, image,
						   SNAP_DRIVE_OVERLAY), 0);
	assert_int_equal(d.bytes, IMAGE);
	assert_int_equal(d.mtime_ns, 1000000000ull * 1000000000ull);
	assert_int_equal(d.mode, SNAP_DRIVE_OVERLAY);
	assert_int_equal(snapguest__check_drive(&d, 0), 0);
	/* touched, the same contents: its CRC-32 says it is the same */
	set_mtime(1000000100);
	assert_int_equal(snapguest__check_drive(&d, 0), 0);
}

static void a_changed_image_is_refused(void **state)
{
	struct snap_drive_rec d;
	uint8_t was;
	int fd;

	(void)state;
	assert_int_equal(snapguest__describe_drive(&d, image, SNAP_DRIVE_RO),
			 0);
	fd = open(image, O_RDONLY);
	assert_int_equal(pread(fd, &was, 1, 4096), 1);
	close(fd);
	put_byte(4096, (uint8_t)~was); /* the same size, other contents */
	set_mtime(1000000100);
	assert_int_equal(snapguest__check_drive(&d, 2), -EINVAL);
	assert_non_null(strstr(err__last(), "drive 2"));
	assert_non_null(strstr(err__last(), image));
	assert_non_null(strstr(err__last(), "CRC-32"));
	put_byte(4096, was); /* back as it was, a new mtime again */
	set_mtime(1000000200);
	assert_int_equal(snapguest__check_drive(&d, 2), 0);
}

static void a_resized_or_missing_image_is_refused(void **state)
{
	struct snap_drive_rec d;

	(void)state;
	assert_int_equal(snapguest__describe_drive(&d, image,
						   SNAP_DRIVE_OVERLAY), 0);
	assert_int_equal(truncate(image, IMAGE + 512), 0);
	set_mtime(1000000000); /* even with the mtime it had */
	assert_int_equal(snapguest__check_drive(&d, 1), -EINVAL);
	assert_non_null(strstr(err__last(), "drive 1"));
	assert_non_null(strstr(err__last(), "has 262656 bytes; it had 262144"));
	assert_int_equal(unlink(image), 0);
	assert_int_equal(snapguest__check_drive(&d, 1), -ENOENT);
	assert_non_null(strstr(err__last(), "drive 1"));
	assert_non_null(strstr(err__last(), image));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, image_setup, image_teardown)
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_valid_record),
		cmocka_unit_test(wrong_size),
		cmocka_unit_test(header_fields),
		cmocka_unit_test(agent_flag),
		cmocka_unit_test(drive_fields),
		T(the_same_image_passes),
		T(a_changed_image_is_refused),
		T(a_resized_or_missing_image_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
