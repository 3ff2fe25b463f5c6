/* MP floating pointer and configuration table (MP spec 1.4, chapter 4). */
#include "mptable_x86.h"

#include "err.h"

#include <string.h>

#define MP_SPEC_REV 4 /* 1.4 */
#define LAPIC_VERSION 0x14
#define IOAPIC_VERSION 0x11
#define CPU_ENABLED 0x01
#define CPU_BSP 0x02
#define CPU_SIGNATURE 0x600 /* family 6: informational only */
#define CPU_FEATURES 0x201  /* FPU, APIC */

enum mp_entry_type {
	MP_PROCESSOR = 0, MP_BUS = 1, MP_IOAPIC = 2, MP_IOINT = 3,
	MP_LOCALINT = 4,
};

enum mp_int_type { MP_INT = 0, MP_NMI = 1, MP_EXTINT = 3 };

struct mp_floating {
	char signature[4]; /* "_MP_" */
	uint32_t config_gpa;
	uint8_t length;    /* in 16-byte units */
	uint8_t spec_rev;
	uint8_t checksum;
	uint8_t feature[5]; /* feature[0] 0: a configuration table exists */
} __attribute__((packed));

struct mp_config {
	char signature[4]; /* "PCMP" */
	uint16_t length;   /* base table, header included */
	uint8_t spec_rev;
	uint8_t checksum;
	char oem[8];
	char product[12];
	uint32_t oem_table;
	uint16_t oem_table_size;
	uint16_t entries;
	uint32_t lapic_addr;
	uint16_t ext_length;
	uint8_t ext_checksum;
	uint8_t reserved;
} __attribute__((packed));

struct mp_processor {
	uint8_t type, apic_id, apic_version, flags;
	uint32_t signature, features;
	uint32_t reserved[2];
} __attribute__((packed));

struct mp_bus {
	uint8_t type, bus_id;
	char bus_type[6];
} __attribute__((packed));

struct mp_ioapic {
	uint8_t type, apic_id, version, flags;
	uint32_t addr;
} __attribute__((packed));

/* I/O and local interrupt assignments share one layout. */
struct mp_interrupt {
	uint8_t type, int_type;
	uint16_t flags;    /* 0: polarity and trigger conform to the bus */
	uint8_t src_bus, src_irq, dst_apic, dst_pin;
} __attribute__((packed));

_Static_assert(sizeof(struct mp_floating) == 16, "MP spec 4.1");
_Static_assert(sizeof(struct mp_config) == 44, "MP spec 4.2");
_Static_assert(sizeof(struct mp_processor) == 20, "MP spec 4.3.1");
_Static_assert(sizeof(struct mp_bus) == 8, "MP spec 4.3.2");
_Static_assert(sizeof(struct mp_ioapic) == 8, "MP spec 4.3.3");
_Static_assert(sizeof(struct mp_interrupt) == 8, "MP spec 4.3.4");

#define ISA_BUS_ID 0
#define ALL_LAPICS 0xff

size_t mptable__size(unsigned int nr_cpus)
{
	return sizeof(struct mp_floating) + sizeof(struct mp_config) +
	       nr_cpus * sizeof(struct mp_processor) + sizeof(struct mp_bus) +
	       sizeof(struct mp_ioapic) +
	       (MPTABLE_ISA_IRQS + 2) * sizeof(struct mp_interrupt);
}

uint8_t mptable__sum(const uint8_t *p, size_t len)
{
	uint8_t sum = 0;

	while (len--)
		sum = (uint8_t)(sum + *p++);
	return sum;
}

/* Appends one entry; `at` advances past it. */
static void put(uint8_t **at, const void *entry, size_t size)
{
	memcpy(*at, entry, size);
	*at += size;
}

static void put_cpus(uint8_t **at, unsigned int nr_cpus)
{
	for (unsigned int i = 0; i < nr_cpus; i++) {
		struct mp_processor cpu = {
			.type = MP_PROCESSOR, .apic_id = (uint8_t)i,
			.apic_version = LAPIC_VERSION,
			.flags = CPU_ENABLED | (i == 0 ? CPU_BSP : 0),
			.signature = CPU_SIGNATURE, .features = CPU_FEATURES,
		};

		put(at, &cpu, sizeof(cpu));
	}
}

static void put_interrupts(uint8_t **at, uint8_t ioapic_id)
{
	struct mp_interrupt irq = { .type = MP_IOINT, .int_type = MP_INT,
				    .src_bus = ISA_BUS_ID,
				    .dst_apic = ioapic_id };
	struct mp_interrupt lint = { .type = MP_LOCALINT,
				     .src_bus = ISA_BUS_ID,
				     .dst_apic = ALL_LAPICS };

	for (uint8_t i = 0; i < MPTABLE_ISA_IRQS; i++) {
		irq.src_irq = irq.dst_pin = i;
		put(at, &irq, sizeof(irq));
	}
	lint.int_type = MP_EXTINT;
	lint.dst_pin = 0;
	put(at, &lint, sizeof(lint));
	lint.int_type = MP_NMI;
	lint.dst_pin = 1;
	put(at, &lint, sizeof(lint));
}

int mptable__build(uint8_t *buf, size_t len, uint32_t gpa,
		   unsigned int nr_cpus)
{
	struct mp_floating fp = { .signature = "_MP_", .length = 1,
				  .spec_rev = MP_SPEC_REV };
	struct mp_config cfg = { .signature = "PCMP", .spec_rev = MP_SPEC_REV,
				 .oem = "COLDSTRT", .product = "MICROVM",
				 .lapic_addr = MPTABLE_LAPIC_ADDR };
	struct mp_bus bus = { .type = MP_BUS, .bus_id = ISA_BUS_ID,
			      .bus_type = "ISA   " };
	struct mp_ioapic ioapic = { .type = MP_IOAPIC,
				    .apic_id = (uint8_t)nr_cpus,
				    .version = IOAPIC_VERSION, .flags = 1,
				    .addr = MPTABLE_IOAPIC_ADDR };
	uint8_t *at, *table;

	if (nr_cpus == 0 || nr_cpus > MPTABLE_MAX_CPUS)
		return err__set(EINVAL, "the MP table describes 1 to %u CPUs, "
				"not %u", MPTABLE_MAX_CPUS, nr_cpus);
	if (len < mptable__size(nr_cpus))
		return err__set(ENOSPC, "the MP table for %u CPUs needs %zu "
				"bytes, %zu available", nr_cpus,
				mptable__size(nr_cpus), len);
	memset(buf, 0, mptable__size(nr_cpus));
	table = buf + sizeof(fp);
	at = table + sizeof(cfg);
	put_cpus(&at, nr_cpus);
	put(&at, &bus, sizeof(bus));
	put(&at, &ioapic, sizeof(ioapic));
	put_interrupts(&at, ioapic.apic_id);
	cfg.length = (uint16_t)(at - table);
	/* CPUs, bus, IOAPIC, ISA IRQs, LINT0 and LINT1. */
	cfg.entries = (uint16_t)(nr_cpus + 2 + MPTABLE_ISA_IRQS + 2);
	memcpy(table, &cfg, sizeof(cfg));
	table[offsetof(struct mp_config, checksum)] =
		(uint8_t)-mptable__sum(table, cfg.length);
	fp.config_gpa = gpa + (uint32_t)sizeof(fp);
	memcpy(buf, &fp, sizeof(fp));
	buf[offsetof(struct mp_floating, checksum)] =
		(uint8_t)-mptable__sum(buf, sizeof(fp));
	return 0;
}
