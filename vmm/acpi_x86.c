/* RSDP, XSDT, FADT, DSDT and MADT (ACPI 6.x layouts, chapter 5.2), and
 * the DSDT's AML. */
#include "acpi_x86.h"

#include "err.h"
#include "mptable_x86.h"

#include <string.h>

struct acpi_header {
	char signature[4];
	uint32_t length;
	uint8_t revision;
	uint8_t checksum;
	char oem_id[6];
	char oem_table_id[8];
	uint32_t oem_revision;
	char creator_id[4];
	uint32_t creator_revision;
} __attribute__((packed));

struct acpi_rsdp {
	char signature[8]; /* "RSD PTR " */
	uint8_t checksum;  /* of the first 20 bytes */
	char oem_id[6];
	uint8_t revision;  /* 2: XSDT and the extended checksum exist */
	uint32_t rsdt;
	uint32_t length;
	uint64_t xsdt;
	uint8_t ext_checksum;
	uint8_t reserved[3];
} __attribute__((packed));

struct acpi_gas { /* generic address structure */
	uint8_t space, bit_width, bit_offset, access_size;
	uint64_t address;
} __attribute__((packed));

struct acpi_fadt {
	struct acpi_header h;
	uint32_t firmware_ctrl, dsdt;
	uint8_t reserved0, pm_profile;
	uint16_t sci_int;
	uint32_t smi_cmd;
	uint8_t acpi_enable, acpi_disable, s4bios_req, pstate_cnt;
	uint32_t pm1a_evt_blk, pm1b_evt_blk, pm1a_cnt_blk, pm1b_cnt_blk;
	uint32_t pm2_cnt_blk, pm_tmr_blk, gpe0_blk, gpe1_blk;
	uint8_t pm1_evt_len, pm1_cnt_len, pm2_cnt_len, pm_tmr_len;
	uint8_t gpe0_blk_len, gpe1_blk_len, gpe1_base, cst_cnt;
	uint16_t p_lvl2_lat, p_lvl3_lat, flush_size, flush_stride;
	uint8_t duty_offset, duty_width, day_alrm, mon_alrm, century;
	uint16_t iapc_boot_arch;
	uint8_t reserved1;
	uint32_t flags;
	struct acpi_gas reset_reg;
	uint8_t reset_value;
	uint16_t arm_boot_arch;
	uint8_t minor_version;
	uint64_t x_firmware_ctrl, x_dsdt;
	struct acpi_gas x_pm1a_evt_blk, x_pm1b_evt_blk, x_pm1a_cnt_blk;
	struct acpi_gas x_pm1b_cnt_blk, x_pm2_cnt_blk, x_pm_tmr_blk;
	struct acpi_gas x_gpe0_blk, x_gpe1_blk, sleep_control, sleep_status;
	uint64_t hypervisor_id;
} __attribute__((packed));

struct madt_lapic {
	uint8_t type, length, uid, apic_id;
	uint32_t flags;
} __attribute__((packed));

struct madt_ioapic {
	uint8_t type, length, id, reserved;
	uint32_t address, gsi_base;
} __attribute__((packed));

struct madt_override {
	uint8_t type, length, bus, source;
	uint32_t gsi;
	uint16_t flags;
} __attribute__((packed));

struct madt_lapic_nmi {
	uint8_t type, length, uid;
	uint16_t flags;
	uint8_t lint;
} __attribute__((packed));

_Static_assert(sizeof(struct acpi_header) == 36, "ACPI 5.2.6");
_Static_assert(sizeof(struct acpi_rsdp) == 36, "ACPI 5.2.5.3");
_Static_assert(sizeof(struct acpi_fadt) == 276, "ACPI 5.2.9, revision 6");
_Static_assert(offsetof(struct acpi_fadt, flags) == 112, "FADT flags");
_Static_assert(offsetof(struct acpi_fadt, x_dsdt) == 140, "FADT X_DSDT");
_Static_assert(sizeof(struct madt_lapic) == 8, "ACPI 5.2.12.2");
_Static_assert(sizeof(struct madt_ioapic) == 12, "ACPI 5.2.12.3");
_Static_assert(sizeof(struct madt_override) == 10, "ACPI 5.2.12.5");
_Static_assert(sizeof(struct madt_lapic_nmi) == 6, "ACPI 5.2.12.7");

enum { MADT_LAPIC = 0, MADT_IOAPIC = 1, MADT_OVERRIDE = 2,
       MADT_LAPIC_NMI = 4 };

