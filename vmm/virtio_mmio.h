/* The virtio-mmio transport (virtio 1.x, MMIO version 2): the register
 * window a driver finds a device through, feature negotiation, the device
 * status, queue configuration, notifications and interrupts. A device
 * (block, vsock) gives its ID, features, configuration space and queue
 * handling in struct virtio_dev_ops; the transport checks every value the
 * driver writes before the device sees it. */
#ifndef COLDSTART_VIRTIO_MMIO_H
#define COLDSTART_VIRTIO_MMIO_H

#include "virtq.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct iotrap_table;
struct vm;

/* The register window's size: registers, then the device's configuration
 * space from VIRTIO_MMIO_CONFIG. */
#define VIRTIO_MMIO_SIZE 0x200
#define VIRTIO_MMIO_CONFIG 0x100
#define VIRTIO_MMIO_MAX_QUEUES 4

/* Register offsets (virtio 1.x, 4.2.2). */
enum {
	VIRTIO_MMIO_MAGIC = 0x000,
	VIRTIO_MMIO_VERSION = 0x004,
	VIRTIO_MMIO_DEVICE_ID = 0x008,
	VIRTIO_MMIO_VENDOR_ID = 0x00c,
	VIRTIO_MMIO_DEVICE_FEATURES = 0x010,
	VIRTIO_MMIO_DEVICE_FEATURES_SEL = 0x014,
	VIRTIO_MMIO_DRIVER_FEATURES = 0x020,
	VIRTIO_MMIO_DRIVER_FEATURES_SEL = 0x024,
	VIRTIO_MMIO_QUEUE_SEL = 0x030,
	VIRTIO_MMIO_QUEUE_NUM_MAX = 0x034,
	VIRTIO_MMIO_QUEUE_NUM = 0x038,
	VIRTIO_MMIO_QUEUE_READY = 0x044,
	VIRTIO_MMIO_QUEUE_NOTIFY = 0x050,
	VIRTIO_MMIO_INTERRUPT_STATUS = 0x060,
	VIRTIO_MMIO_INTERRUPT_ACK = 0x064,
	VIRTIO_MMIO_STATUS = 0x070,
	VIRTIO_MMIO_QUEUE_DESC_LOW = 0x080,
	VIRTIO_MMIO_QUEUE_DESC_HIGH = 0x084,
	VIRTIO_MMIO_QUEUE_DRIVER_LOW = 0x090,
	VIRTIO_MMIO_QUEUE_DRIVER_HIGH = 0x094,
	VIRTIO_MMIO_QUEUE_DEVICE_LOW = 0x0a0,
	VIRTIO_MMIO_QUEUE_DEVICE_HIGH = 0x0a4,
	VIRTIO_MMIO_CONFIG_GENERATION = 0x0fc,
};

#define VIRTIO_MMIO_MAGIC_VALUE 0x74726976 /* "virt" */

/* Device status bits (2.1). */
#define VIRTIO_STATUS_ACKNOWLEDGE 1u
#define VIRTIO_STATUS_DRIVER 2u
#define VIRTIO_STATUS_DRIVER_OK 4u
#define VIRTIO_STATUS_FEATURES_OK 8u
#define VIRTIO_STATUS_NEEDS_RESET 64u
#define VIRTIO_STATUS_FAILED 128u

/* InterruptStatus bits. */
#define VIRTIO_INT_USED 1u
#define VIRTIO_INT_CONFIG 2u

#define VIRTIO_F_VERSION_1 (1ull << 32)

struct virtio_dev_ops {
	const char *name;    /* "virtio-blk", in messages */
	uint32_t device_id;  /* 2 block, 19 vsock */
	uint64_t features;   /* offered; the transport adds VERSION_1 */
	unsigned int queues; /* at most VIRTIO_MMIO_MAX_QUEUES */
	uint16_t queue_max;  /* QueueNumMax, at most VIRTQ_MAX_SIZE */
	uint32_t config_size;
	/* Copies [off, off + len) of the configuration space (within
	 * config_size) into data. */
	void (*config_read)(void *dev, uint32_t off, void *data, uint32_t len);
	/* The driver set DRIVER_OK: its features are in `features`, its
	 * queues checked and resolved. 0, or -errno with a message (the
	 * transport then asks for a reset). */
	int (*activate)(void *dev, uint64_t features);
	/* The driver notified queue `q` (of an activated device). */
	void (*notify)(void *dev, unsigned int q);
	/* Stop using the queues: the driver reset the device. Returns once
	 * no thread of the device touches them. */
	void (*reset)(void *dev);
};

