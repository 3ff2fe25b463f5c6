/* Unit tests for device sections (snapshot/devstate.c, format.c): fake
 * devices saved, parsed and restored without KVM; every mismatch between
 * the snapshot's devices and the VM's is refused with a message. */
#include "device.h"
#include "devstate.h"
#include "err.h"
#include "format.h"
#include "vm.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* A device whose state is `size` bytes of `fill`, with a version byte
 * first that restore checks. */
struct fake {
	size_t size;
	uint8_t state[64];
	int restores;
};

static size_t fake_size(const void *dev)
{
	return ((const struct fake *)dev)->size;
}

static int fake_save(const void *dev, void *buf, size_t len)
{
	const struct fake *f = dev;

	assert_int_equal(len, f->size);
	memcpy(buf, f->state, len);
	return 0;
}

static int fake_restore(void *dev, const void *buf, size_t len)
{
	struct fake *f = dev;

	if (len && ((const uint8_t *)buf)[0] != 1)
		return err__set(EINVAL, "fake: state version %u",
				((const uint8_t *)buf)[0]);
	memcpy(f->state, buf, len);
	f->restores++;
	return 0;
}

#define FAKE_OPS(n)                                                   \
	{ .name = (n), .state_size = fake_size, .save = fake_save,     \
	  .restore = fake_restore }
static const struct device_ops ops_a = FAKE_OPS("fake.a");
static const struct device_ops ops_b = FAKE_OPS("serial.com1");
static const struct device_ops ops_c = FAKE_OPS("fake.c");

static struct fake make(size_t size, uint8_t fill)
{
	struct fake f = { .size = size };

	for (size_t i = 0; i < size; i++)
		f.state[i] = (uint8_t)(fill + i);
	if (size)
		f.state[0] = 1; /* version */
	return f;
}

/* Saves the devices of `vm` into a state file image (caller frees). */
static uint8_t *save(const struct vm *vm, struct snap_reader *r)
{
	struct snap_writer w;
	struct snap_header h = { .nr_vcpus = 1 };

	snap__begin(&w, &h);
	assert_int_equal(devstate__save(vm, &w), 0);
	assert_int_equal(snap__finish(&w), 0);
	assert_int_equal(snap__parse(r, w.buf, w.len), 0);
	return w.buf;
}

static void expect_error(int ret, const char *what)
{
	if (ret != -EINVAL || !strstr(err__last(), what))
		fail_msg("returned %d, message '%s' (want '%s')", ret,
			 err__last(), what);
}

static void round_trip(void **state)
{
	struct vm src = { 0 }, dst = { 0 };
	struct fake a = make(13, 0x10), b = make(0, 0), a2 = make(13, 0),
		    b2 = make(0, 0);
	struct snap_section sec;
	struct snap_reader r;
	const void *payload;
	char name[64];
	size_t cursor = 0;
	int n = 0;
	uint8_t *buf;

	(void)state;
	assert_int_equal(vm__add_device(&src, &ops_a, &a), 0);
	assert_int_equal(vm__add_device(&src, &ops_b, &b), 0);
	buf = save(&src, &r);
	while (snap__next(&r, &cursor, &sec, &payload)) {
		assert_int_equal(sec.type, SNAP_DEVICE);
		assert_int_equal(sec.index, n);
		snap__section_name(&sec, payload, name, sizeof(name));
		assert_string_equal(name, n ? "dev.serial.com1" : "dev.fake.a");
		n++;
	}
	assert_int_equal(n, 2);
	/* Registration order on restore does not matter; names do. */
	assert_int_equal(vm__add_device(&dst, &ops_b, &b2), 0);
	assert_int_equal(vm__add_device(&dst, &ops_a, &a2), 0);
	assert_int_equal(devstate__restore(&dst, &r), 0);
	assert_memory_equal(a2.state, a.state, 13);
	assert_int_equal(a2.restores, 1);
	assert_int_equal(b2.restores, 1);
	free(buf);
}

static void size_mismatch_rejected(void **state)
{
	struct vm src = { 0 }, dst = { 0 };
	struct fake a = make(13, 0x10), a2 = make(12, 0);
	struct snap_reader r;
	uint8_t *buf;

	(void)state;
	assert_int_equal(vm__add_device(&src, &ops_a, &a), 0);
	buf = save(&src, &r);
	assert_int_equal(vm__add_device(&dst, &ops_a, &a2), 0);
	expect_error(devstate__restore(&dst, &r),
		     "device 'fake.a': the snapshot's state is 13 bytes, the "
		     "device expects 12");
	assert_int_equal(a2.restores, 0);
	free(buf);
}

static void missing_and_unknown_devices_rejected(void **state)
{
	struct vm src = { 0 }, fewer = { 0 }, more = { 0 };
	struct fake a = make(8, 1), b = make(4, 2), c = make(4, 3);
	struct snap_reader r;
	uint8_t *buf;

	(void)state;
	assert_int_equal(vm__add_device(&src, &ops_a, &a), 0);
	assert_int_equal(vm__add_device(&src, &ops_b, &b), 0);
	buf = save(&src, &r);
	assert_int_equal(vm__add_device(&fewer, &ops_a, &a), 0);
	expect_error(devstate__restore(&fewer, &r),
		     "device 'serial.com1', which the restored VM does not "
		     "have");
	assert_int_equal(vm__add_device(&more, &ops_a, &a), 0);
	assert_int_equal(vm__add_device(&more, &ops_b, &b), 0);
	assert_int_equal(vm__add_device(&more, &ops_c, &c), 0);
	expect_error(devstate__restore(&more, &r),
		     "device 'fake.c' of the restored VM has no state");
	free(buf);
}

