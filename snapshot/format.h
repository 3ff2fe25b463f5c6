/* The snapshot state file: a fixed header, length-prefixed sections and a
 * CRC-32 trailer. Building and parsing happen in memory, so both are pure
 * and fully checked: every length is validated before it is used.
 *
 *   header   struct snap_header (little-endian, 64 bytes)
 *   section* struct snap_section (16 bytes) + payload, padded to 8 bytes
 *   trailer  struct snap_trailer: CRC-32 of everything before it
 */
#ifndef COLDSTART_SNAPSHOT_FORMAT_H
#define COLDSTART_SNAPSHOT_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define SNAP_MAGIC "CSSNAPST"
#define SNAP_VERSION 1u
#define SNAP_TRAILER_MAGIC 0x444e4553u /* "SEND" */

struct snap_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size;
	uint64_t mem_size;
	uint32_t nr_vcpus;
	uint32_t flavour;     /* enum kvm_flavour of the saving host */
	char cpu_vendor[16];  /* CPUID leaf 0 vendor string, NUL-padded */
	uint64_t created_ns;  /* CLOCK_REALTIME */
	uint64_t reserved;
};
_Static_assert(sizeof(struct snap_header) == 64, "header layout");

struct snap_section {
	uint32_t type;
	uint32_t index; /* vCPU number for per-vCPU sections, else 0 */
	uint64_t len;   /* payload bytes, before padding */
};
_Static_assert(sizeof(struct snap_section) == 16, "section layout");

struct snap_trailer {
	uint32_t crc32;
	uint32_t magic;
};

enum snap_type {
	SNAP_VM_CONFIG = 1,
	SNAP_VM_CLOCK,
	SNAP_VM_PIC_MASTER, /* struct kvm_irqchip, chip 0 (in-kernel irqchip) */
	SNAP_VM_PIC_SLAVE,  /* chip 1 */
	SNAP_VM_IOAPIC,     /* chip 2 */
	SNAP_VM_PIT,        /* struct kvm_pit_state2 */
	SNAP_VM_GUEST,      /* what the guest was booted from (Linux) */
	SNAP_VM_VIRTIO,     /* its disks and vsock device (guest.h) */
	SNAP_VCPU_REGS = 16,
	SNAP_VCPU_SREGS,
	SNAP_VCPU_XSAVE,
	SNAP_VCPU_XCRS,
	SNAP_VCPU_MSRS,
	SNAP_VCPU_MP_STATE,
	SNAP_VCPU_EVENTS,
	SNAP_VCPU_DEBUGREGS,
	SNAP_VCPU_CPUID,
	SNAP_VCPU_TSC_KHZ,
	SNAP_VCPU_LAPIC, /* struct kvm_lapic_state (in-kernel irqchip) */
	SNAP_DEV_PROBE = 64,
	SNAP_DEVICE, /* a registered device: struct snap_device + its state */
	SNAP_MEMORY = 96,
	SNAP_MEMORY_DIFF, /* a diff's base and dirty pages (diff.h) */
};

/* Name of a section type for inspect ("vcpu.regs"), or NULL. */
const char *snap__type_name(uint32_t type);

/* A device section's payload starts with the device's name; its state
 * (device_ops.save) follows. Sections are numbered by registration order. */
#define SNAP_DEVICE_NAME_MAX 32
struct snap_device {
	char name[SNAP_DEVICE_NAME_MAX]; /* NUL-terminated, NUL-padded */
};

/* Splits a device section's payload into its name and state; -EINVAL
 * naming the problem when the name is missing, empty or unterminated. */
int snap__device(const void *payload, size_t len, const char **name,
		 const void **state, size_t *state_len);

/* A section's display name: the type's name, "dev.<name>" for devices,
 * "type-<n>" for types this build does not know. */
void snap__section_name(const struct snap_section *sec, const void *payload,
			char *out, size_t size);

struct snap_writer {
	uint8_t *buf;
	size_t len, cap;
	int err; /* first error, sticky */
};

/* Starts a file with `hdr` (magic, version and size are filled in). */
void snap__begin(struct snap_writer *w, const struct snap_header *hdr);
void snap__add(struct snap_writer *w, uint32_t type, uint32_t index,
	       const void *data, size_t len);
/* Adds device section `index` for device `name` (shorter than
 * SNAP_DEVICE_NAME_MAX; longer names fail snap__finish with -EINVAL). */
void snap__add_device(struct snap_writer *w, uint32_t index, const char *name,
		      const void *state, size_t len);
/* Appends the trailer. 0, or -ENOMEM (-EINVAL) if any step failed. The buffer is
 * w->buf (w->len bytes), owned by the caller: free(w->buf). */
int snap__finish(struct snap_writer *w);

struct snap_reader {
	const uint8_t *buf;
	size_t len; /* up to the trailer */
	struct snap_header hdr;
};

/* Validates a whole file image: size, magic, version, trailer, CRC and
 * every section's bounds. -EINVAL / -EPROTO with a message naming the
 * problem. The reader borrows `buf`. */
int snap__parse(struct snap_reader *r, const uint8_t *buf, size_t len);

/* The payload of section (type, index), or NULL; *len gets its size. */
const void *snap__find(const struct snap_reader *r, uint32_t type,
		       uint32_t index, size_t *len);

/* Iterates sections: start with *cursor = 0; returns 0 at the end. */
int snap__next(const struct snap_reader *r, size_t *cursor,
	       struct snap_section *sec, const void **payload);

#endif
