/* KVM's fast paths for a virtio-mmio device (virtio_mmio.h): the driver's
 * QueueNotify writes signal the device's eventfd inside KVM
 * (KVM_IOEVENTFD) instead of exiting to a vCPU thread, and the device's
 * interrupts are eventfd writes KVM turns into an edge on the line
 * (KVM_IRQFD) instead of two KVM_IRQ_LINE ioctls. Each is taken only
 * where KVM offers it; the exit path stays for the rest. */
#include "virtio_mmio.h"

#include "err.h"
#include "kvm.h"
#include "vm.h"

#include <errno.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* COLDSTART_VIRTIO_EXITS=1 keeps the exit paths where KVM has the fast
 * ones, so both are tested on one host. */
static bool exits_forced(void)
{
	const char *v = getenv("COLDSTART_VIRTIO_EXITS");

	return v && strcmp(v, "0") != 0 && v[0];
}

static int notify_by_eventfd(struct virtio_mmio *t, struct vm *vm, int kick)
{
	struct kvm_ioeventfd io = {
		.addr = t->base + VIRTIO_MMIO_QUEUE_NOTIFY, .len = 4,
		.fd = kick,
	};

	if (KVM_IOCTL(vm->fd, KVM_IOEVENTFD, &io) < 0)
		return err__sys(errno, "%s: KVM_IOEVENTFD", t->ops->name);
	t->kvm_notify = true;
	return 0;
}

static int irq_by_eventfd(struct virtio_mmio *t, struct vm *vm)
{
	struct kvm_irqfd irqfd = { .gsi = t->irq };
	int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	if (fd < 0)
		return err__sys(errno, "%s: eventfd", t->ops->name);
	irqfd.fd = (uint32_t)fd;
	if (KVM_IOCTL(vm->fd, KVM_IRQFD, &irqfd) < 0) {
		int e = errno;

		close(fd);
		return err__sys(e, "%s: KVM_IRQFD", t->ops->name);
	}
	t->irq_fd = fd;
	return 0;
}

int virtio_mmio__kvm_paths(struct virtio_mmio *t, struct vm *vm, int kick)
{
	int ret = 0;

	if (exits_forced())
		return 0;
	if (kvm__check_cap(vm->kvm, KVM_CAP_IOEVENTFD) > 0)
		ret = notify_by_eventfd(t, vm, kick);
	if (ret == 0 && vm->irqchip && kvm__check_cap(vm->kvm, KVM_CAP_IRQFD) > 0)
		ret = irq_by_eventfd(t, vm);
	return ret;
}
