/* A Linux machine's virtio-mmio devices (linux_x86.h): where each sits,
 * how the guest is told of them (its command line and the DSDT), and
 * adding and closing the drives and the vsock device. */
#include "linux_x86.h"

#include "err.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static const uint32_t irqs[LINUX_VIRTIO_SLOTS] = LINUX_VIRTIO_IRQS;

static uint64_t slot_gpa(unsigned int slot)
{
	return LINUX_VIRTIO_GPA + slot * LINUX_VIRTIO_STRIDE;
}

/* The slots in use, in order; -EINVAL for too many drives. */
static int slots(const struct linux_virtio *v, unsigned int *out)
{
	unsigned int n = 0;

	if (v->nr_drives > LINUX_MAX_DRIVES)
		return err__set(EINVAL, "%u drives: a Linux machine takes at "
				"most %d", v->nr_drives, LINUX_MAX_DRIVES);
	for (unsigned int i = 0; i < v->nr_drives; i++)
		out[n++] = i;
	if (v->vsock)
		out[n++] = LINUX_VSOCK_SLOT;
	return (int)n;
}

int linux__virtio_cmdline(const struct linux_virtio *v, char *buf,
			  size_t size)
{
	unsigned int s[LINUX_VIRTIO_SLOTS];
	int n = 0, count = slots(v, s);

	if (size)
		buf[0] = '\0';
	for (int i = 0; i < count; i++) {
		int k = snprintf(buf + n, (size_t)n < size ? size - (size_t)n : 0,
				 "%svirtio_mmio.device=%u@0x%llx:%u",
				 i ? " " : "", VIRTIO_MMIO_SIZE,
				 (unsigned long long)slot_gpa(s[i]), irqs[s[i]]);

		if (k < 0)
			return k;
		n += k;
	}
	return count < 0 ? count : n;
}

int linux__virtio_acpi(const struct linux_virtio *v, struct acpi_virtio *out)
{
	unsigned int s[LINUX_VIRTIO_SLOTS];
	int count = slots(v, s);

	for (int i = 0; i < count; i++)
		out[i] = (struct acpi_virtio){ .base = slot_gpa(s[i]),
					       .size = VIRTIO_MMIO_SIZE,
					       .irq = irqs[s[i]] };
	return count;
}

void linux_machine__close_virtio(struct linux_machine *m)
{
	while (m->nr_blk)
		vblk__close(&m->blk[--m->nr_blk]);
	if (m->vsock) {
		vsock__close(m->vsock);
		free(m->vsock);
		m->vsock = NULL;
	}
}

int linux_machine__add_drives(struct linux_machine *m, struct vm *vm,
			      const struct linux_drive *drives, unsigned int n)
{
	int ret = 0;

	if (n > LINUX_MAX_DRIVES)
		return err__set(EINVAL, "%u drives: a Linux machine takes at "
				"most %d", n, LINUX_MAX_DRIVES);
	for (unsigned int i = 0; i < n && ret == 0; i++) {
		struct vblk *b = &m->blk[i];

		ret = vblk__open(b, drives[i].path, drives[i].mode,
				 drives[i].own, &vm->mem, slot_gpa(i), irqs[i],
				 vblk__irq_edge, vm);
		if (ret < 0)
			break;
		m->nr_blk++;
		for (unsigned int l = 0; ret == 0 && l < drives[i].nr_lower; l++)
			ret = vblk__add_lower(b, drives[i].lower[l]);
		if (ret == 0)
			ret = vblk__attach(b, vm, i);
	}
	if (ret < 0)
		while (m->nr_blk)
			vblk__close(&m->blk[--m->nr_blk]);
	return ret;
}

int linux_machine__add_vsock(struct linux_machine *m, struct vm *vm,
			     uint64_t cid, const char *path)
{
	struct vsock *v = malloc(sizeof(*v));
	int ret;

	if (!v)
		return err__set(ENOMEM, "vsock: out of memory");
	ret = vsock__open(v, cid, path, &vm->mem, slot_gpa(LINUX_VSOCK_SLOT),
			  irqs[LINUX_VSOCK_SLOT], vblk__irq_edge, vm);
	if (ret < 0) {
		free(v);
		return ret;
	}
	ret = vsock__attach(v, vm);
	if (ret < 0) {
		vsock__close(v);
		free(v);
		return ret;
	}
	m->vsock = v;
	return 0;
}
