/* The virtio-mmio transport (virtio_mmio.h). Register accesses come from
 * vCPU threads and take the lock; the device's threads only set interrupt
 * and status bits, atomically, so a device may call virtio_mmio__used()
 * while a reset waits for it to stop. */
#include "virtio_mmio.h"

#include "err.h"
#include "iotrap.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static uint32_t atomic_get(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

int virtio_mmio__init(struct virtio_mmio *t, const struct virtio_dev_ops *ops,
		      void *dev, const struct guest_mem *mem, uint64_t base,
		      uint32_t irq, void (*raise)(void *ctx, uint32_t irq),
		      void *raise_ctx)
{
	if (ops->queues == 0 || ops->queues > VIRTIO_MMIO_MAX_QUEUES ||
	    ops->queue_max == 0 || ops->queue_max > VIRTQ_MAX_SIZE ||
	    ops->config_size > VIRTIO_MMIO_SIZE - VIRTIO_MMIO_CONFIG)
		return err__set(EINVAL, "%s: %u queues of %u, %u bytes of "
				"configuration: beyond the transport's limits",
				ops->name, ops->queues, ops->queue_max,
				ops->config_size);
	memset(t, 0, sizeof(*t));
	t->ops = ops;
	t->dev = dev;
	t->mem = mem;
	t->base = base;
	t->irq = irq;
	t->raise = raise;
	t->raise_ctx = raise_ctx;
	t->irq_fd = -1;
	t->s.version = VIRTIO_MMIO_STATE_VERSION;
	pthread_mutex_init(&t->lock, NULL);
	return 0;
}

void virtio_mmio__destroy(struct virtio_mmio *t)
{
	if (t->irq_fd >= 0)
		close(t->irq_fd);
	pthread_mutex_destroy(&t->lock);
}

static void interrupt(struct virtio_mmio *t, uint32_t bit)
{
	uint64_t one = 1;

	__atomic_or_fetch(&t->s.interrupt_status, bit, __ATOMIC_ACQ_REL);
	/* an irqfd's write fails only past 2^64 - 2 undelivered edges */
	if (t->irq_fd < 0 || write(t->irq_fd, &one, sizeof(one)) < 0)
		t->raise(t->raise_ctx, t->irq);
}

void virtio_mmio__used(struct virtio_mmio *t, unsigned int q)
{
	if (virtq__wants_interrupt(&t->q[q]))
		interrupt(t, VIRTIO_INT_USED);
}

void virtio_mmio__needs_reset(struct virtio_mmio *t)
{
	uint32_t old = __atomic_fetch_or(&t->s.status,
					 VIRTIO_STATUS_NEEDS_RESET,
					 __ATOMIC_ACQ_REL);

	/* A device that already asked, or one the driver has not started,
	 * raises nothing more. */
	if (!(old & VIRTIO_STATUS_NEEDS_RESET) &&
	    (old & VIRTIO_STATUS_DRIVER_OK))
		interrupt(t, VIRTIO_INT_CONFIG);
}

/* Back to the state after power-on: the device stops first. */
static void reset(struct virtio_mmio *t)
{
	if (atomic_get(&t->s.status) & VIRTIO_STATUS_DRIVER_OK)
		t->ops->reset(t->dev);
	memset(t->q, 0, sizeof(t->q));
	t->s.status = 0;
	t->s.device_features_sel = t->s.driver_features_sel = 0;
	t->s.driver_features = 0;
	t->s.queue_sel = 0;
	t->s.interrupt_status = 0;
}

static uint64_t offered(const struct virtio_mmio *t)
{
	return t->ops->features | VIRTIO_F_VERSION_1;
}

static int activate(struct virtio_mmio *t)
{
	for (unsigned int i = 0; i < t->ops->queues; i++) {
		if (!t->q[i].ready)
			continue;
		if (virtq__activate(&t->q[i], t->mem) < 0)
			return -EINVAL;
	}
	return t->ops->activate(t->dev, t->s.driver_features);
}

/* A write of the status register: bits only accumulate, FEATURES_OK only
 * for features the device offered (VERSION_1 among them), DRIVER_OK
 * starts the device; 0 resets it. */
static void write_status(struct virtio_mmio *t, uint32_t v)
{
	uint32_t old = atomic_get(&t->s.status);

	if (v == 0) {
		reset(t);
		return;
	}
	if ((v & old) != old)
		return; /* clearing a bit without a reset: ignored */
	if ((v & VIRTIO_STATUS_FEATURES_OK) &&
	    !(old & VIRTIO_STATUS_FEATURES_OK) &&
	    ((t->s.driver_features & ~offered(t)) ||
	     !(t->s.driver_features & VIRTIO_F_VERSION_1)))
		v &= ~VIRTIO_STATUS_FEATURES_OK; /* the driver reads it back */
	if ((v & VIRTIO_STATUS_DRIVER_OK) && !(old & VIRTIO_STATUS_DRIVER_OK)) {
		if (!(v & VIRTIO_STATUS_FEATURES_OK)) {
			v &= ~VIRTIO_STATUS_DRIVER_OK;
		} else if (activate(t) < 0) {
			fprintf(stderr, "coldstart: %s: %s; the device needs a "
				"reset\n", t->ops->name, err__last());
			v = (v & ~VIRTIO_STATUS_DRIVER_OK) |
			    VIRTIO_STATUS_NEEDS_RESET;
		}
	}
	__atomic_store_n(&t->s.status, v, __ATOMIC_RELEASE);
}

