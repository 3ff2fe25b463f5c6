/* Unit tests for the virtio-mmio transport (vmm/virtio_mmio.c) with a
 * recording device: identification, feature negotiation, queue setup and
 * DRIVER_OK, notifications, interrupts and their suppression, the device
 * asking for a reset, the driver resetting it, and save/restore. */
#include "err.h"
#include "mem.h"
#include "virtio_mmio.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#define MEM_SIZE 0x10000
#define BASE 0xd0000000ull
#define IRQ 5

struct recorder {
	int activated, resets, notified, raised;
	unsigned int last_queue;
	uint64_t features;
	int fail_activate;
};

static struct recorder rec;
static uint8_t ram[MEM_SIZE] __attribute__((aligned(16)));
static const struct guest_mem mem = { .host = ram, .size = MEM_SIZE,
				      .fd = -1 };
static struct virtio_mmio t;

static void config_read(void *dev, uint32_t off, void *data, uint32_t len)
{
	static const uint8_t config[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	(void)dev;
	memcpy(data, config + off, len);
}

static int activate(void *dev, uint64_t features)
{
	struct recorder *r = dev;

	r->activated++;
	r->features = features;
	return r->fail_activate ? err__set(EIO, "refused") : 0;
}

static void notify(void *dev, unsigned int q)
{
	struct recorder *r = dev;

	r->notified++;
	r->last_queue = q;
}

static void reset_dev(void *dev)
{
	((struct recorder *)dev)->resets++;
}

static void raise_irq(void *ctx, uint32_t irq)
{
	assert_int_equal(irq, IRQ);
	((struct recorder *)ctx)->raised++;
}

static const struct virtio_dev_ops ops = {
	.name = "virtio-test", .device_id = 2, .features = 1ull << 9,
	.queues = 2, .queue_max = 16, .config_size = 8,
	.config_read = config_read, .activate = activate, .notify = notify,
	.reset = reset_dev,
};

static uint32_t rd(uint64_t off)
{
	uint32_t v;

	virtio_mmio__access(&t, off, 4, false, (uint8_t *)&v);
	return v;
}

static void wr(uint64_t off, uint32_t v)
{
	virtio_mmio__access(&t, off, 4, true, (uint8_t *)&v);
}

static int setup(void **state)
{
	(void)state;
	memset(&rec, 0, sizeof(rec));
	memset(ram, 0, sizeof(ram));
	assert_int_equal(virtio_mmio__init(&t, &ops, &rec, &mem, BASE, IRQ,
					   raise_irq, &rec), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	virtio_mmio__destroy(&t);
	return 0;
}

/* What Linux's driver does up to FEATURES_OK. */
static void negotiate(uint64_t features)
{
	wr(VIRTIO_MMIO_STATUS, 0);
	wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE);
	wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
	wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	wr(VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)features);
	wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	wr(VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(features >> 32));
	wr(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE |
				       VIRTIO_STATUS_DRIVER |
				       VIRTIO_STATUS_FEATURES_OK);
}

static void queue(uint32_t sel, uint32_t size, uint64_t desc, uint64_t avail,
		  uint64_t used)
{
	wr(VIRTIO_MMIO_QUEUE_SEL, sel);
	wr(VIRTIO_MMIO_QUEUE_NUM, size);
	wr(VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)desc);
	wr(VIRTIO_MMIO_QUEUE_DESC_HIGH, (uint32_t)(desc >> 32));
	wr(VIRTIO_MMIO_QUEUE_DRIVER_LOW, (uint32_t)avail);
	wr(VIRTIO_MMIO_QUEUE_DRIVER_HIGH, (uint32_t)(avail >> 32));
	wr(VIRTIO_MMIO_QUEUE_DEVICE_LOW, (uint32_t)used);
	wr(VIRTIO_MMIO_QUEUE_DEVICE_HIGH, (uint32_t)(used >> 32));
	wr(VIRTIO_MMIO_QUEUE_READY, 1);
}