static void device_refusal_propagates(void **state)
{
	struct vm src = { 0 }, dst = { 0 };
	struct fake a = make(8, 1), a2 = make(8, 0);
	struct snap_reader r;
	uint8_t *buf;

	(void)state;
	a.state[0] = 9; /* a version fake_restore does not read */
	assert_int_equal(vm__add_device(&src, &ops_a, &a), 0);
	buf = save(&src, &r);
	assert_int_equal(vm__add_device(&dst, &ops_a, &a2), 0);
	expect_error(devstate__restore(&dst, &r), "fake: state version 9");
	free(buf);
}

/* A hand-built file with the given device section payloads. */
static uint8_t *build(struct snap_reader *r, const void *const *payloads,
		      const size_t *lens, int n)
{
	struct snap_writer w;
	struct snap_header h = { .nr_vcpus = 1 };

	snap__begin(&w, &h);
	for (int i = 0; i < n; i++)
		snap__add(&w, SNAP_DEVICE, (uint32_t)i, payloads[i], lens[i]);
	assert_int_equal(snap__finish(&w), 0);
	assert_int_equal(snap__parse(r, w.buf, w.len), 0);
	return w.buf;
}

static void malformed_sections_rejected(void **state)
{
	struct snap_device named = { "fake.a" }, unterminated, empty = { "" };
	struct snap_reader r;
	struct vm vm = { 0 };
	struct fake a = make(0, 0);
	uint8_t *buf;

	(void)state;
	memset(unterminated.name, 'x', sizeof(unterminated.name));
	assert_int_equal(vm__add_device(&vm, &ops_a, &a), 0);
	buf = build(&r, (const void *[]){ &named }, (size_t[]){ 10 }, 1);
	expect_error(devstate__check(&r), "too short for a device name");
	free(buf);
	buf = build(&r, (const void *[]){ &unterminated },
		    (size_t[]){ sizeof(unterminated) }, 1);
	expect_error(devstate__restore(&vm, &r), "unterminated device name");
	free(buf);
	buf = build(&r, (const void *[]){ &empty }, (size_t[]){ sizeof(empty) },
		    1);
	expect_error(devstate__check(&r), "empty");
	free(buf);
	buf = build(&r, (const void *[]){ &named, &named },
		    (size_t[]){ sizeof(named), sizeof(named) }, 2);
	expect_error(devstate__restore(&vm, &r), "device 'fake.a' twice");
	assert_int_equal(a.restores, 0);
	free(buf);
}

static void long_name_refused_on_save(void **state)
{
	static const struct device_ops long_ops =
		FAKE_OPS("a-device-name-of-more-than-31-bytes");
	struct vm vm = { 0 };
	struct fake a = make(4, 1);
	struct snap_writer w;
	struct snap_header h = { 0 };

	(void)state;
	assert_int_equal(vm__add_device(&vm, &long_ops, &a), 0);
	snap__begin(&w, &h);
	expect_error(devstate__save(&vm, &w), "longer than 31 bytes");
	/* The writer refuses such a name on its own too. */
	snap__add_device(&w, 0, long_ops.name, "x", 1);
	expect_error(snap__finish(&w), "device name");
	free(w.buf);
}

static void versioned_state_checks(void **state)
{
	struct {
		uint32_t version;
		uint8_t data[4];
	} regs = { 3, { 0 } };

	(void)state;
	assert_int_equal(device__check_save("dev", sizeof(regs), sizeof(regs)),
			 0);
	expect_error(device__check_save("dev", sizeof(regs), 4),
		     "dev: 4 bytes of state requested, 8 exist");
	assert_int_equal(device__check_restore("dev", sizeof(regs), 3, &regs,
					       sizeof(regs)), 0);
	expect_error(device__check_restore("dev", sizeof(regs), 3, &regs, 7),
		     "dev: state of 7 bytes, expected 8");
	regs.version = 4;
	expect_error(device__check_restore("dev", sizeof(regs), 3, &regs,
					   sizeof(regs)),
		     "dev: state version 4, this build reads 3");
}

/* A state file of `n` device sections "d<i>", the last one named like
 * section `dup` when dup < n (caller frees). */
static uint8_t *many_devices(struct snap_reader *r, size_t n, size_t dup)
{
	struct snap_writer w;
	struct snap_header h = { .nr_vcpus = 1 };
	char name[SNAP_DEVICE_NAME_MAX];

	snap__begin(&w, &h);
	for (size_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "d%zu", i + 1 == n && dup < n
							     ? dup : i);
		snap__add_device(&w, (uint32_t)i, name, "", 0);
	}
	assert_int_equal(snap__finish(&w), 0);
	assert_int_equal(snap__parse(r, w.buf, w.len), 0);
	return w.buf;
}

/* 100,000 sections: all distinct pass, the first and last sharing a name
 * are caught (a pairwise check took about a minute here, and hours for a
 * 64 MiB state file; tests/unit/devstate_bench prints the time). */
static void many_sections_checked(void **state)
{
	struct snap_reader r;
	uint8_t *buf;

	(void)state;
	buf = many_devices(&r, 100000, 100000);
	assert_int_equal(devstate__check(&r), 0);
	free(buf);
	buf = many_devices(&r, 100000, 0);
	expect_error(devstate__check(&r), "device 'd0' twice");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(size_mismatch_rejected),
		cmocka_unit_test(missing_and_unknown_devices_rejected),
		cmocka_unit_test(device_refusal_propagates),
		cmocka_unit_test(malformed_sections_rejected),
		cmocka_unit_test(long_name_refused_on_save),
		cmocka_unit_test(versioned_state_checks),
		cmocka_unit_test(many_sections_checked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
