/* Unit tests for the snapshot state file format (snapshot/format.c). */
#include "err.h"
#include "format.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <cmocka.h>

#define ALIGN8(x) (((x) + 7) & ~(size_t)7)
#define HDR sizeof(struct snap_header)
#define SEC sizeof(struct snap_section)
#define TRL sizeof(struct snap_trailer)

/* The sections of the sample file: odd, zero-length, per-vCPU, unknown and
 * bigger than the writer's first allocation. */
struct sample_sec {
	uint32_t type, index;
	size_t len;
	uint8_t fill; /* payload byte i is fill + i */
};

static const struct sample_sec sample[] = {
	{ SNAP_VM_CONFIG, 0, 24, 0x10 },
	{ SNAP_VM_CLOCK, 0, 0, 0 },
	{ SNAP_VCPU_REGS, 0, 13, 0x20 },
	{ SNAP_VCPU_REGS, 1, 7, 0x30 },
	{ SNAP_VCPU_SREGS, 1, 1, 0x40 },
	{ SNAP_VCPU_MSRS, 3, 8, 0x50 },
	{ SNAP_DEV_PROBE, 0, 5000, 0x60 },
	{ 999, 7, 3, 0x70 },
};
#define NR_SAMPLE (sizeof(sample) / sizeof(sample[0]))

static void fill(uint8_t *p, const struct sample_sec *s)
{
	for (size_t i = 0; i < s->len; i++)
		p[i] = (uint8_t)(s->fill + i);
}

static const struct snap_header sample_hdr = {
	.magic = "garbage",
	.version = 77,
	.header_size = 3,
	.mem_size = 64ull << 20,
	.nr_vcpus = 4,
	.flavour = 2,
	.cpu_vendor = "GenuineIntel",
	.created_ns = 1234567890123456789ull,
	.reserved = 0x5a5a5a5a5a5a5a5aull,
};

/* Builds the sample file; the caller frees *buf. */
static size_t build_sample(uint8_t **buf)
{
	struct snap_writer w;
	uint8_t payload[5000];

	snap__begin(&w, &sample_hdr);
	for (size_t i = 0; i < NR_SAMPLE; i++) {
		assert_true(sample[i].len <= sizeof(payload));
		fill(payload, &sample[i]);
		snap__add(&w, sample[i].type, sample[i].index, payload,
			  sample[i].len);
	}
	assert_int_equal(snap__finish(&w), 0);
	*buf = w.buf;
	return w.len;
}

/* Recomputes the trailer's CRC so only the structure checks can object. */
static void reseal(uint8_t *buf, size_t len)
{
	uint32_t crc = (uint32_t)crc32(0, buf, (uInt)(len - TRL));

	memcpy(buf + len - TRL, &crc, sizeof(crc));
}

/* A private copy of exactly `len` bytes, so ASan sees any read past it. */
static uint8_t *copy_of(const uint8_t *buf, size_t len)
{
	uint8_t *p = malloc(len ? len : 1);

	assert_non_null(p);
	if (len)
		memcpy(p, buf, len);
	return p;
}

/* snap__parse must fail with -errnum and a message containing `what`. */
static void expect_reject(const uint8_t *buf, size_t len, int errnum,
			  const char *what)
{
	struct snap_reader r;
	uint8_t *p = copy_of(buf, len);
	int ret;

	err__set(EINVAL, "stale message");
	ret = snap__parse(&r, p, len);
	free(p);
	if (ret != -errnum || !strstr(err__last(), what))
		fail_msg("parse of %zu bytes returned %d (want %d), message "
			 "'%s' (want '%s')", len, ret, -errnum, err__last(),
			 what);
}

/* Rejected with some message of ours, whichever check caught it. */
static void expect_any_reject(const uint8_t *buf, size_t len,
			      const char *what_happened)
{
	struct snap_reader r;
	uint8_t *p = copy_of(buf, len);
	int ret;

	err__set(EINVAL, "stale message");
	ret = snap__parse(&r, p, len);
	free(p);
	if (ret == 0)
		fail_msg("%s: accepted", what_happened);
	if (ret != -EINVAL && ret != -EPROTO)
		fail_msg("%s: returned %d", what_happened, ret);
	if (!strcmp(err__last(), "stale message") || !err__last()[0])
		fail_msg("%s: rejected without a message", what_happened);
}

