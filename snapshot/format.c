/* Building and validating snapshot state files. */
#include "format.h"

#include "err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define ALIGN8(x) (((x) + 7) & ~(size_t)7)

static const struct {
	uint32_t type;
	const char *name;
} type_names[] = {
	{ SNAP_VM_CONFIG, "vm.config" },
	{ SNAP_VM_CLOCK, "vm.clock" },
	{ SNAP_VM_PIC_MASTER, "vm.pic_master" },
	{ SNAP_VM_PIC_SLAVE, "vm.pic_slave" },
	{ SNAP_VM_IOAPIC, "vm.ioapic" },
	{ SNAP_VM_PIT, "vm.pit" },
	{ SNAP_VM_GUEST, "vm.guest" },
	{ SNAP_VM_VIRTIO, "vm.virtio" },
	{ SNAP_VCPU_REGS, "vcpu.regs" },
	{ SNAP_VCPU_SREGS, "vcpu.sregs" },
	{ SNAP_VCPU_XSAVE, "vcpu.xsave" },
	{ SNAP_VCPU_XCRS, "vcpu.xcrs" },
	{ SNAP_VCPU_MSRS, "vcpu.msrs" },
	{ SNAP_VCPU_MP_STATE, "vcpu.mp_state" },
	{ SNAP_VCPU_EVENTS, "vcpu.events" },
	{ SNAP_VCPU_DEBUGREGS, "vcpu.debugregs" },
	{ SNAP_VCPU_CPUID, "vcpu.cpuid" },
	{ SNAP_VCPU_TSC_KHZ, "vcpu.tsc_khz" },
	{ SNAP_VCPU_LAPIC, "vcpu.lapic" },
	{ SNAP_DEV_PROBE, "device.probe" },
	{ SNAP_DEVICE, "dev" },
	{ SNAP_MEMORY, "memory" },
	{ SNAP_MEMORY_DIFF, "memory.diff" },
};

