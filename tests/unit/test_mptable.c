/* Unit tests for the MP table builder (vmm/mptable_x86.c), read back the
 * way a guest's parser would: from the floating pointer, with the MP
 * spec's offsets spelled out here. */
#include "err.h"
#include "mptable_x86.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define GPA 0x9fc00u
#define BUF 8192u

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) | (uint32_t)get16(p + 2) << 16;
}

struct counts {
	unsigned int cpus, bsp, bus_isa, ioapics, ioints, lints;
	uint8_t ioapic_id, lint0_type, lint1_type;
	uint8_t irq_pin[16];
};

/* Walks the table from the floating pointer; fails on any bad field. */
static struct counts walk(const uint8_t *buf)
{
	const uint8_t *cfg;
	struct counts c;
	uint32_t off;
	uint16_t len, entries;

	memset(&c, 0, sizeof(c));
	memset(c.irq_pin, 0xff, sizeof(c.irq_pin));
	assert_memory_equal(buf, "_MP_", 4);
	assert_int_equal(buf[8], 1);  /* length in paragraphs */
	assert_int_equal(buf[9], 4);  /* spec 1.4 */
	assert_int_equal(mptable__sum(buf, 16), 0);
	assert_int_equal(buf[11], 0); /* a configuration table follows */
	assert_true(get32(buf + 4) >= GPA && get32(buf + 4) < GPA + BUF);
	cfg = buf + (get32(buf + 4) - GPA);
	assert_memory_equal(cfg, "PCMP", 4);
	len = get16(cfg + 4);
	entries = get16(cfg + 34);
	assert_int_equal(mptable__sum(cfg, len), 0);
	assert_int_equal(get32(cfg + 36), 0xfee00000u);
	off = 44;
	for (uint16_t i = 0; i < entries; i++) {
		const uint8_t *e = cfg + off;

		assert_true(off < len);
		switch (e[0]) {
		case 0:
			c.cpus++;
			assert_int_equal(e[1], c.cpus - 1); /* APIC ID */
			assert_true(e[3] & 1);              /* enabled */
			c.bsp += (e[3] & 2) != 0;
			off += 20;
			continue;
		case 1:
			c.bus_isa += !memcmp(e + 2, "ISA   ", 6);
			break;
		case 2:
			c.ioapics++;
			c.ioapic_id = e[1];
			assert_int_equal(get32(e + 4), 0xfec00000u);
			break;
		case 3:
			c.ioints++;
			assert_int_equal(e[6], c.ioapic_id);
			assert_true(e[5] < 16);
			c.irq_pin[e[5]] = e[7];
			break;
		case 4:
			c.lints++;
			if (e[7] == 0)
				c.lint0_type = e[1];
			else
				c.lint1_type = e[1];
			break;
		default:
			fail_msg("entry %u has type %u", i, e[0]);
		}
		off += 8;
	}
	assert_int_equal(off, len);
	return c;
}

static void describes_cpus_and_irqs(void **state)
{
	uint8_t *buf = calloc(1, BUF);

	(void)state;
	for (unsigned int n = 1; n <= 64; n *= 2) {
		struct counts c;

		memset(buf, 0xaa, BUF);
		assert_int_equal(mptable__build(buf, BUF, GPA, n), 0);
		c = walk(buf);
		assert_int_equal(c.cpus, n);
		assert_int_equal(c.bsp, 1);
		assert_int_equal(c.bus_isa, 1);
		assert_int_equal(c.ioapics, 1);
		assert_true(c.ioapic_id >= n); /* no clash with a CPU */
		assert_int_equal(c.ioints, 16);
		for (unsigned int irq = 0; irq < 16; irq++)
			assert_int_equal(c.irq_pin[irq], irq);
		assert_int_equal(c.lints, 2);
		assert_int_equal(c.lint0_type, 3); /* ExtINT */
		assert_int_equal(c.lint1_type, 1); /* NMI */
	}
	free(buf);
}

static void size_matches(void **state)
{
	uint8_t *buf = calloc(1, BUF);
	size_t need = mptable__size(4);

	(void)state;
	assert_int_equal(mptable__build(buf, need, GPA, 4), 0);
	assert_int_equal(mptable__build(buf, need - 1, GPA, 4), -ENOSPC);
	assert_non_null(strstr(err__last(), "needs"));
	free(buf);
}

static void rejects_cpu_counts(void **state)
{
	uint8_t *buf = calloc(1, BUF);

	(void)state;
	assert_int_equal(mptable__build(buf, BUF, GPA, 0), -EINVAL);
	assert_int_equal(mptable__build(buf, BUF, GPA, MPTABLE_MAX_CPUS + 1),
			 -EINVAL);
	assert_int_equal(mptable__build(buf, BUF, GPA, MPTABLE_MAX_CPUS), 0);
	assert_int_equal(walk(buf).cpus, MPTABLE_MAX_CPUS);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(describes_cpus_and_irqs),
		cmocka_unit_test(size_matches),
		cmocka_unit_test(rejects_cpu_counts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
