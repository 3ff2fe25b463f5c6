/* Fuzz target: what a guest's driver gives a virtio device. The input is
 * the guest's memory as a device sees it (descriptor table, available
 * and used rings, buffers) and the queue's size and progress, then a
 * sequence of register accesses to the virtio-mmio transport of a device
 * that takes every chain its queue offers. A chain is taken only when
 * each of its buffers lies in guest memory (ASan checks every byte the
 * device copies), a malformed ring is refused, and the transport's saved
 * state restores to the same state.
 *
 * Input: u16 queue size, u16 last_avail, u16 used_idx, u8 number of
 * register records, then the records (u8 op: bit 0 write, bits 1-2 size
 * 1, 2, 4 or 8; u16 offset in the 512-byte window; u32 value), then the
 * guest memory (64 KiB, zeros past the input). The queue is at 0x0
 * (descriptors), 0x1000 (available ring) and 0x2000 (used ring). */
#include "fuzz.h"

#include "mem.h"
#include "virtio_mmio.h"
#include "virtq.h"

#include <stdlib.h>
#include <string.h>

#define MEM 0x10000

static uint8_t *ram;
static struct guest_mem mem;
static struct virtq_chain chain;

/* Takes every chain, reads and writes its buffers, returns it used. */
static void drain(struct virtq *q)
{
	uint8_t buf[64];

	for (unsigned int i = 0; i < 2u * VIRTQ_MAX_SIZE; i++) {
		if (virtq__pop(q, &chain) <= 0)
			return;
		if (chain.n == 0 || chain.n > q->size)
			abort(); /* a taken chain has 1..size buffers */
		virtq__read(&chain, chain.readable / 2, buf, sizeof(buf));
		if (chain.writable)
			virtq__write(&chain, chain.writable - 1, buf, 1);
		virtq__push(q, chain.head, (uint32_t)chain.writable);
		virtq__wants_interrupt(q);
	}
}

static void config_read(void *dev, uint32_t off, void *data, uint32_t len)
{
	static const uint8_t config[16] = "fuzzing config!";

	(void)dev;
	memcpy(data, config + off, len);
}

static int activate(void *dev, uint64_t features)
{
	(void)dev;
	(void)features;
	return 0;
}

static struct virtio_mmio *transport;

static void notify(void *dev, unsigned int q)
{
	(void)dev;
	drain(&transport->q[q]);
}

static void reset(void *dev)
{
	(void)dev;
}

static void raise_irq(void *ctx, uint32_t irq)
{
	(void)ctx;
	(void)irq;
}

static const struct virtio_dev_ops ops = {
	.name = "virtio-fuzz", .device_id = 2, .features = 1ull << 9,
	.queues = 2, .queue_max = VIRTQ_MAX_SIZE, .config_size = 16,
	.config_read = config_read, .activate = activate, .notify = notify,
	.reset = reset,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	ram = malloc(MEM);
	if (!ram)
		abort();
	mem = (struct guest_mem){ .host = ram, .size = MEM, .fd = -1 };
	return 0;
}

/* The transport driven by the records, then its state round-tripped. */
static void registers(struct fuzz_input *in, unsigned int records)
{
	struct virtio_mmio t, u;
	struct virtio_mmio_state a, b;

	if (virtio_mmio__init(&t, &ops, NULL, &mem, 0, 5, raise_irq, NULL) < 0)
		abort();
	transport = &t;
	for (unsigned int i = 0; i < records && in->left; i++) {
		uint8_t op = (uint8_t)fuzz__take(in, 1);
		uint64_t off = fuzz__take(in, 2) % VIRTIO_MMIO_SIZE;
		uint32_t len = 1u << ((op >> 1) & 3);
		uint64_t v = fuzz__take(in, 4);
		uint8_t data[8] = { 0 };

		memcpy(data, &v, 4);
		if (off + len > VIRTIO_MMIO_SIZE)
			continue;
		virtio_mmio__access(&t, off, len, op & 1, data);
	}
	virtio_mmio__save(&t, &a);
	if (virtio_mmio__init(&u, &ops, NULL, &mem, 0, 5, raise_irq, NULL) < 0)
		abort();
	transport = &u;
	/* A state this transport saved restores, unless its queues no longer
	 * fit (the guest's memory is the same, so they do). */
	if (virtio_mmio__restore(&u, &a) == 0) {
		virtio_mmio__save(&u, &b);
		if (memcmp(&a, &b, sizeof(a)))
			abort();
	}
	virtio_mmio__destroy(&u);
	virtio_mmio__destroy(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = { data, size };
	struct virtq q = { .ready = true, .desc_gpa = 0, .avail_gpa = 0x1000,
			   .used_gpa = 0x2000 };
	unsigned int records;

	q.size = (uint16_t)fuzz__take(&in, 2);
	q.last_avail = (uint16_t)fuzz__take(&in, 2);
	q.used_idx = (uint16_t)fuzz__take(&in, 2);
	records = (unsigned int)fuzz__take(&in, 1);
	/* the records come first in the input, the memory after them */
	struct fuzz_input regs = in;
	for (unsigned int i = 0; i < records && in.left; i++)
		fuzz__take(&in, 7);
	memset(ram, 0, MEM);
	memcpy(ram, in.p, in.left < MEM ? in.left : MEM);
	if (virtq__activate(&q, &mem) == 0)
		drain(&q);
	registers(&regs, records);
	return 0;
}