#define FADT_REVISION 6
#define FADT_MINOR 4
#define FADT_WBINVD (1u << 0)
#define FADT_PWR_BUTTON (1u << 4) /* no fixed power button */
#define FADT_SLP_BUTTON (1u << 5) /* no fixed sleep button */
#define IAPC_8042 (1u << 1)
#define IAPC_VGA_ABSENT (1u << 2)
#define IAPC_MSI_ABSENT (1u << 3)
#define IAPC_ASPM_ABSENT (1u << 4)
#define RTC_CENTURY_INDEX 0x32
#define MADT_PCAT_COMPAT 1u
#define LAPIC_ENABLED 1u
#define ALL_PROCESSORS 0xff
/* SCI: level-triggered, active high (MPS INTI flags). */
#define SCI_FLAGS (1u | 3u << 2)
#define TABLE_ALIGN 16u

/* The DSDT's AML: Name (_S5, Package () { 5, 5, 0, 0 }), the sleep type
 * S5 writes to PM1 control, which the guest needs to power off. */
static const uint8_t dsdt_aml[] = {
	0x08, '_', 'S', '5', '_',       /* NameOp "_S5_" */
	0x12, 0x08, 0x04,               /* PackageOp, length 8, 4 items */
	0x0a, ACPI_S5_TYPE, 0x0a, ACPI_S5_TYPE, /* BytePrefix 5, twice */
	0x00, 0x00,                     /* ZeroOp, ZeroOp */
};

uint8_t acpi__sum(const uint8_t *p, size_t len)
{
	uint8_t sum = 0;

	while (len--)
		sum = (uint8_t)(sum + *p++);
	return sum;
}

static size_t align(size_t n)
{
	return (n + TABLE_ALIGN - 1) & ~(size_t)(TABLE_ALIGN - 1);
}

static size_t madt_size(unsigned int nr_cpus)
{
	return sizeof(struct acpi_header) + 8 +
	       nr_cpus * sizeof(struct madt_lapic) +
	       sizeof(struct madt_ioapic) + sizeof(struct madt_override) +
	       sizeof(struct madt_lapic_nmi);
}

/* Offsets of the tables inside the buffer. */
struct layout {
	size_t xsdt, fadt, dsdt, madt, end;
};

/* AML's package length: `body` bytes follow it; the length counts its
 * own bytes too (ACPI 6.x, 20.2.4). Returns the bytes it takes. */
static size_t pkg_length(uint8_t *out, size_t body)
{
	size_t n = body + 1 <= 63 ? 1 : body + 2 < 4096 ? 2 : 3;
	size_t len = body + n;

	if (!out)
		return n;
	if (n == 1) {
		out[0] = (uint8_t)len;
		return 1;
	}
	out[0] = (uint8_t)((n - 1) << 6 | (len & 0xf));
	out[1] = (uint8_t)(len >> 4);
	if (n == 3)
		out[2] = (uint8_t)(len >> 12);
	return n;
}

static size_t put(uint8_t *out, size_t at, const void *p, size_t n)
{
	if (out)
		memcpy(out + at, p, n);
	return at + n;
}

/* Device (VIOn) { _HID "LNRO0005", _UID n, _CRS: its register window
 * (Memory32Fixed) and interrupt (Interrupt, edge, active high) }: how
 * Linux's virtio_mmio driver finds a device on ACPI. Returns the bytes;
 * writes them unless out is NULL. */
static size_t aml_virtio(uint8_t *out, const struct acpi_virtio *v,
			 unsigned int i)
{
	uint8_t crs[23] = {
		0x86, 0x09, 0x00, 0x01, /* Memory32Fixed, read-write */
		0, 0, 0, 0, 0, 0, 0, 0, /* base, length */
		0x89, 0x06, 0x00, 0x03, 0x01, /* Interrupt: consumer, edge */
		0, 0, 0, 0,
		0x79, 0x00, /* EndTag */
	};
	uint8_t body[64], head[4];
	uint32_t base = (uint32_t)v->base;
	size_t b = 0, h;

	memcpy(crs + 4, &base, 4);
	memcpy(crs + 8, &v->size, 4);
	memcpy(crs + 17, &v->irq, 4);
	b = put(body, b, (const uint8_t[]){ 'V', 'I', 'O',
					     (uint8_t)('0' + i) }, 4);
	b = put(body, b, "\x08_HID\x0dLNRO0005", 15);
	b = put(body, b, (const uint8_t[]){ 0x08, '_', 'U', 'I', 'D', 0x0a,
					     (uint8_t)i }, 7);
	b = put(body, b, (const uint8_t[]){ 0x08, '_', 'C', 'R', 'S', 0x11,
					     2 + 1 + sizeof(crs), 0x0a,
					     sizeof(crs) }, 9);
	b = put(body, b, crs, sizeof(crs));
	head[0] = 0x5b; /* DeviceOp */
	head[1] = 0x82;
	h = 2 + pkg_length(head + 2, b);
	h = put(out, 0, head, h);
	return put(out, h, body, b);
}

