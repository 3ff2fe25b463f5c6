/* What `image build` puts in a guest's initramfs for a rootfs guest and
 * coldstart-init looks for there, written once so the two never
 * disagree: the agent's path, the modules' directory, and the modules the
 * init loads before mounting its disk, in dependency order, as paths
 * under the kernel package's lib/modules/RELEASE/ (packed, and loaded,
 * under their base names). Paths are relative to the initramfs's root. */
#ifndef COLDSTART_GUEST_INITRAMFS_H
#define COLDSTART_GUEST_INITRAMFS_H

#define GUEST_AGENT_FILE "bin/coldstart-agent"
#define GUEST_MODULES_DIR "lib/modules/coldstart"

static const char *const guest_modules[] = {
	"kernel/drivers/virtio/virtio_ring.ko",
	"kernel/drivers/virtio/virtio.ko",
	"kernel/drivers/virtio/virtio_mmio.ko",
	"kernel/drivers/block/virtio_blk.ko",
	"kernel/net/vmw_vsock/vsock.ko",
	"kernel/net/vmw_vsock/vmw_vsock_virtio_transport_common.ko",
	"kernel/net/vmw_vsock/vmw_vsock_virtio_transport.ko",
};

#endif
