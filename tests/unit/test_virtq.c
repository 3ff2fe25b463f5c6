/* Unit tests for the device side of split virtqueues (vmm/virtq.c): chains
 * taken in order and returned as used, copies across buffers, index
 * wrap-around, and every malformed ring or chain refused with an error
 * instead of a loop or an access outside guest memory. */
#include "err.h"
#include "mem.h"
#include "virtq.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#define MEM_SIZE 0x10000
#define DESC 0x1000
#define AVAIL 0x2000
#define USED 0x3000
#define QSIZE 8

struct fixture {
	uint8_t ram[MEM_SIZE] __attribute__((aligned(16)));
	struct guest_mem mem;
	struct virtq q;
	struct virtq_chain c;
};

static struct fixture fx;

static struct virtq_desc *desc(unsigned int i)
{
	return (struct virtq_desc *)(fx.ram + DESC) + i;
}

static uint16_t *avail(void)
{
	return (uint16_t *)(fx.ram + AVAIL);
}

static uint16_t *used(void)
{
	return (uint16_t *)(fx.ram + USED);
}

static void set_desc(unsigned int i, uint64_t addr, uint32_t len,
		     uint16_t flags, uint16_t next)
{
	*desc(i) = (struct virtq_desc){ addr, len, flags, next };
}

/* The driver makes chain `head` available. */
static void offer(uint16_t head)
{
	uint16_t idx = avail()[1];

	avail()[2 + (idx & (QSIZE - 1))] = head;
	avail()[1] = (uint16_t)(idx + 1);
}

static int setup(void **state)
{
	(void)state;
	memset(&fx, 0, sizeof(fx));
	fx.mem = (struct guest_mem){ .host = fx.ram, .size = MEM_SIZE,
				     .fd = -1 };
	fx.q = (struct virtq){ .size = QSIZE, .ready = true, .desc_gpa = DESC,
			       .avail_gpa = AVAIL, .used_gpa = USED };
	assert_int_equal(virtq__activate(&fx.q, &fx.mem), 0);
	return 0;
}

static void activate_checks_the_driver(void **state)
{
	struct virtq q = fx.q;

	(void)state;
	q.size = 6;
	assert_int_equal(virtq__activate(&q, &fx.mem), -EINVAL);
	assert_non_null(strstr(err__last(), "power of two"));
	q.size = 512;
	assert_int_equal(virtq__activate(&q, &fx.mem), -EINVAL);
	q = fx.q;
	q.desc_gpa = DESC + 8;
	assert_int_equal(virtq__activate(&q, &fx.mem), -EINVAL);
	assert_non_null(strstr(err__last(), "aligned"));
	q = fx.q;
	q.used_gpa = MEM_SIZE - 16;
	assert_int_equal(virtq__activate(&q, &fx.mem), -EINVAL);
	assert_non_null(strstr(err__last(), "outside guest memory"));
	q = fx.q;
	q.avail_gpa = UINT64_MAX - 1;
	assert_int_equal(virtq__activate(&q, &fx.mem), -EINVAL);
}

static void a_chain_in_order_and_back_as_used(void **state)
{
	char out[32] = "";

	(void)state;
	assert_int_equal(virtq__pop(&fx.q, &fx.c), 0);
	memcpy(fx.ram + 0x4000, "hello, ", 7);
	memcpy(fx.ram + 0x4100, "device", 6);
	set_desc(3, 0x4000, 7, VIRTQ_DESC_F_NEXT, 5);
	set_desc(5, 0x4100, 6, VIRTQ_DESC_F_NEXT, 0);
	set_desc(0, 0x5000, 4, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 1);
	set_desc(1, 0x5100, 16, VIRTQ_DESC_F_WRITE, 0);
	offer(3);

	assert_int_equal(virtq__pop(&fx.q, &fx.c), 1);
	assert_int_equal(fx.c.head, 3);
	assert_int_equal(fx.c.n, 4);
	assert_int_equal(fx.c.readable, 13);
	assert_int_equal(fx.c.writable, 20);
	assert_int_equal(virtq__read(&fx.c, 0, out, sizeof(out)), 13);
	assert_memory_equal(out, "hello, device", 13);
	assert_int_equal(virtq__read(&fx.c, 5, out, 4), 4);
	assert_memory_equal(out, ", de", 4);
	/* A write across the two writable buffers. */
	assert_int_equal(virtq__write(&fx.c, 2, "abcdef", 6), 6);
	assert_memory_equal(fx.ram + 0x5002, "ab", 2);
	assert_memory_equal(fx.ram + 0x5100, "cdef", 4);
	assert_int_equal(virtq__write(&fx.c, 18, "xyz", 3), 2);
	assert_int_equal(virtq__pop(&fx.q, &fx.c), 0);

	virtq__push(&fx.q, 3, 6);
	assert_int_equal(used()[1], 1);
	assert_int_equal(((struct virtq_used_elem *)&used()[2])[0].id, 3);
	assert_int_equal(((struct virtq_used_elem *)&used()[2])[0].len, 6);
}

