/* The device side of a virtio 1.x split virtqueue in guest memory: taking
 * the chains of buffers the driver made available, and returning them as
 * used. Everything read from the guest is checked before it is trusted: a
 * malformed ring or chain is an error (the device then asks for a reset),
 * never a read or write outside guest memory, a loop or a crash. */
#ifndef COLDSTART_VIRTQ_H
#define COLDSTART_VIRTQ_H

#include <stdbool.h>
#include <stdint.h>

struct guest_mem;

/* The largest queue a device offers (QueueNumMax): a chain holds at most
 * this many descriptors. */
#define VIRTQ_MAX_SIZE 256

/* Descriptor flags (virtio 1.x, 2.7.5). */
#define VIRTQ_DESC_F_NEXT 1
#define VIRTQ_DESC_F_WRITE 2
#define VIRTQ_DESC_F_INDIRECT 4

/* Available ring flag: the driver does not want interrupts. */
#define VIRTQ_AVAIL_F_NO_INTERRUPT 1

struct virtq_desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
} __attribute__((packed));

struct virtq_used_elem {
	uint32_t id;
	uint32_t len;
} __attribute__((packed));

/* One queue as the transport configures it and the device uses it. The
 * addresses, size and ready bit are the driver's; last_avail and used_idx
 * are the device's progress, saved and restored with the device. */
struct virtq {
	uint16_t size; /* QueueNum: a power of two, at most VIRTQ_MAX_SIZE */
	bool ready;
	uint64_t desc_gpa, avail_gpa, used_gpa;
	uint16_t last_avail; /* the next available entry to take */
	uint16_t used_idx;   /* the next used entry to fill */
	/* Host addresses of the three parts, set by virtq__activate. */
	struct virtq_desc *desc;
	uint16_t *avail; /* flags, idx, ring[size] */
	uint16_t *used;  /* flags, idx, then struct virtq_used_elem[size] */
	const struct guest_mem *mem;
};

/* One buffer of a chain, in host memory. */
struct virtq_buf {
	uint8_t *host;
	uint32_t len;
	bool write; /* device-writable */
};

/* A chain as virtq__pop took it: its device-readable buffers first, then
 * its device-writable ones (the order the specification requires). */
struct virtq_chain {
	uint16_t head;
	unsigned int n;
	struct virtq_buf buf[VIRTQ_MAX_SIZE];
	uint64_t readable, writable; /* bytes of each kind */
};

/* Checks the driver's size and addresses (a power of two up to
 * VIRTQ_MAX_SIZE, each part aligned and wholly inside guest memory) and
 * resolves them; the progress indices are kept, so that a restored queue
 * goes on where it stopped. -EINVAL with a message naming the fault. */
int virtq__activate(struct virtq *q, const struct guest_mem *m);

/* Takes the next available chain into *c: 1 when one was taken, 0 when
 * the ring is empty, -EINVAL with a message when the ring or the chain is
 * malformed (a head or next index out of range, a loop, a buffer outside
 * guest memory, a readable buffer after a writable one, an indirect
 * descriptor, which is not offered, or more entries made available than
 * the queue holds). */
int virtq__pop(struct virtq *q, struct virtq_chain *c);

/* Returns chain `head` as used, with `len` bytes written into its
 * writable buffers; publishes it to the driver (release order). */
void virtq__push(struct virtq *q, uint16_t head, uint32_t len);

/* The driver's available index: how many chains it has ever made
 * available (mod 2^16). */
uint16_t virtq__avail_idx(const struct virtq *q);

/* Whether the driver wants an interrupt for used buffers now. */
bool virtq__wants_interrupt(const struct virtq *q);

/* Copies up to `len` bytes of the chain's readable buffers, starting
 * `off` bytes in, to `out`; returns the bytes copied. */
uint64_t virtq__read(const struct virtq_chain *c, uint64_t off, void *out,
		     uint64_t len);

/* Copies `len` bytes from `in` into the chain's writable buffers,
 * starting `off` bytes into them; returns the bytes copied. */
uint64_t virtq__write(const struct virtq_chain *c, uint64_t off,
		      const void *in, uint64_t len);

#endif