/* The DSDT's AML: \_S5, then Scope (\_SB) with the virtio devices. */
static size_t dsdt_aml_build(uint8_t *out, const struct acpi_virtio *v,
			     unsigned int n)
{
	size_t at = put(out, 0, dsdt_aml, sizeof(dsdt_aml)), body = 5;
	uint8_t head[4] = { 0x10 }; /* ScopeOp */

	if (n == 0)
		return at;
	for (unsigned int i = 0; i < n; i++)
		body += aml_virtio(NULL, &v[i], i);
	at = put(out, at, head, 1 + pkg_length(head + 1, body));
	at = put(out, at, "\\_SB_", 5);
	for (unsigned int i = 0; i < n; i++)
		at += aml_virtio(out ? out + at : NULL, &v[i], i);
	return at;
}

static struct layout lay_out(unsigned int nr_cpus,
			     const struct acpi_virtio *v, unsigned int nr_v)
{
	struct layout l;

	l.xsdt = align(sizeof(struct acpi_rsdp));
	l.fadt = align(l.xsdt + sizeof(struct acpi_header) + 2 * 8);
	l.dsdt = align(l.fadt + sizeof(struct acpi_fadt));
	l.madt = align(l.dsdt + sizeof(struct acpi_header) +
		       dsdt_aml_build(NULL, v, nr_v));
	l.end = l.madt + madt_size(nr_cpus);
	return l;
}

size_t acpi__size(unsigned int nr_cpus, const struct acpi_virtio *virtio,
		  unsigned int nr_virtio)
{
	return lay_out(nr_cpus, virtio, nr_virtio).end;
}

static void header(struct acpi_header *h, const char *sig, size_t len,
		   uint8_t revision)
{
	memcpy(h->signature, sig, 4);
	h->length = (uint32_t)len;
	h->revision = revision;
	memcpy(h->oem_id, "CLDSTR", 6);
	memcpy(h->oem_table_id, "COLDSTRT", 8);
	h->oem_revision = 1;
	memcpy(h->creator_id, "CSVM", 4);
	h->creator_revision = 1;
}

/* Fills the checksum of the table at `p` (its header gives the length). */
static void seal(uint8_t *p)
{
	struct acpi_header *h = (struct acpi_header *)p;

	h->checksum = 0;
	h->checksum = (uint8_t)-acpi__sum(p, h->length);
}

static void put_fadt(uint8_t *p, uint64_t dsdt_gpa)
{
	struct acpi_fadt f = { 0 };

	header(&f.h, "FACP", sizeof(f), FADT_REVISION);
	f.minor_version = FADT_MINOR;
	f.dsdt = (uint32_t)dsdt_gpa;
	f.x_dsdt = dsdt_gpa;
	f.sci_int = ACPI_SCI_IRQ;
	f.pm1a_evt_blk = ACPI_PM1_EVT_PORT;
	f.pm1_evt_len = 4;
	f.pm1a_cnt_blk = ACPI_PM1_CNT_PORT;
	f.pm1_cnt_len = 2;
	f.century = RTC_CENTURY_INDEX;
	f.iapc_boot_arch = IAPC_8042 | IAPC_VGA_ABSENT | IAPC_MSI_ABSENT |
			   IAPC_ASPM_ABSENT;
	f.flags = FADT_WBINVD | FADT_PWR_BUTTON | FADT_SLP_BUTTON;
	memcpy(p, &f, sizeof(f));
	seal(p);
}

static void put_dsdt(uint8_t *p, const struct acpi_virtio *v, unsigned int n)
{
	struct acpi_header h = { 0 };

	header(&h, "DSDT", sizeof(h) + dsdt_aml_build(NULL, v, n), 2);
	memcpy(p, &h, sizeof(h));
	dsdt_aml_build(p + sizeof(h), v, n);
	seal(p);
}