static struct virtq *selected(struct virtio_mmio *t)
{
	return t->s.queue_sel < t->ops->queues ? &t->q[t->s.queue_sel] : NULL;
}

static uint32_t read_reg(struct virtio_mmio *t, uint64_t off)
{
	struct virtq *q = selected(t);

	switch (off) {
	case VIRTIO_MMIO_MAGIC:
		return VIRTIO_MMIO_MAGIC_VALUE;
	case VIRTIO_MMIO_VERSION:
		return 2;
	case VIRTIO_MMIO_DEVICE_ID:
		return t->ops->device_id;
	case VIRTIO_MMIO_VENDOR_ID:
		return 0;
	case VIRTIO_MMIO_DEVICE_FEATURES:
		return t->s.device_features_sel < 2 ?
			       (uint32_t)(offered(t) >>
					  (32 * t->s.device_features_sel)) :
			       0;
	case VIRTIO_MMIO_QUEUE_NUM_MAX:
		return q ? t->ops->queue_max : 0;
	case VIRTIO_MMIO_QUEUE_READY:
		return q ? q->ready : 0;
	case VIRTIO_MMIO_INTERRUPT_STATUS:
		return atomic_get(&t->s.interrupt_status);
	case VIRTIO_MMIO_STATUS:
		return atomic_get(&t->s.status);
	case VIRTIO_MMIO_CONFIG_GENERATION:
		return t->s.config_generation;
	default:
		return 0;
	}
}

/* Half of a queue address: the driver may set it only while the queue
 * is not ready. */
static void set_half(uint64_t *addr, bool high, uint32_t v)
{
	if (high)
		*addr = (*addr & 0xffffffffull) | ((uint64_t)v << 32);
	else
		*addr = (*addr & ~0xffffffffull) | v;
}

static void write_queue(struct virtio_mmio *t, uint64_t off, uint32_t v)
{
	struct virtq *q = selected(t);

	if (!q || q->ready)
		return;
	switch (off) {
	case VIRTIO_MMIO_QUEUE_NUM:
		if (v <= t->ops->queue_max)
			q->size = (uint16_t)v;
		break;
	case VIRTIO_MMIO_QUEUE_DESC_LOW:
	case VIRTIO_MMIO_QUEUE_DESC_HIGH:
		set_half(&q->desc_gpa, off == VIRTIO_MMIO_QUEUE_DESC_HIGH, v);
		break;
	case VIRTIO_MMIO_QUEUE_DRIVER_LOW:
	case VIRTIO_MMIO_QUEUE_DRIVER_HIGH:
		set_half(&q->avail_gpa, off == VIRTIO_MMIO_QUEUE_DRIVER_HIGH, v);
		break;
	case VIRTIO_MMIO_QUEUE_DEVICE_LOW:
	case VIRTIO_MMIO_QUEUE_DEVICE_HIGH:
		set_half(&q->used_gpa, off == VIRTIO_MMIO_QUEUE_DEVICE_HIGH, v);
		break;
	}
}

/* Returns the queue to notify, or -1. */
static int write_reg(struct virtio_mmio *t, uint64_t off, uint32_t v)
{
	uint32_t status = atomic_get(&t->s.status);
	struct virtq *q = selected(t);

	switch (off) {
	case VIRTIO_MMIO_DEVICE_FEATURES_SEL:
		t->s.device_features_sel = v;
		break;
	case VIRTIO_MMIO_DRIVER_FEATURES_SEL:
		t->s.driver_features_sel = v;
		break;
	case VIRTIO_MMIO_DRIVER_FEATURES:
		if (t->s.driver_features_sel < 2 &&
		    !(status & VIRTIO_STATUS_FEATURES_OK))
			set_half(&t->s.driver_features,
				 t->s.driver_features_sel == 1, v);
		break;
	case VIRTIO_MMIO_QUEUE_SEL:
		t->s.queue_sel = v;
		break;
	case VIRTIO_MMIO_QUEUE_READY:
		/* Checked at DRIVER_OK, when the rings must be in place. */
		if (q && !(status & VIRTIO_STATUS_DRIVER_OK))
			q->ready = v == 1 && q->size;
		break;
	case VIRTIO_MMIO_QUEUE_NOTIFY:
		if (v < t->ops->queues && (status & VIRTIO_STATUS_DRIVER_OK) &&
		    !(status & VIRTIO_STATUS_NEEDS_RESET) && t->q[v].ready)
			return (int)v;
		break;
	case VIRTIO_MMIO_INTERRUPT_ACK:
		__atomic_and_fetch(&t->s.interrupt_status, ~v,
				   __ATOMIC_ACQ_REL);
		break;
	case VIRTIO_MMIO_STATUS:
		write_status(t, v);
		break;
	default:
		write_queue(t, off, v);
	}
	return -1;
}