static void round_trip(void **state)
{
	struct snap_reader r;
	struct snap_section sec;
	const void *payload;
	uint8_t *buf, want[5000];
	size_t len, expect_len = HDR + TRL, cursor = 0, n = 0;

	(void)state;
	for (size_t i = 0; i < NR_SAMPLE; i++)
		expect_len += SEC + ALIGN8(sample[i].len);
	len = build_sample(&buf);
	assert_int_equal(len, expect_len);
	assert_int_equal(len % 8, 0);
	assert_int_equal(snap__parse(&r, buf, len), 0);
	assert_int_equal(r.len, len - TRL);

	/* snap__next returns exactly the sections added, in order. */
	while (snap__next(&r, &cursor, &sec, &payload)) {
		const uint8_t *p = payload;

		assert_true(n < NR_SAMPLE);
		assert_int_equal(sec.type, sample[n].type);
		assert_int_equal(sec.index, sample[n].index);
		assert_int_equal(sec.len, sample[n].len);
		fill(want, &sample[n]);
		if (sample[n].len)
			assert_memory_equal(p, want, sample[n].len);
		assert_true(p + ALIGN8(sample[n].len) <= buf + r.len);
		for (size_t b = sample[n].len; b < ALIGN8(sample[n].len); b++)
			if (p[b])
				fail_msg("section %zu: padding byte %zu is 0x%02x",
					 n, b, p[b]);
		n++;
	}
	assert_int_equal(n, NR_SAMPLE);
	assert_false(snap__next(&r, &cursor, &sec, &payload));

	/* snap__find finds each by (type, index), with its size. */
	for (size_t i = 0; i < NR_SAMPLE; i++) {
		const uint8_t *p;
		size_t got = 12345;

		p = snap__find(&r, sample[i].type, sample[i].index, &got);
		assert_non_null(p);
		assert_int_equal(got, sample[i].len);
		fill(want, &sample[i]);
		if (got)
			assert_memory_equal(p, want, got);
		assert_true(p >= buf + HDR + SEC && p + got <= buf + r.len);
	}
	free(buf);
}

static void header_filled_in(void **state)
{
	struct snap_header h;
	struct snap_reader r;
	uint8_t *buf;
	size_t len = build_sample(&buf);

	(void)state;
	memcpy(&h, buf, sizeof(h));
	assert_memory_equal(h.magic, SNAP_MAGIC, 8);
	assert_int_equal(h.version, SNAP_VERSION);
	assert_int_equal(h.header_size, 64);
	/* The caller's fields pass through untouched. */
	assert_int_equal(h.mem_size, sample_hdr.mem_size);
	assert_int_equal(h.nr_vcpus, 4);
	assert_int_equal(h.flavour, 2);
	assert_string_equal(h.cpu_vendor, "GenuineIntel");
	assert_int_equal(h.created_ns, sample_hdr.created_ns);
	assert_int_equal(h.reserved, sample_hdr.reserved);

	assert_int_equal(snap__parse(&r, buf, len), 0);
	assert_memory_equal(&r.hdr, &h, sizeof(h));
	free(buf);
}

static void header_only_file(void **state)
{
	struct snap_writer w;
	struct snap_reader r;
	struct snap_section sec;
	const void *payload;
	size_t cursor = 0, got;

	(void)state;
	snap__begin(&w, &sample_hdr);
	assert_int_equal(snap__finish(&w), 0);
	assert_int_equal(w.len, HDR + TRL);
	assert_int_equal(snap__parse(&r, w.buf, w.len), 0);
	assert_false(snap__next(&r, &cursor, &sec, &payload));
	assert_null(snap__find(&r, SNAP_VM_CONFIG, 0, &got));
	free(w.buf);
}