static void start(void)
{
	negotiate(VIRTIO_F_VERSION_1 | (1ull << 9));
	queue(0, 16, 0x1000, 0x2000, 0x3000);
	wr(VIRTIO_MMIO_STATUS, rd(VIRTIO_MMIO_STATUS) |
				       VIRTIO_STATUS_DRIVER_OK);
}

static void identifies_itself(void **state)
{
	uint32_t word = 0xffffffff;
	uint16_t half;
	uint8_t byte;

	(void)state;
	assert_int_equal(rd(VIRTIO_MMIO_MAGIC), 0x74726976);
	assert_int_equal(rd(VIRTIO_MMIO_VERSION), 2);
	assert_int_equal(rd(VIRTIO_MMIO_DEVICE_ID), 2);
	wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	assert_int_equal(rd(VIRTIO_MMIO_DEVICE_FEATURES), 1u << 9);
	wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	assert_int_equal(rd(VIRTIO_MMIO_DEVICE_FEATURES), 1);
	wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 7);
	assert_int_equal(rd(VIRTIO_MMIO_DEVICE_FEATURES), 0);
	wr(VIRTIO_MMIO_QUEUE_SEL, 1);
	assert_int_equal(rd(VIRTIO_MMIO_QUEUE_NUM_MAX), 16);
	wr(VIRTIO_MMIO_QUEUE_SEL, 2);
	assert_int_equal(rd(VIRTIO_MMIO_QUEUE_NUM_MAX), 0);
	/* Registers take 32-bit accesses only; the configuration any. */
	virtio_mmio__access(&t, VIRTIO_MMIO_MAGIC, 2, false, (uint8_t *)&half);
	assert_int_equal(half, 0);
	virtio_mmio__access(&t, VIRTIO_MMIO_CONFIG + 3, 1, false, &byte);
	assert_int_equal(byte, 4);
	virtio_mmio__access(&t, VIRTIO_MMIO_CONFIG + 6, 4, false,
			    (uint8_t *)&word);
	assert_int_equal(word, 0); /* past the end of the configuration */
}