void virtio_mmio__access(struct virtio_mmio *t, uint64_t off, uint32_t len,
			 bool is_write, uint8_t *data)
{
	int notify = -1;
	uint32_t v;

	if (off >= VIRTIO_MMIO_CONFIG) {
		off -= VIRTIO_MMIO_CONFIG;
		/* The configuration space is the device's, read-only here. */
		if (is_write)
			return;
		memset(data, 0, len);
		if (off < t->ops->config_size &&
		    len <= t->ops->config_size - off)
			t->ops->config_read(t->dev, (uint32_t)off, data, len);
		return;
	}
	if (len != 4 || (off & 3)) {
		if (!is_write)
			memset(data, 0, len);
		return;
	}
	pthread_mutex_lock(&t->lock);
	if (is_write) {
		memcpy(&v, data, 4);
		notify = write_reg(t, off, v);
	} else {
		v = read_reg(t, off);
		memcpy(data, &v, 4);
	}
	pthread_mutex_unlock(&t->lock);
	if (notify >= 0)
		t->ops->notify(t->dev, (unsigned int)notify);
}

static int trap(struct vcpu *vcpu, const struct io_access *a, void *opaque)
{
	struct virtio_mmio *t = opaque;

	(void)vcpu;
	virtio_mmio__access(t, a->addr - t->base, a->len, a->is_write,
			    a->data);
	return IOTRAP_CONTINUE;
}

int virtio_mmio__register(struct virtio_mmio *t, struct iotrap_table *io)
{
	return iotrap__register(io, IO_SPACE_MMIO, t->base, VIRTIO_MMIO_SIZE,
				trap, t, t->ops->name);
}

void virtio_mmio__save(const struct virtio_mmio *t,
		       struct virtio_mmio_state *out)
{
	*out = t->s;
	out->status = atomic_get(&t->s.status);
	out->interrupt_status = atomic_get(&t->s.interrupt_status);
	for (unsigned int i = 0; i < VIRTIO_MMIO_MAX_QUEUES; i++) {
		const struct virtq *q = &t->q[i];

		out->q[i] = (struct virtio_mmio_queue_state){
			.desc = q->desc_gpa, .avail = q->avail_gpa,
			.used = q->used_gpa, .size = q->size,
			.ready = q->ready, .last_avail = q->last_avail,
			.used_idx = q->used_idx,
		};
	}
}

int virtio_mmio__restore(struct virtio_mmio *t,
			 const struct virtio_mmio_state *in)
{
	if (in->version != VIRTIO_MMIO_STATE_VERSION)
		return err__set(EINVAL, "%s: transport state version %u, this "
				"coldstart reads %u", t->ops->name, in->version,
				VIRTIO_MMIO_STATE_VERSION);
	t->s = *in;
	for (unsigned int i = 0; i < VIRTIO_MMIO_MAX_QUEUES; i++) {
		const struct virtio_mmio_queue_state *s = &in->q[i];
		struct virtq *q = &t->q[i];

		if (i >= t->ops->queues && (s->ready || s->size))
			return err__set(EINVAL, "%s: state for queue %u of %u",
					t->ops->name, i, t->ops->queues);
		*q = (struct virtq){ .desc_gpa = s->desc, .avail_gpa = s->avail,
				     .used_gpa = s->used, .size = s->size,
				     .ready = s->ready != 0,
				     .last_avail = s->last_avail,
				     .used_idx = s->used_idx };
		if (q->size > t->ops->queue_max)
			return err__set(EINVAL, "%s: queue %u of size %u, the "
					"device offers %u", t->ops->name, i,
					q->size, t->ops->queue_max);
	}
	/* A device that had asked for a reset waits for it still. */
	if (!(t->s.status & VIRTIO_STATUS_DRIVER_OK) ||
	    (t->s.status & VIRTIO_STATUS_NEEDS_RESET))
		return 0;
	return activate(t);
}

int virtio_mmio__cmdline(const struct virtio_mmio *t, char *buf, size_t size)
{
	return snprintf(buf, size, "virtio_mmio.device=%u@0x%llx:%u",
			VIRTIO_MMIO_SIZE, (unsigned long long)t->base, t->irq);
}