static void put_madt(uint8_t *p, unsigned int nr_cpus)
{
	struct acpi_header h = { 0 };
	uint32_t lapic = MPTABLE_LAPIC_ADDR, flags = MADT_PCAT_COMPAT;
	struct madt_ioapic io = { MADT_IOAPIC, sizeof(io), (uint8_t)nr_cpus,
				  0, MPTABLE_IOAPIC_ADDR, 0 };
	struct madt_override sci = { MADT_OVERRIDE, sizeof(sci), 0,
				     ACPI_SCI_IRQ, ACPI_SCI_IRQ, SCI_FLAGS };
	struct madt_lapic_nmi nmi = { MADT_LAPIC_NMI, sizeof(nmi),
				      ALL_PROCESSORS, 0, 1 };
	uint8_t *at = p + sizeof(h);

	header(&h, "APIC", madt_size(nr_cpus), 5);
	memcpy(p, &h, sizeof(h));
	memcpy(at, &lapic, 4);
	memcpy(at + 4, &flags, 4);
	at += 8;
	for (unsigned int i = 0; i < nr_cpus; i++, at += 8) {
		struct madt_lapic l = { MADT_LAPIC, sizeof(l), (uint8_t)i,
					(uint8_t)i, LAPIC_ENABLED };

		memcpy(at, &l, sizeof(l));
	}
	memcpy(at, &io, sizeof(io));
	memcpy(at + sizeof(io), &sci, sizeof(sci));
	memcpy(at + sizeof(io) + sizeof(sci), &nmi, sizeof(nmi));
	seal(p);
}

static void put_rsdp_xsdt(uint8_t *buf, uint64_t gpa, const struct layout *l)
{
	struct acpi_rsdp r = { .signature = { 'R', 'S', 'D', ' ', 'P', 'T',
					      'R', ' ' },
			       .revision = 2, .length = sizeof(r),
			       .xsdt = gpa + l->xsdt };
	struct acpi_header h = { 0 };
	uint64_t entries[2] = { gpa + l->fadt, gpa + l->madt };

	memcpy(r.oem_id, "CLDSTR", 6);
	r.checksum = (uint8_t)-acpi__sum((const uint8_t *)&r, 20);
	r.ext_checksum = (uint8_t)-acpi__sum((const uint8_t *)&r, sizeof(r));
	memcpy(buf, &r, sizeof(r));
	header(&h, "XSDT", sizeof(h) + sizeof(entries), 1);
	memcpy(buf + l->xsdt, &h, sizeof(h));
	memcpy(buf + l->xsdt + sizeof(h), entries, sizeof(entries));
	seal(buf + l->xsdt);
}

int acpi__build(uint8_t *buf, size_t len, uint64_t gpa, unsigned int nr_cpus,
		const struct acpi_virtio *virtio, unsigned int nr_virtio)
{
	struct layout l;

	if (nr_cpus == 0 || nr_cpus > ACPI_MAX_CPUS)
		return err__set(EINVAL, "the MADT describes 1 to %u CPUs, not "
				"%u", ACPI_MAX_CPUS, nr_cpus);
	if (nr_virtio > ACPI_MAX_VIRTIO)
		return err__set(EINVAL, "the DSDT describes at most %u virtio "
				"devices, not %u", ACPI_MAX_VIRTIO, nr_virtio);
	for (unsigned int i = 0; i < nr_virtio; i++)
		if (virtio[i].base > UINT32_MAX - virtio[i].size)
			return err__set(EINVAL, "virtio device %u at 0x%llx: "
					"above 4 GiB", i,
					(unsigned long long)virtio[i].base);
	if (gpa % TABLE_ALIGN || gpa + len > UINT32_MAX)
		return err__set(EINVAL, "ACPI tables at 0x%llx: not 16-byte "
				"aligned or above 4 GiB",
				(unsigned long long)gpa);
	l = lay_out(nr_cpus, virtio, nr_virtio);
	if (len < l.end)
		return err__set(ENOSPC, "the ACPI tables for %u CPUs need %zu "
				"bytes, %zu available", nr_cpus, l.end, len);
	memset(buf, 0, l.end);
	put_fadt(buf + l.fadt, gpa + l.dsdt);
	put_dsdt(buf + l.dsdt, virtio, nr_virtio);
	put_madt(buf + l.madt, nr_cpus);
	put_rsdp_xsdt(buf, gpa, &l);
	return 0;
}