static void features_must_be_offered_and_modern(void **state)
{
	(void)state;
	negotiate(VIRTIO_F_VERSION_1 | (1ull << 3));
	assert_false(rd(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK);
	negotiate(1ull << 9);
	assert_false(rd(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK);
	negotiate(VIRTIO_F_VERSION_1 | (1ull << 9));
	assert_true(rd(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK);
	/* Not started without FEATURES_OK. */
	negotiate(1ull << 9);
	wr(VIRTIO_MMIO_STATUS, rd(VIRTIO_MMIO_STATUS) |
				       VIRTIO_STATUS_DRIVER_OK);
	assert_false(rd(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_DRIVER_OK);
	assert_int_equal(rec.activated, 0);
}

static void driver_ok_starts_and_notify_reaches_the_device(void **state)
{
	(void)state;
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	assert_int_equal(rec.notified, 0); /* not started */
	start();
	assert_int_equal(rec.activated, 1);
	assert_int_equal(rec.features, VIRTIO_F_VERSION_1 | (1ull << 9));
	assert_ptr_equal(t.q[0].desc, (void *)(ram + 0x1000));
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	assert_int_equal(rec.notified, 1);
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 1); /* never made ready */
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 9);
	assert_int_equal(rec.notified, 1);
	/* A ready queue's configuration is fixed. */
	wr(VIRTIO_MMIO_QUEUE_SEL, 0);
	wr(VIRTIO_MMIO_QUEUE_DESC_LOW, 0x8000);
	assert_int_equal(t.q[0].desc_gpa, 0x1000);
}

static void a_queue_outside_memory_needs_a_reset(void **state)
{
	(void)state;
	negotiate(VIRTIO_F_VERSION_1);
	queue(0, 16, 0x1000, 0x2000, MEM_SIZE - 8);
	wr(VIRTIO_MMIO_STATUS, rd(VIRTIO_MMIO_STATUS) |
				       VIRTIO_STATUS_DRIVER_OK);
	assert_int_equal(rec.activated, 0);
	assert_true(rd(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_NEEDS_RESET);
	assert_false(rd(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_DRIVER_OK);
	/* Sizes above QueueNumMax are not taken. */
	wr(VIRTIO_MMIO_STATUS, 0);
	negotiate(VIRTIO_F_VERSION_1);
	wr(VIRTIO_MMIO_QUEUE_SEL, 0);
	wr(VIRTIO_MMIO_QUEUE_NUM, 32);
	assert_int_equal(t.q[0].size, 0);
}

static void interrupts_acks_and_suppression(void **state)
{
	uint16_t *avail_flags = (uint16_t *)(ram + 0x2000);

	(void)state;
	start();
	virtio_mmio__used(&t, 0);
	assert_int_equal(rec.raised, 1);
	assert_int_equal(rd(VIRTIO_MMIO_INTERRUPT_STATUS), VIRTIO_INT_USED);
	wr(VIRTIO_MMIO_INTERRUPT_ACK, VIRTIO_INT_USED);
	assert_int_equal(rd(VIRTIO_MMIO_INTERRUPT_STATUS), 0);
	*avail_flags = VIRTQ_AVAIL_F_NO_INTERRUPT;
	virtio_mmio__used(&t, 0);
	assert_int_equal(rec.raised, 1);
	/* The device's plea for a reset: once, as a configuration change. */
	virtio_mmio__needs_reset(&t);
	virtio_mmio__needs_reset(&t);
	assert_int_equal(rec.raised, 2);
	assert_int_equal(rd(VIRTIO_MMIO_INTERRUPT_STATUS), VIRTIO_INT_CONFIG);
	assert_true(rd(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_NEEDS_RESET);
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	assert_int_equal(rec.notified, 0);
	/* The driver's reset stops the device and clears everything. */
	wr(VIRTIO_MMIO_STATUS, 0);
	assert_int_equal(rec.resets, 1);
	assert_int_equal(rd(VIRTIO_MMIO_STATUS), 0);
	assert_int_equal(rd(VIRTIO_MMIO_INTERRUPT_STATUS), 0);
	wr(VIRTIO_MMIO_QUEUE_SEL, 0);
	assert_int_equal(rd(VIRTIO_MMIO_QUEUE_READY), 0);
}

static void save_and_restore(void **state)
{
	struct virtio_mmio_state s, bad;
	struct virtio_mmio u;

	(void)state;
	start();
	t.q[0].last_avail = 7;
	t.q[0].used_idx = 6;
	virtio_mmio__save(&t, &s);

	assert_int_equal(virtio_mmio__init(&u, &ops, &rec, &mem, BASE, IRQ,
					   raise_irq, &rec), 0);
	assert_int_equal(virtio_mmio__restore(&u, &s), 0);
	assert_int_equal(rec.activated, 2);
	assert_int_equal(u.q[0].last_avail, 7);
	assert_int_equal(u.q[0].used_idx, 6);
	assert_ptr_equal(u.q[0].used, (void *)(ram + 0x3000));
	assert_int_equal(u.s.status, s.status);

	bad = s;
	bad.version = 99;
	assert_int_equal(virtio_mmio__restore(&u, &bad), -EINVAL);
	bad = s;
	bad.q[0].size = 64;
	assert_int_equal(virtio_mmio__restore(&u, &bad), -EINVAL);
	assert_non_null(strstr(err__last(), "offers 16"));
	bad = s;
	bad.q[3].ready = 1;
	assert_int_equal(virtio_mmio__restore(&u, &bad), -EINVAL);
	bad = s;
	bad.q[0].used = MEM_SIZE;
	assert_int_equal(virtio_mmio__restore(&u, &bad), -EINVAL);
	virtio_mmio__destroy(&u);
}

static void command_line_form(void **state)
{
	char buf[64];

	(void)state;
	virtio_mmio__cmdline(&t, buf, sizeof(buf));
	assert_string_equal(buf, "virtio_mmio.device=512@0xd0000000:5");
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(identifies_itself),
		T(features_must_be_offered_and_modern),
		T(driver_ok_starts_and_notify_reaches_the_device),
		T(a_queue_outside_memory_needs_a_reset),
		T(interrupts_acks_and_suppression),
		T(save_and_restore),
		T(command_line_form),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