static void indices_wrap(void **state)
{
	(void)state;
	fx.q.last_avail = fx.q.used_idx = 65535;
	avail()[1] = 65535;
	used()[1] = 65535;
	set_desc(2, 0x4000, 8, 0, 0);
	offer(2);
	offer(2);
	assert_int_equal(avail()[1], 1);
	assert_int_equal(virtq__pop(&fx.q, &fx.c), 1);
	assert_int_equal(virtq__pop(&fx.q, &fx.c), 1);
	assert_int_equal(virtq__pop(&fx.q, &fx.c), 0);
	assert_int_equal(fx.q.last_avail, 1);
	virtq__push(&fx.q, 2, 0);
	virtq__push(&fx.q, 2, 0);
	assert_int_equal(used()[1], 1);
}

/* Each malformed case leaves the error's words in err__last(). */
static void refuse(const char *words)
{
	assert_int_equal(virtq__pop(&fx.q, &fx.c), -EINVAL);
	assert_non_null(strstr(err__last(), words));
}

static void a_loop_is_refused(void **state)
{
	(void)state;
	set_desc(0, 0x4000, 8, VIRTQ_DESC_F_NEXT, 1);
	set_desc(1, 0x4000, 8, VIRTQ_DESC_F_NEXT, 0);
	offer(0);
	refuse("loops");
	/* A descriptor that links to itself. */
	setup(NULL);
	set_desc(4, 0x4000, 8, VIRTQ_DESC_F_NEXT, 4);
	offer(4);
	refuse("loops");
}

static void indices_out_of_range_are_refused(void **state)
{
	(void)state;
	offer(QSIZE);
	refuse("names descriptor 8 of 8");
	setup(NULL);
	set_desc(0, 0x4000, 8, VIRTQ_DESC_F_NEXT, 200);
	offer(0);
	refuse("links to descriptor 200");
	setup(NULL);
	avail()[1] = QSIZE + 1;
	refuse("9 buffers available in a queue of 8");
}

static void buffers_outside_memory_are_refused(void **state)
{
	(void)state;
	set_desc(0, MEM_SIZE - 4, 8, 0, 0);
	offer(0);
	refuse("outside guest memory");
	setup(NULL);
	set_desc(0, UINT64_MAX - 2, 16, 0, 0);
	offer(0);
	refuse("outside guest memory");
	setup(NULL);
	set_desc(0, 0x4000, UINT32_MAX, VIRTQ_DESC_F_WRITE, 0);
	offer(0);
	refuse("outside guest memory");
}

static void order_and_indirect_are_checked(void **state)
{
	(void)state;
	set_desc(0, 0x4000, 8, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 1);
	set_desc(1, 0x4100, 8, 0, 0);
	offer(0);
	refuse("readable buffer after a writable");
	setup(NULL);
	set_desc(0, 0x4000, 32, VIRTQ_DESC_F_INDIRECT, 0);
	offer(0);
	refuse("indirect");
}

static void the_driver_can_silence_interrupts(void **state)
{
	(void)state;
	assert_true(virtq__wants_interrupt(&fx.q));
	avail()[0] = VIRTQ_AVAIL_F_NO_INTERRUPT;
	assert_false(virtq__wants_interrupt(&fx.q));
}

/* A full queue of one-descriptor chains: every one is taken once. */
static void a_full_queue(void **state)
{
	(void)state;
	for (unsigned int i = 0; i < QSIZE; i++) {
		set_desc(i, 0x4000 + 16 * i, 16, 0, 0);
		offer((uint16_t)(QSIZE - 1 - i));
	}
	for (unsigned int i = 0; i < QSIZE; i++) {
		assert_int_equal(virtq__pop(&fx.q, &fx.c), 1);
		assert_int_equal(fx.c.head, QSIZE - 1 - i);
		virtq__push(&fx.q, fx.c.head, 0);
	}
	assert_int_equal(virtq__pop(&fx.q, &fx.c), 0);
	assert_int_equal(used()[1], QSIZE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(activate_checks_the_driver, setup),
		cmocka_unit_test_setup(a_chain_in_order_and_back_as_used, setup),
		cmocka_unit_test_setup(indices_wrap, setup),
		cmocka_unit_test_setup(a_loop_is_refused, setup),
		cmocka_unit_test_setup(indices_out_of_range_are_refused, setup),
		cmocka_unit_test_setup(buffers_outside_memory_are_refused, setup),
		cmocka_unit_test_setup(order_and_indirect_are_checked, setup),
		cmocka_unit_test_setup(the_driver_can_silence_interrupts, setup),
		cmocka_unit_test_setup(a_full_queue, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