static void writer_error_is_sticky(void **state)
{
	struct snap_writer w;
	size_t len;

	(void)state;
	snap__begin(&w, &sample_hdr);
	len = w.len;
	w.err = -ENOMEM;
	snap__add(&w, SNAP_VM_CONFIG, 0, "abc", 3);
	assert_int_equal(w.len, len);
	assert_int_equal(snap__finish(&w), -ENOMEM);
	assert_non_null(strstr(err__last(), "building the snapshot state"));
	free(w.buf);
}

static void missing_section_is_null(void **state)
{
	struct snap_reader r;
	uint8_t *buf;
	size_t len = build_sample(&buf), got = 4242;

	(void)state;
	assert_int_equal(snap__parse(&r, buf, len), 0);
	assert_null(snap__find(&r, SNAP_VCPU_XSAVE, 0, &got));
	assert_null(snap__find(&r, SNAP_MEMORY, 0, &got));
	/* Present type, absent index, and the other way round. */
	assert_null(snap__find(&r, SNAP_VCPU_REGS, 2, &got));
	assert_null(snap__find(&r, SNAP_VM_CONFIG, 1, &got));
	assert_null(snap__find(&r, 999, 0, &got));
	free(buf);
}

static void bad_magic(void **state)
{
	uint8_t *buf;
	size_t len = build_sample(&buf);

	(void)state;
	buf[0] = 'X';
	reseal(buf, len);
	expect_reject(buf, len, EINVAL, "bad magic");
	memcpy(buf, "CSSNAPSU", 8);
	reseal(buf, len);
	expect_reject(buf, len, EINVAL, "not a coldstart snapshot");
	free(buf);
}

static void bad_version(void **state)
{
	struct snap_header h;
	uint8_t *buf;
	size_t len = build_sample(&buf);

	(void)state;
	memcpy(&h, buf, sizeof(h));
	h.version = 2;
	memcpy(buf, &h, sizeof(h));
	reseal(buf, len);
	expect_reject(buf, len, EPROTO, "version 2");
	expect_reject(buf, len, EPROTO, "version 1");
	h.version = 0;
	memcpy(buf, &h, sizeof(h));
	reseal(buf, len);
	expect_reject(buf, len, EPROTO, "version 0");
	h.version = 0xffffffffu;
	memcpy(buf, &h, sizeof(h));
	reseal(buf, len);
	expect_reject(buf, len, EPROTO, "version 4294967295");
	free(buf);
}

static void bad_header_size(void **state)
{
	static const uint32_t sizes[] = { 0, 56, 63, 65, 72, 4096 };
	struct snap_header h;
	uint8_t *buf;
	size_t len = build_sample(&buf);
	char what[64];

	(void)state;
	memcpy(&h, buf, sizeof(h));
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		h.header_size = sizes[i];
		memcpy(buf, &h, sizeof(h));
		reseal(buf, len);
		snprintf(what, sizeof(what), "header size %u, expected 64",
			 sizes[i]);
		expect_reject(buf, len, EINVAL, what);
	}
	free(buf);
}

static void every_truncation_rejected(void **state)
{
	uint8_t *buf;
	size_t len = build_sample(&buf);
	char what[64];

	(void)state;
	for (size_t cut = 0; cut < len; cut++) {
		snprintf(what, sizeof(what), "truncated to %zu of %zu bytes",
			 cut, len);
		expect_any_reject(buf, cut, what);
		if (!strstr(err__last(), "truncated") &&
		    !strstr(err__last(), "checksum"))
			fail_msg("%s: message '%s' does not say so", what,
				 err__last());
	}
	expect_reject(buf, 0, EINVAL, "truncated (0 bytes)");
	expect_reject(buf, 10, EINVAL, "truncated (10 bytes)");
	expect_reject(buf, HDR + TRL - 1, EINVAL, "truncated (71 bytes)");
	free(buf);
}

