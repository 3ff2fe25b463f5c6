/* Unit tests for the port I/O and MMIO trap registry (vmm/iotrap.c). */
#include "err.h"
#include "iotrap.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* What a handler saw; the handler's opaque pointer is one of these. */
struct probe_dev {
	unsigned int calls;
	struct vcpu *vcpu;
	const struct io_access *access;
	int result;
};

static int record(struct vcpu *vcpu, const struct io_access *access,
		  void *opaque)
{
	struct probe_dev *d = opaque;

	d->calls++;
	d->vcpu = vcpu;
	d->access = access;
	return d->result;
}

static int never(struct vcpu *vcpu, const struct io_access *access,
		 void *opaque)
{
	(void)vcpu;
	(void)access;
	(void)opaque;
	fail_msg("handler of an unrelated trap was called");
	return -EIO;
}

static int setup(void **state)
{
	struct iotrap_table *t = malloc(sizeof(*t));

	if (!t)
		return -1;
	memset(t, 0xff, sizeof(*t));
	iotrap__init(t, true);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

static void init_clears(void **state)
{
	struct iotrap_table *t = *state;

	assert_int_equal(t->count, 0);
	assert_true(t->strict);
	assert_int_equal(t->unclaimed, 0);
	iotrap__init(t, false);
	assert_false(t->strict);
	assert_null(iotrap__find(t, IO_SPACE_PIO, 0, 1));
}

static void spaces_are_independent(void **state)
{
	struct iotrap_table *t = *state;
	struct probe_dev pio = { 0 }, mmio = { 0 };
	const struct iotrap *a, *b;

	assert_int_equal(iotrap__register(t, IO_SPACE_PIO, 0x3f8, 8, record,
					  &pio, "serial"), 0);
	assert_int_equal(iotrap__register(t, IO_SPACE_MMIO, 0x3f8, 8, record,
					  &mmio, "mmio-dev"), 0);
	assert_int_equal(t->count, 2);
	a = iotrap__find(t, IO_SPACE_PIO, 0x3f8, 1);
	b = iotrap__find(t, IO_SPACE_MMIO, 0x3f8, 1);
	assert_non_null(a);
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	assert_int_equal(a->space, IO_SPACE_PIO);
	assert_ptr_equal(a->opaque, &pio);
	assert_string_equal(a->name, "serial");
	assert_int_equal(a->base, 0x3f8);
	assert_int_equal(a->len, 8);
	assert_ptr_equal(a->fn, record);
	assert_int_equal(b->space, IO_SPACE_MMIO);
	assert_ptr_equal(b->opaque, &mmio);
	assert_string_equal(b->name, "mmio-dev");

	assert_int_equal(iotrap__register(t, IO_SPACE_MMIO, 0xfee00000,
					  0x1000, never, NULL, "apic"), 0);
	assert_null(iotrap__find(t, IO_SPACE_PIO, 0xfee00000, 4));
	assert_non_null(iotrap__find(t, IO_SPACE_MMIO, 0xfee00ffc, 4));
	assert_null(iotrap__find(t, IO_SPACE_PIO, 0x2f8, 1));
}

static void access_must_lie_inside(void **state)
{
	struct iotrap_table *t = *state;

	assert_int_equal(iotrap__register(t, IO_SPACE_PIO, 0x3f8, 8, never,
					  NULL, "serial"), 0);
	assert_non_null(iotrap__find(t, IO_SPACE_PIO, 0x3f8, 8));
	assert_non_null(iotrap__find(t, IO_SPACE_PIO, 0x3ff, 1));
	assert_non_null(iotrap__find(t, IO_SPACE_PIO, 0x3fe, 2));
	assert_non_null(iotrap__find(t, IO_SPACE_PIO, 0x3fc, 4));
	assert_null(iotrap__find(t, IO_SPACE_PIO, 0x3ff, 2));
	assert_null(iotrap__find(t, IO_SPACE_PIO, 0x3fd, 4));
	assert_null(iotrap__find(t, IO_SPACE_PIO, 0x3f8, 16));
	assert_null(iotrap__find(t, IO_SPACE_PIO, 0x3f7, 1));
	assert_null(iotrap__find(t, IO_SPACE_PIO, 0x3f7, 2));
	assert_null(iotrap__find(t, IO_SPACE_PIO, 0x400, 1));
	/* Near the top of the address space, no wrap-around. */
	assert_int_equal(iotrap__register(t, IO_SPACE_MMIO, ~0ull - 0xf, 0xf,
					  never, NULL, "top"), 0);
	assert_non_null(iotrap__find(t, IO_SPACE_MMIO, ~0ull - 8, 8));
	assert_null(iotrap__find(t, IO_SPACE_MMIO, ~0ull - 7, 8));
	assert_null(iotrap__find(t, IO_SPACE_MMIO, ~0ull, 1));
}

static void many_traps_in_any_order(void **state)
{
	static const uint64_t bases[] = { 0x500, 0x100, 0x900, 0x300, 0x0,
					  0x700, 0x200, 0x800, 0x400, 0x600 };
	struct iotrap_table *t = *state;
	struct probe_dev devs[10] = { 0 };

	for (size_t i = 0; i < 10; i++)
		assert_int_equal(iotrap__register(t, IO_SPACE_MMIO, bases[i],
						  0x10, record, &devs[i],
						  "dev"), 0);
	for (size_t i = 0; i < 10; i++) {
		const struct iotrap *first =
			iotrap__find(t, IO_SPACE_MMIO, bases[i], 4);
		const struct iotrap *last =
			iotrap__find(t, IO_SPACE_MMIO, bases[i] + 0xf, 1);

		assert_non_null(first);
		assert_ptr_equal(first, last);
		assert_ptr_equal(first->opaque, &devs[i]);
		assert_null(iotrap__find(t, IO_SPACE_MMIO, bases[i] + 0x10, 1));
	}
}

static void overlap_is_eexist(void **state)
{
	static const struct {
		uint64_t base, len;
	} clash[] = {
		{ 0x100, 1 },     /* same start */
		{ 0xf0, 0x11 },   /* reaches the first byte */
		{ 0x10f, 0x11 },  /* starts at the last byte */
		{ 0x108, 1 },     /* inside */
		{ 0xf0, 0x100 },  /* encloses */
	};
	struct iotrap_table *t = *state;

	assert_int_equal(iotrap__register(t, IO_SPACE_PIO, 0x100, 0x10, never,
					  NULL, "a"), 0);
	for (size_t i = 0; i < sizeof(clash) / sizeof(clash[0]); i++) {
		int ret = iotrap__register(t, IO_SPACE_PIO, clash[i].base,
					   clash[i].len, never, NULL, "clash");

		assert_int_equal(ret, -EEXIST);
		assert_non_null(strstr(err__last(), "trap clash"));
	}
	assert_int_equal(t->count, 1);
	/* Adjacent on both sides is fine, and so is the other space. */
	assert_int_equal(iotrap__register(t, IO_SPACE_PIO, 0x110, 0x10, never,
					  NULL, "after"), 0);
	assert_int_equal(iotrap__register(t, IO_SPACE_PIO, 0xf0, 0x10, never,
					  NULL, "before"), 0);
	assert_int_equal(iotrap__register(t, IO_SPACE_MMIO, 0x100, 0x10, never,
					  NULL, "mmio"), 0);
	assert_int_equal(t->count, 4);
	assert_string_equal(iotrap__find(t, IO_SPACE_PIO, 0xff, 1)->name,
			    "before");
	assert_string_equal(iotrap__find(t, IO_SPACE_PIO, 0x110, 1)->name,
			    "after");
	assert_string_equal(iotrap__find(t, IO_SPACE_PIO, 0x10f, 1)->name, "a");
}

static void empty_or_wrapping_is_einval(void **state)
{
	struct iotrap_table *t = *state;

	assert_int_equal(iotrap__register(t, IO_SPACE_PIO, 0x80, 0, never,
					  NULL, "empty"), -EINVAL);
	assert_non_null(strstr(err__last(), "empty"));
	assert_int_equal(iotrap__register(t, IO_SPACE_MMIO, ~0ull - 1, 4,
					  never, NULL, "wrap"), -EINVAL);
	assert_int_equal(t->count, 0);
}

static void full_table_is_enospc(void **state)
{
	struct iotrap_table *t = *state;

	for (unsigned int i = 0; i < IOTRAP_MAX; i++)
		assert_int_equal(iotrap__register(t, IO_SPACE_PIO, i * 4, 4,
						  never, NULL, "slot"), 0);
	assert_int_equal(iotrap__register(t, IO_SPACE_MMIO, 0x1000, 4, never,
					  NULL, "extra"), -ENOSPC);
	assert_non_null(strstr(err__last(), "extra"));
	assert_int_equal(t->count, IOTRAP_MAX);
	assert_null(iotrap__find(t, IO_SPACE_MMIO, 0x1000, 1));
	assert_non_null(iotrap__find(t, IO_SPACE_PIO, (IOTRAP_MAX - 1) * 4, 4));
}

static void dispatch_calls_the_claimant(void **state)
{
	struct iotrap_table *t = *state;
	struct probe_dev uart = { .result = IOTRAP_CONTINUE };
	struct probe_dev ucall = { .result = IOTRAP_STOP };
	struct vcpu *vcpu = (struct vcpu *)(uintptr_t)0x1234;
	uint8_t data[4] = { 1, 2, 3, 4 };
	struct io_access a = {
		.space = IO_SPACE_PIO, .addr = 0x1000, .len = 4,
		.is_write = true, .data = data,
	};

	assert_int_equal(iotrap__register(t, IO_SPACE_PIO, 0x3f8, 8, record,
					  &uart, "uart"), 0);
	assert_int_equal(iotrap__register(t, IO_SPACE_PIO, 0x1000, 4, record,
					  &ucall, "ucall"), 0);
	assert_int_equal(iotrap__dispatch(t, vcpu, &a), IOTRAP_STOP);
	assert_int_equal(ucall.calls, 1);
	assert_int_equal(uart.calls, 0);
	assert_ptr_equal(ucall.vcpu, vcpu);
	assert_ptr_equal(ucall.access, &a);

	a.addr = 0x3fd;
	a.len = 1;
	assert_int_equal(iotrap__dispatch(t, vcpu, &a), IOTRAP_CONTINUE);
	assert_int_equal(uart.calls, 1);
	assert_int_equal(ucall.calls, 1);

	/* A handler's error comes back unchanged. */
	uart.result = -EIO;
	assert_int_equal(iotrap__dispatch(t, vcpu, &a), -EIO);
	assert_int_equal(uart.calls, 2);
}

static void strict_unclaimed_is_efault(void **state)
{
	struct iotrap_table *t = *state;
	uint8_t data = 0x42;
	struct io_access a = {
		.space = IO_SPACE_PIO, .addr = 0x99, .len = 1,
		.is_write = true, .data = &data,
	};

	assert_int_equal(iotrap__register(t, IO_SPACE_PIO, 0x98, 1, never,
					  NULL, "neighbour"), 0);
	assert_int_equal(iotrap__dispatch(t, NULL, &a), -EFAULT);
	assert_non_null(strstr(err__last(), "0x99"));
	assert_non_null(strstr(err__last(), "port"));
	assert_non_null(strstr(err__last(), "write"));

	a.space = IO_SPACE_MMIO;
	a.addr = 0xd0000000;
	a.is_write = false;
	assert_int_equal(iotrap__dispatch(t, NULL, &a), -EFAULT);
	assert_non_null(strstr(err__last(), "0xd0000000"));
	assert_non_null(strstr(err__last(), "read"));
	assert_int_equal(data, 0x42);
}

static void lenient_unclaimed_reads_ones(void **state)
{
	struct iotrap_table *t = *state;
	uint8_t data[8] = { 0 };
	static const uint8_t want[8] = { 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0 };
	struct io_access a = {
		.space = IO_SPACE_PIO, .addr = 0x99, .len = 4,
		.is_write = false, .data = data,
	};

	iotrap__init(t, false);
	assert_int_equal(iotrap__dispatch(t, NULL, &a), IOTRAP_CONTINUE);
	assert_memory_equal(data, want, sizeof(want));
	assert_int_equal(t->unclaimed, 1);

	/* Writes are dropped: the data buffer is not touched. */
	memset(data, 0x11, sizeof(data));
	a.is_write = true;
	assert_int_equal(iotrap__dispatch(t, NULL, &a), IOTRAP_CONTINUE);
	assert_int_equal(data[0], 0x11);
	assert_int_equal(t->unclaimed, 2);

	/* Every access counts, beyond the few that are logged. */
	for (unsigned int i = 0; i < 40; i++)
		assert_int_equal(iotrap__dispatch(t, NULL, &a),
				 IOTRAP_CONTINUE);
	assert_int_equal(t->unclaimed, 42);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(init_clears, setup, teardown),
		cmocka_unit_test_setup_teardown(spaces_are_independent, setup,
						teardown),
		cmocka_unit_test_setup_teardown(access_must_lie_inside, setup,
						teardown),
		cmocka_unit_test_setup_teardown(many_traps_in_any_order, setup,
						teardown),
		cmocka_unit_test_setup_teardown(overlap_is_eexist, setup,
						teardown),
		cmocka_unit_test_setup_teardown(empty_or_wrapping_is_einval,
						setup, teardown),
		cmocka_unit_test_setup_teardown(full_table_is_enospc, setup,
						teardown),
		cmocka_unit_test_setup_teardown(dispatch_calls_the_claimant,
						setup, teardown),
		cmocka_unit_test_setup_teardown(strict_unclaimed_is_efault,
						setup, teardown),
		cmocka_unit_test_setup_teardown(lenient_unclaimed_reads_ones,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