/* The registers a driver wrote, saved and restored with the device. */
struct virtio_mmio_state {
	uint32_t version;
	uint32_t status;
	uint32_t device_features_sel;
	uint32_t driver_features_sel;
	uint64_t driver_features;
	uint32_t queue_sel;
	uint32_t interrupt_status;
	uint32_t config_generation;
	uint32_t pad;
	struct virtio_mmio_queue_state {
		uint64_t desc, avail, used;
		uint16_t size, ready, last_avail, used_idx;
	} q[VIRTIO_MMIO_MAX_QUEUES];
};

#define VIRTIO_MMIO_STATE_VERSION 1

struct virtio_mmio {
	const struct virtio_dev_ops *ops;
	void *dev;
	const struct guest_mem *mem;
	uint64_t base;
	uint32_t irq;
	/* Raises the device's interrupt (an edge on its line). */
	void (*raise)(void *ctx, uint32_t irq);
	void *raise_ctx;
	/* KVM's paths (virtio_mmio__kvm_paths): QueueNotify signals the
	 * device's eventfd without an exit; -1, or the eventfd bound to
	 * the interrupt line, which replaces `raise`. */
	bool kvm_notify;
	int irq_fd;
	/* Serialises the driver's register writes with the device's
	 * interrupts and resets. */
	pthread_mutex_t lock;
	struct virtio_mmio_state s;
	struct virtq q[VIRTIO_MMIO_MAX_QUEUES];
};

/* A device's transport at guest-physical `base` with interrupt `irq`;
 * `raise` delivers the interrupt. -EINVAL with a message for ops that
 * break the limits above. */
int virtio_mmio__init(struct virtio_mmio *t, const struct virtio_dev_ops *ops,
		      void *dev, const struct guest_mem *mem, uint64_t base,
		      uint32_t irq, void (*raise)(void *ctx, uint32_t irq),
		      void *raise_ctx);
void virtio_mmio__destroy(struct virtio_mmio *t);

/* Claims the register window in `io` (MMIO space). */
int virtio_mmio__register(struct virtio_mmio *t, struct iotrap_table *io);

/* Where the VM's KVM offers them (KVM_CAP_IOEVENTFD, KVM_CAP_IRQFD with
 * an in-kernel irqchip): the driver's QueueNotify writes signal `kick`,
 * the device's notification eventfd, inside KVM, for any queue (the
 * device serves every queue when woken, and only once started), and the
 * interrupt is raised through an irqfd. Unless COLDSTART_VIRTIO_EXITS is
 * set (not 0): then, as without KVM's support, notifications exit to the
 * vCPU thread and interrupts take KVM_IRQ_LINE. Before the VM starts;
 * 0, or -errno with a message (virtio_eventfd.c). */
int virtio_mmio__kvm_paths(struct virtio_mmio *t, struct vm *vm, int kick);

/* One access of the driver to the window: `off` from base, `len` 1, 2, 4
 * or 8 bytes. Registers take 32-bit accesses only; others read as 0 and
 * are ignored as writes, as are writes to read-only registers. */
void virtio_mmio__access(struct virtio_mmio *t, uint64_t off, uint32_t len,
			 bool is_write, uint8_t *data);

/* The device used buffers of queue `q`: raises the interrupt unless the
 * driver suppressed it. Called by the device from any thread. */
void virtio_mmio__used(struct virtio_mmio *t, unsigned int q);

/* The device cannot go on (a malformed queue): DEVICE_NEEDS_RESET and a
 * configuration interrupt, as virtio 1.x asks. */
void virtio_mmio__needs_reset(struct virtio_mmio *t);

/* The transport's part of a device's saved state, and its restore:
 * queues are resolved again in guest memory and a device the driver had
 * started is activated. -EINVAL with a message when the state is not
 * one this version wrote or its queues do not fit guest memory. */
void virtio_mmio__save(const struct virtio_mmio *t,
		       struct virtio_mmio_state *out);
int virtio_mmio__restore(struct virtio_mmio *t,
			 const struct virtio_mmio_state *in);

/* The kernel command-line form of the device, for kernels built with
 * CONFIG_VIRTIO_MMIO_CMDLINE_DEVICES: "virtio_mmio.device=SIZE@ADDR:IRQ".
 * Returns what snprintf returns. */
int virtio_mmio__cmdline(const struct virtio_mmio *t, char *buf,
			 size_t size);

#endif