static void every_bit_flip_rejected(void **state)
{
	uint8_t *buf;
	size_t len = build_sample(&buf);
	char what[64];

	(void)state;
	for (size_t at = 0; at < len; at++)
		for (unsigned int bit = 0; bit < 8; bit++) {
			buf[at] ^= (uint8_t)(1u << bit);
			snprintf(what, sizeof(what), "bit %u of byte %zu "
				 "flipped", bit, at);
			expect_any_reject(buf, len, what);
			buf[at] ^= (uint8_t)(1u << bit);
		}
	/* A flip in the body is a checksum mismatch, named as such. */
	buf[HDR + 3] ^= 0x10;
	expect_reject(buf, len, EINVAL, "checksum mismatch");
	buf[HDR + 3] ^= 0x10;
	buf[len - 1] ^= 0x01;
	expect_reject(buf, len, EINVAL, "no end marker");
	free(buf);
}

static void trailing_garbage_rejected(void **state)
{
	static const size_t extra[] = { 1, 3, 7, 8, 9, 16, 4096 };
	uint8_t *buf;
	size_t len = build_sample(&buf);
	char what[64];

	(void)state;
	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
		uint8_t *big = calloc(1, len + extra[i]);

		assert_non_null(big);
		memcpy(big, buf, len);
		snprintf(what, sizeof(what), "%zu zero bytes appended",
			 extra[i]);
		expect_any_reject(big, len + extra[i], what);
		memset(big + len, 0xa5, extra[i]);
		snprintf(what, sizeof(what), "%zu bytes 0xa5 appended",
			 extra[i]);
		expect_any_reject(big, len + extra[i], what);
		free(big);
	}
	/* The file appended to itself ends in a valid-looking trailer. */
	{
		uint8_t *twice = malloc(2 * len);

		assert_non_null(twice);
		memcpy(twice, buf, len);
		memcpy(twice + len, buf, len);
		expect_reject(twice, 2 * len, EINVAL, "checksum");
		free(twice);
	}
	free(buf);
}

/* A hand-built file: header, one section header claiming `claim` bytes,
 * `have` bytes of payload, and a correct trailer. */
static size_t handmade(uint8_t *out, size_t cap, uint64_t claim, size_t have)
{
	struct snap_header h = { .version = SNAP_VERSION,
				 .header_size = sizeof(h), .nr_vcpus = 1 };
	struct snap_section s = { .type = SNAP_VCPU_REGS, .len = claim };
	struct snap_trailer t = { .magic = SNAP_TRAILER_MAGIC };
	size_t len = HDR + SEC + have + TRL;

	assert_true(len <= cap);
	memcpy(h.magic, SNAP_MAGIC, sizeof(h.magic));
	memcpy(out, &h, HDR);
	memcpy(out + HDR, &s, SEC);
	memset(out + HDR + SEC, 0x5c, have);
	memcpy(out + len - TRL, &t, TRL);
	reseal(out, len);
	return len;
}

static void section_past_end_rejected(void **state)
{
	static const struct {
		uint64_t claim;
		size_t have;
	} cases[] = {
		{ 9, 8 },       /* one byte short */
		{ 100, 8 },
		{ 16, 8 },
		{ 5, 5 },       /* fits, but its padding does not */
		{ 1ull << 32, 8 },
		{ UINT64_MAX, 8 },     /* would wrap when aligned */
		{ UINT64_MAX - 6, 8 }, /* aligns to 0 */
		{ UINT64_MAX - 7, 8 },
	};
	uint8_t buf[256];
	struct snap_reader r;
	size_t len;
	char what[64];

	(void)state;
	/* The hand-built file is well formed when the length is honest. */
	len = handmade(buf, sizeof(buf), 8, 8);
	assert_int_equal(snap__parse(&r, buf, len), 0);
	len = handmade(buf, sizeof(buf), 0, 0);
	assert_int_equal(snap__parse(&r, buf, len), 0);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		len = handmade(buf, sizeof(buf), cases[i].claim, cases[i].have);
		snprintf(what, sizeof(what), "claims %llu bytes, past the end",
			 (unsigned long long)cases[i].claim);
		expect_reject(buf, len, EINVAL, what);
		expect_reject(buf, len, EINVAL, "vcpu.regs at offset 64");
	}

	/* A section header cut off: 8 bytes where 16 are needed. */
	len = handmade(buf, sizeof(buf), 0, 0);
	memcpy(buf + HDR + 8, buf + HDR + SEC, TRL);
	len -= 8;
	reseal(buf, len);
	expect_reject(buf, len, EINVAL, "section header at offset 64 is cut off");
}

