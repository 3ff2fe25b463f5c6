/* Unit tests for the ACPI table builder (vmm/acpi_x86.c), read back from
 * the RSDP the way a guest's ACPI code does, with the spec's offsets
 * spelled out here. */
#include "acpi_x86.h"
#include "err.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define GPA 0xe0000u
#define BUF 0x20000u

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* The table at guest address `gpa`, checked: inside the buffer, its
 * signature, its checksum. */
static const uint8_t *table(const uint8_t *buf, uint64_t gpa, const char *sig)
{
	const uint8_t *t;

	assert_true(gpa >= GPA && gpa + 36 <= GPA + BUF);
	t = buf + (gpa - GPA);
	assert_memory_equal(t, sig, 4);
	assert_true(gpa + get32(t + 4) <= GPA + BUF);
	assert_int_equal(acpi__sum(t, get32(t + 4)), 0);
	return t;
}

struct madt_counts {
	unsigned int cpus, ioapics, overrides, nmis;
	uint8_t ioapic_id, sci_source;
	uint16_t sci_flags;
};

static struct madt_counts walk_madt(const uint8_t *m)
{
	struct madt_counts c = { 0 };
	uint32_t len = get32(m + 4);

	assert_int_equal(get32(m + 36), 0xfee00000u);
	for (uint32_t off = 44; off < len; off += m[off + 1]) {
		const uint8_t *e = m + off;

		assert_true(e[1] >= 2 && off + e[1] <= len);
		switch (e[0]) {
		case 0:
			assert_int_equal(e[3], c.cpus); /* APIC ID */
			assert_int_equal(get32(e + 4) & 1, 1);
			c.cpus++;
			break;
		case 1:
			c.ioapics++;
			c.ioapic_id = e[2];
			assert_int_equal(get32(e + 4), 0xfec00000u);
			assert_int_equal(get32(e + 8), 0); /* GSI base */
			break;
		case 2:
			c.overrides++;
			c.sci_source = e[3];
			assert_int_equal(get32(e + 4), e[3]); /* GSI = IRQ */
			memcpy(&c.sci_flags, e + 8, 2);
			break;
		case 4:
			c.nmis++;
			assert_int_equal(e[2], 0xff); /* all processors */
			assert_int_equal(e[5], 1);    /* LINT1 */
			break;
		default:
			fail_msg("MADT entry of type %u", e[0]);
		}
	}
	return c;
}

static void tables_read_back(void **state)
{
	uint8_t *buf = malloc(BUF);

	(void)state;
	for (unsigned int n = 1; n <= 64; n *= 4) {
		const uint8_t *xsdt, *fadt, *madt, *dsdt;
		struct madt_counts c;
		uint16_t sci;

		memset(buf, 0x5a, BUF);
		assert_int_equal(acpi__build(buf, BUF, GPA, n, NULL, 0), 0);
		assert_memory_equal(buf, "RSD PTR ", 8);
		assert_int_equal(acpi__sum(buf, 20), 0);
		assert_int_equal(acpi__sum(buf, 36), 0);
		assert_int_equal(buf[15], 2); /* revision */
		xsdt = table(buf, get64(buf + 24), "XSDT");
		assert_int_equal(get32(xsdt + 4), 36 + 2 * 8);
		fadt = table(buf, get64(xsdt + 36), "FACP");
		madt = table(buf, get64(xsdt + 44), "APIC");
		assert_int_equal(get32(fadt + 4), 276);
		dsdt = table(buf, get64(fadt + 140), "DSDT");
		assert_int_equal(get32(fadt + 40), get64(fadt + 140));
		/* \_S5 is what poweroff needs. */
		assert_non_null(memmem(dsdt + 36, get32(dsdt + 4) - 36, "_S5_",
				       4));
		memcpy(&sci, fadt + 46, 2);
		assert_int_equal(sci, ACPI_SCI_IRQ);
		assert_int_equal(get32(fadt + 56), ACPI_PM1_EVT_PORT);
		assert_int_equal(get32(fadt + 64), ACPI_PM1_CNT_PORT);
		assert_int_equal(get32(fadt + 112) & (1u << 20), 0); /* not
								       * reduced */
		assert_true(fadt[109] & 2); /* an 8042 exists */
		c = walk_madt(madt);
		assert_int_equal(c.cpus, n);
		assert_int_equal(c.ioapics, 1);
		assert_true(c.ioapic_id >= n);
		assert_int_equal(c.overrides, 1);
		assert_int_equal(c.sci_source, ACPI_SCI_IRQ);
		assert_int_equal(c.sci_flags, 0x000d); /* level, active high */
		assert_int_equal(c.nmis, 1);
		assert_true(acpi__size(n, NULL, 0) <= BUF);
	}
	free(buf);
}