const char *snap__type_name(uint32_t type)
{
	for (size_t i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
		if (type_names[i].type == type)
			return type_names[i].name;
	return NULL;
}

static void append(struct snap_writer *w, const void *data, size_t len)
{
	size_t need = ALIGN8(len);

	if (w->err)
		return;
	if (w->len + need > w->cap) {
		size_t cap = w->cap ? w->cap : 4096;
		uint8_t *grown;

		while (cap < w->len + need)
			cap *= 2;
		grown = realloc(w->buf, cap);
		if (!grown) {
			w->err = -ENOMEM;
			return;
		}
		w->buf = grown;
		w->cap = cap;
	}
	memcpy(w->buf + w->len, data, len);
	memset(w->buf + w->len + len, 0, need - len);
	w->len += need;
}

void snap__begin(struct snap_writer *w, const struct snap_header *hdr)
{
	struct snap_header h = *hdr;

	memset(w, 0, sizeof(*w));
	memcpy(h.magic, SNAP_MAGIC, sizeof(h.magic));
	h.version = SNAP_VERSION;
	h.header_size = sizeof(h);
	append(w, &h, sizeof(h));
}

void snap__add(struct snap_writer *w, uint32_t type, uint32_t index,
	       const void *data, size_t len)
{
	struct snap_section s = { .type = type, .index = index, .len = len };

	append(w, &s, sizeof(s));
	append(w, data, len);
}

void snap__add_device(struct snap_writer *w, uint32_t index, const char *name,
		      const void *state, size_t len)
{
	struct snap_device d = { { 0 } };
	struct snap_section s = { .type = SNAP_DEVICE, .index = index,
				  .len = sizeof(d) + len };

	if (!name[0] || strlen(name) >= sizeof(d.name)) {
		if (!w->err)
			w->err = -EINVAL;
		return;
	}
	memcpy(d.name, name, strlen(name));
	/* sizeof(d) is a multiple of 8, so the state follows unpadded. */
	append(w, &s, sizeof(s));
	append(w, &d, sizeof(d));
	append(w, state, len);
}

int snap__finish(struct snap_writer *w)
{
	struct snap_trailer t = { .magic = SNAP_TRAILER_MAGIC };

	if (!w->err)
		t.crc32 = (uint32_t)crc32(0, w->buf, (uInt)w->len);
	append(w, &t, sizeof(t));
	if (w->err == -EINVAL)
		return err__set(EINVAL, "a device name is empty or longer than "
				"%d bytes", SNAP_DEVICE_NAME_MAX - 1);
	if (w->err)
		return err__set(ENOMEM, "building the snapshot state");
	return 0;
}

int snap__device(const void *payload, size_t len, const char **name,
		 const void **state, size_t *state_len)
{
	const struct snap_device *d = payload;

	if (len < sizeof(*d))
		return err__set(EINVAL, "device section of %zu bytes is too "
				"short for a device name", len);
	if (!memchr(d->name, '\0', sizeof(d->name)) || !d->name[0])
		return err__set(EINVAL, "device section has an empty or "
				"unterminated device name");
	*name = d->name;
	*state = (const uint8_t *)payload + sizeof(*d);
	*state_len = len - sizeof(*d);
	return 0;
}

void snap__section_name(const struct snap_section *sec, const void *payload,
			char *out, size_t size)
{
	const char *name = snap__type_name(sec->type), *dev = NULL;
	const void *state;
	size_t len;

	if (sec->type == SNAP_DEVICE &&
	    snap__device(payload, (size_t)sec->len, &dev, &state, &len) == 0)
		snprintf(out, size, "dev.%s", dev);
	else if (name)
		snprintf(out, size, "%s", name);
	else
		snprintf(out, size, "type-%u", sec->type);
}

/* CPUID's vendor is 12 printable ASCII bytes; readers use the field as
 * a C string and print it. */
static int check_vendor(const char *v, size_t size)
{
	size_t i = 0;

	while (i < size && v[i] >= 0x20 && v[i] < 0x7f)
		i++;
	if (i == size || v[i] != '\0')
		return err__set(EINVAL, "snapshot header's CPU vendor is not "
				"a NUL-terminated ASCII string");
	return 0;
}

static int check_header(struct snap_reader *r, const uint8_t *buf,
			size_t len)
{
	if (len < sizeof(r->hdr) + sizeof(struct snap_trailer))
		return err__set(EINVAL, "state file is truncated (%zu bytes)",
				len);
	memcpy(&r->hdr, buf, sizeof(r->hdr));
	if (memcmp(r->hdr.magic, SNAP_MAGIC, sizeof(r->hdr.magic)))
		return err__set(EINVAL, "not a coldstart snapshot (bad magic)");
	if (r->hdr.version != SNAP_VERSION)
		return err__set(EPROTO, "snapshot format version %u, this "
				"coldstart reads version %u", r->hdr.version,
				SNAP_VERSION);
	if (r->hdr.header_size != sizeof(r->hdr))
		return err__set(EINVAL, "snapshot header size %u, expected %zu",
				r->hdr.header_size, sizeof(r->hdr));
	return check_vendor(r->hdr.cpu_vendor, sizeof(r->hdr.cpu_vendor));
}

static int check_trailer(const uint8_t *buf, size_t len)
{
	struct snap_trailer t;
	uint32_t crc;

	memcpy(&t, buf + len - sizeof(t), sizeof(t));
	if (t.magic != SNAP_TRAILER_MAGIC)
		return err__set(EINVAL, "state file is truncated or has "
				"trailing data (no end marker)");
	crc = (uint32_t)crc32(0, buf, (uInt)(len - sizeof(t)));
	if (crc != t.crc32)
		return err__set(EINVAL, "state file checksum mismatch (stored "
				"0x%08x, computed 0x%08x): the file is corrupt",
				t.crc32, crc);
	return 0;
}

int snap__next(const struct snap_reader *r, size_t *cursor,
	       struct snap_section *sec, const void **payload)
{
	size_t at = *cursor ? *cursor : sizeof(r->hdr);

	if (at >= r->len)
		return 0;
	memcpy(sec, r->buf + at, sizeof(*sec));
	*payload = r->buf + at + sizeof(*sec);
	*cursor = at + sizeof(*sec) + ALIGN8(sec->len);
	return 1;
}

static const char *type_or_unknown(uint32_t type)
{
	const char *name = snap__type_name(type);

	return name ? name : "(unknown)";
}

/* Every section must lie inside the file, back to back. */
static int check_sections(const struct snap_reader *r)
{
	size_t at = sizeof(r->hdr);

	while (at < r->len) {
		struct snap_section s;

		if (r->len - at < sizeof(s))
			return err__set(EINVAL, "section header at offset %zu "
					"is cut off", at);
		memcpy(&s, r->buf + at, sizeof(s));
		at += sizeof(s);
		if (s.len > r->len - at || ALIGN8(s.len) > r->len - at)
			return err__set(EINVAL, "section %s at offset %zu "
					"claims %llu bytes, past the end",
					type_or_unknown(s.type),
					at - sizeof(s),
					(unsigned long long)s.len);
		at += ALIGN8(s.len);
	}
	return 0;
}

int snap__parse(struct snap_reader *r, const uint8_t *buf, size_t len)
{
	int ret = check_header(r, buf, len);

	if (ret == 0)
		ret = check_trailer(buf, len);
	if (ret < 0)
		return ret;
	r->buf = buf;
	r->len = len - sizeof(struct snap_trailer);
	return check_sections(r);
}

const void *snap__find(const struct snap_reader *r, uint32_t type,
		       uint32_t index, size_t *len)
{
	struct snap_section s;
	const void *payload;
	size_t cursor = 0;

	while (snap__next(r, &cursor, &s, &payload))
		if (s.type == type && s.index == index) {
			*len = (size_t)s.len;
			return payload;
		}
	return NULL;
}
