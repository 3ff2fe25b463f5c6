/* The device side of split virtqueues (virtq.h). The driver runs on other
 * CPUs: its indices are read with acquire order before the entries they
 * publish, and the used index is written with release order after the
 * entries it publishes. */
#include "virtq.h"

#include "err.h"
#include "mem.h"

#include <errno.h>
#include <string.h>

/* Offsets of the avail and used rings' fields, in uint16_t units. */
#define RING_FLAGS 0
#define RING_IDX 1
#define RING_ENTRIES 2

static int resolve(const struct guest_mem *m, uint64_t gpa, uint64_t len,
		   uint64_t align, const char *what, void **out)
{
	if (gpa & (align - 1))
		return err__set(EINVAL, "virtqueue: the %s at 0x%llx is not "
				"%llu-byte aligned", what,
				(unsigned long long)gpa,
				(unsigned long long)align);
	*out = mem__gpa_to_host(m, gpa, len);
	if (!*out)
		return err__set(EINVAL, "virtqueue: the %s at 0x%llx (%llu "
				"bytes) lies outside guest memory", what,
				(unsigned long long)gpa,
				(unsigned long long)len);
	return 0;
}

int virtq__activate(struct virtq *q, const struct guest_mem *m)
{
	uint64_t n = q->size;
	void *desc = NULL, *avail = NULL, *used = NULL;
	int ret;

	if (n == 0 || n > VIRTQ_MAX_SIZE || (n & (n - 1)))
		return err__set(EINVAL, "virtqueue: size %llu is not a power "
				"of two from 1 to %u", (unsigned long long)n,
				VIRTQ_MAX_SIZE);
	ret = resolve(m, q->desc_gpa, 16 * n, 16, "descriptor table", &desc);
	if (ret == 0)
		ret = resolve(m, q->avail_gpa, 6 + 2 * n, 2, "available ring",
			      &avail);
	if (ret == 0)
		ret = resolve(m, q->used_gpa, 6 + 8 * n, 4, "used ring", &used);
	if (ret < 0)
		return ret;
	q->desc = desc;
	q->avail = avail;
	q->used = used;
	q->mem = m;
	return 0;
}

static uint16_t load16(const uint16_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* The descriptor at `i`, copied, so the driver cannot change it between
 * our check and our use. */
static struct virtq_desc desc_at(const struct virtq *q, uint16_t i)
{
	struct virtq_desc d;

	memcpy(&d, &q->desc[i], sizeof(d));
	return d;
}

static int take_buf(const struct virtq *q, struct virtq_chain *c,
		    const struct virtq_desc *d)
{
	struct virtq_buf *b = &c->buf[c->n];
	bool write = d->flags & VIRTQ_DESC_F_WRITE;

	if (d->flags & VIRTQ_DESC_F_INDIRECT)
		return err__set(EINVAL, "virtqueue: chain %u has an indirect "
				"descriptor, which the device does not offer",
				c->head);
	if (!write && c->writable)
		return err__set(EINVAL, "virtqueue: chain %u has a readable "
				"buffer after a writable one", c->head);
	b->host = d->len ? mem__gpa_to_host(q->mem, d->addr, d->len) : NULL;
	if (d->len && !b->host)
		return err__set(EINVAL, "virtqueue: chain %u has a buffer at "
				"0x%llx (%u bytes) outside guest memory",
				c->head, (unsigned long long)d->addr, d->len);
	b->len = d->len;
	b->write = write;
	if (write) /* the device may fill it: a diff must keep it */
		mem__mark_written(q->mem, d->addr, d->len);
	if (write)
		c->writable += d->len;
	else
		c->readable += d->len;
	c->n++;
	return 0;
}

int virtq__pop(struct virtq *q, struct virtq_chain *c)
{
	uint16_t avail_idx = load16(&q->avail[RING_IDX]);
	uint16_t pending = (uint16_t)(avail_idx - q->last_avail);
	uint16_t i;
	int ret;

	if (pending == 0)
		return 0;
	if (pending > q->size)
		return err__set(EINVAL, "virtqueue: the driver made %u buffers "
				"available in a queue of %u", pending, q->size);
	i = q->avail[RING_ENTRIES + (q->last_avail & (q->size - 1))];
	if (i >= q->size)
		return err__set(EINVAL, "virtqueue: available entry %u names "
				"descriptor %u of %u", q->last_avail, i,
				q->size);
	c->head = i;
	c->n = 0;
	c->readable = c->writable = 0;
	for (;;) {
		struct virtq_desc d = desc_at(q, i);

		/* A chain longer than the table must revisit a descriptor. */
		if (c->n == q->size)
			return err__set(EINVAL, "virtqueue: chain %u loops",
					c->head);
		ret = take_buf(q, c, &d);
		if (ret < 0)
			return ret;
		if (!(d.flags & VIRTQ_DESC_F_NEXT))
			break;
		if (d.next >= q->size)
			return err__set(EINVAL, "virtqueue: chain %u links to "
					"descriptor %u of %u", c->head, d.next,
					q->size);
		i = d.next;
	}
	q->last_avail++;
	return 1;
}

void virtq__push(struct virtq *q, uint16_t head, uint32_t len)
{
	struct virtq_used_elem *ring =
		(struct virtq_used_elem *)&q->used[RING_ENTRIES];
	struct virtq_used_elem e = { .id = head, .len = len };

	memcpy(&ring[q->used_idx & (q->size - 1)], &e, sizeof(e));
	q->used_idx++;
	mem__mark_written(q->mem, q->used_gpa, 6 + 8 * (uint64_t)q->size);
	__atomic_store_n(&q->used[RING_IDX], q->used_idx, __ATOMIC_RELEASE);
}

uint16_t virtq__avail_idx(const struct virtq *q)
{
	return load16(&q->avail[RING_IDX]);
}

bool virtq__wants_interrupt(const struct virtq *q)
{
	/* The used index must be visible before the flag is read: a driver
	 * that clears the flag then checks the index sees it either way. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return !(load16(&q->avail[RING_FLAGS]) & VIRTQ_AVAIL_F_NO_INTERRUPT);
}

static uint64_t copy(const struct virtq_chain *c, bool write, uint64_t off,
		     uint8_t *data, uint64_t len)
{
	uint64_t done = 0;

	for (unsigned int k = 0; k < c->n && done < len; k++) {
		const struct virtq_buf *b = &c->buf[k];
		uint64_t n;

		if (b->write != write)
			continue;
		if (off >= b->len) {
			off -= b->len;
			continue;
		}
		n = b->len - off;
		if (n > len - done)
			n = len - done;
		if (write)
			memcpy(b->host + off, data + done, n);
		else
			memcpy(data + done, b->host + off, n);
		done += n;
		off = 0;
	}
	return done;
}

uint64_t virtq__read(const struct virtq_chain *c, uint64_t off, void *out,
		     uint64_t len)
{
	return copy(c, false, off, out, len);
}

uint64_t virtq__write(const struct virtq_chain *c, uint64_t off,
		      const void *in, uint64_t len)
{
	return copy(c, true, off, (uint8_t *)in, len);
}