static void rejects(void **state)
{
	uint8_t *buf = malloc(BUF);

	(void)state;
	assert_int_equal(acpi__build(buf, BUF, GPA, 0, NULL, 0), -EINVAL);
	assert_int_equal(acpi__build(buf, BUF, GPA, ACPI_MAX_CPUS + 1, NULL,
				     0),
			 -EINVAL);
	assert_int_equal(acpi__build(buf, BUF, GPA + 8, 1, NULL, 0), -EINVAL);
	assert_int_equal(acpi__build(buf, acpi__size(4, NULL, 0) - 1, GPA, 4,
				     NULL, 0), -ENOSPC);
	assert_non_null(strstr(err__last(), "need"));
	assert_int_equal(acpi__build(buf, acpi__size(4, NULL, 0), GPA, 4, NULL,
				     0), 0);
	assert_int_equal(acpi__build(buf, BUF, GPA, ACPI_MAX_CPUS, NULL, 0), 0);
	free(buf);
}

/* The DSDT's own disassembly by ACPICA's iasl (Debian's acpica-tools),
 * into `dsl` (NUL-terminated); fails the test when iasl cannot parse
 * the table. */
static void disassemble(const uint8_t *dsdt, char *dsl, size_t size)
{
	char dir[] = "/tmp/coldstart-dsdt-XXXXXX", cmd[256], path[128];
	FILE *f;
	size_t n;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/dsdt.dat", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(dsdt, 1, get32(dsdt + 4), f), get32(dsdt + 4));
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cd %s && iasl -d dsdt.dat >iasl.log 2>&1",
		 dir);
	if (system(cmd) != 0)
		fail_msg("iasl -d failed (is acpica-tools installed?); see "
			 "%s/iasl.log", dir);
	snprintf(path, sizeof(path), "%s/dsdt.dsl", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(dsl, 1, size - 1, f);
	dsl[n] = '\0';
	fclose(f);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void expect_dsl(const char *dsl, const char *what)
{
	if (!strstr(dsl, what))
		fail_msg("the DSDT's disassembly lacks '%s':\n%s", what, dsl);
}

/* Virtio devices in the DSDT: what Linux's virtio_mmio binds to on ACPI
 * (_HID LNRO0005, the window, the edge-triggered interrupt), read back
 * by ACPICA's disassembler, and \_S5 still there. */
static void dsdt_names_virtio_devices(void **state)
{
	static const struct acpi_virtio v[3] = {
		{ 0xd0000000, 0x200, 5 },
		{ 0xd0001000, 0x200, 6 },
		{ 0xd0002000, 0x200, 10 },
	};
	static char dsl[65536];
	uint8_t *buf = malloc(BUF);
	const uint8_t *dsdt;

	(void)state;
	assert_int_equal(acpi__build(buf, BUF, GPA, 2, v, 3), 0);
	assert_true(acpi__size(2, v, 3) > acpi__size(2, NULL, 0));
	dsdt = table(buf, get64(table(buf, get64(table(buf, get64(buf + 24),
							 "XSDT") + 36),
				      "FACP") + 140),
		     "DSDT");
	disassemble(dsdt, dsl, sizeof(dsl));
	expect_dsl(dsl, "Name (_S5, Package (0x04)");
	expect_dsl(dsl, "Scope (\\_SB)");
	expect_dsl(dsl, "Device (VIO0)");
	expect_dsl(dsl, "Device (VIO2)");
	expect_dsl(dsl, "Name (_HID, \"LNRO0005\")");
	expect_dsl(dsl, "Name (_UID, 0x02)");
	expect_dsl(dsl, "Memory32Fixed (ReadWrite,\n"
			"                    0xD0001000,");
	expect_dsl(dsl, "0x00000200,");
	expect_dsl(dsl, "Interrupt (ResourceConsumer, Edge, ActiveHigh, "
			"Exclusive, ,, )\n                {\n"
			"                    0x0000000A,");
	assert_int_equal(acpi__build(buf, BUF, GPA, 2, v, ACPI_MAX_VIRTIO + 1),
			 -EINVAL);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tables_read_back),
		cmocka_unit_test(dsdt_names_virtio_devices),
		cmocka_unit_test(rejects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