/* A valid first section, then one that overruns: the second is named. */
static void later_section_past_end_rejected(void **state)
{
	struct snap_section s;
	uint8_t *buf;
	size_t len = build_sample(&buf), at = HDR;

	(void)state;
	for (size_t i = 0; i + 1 < NR_SAMPLE; i++)
		at += SEC + ALIGN8(sample[i].len);
	memcpy(&s, buf + at, sizeof(s));
	assert_int_equal(s.type, 999);
	s.len = 17; /* 8 bytes are left before the trailer */
	memcpy(buf + at, &s, sizeof(s));
	reseal(buf, len);
	expect_reject(buf, len, EINVAL, "(unknown) at offset");
	expect_reject(buf, len, EINVAL, "claims 17 bytes, past the end");
	free(buf);
}

static void type_names(void **state)
{
	(void)state;
	assert_string_equal(snap__type_name(SNAP_VM_CONFIG), "vm.config");
	assert_string_equal(snap__type_name(SNAP_VM_CLOCK), "vm.clock");
	assert_string_equal(snap__type_name(SNAP_VCPU_REGS), "vcpu.regs");
	assert_string_equal(snap__type_name(SNAP_VCPU_SREGS), "vcpu.sregs");
	assert_string_equal(snap__type_name(SNAP_VCPU_MSRS), "vcpu.msrs");
	assert_string_equal(snap__type_name(SNAP_VCPU_TSC_KHZ),
			    "vcpu.tsc_khz");
	assert_string_equal(snap__type_name(SNAP_DEV_PROBE), "device.probe");
	assert_string_equal(snap__type_name(SNAP_MEMORY), "memory");
	assert_string_equal(snap__type_name(SNAP_VM_PIC_MASTER),
			    "vm.pic_master");
	assert_string_equal(snap__type_name(SNAP_VM_IOAPIC), "vm.ioapic");
	assert_string_equal(snap__type_name(SNAP_VM_PIT), "vm.pit");
	assert_string_equal(snap__type_name(SNAP_VCPU_LAPIC), "vcpu.lapic");
	assert_string_equal(snap__type_name(SNAP_DEVICE), "dev");
	assert_null(snap__type_name(0));
	assert_string_equal(snap__type_name(SNAP_VM_VIRTIO), "vm.virtio");
	assert_null(snap__type_name(SNAP_VM_VIRTIO + 1));
	assert_null(snap__type_name(SNAP_VCPU_LAPIC + 1));
	assert_null(snap__type_name(999));
	assert_null(snap__type_name(UINT32_MAX));

	/* Every known type has a distinct, non-empty name. */
	for (uint32_t a = 0; a < 256; a++) {
		const char *na = snap__type_name(a);

		if (!na)
			continue;
		assert_true(na[0] != '\0');
		for (uint32_t b = a + 1; b < 256; b++) {
			const char *nb = snap__type_name(b);

			if (nb && !strcmp(na, nb))
				fail_msg("types %u and %u share name %s", a, b,
					 na);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(header_filled_in),
		cmocka_unit_test(header_only_file),
		cmocka_unit_test(writer_error_is_sticky),
		cmocka_unit_test(missing_section_is_null),
		cmocka_unit_test(bad_magic),
		cmocka_unit_test(bad_version),
		cmocka_unit_test(bad_header_size),
		cmocka_unit_test(every_truncation_rejected),
		cmocka_unit_test(every_bit_flip_rejected),
		cmocka_unit_test(trailing_garbage_rejected),
		cmocka_unit_test(section_past_end_rejected),
		cmocka_unit_test(later_section_past_end_rejected),
		cmocka_unit_test(type_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
