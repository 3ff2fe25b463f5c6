/* CMOS RTC with the host's clock, and sinks for probed legacy ports. */
#include "legacy_x86.h"

#include "device.h"
#include "err.h"
#include "vm.h"

#include <string.h>
#include <time.h>

#define CMOS_INDEX_PORT 0x70
#define CMOS_NMI_DISABLE 0x80

enum {
	RTC_SECONDS = 0x00, RTC_MINUTES = 0x02, RTC_HOURS = 0x04,
	RTC_WEEKDAY = 0x06, RTC_DAY = 0x07, RTC_MONTH = 0x08, RTC_YEAR = 0x09,
	RTC_REG_A = 0x0a, RTC_REG_B = 0x0b, RTC_REG_C = 0x0c, RTC_REG_D = 0x0d,
	RTC_CENTURY = 0x32,
};

#define REG_A_DIVIDER 0x26   /* 32.768 kHz, 1024 Hz; UIP never set */
#define REG_B_24H 0x02       /* 24-hour mode, BCD, no interrupts */
#define REG_D_VALID 0x80     /* battery good */

static const struct {
	uint16_t base, len;
	const char *name;
} sinks[] = {
	{ 0x80, 1, "sink.post" },        /* POST codes, I/O delay */
	{ 0x92, 1, "sink.port92" },      /* fast A20 / reset */
	{ 0xed, 1, "sink.iodelay" },     /* alternative I/O delay port */
	{ 0x2e8, 8, "sink.com4" },
	{ 0x2f8, 8, "sink.com2" },
	{ 0x3b0, 0x30, "sink.vga" },     /* MDA, CGA and VGA registers */
	{ 0x3e8, 8, "sink.com3" },
	{ 0x3f1, 7, "sink.floppy" },     /* 0x3f0 is the boot timer */
	{ 0xcf8, 8, "sink.pci" },        /* configuration mechanism 1 */
};

static uint8_t bcd(int v)
{
	return (uint8_t)((v / 10) << 4 | (v % 10));
}

/* Days since 1970-01-01 to a proleptic Gregorian date, in 400-year eras
 * of 146097 days that start on March 1st. Arithmetic only: glibc's gmtime_r
 * reads /etc/localtime on its first call, a file the vCPU thread that
 * serves the RTC must not open once its seccomp filter is on. */
void legacy_x86__civil_time(int64_t secs, struct rtc_time *t)
{
	int64_t days = secs / 86400, rem = secs % 86400;

	if (rem < 0) {
		rem += 86400;
		days--;
	}
	t->hour = (int)(rem / 3600);
	t->min = (int)(rem % 3600 / 60);
	t->sec = (int)(rem % 60);
	t->wday = (int)((days % 7 + 11) % 7); /* 1970-01-01 was a Thursday */

	int64_t z = days + 719468; /* days from 0000-03-01 */
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;                        /* [0, 146096] */
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100); /* [0, 365] */
	int64_t mp = (5 * doy + 2) / 153;                      /* March = 0 */

	t->mday = (int)(doy - (153 * mp + 2) / 5 + 1);
	t->mon = (int)(mp < 10 ? mp + 3 : mp - 9);
	t->year = yoe + era * 400 + (t->mon <= 2);
}

static uint8_t rtc_read(uint8_t reg)
{
	struct rtc_time tm;

	legacy_x86__civil_time(time(NULL), &tm);
	switch (reg) {
	case RTC_SECONDS: return bcd(tm.sec);
	case RTC_MINUTES: return bcd(tm.min);
	case RTC_HOURS: return bcd(tm.hour);
	case RTC_WEEKDAY: return bcd(tm.wday + 1);
	case RTC_DAY: return bcd(tm.mday);
	case RTC_MONTH: return bcd(tm.mon);
	case RTC_YEAR: return bcd((int)(tm.year % 100));
	case RTC_CENTURY: return bcd((int)(tm.year / 100));
	case RTC_REG_A: return REG_A_DIVIDER;
	case RTC_REG_B: return REG_B_24H;
	case RTC_REG_D: return REG_D_VALID;
	default: return 0; /* REG_C (no interrupt flags) and CMOS RAM */
	}
}

/* Only one vCPU at a time touches the RTC (Linux holds rtc_lock), so the
 * index needs no lock of its own. */
static int cmos_trap(struct vcpu *vcpu, const struct io_access *a,
		     void *opaque)
{
	struct legacy_x86 *l = opaque;

	(void)vcpu;
	if (a->addr == CMOS_INDEX_PORT) {
		if (a->is_write)
			l->cmos.index = a->data[0] & (uint8_t)~CMOS_NMI_DISABLE;
		else
			memset(a->data, 0xff, a->len);
		return IOTRAP_CONTINUE;
	}
	if (!a->is_write) {
		memset(a->data, 0, a->len);
		a->data[0] = rtc_read(l->cmos.index);
	}
	return IOTRAP_CONTINUE; /* the clock is the host's: writes drop */
}

static int sink_trap(struct vcpu *vcpu, const struct io_access *a,
		     void *opaque)
{
	struct legacy_x86 *l = opaque;

	(void)vcpu;
	__atomic_fetch_add(&l->sink_accesses, 1, __ATOMIC_RELAXED);
	if (!a->is_write)
		memset(a->data, 0xff, a->len);
	return IOTRAP_CONTINUE;
}

static size_t cmos_state_size(const void *dev)
{
	(void)dev;
	return sizeof(struct cmos_regs);
}

static int cmos_save(const void *dev, void *buf, size_t len)
{
	const struct legacy_x86 *l = dev;
	int ret = device__check_save("cmos", sizeof(l->cmos), len);

	if (ret == 0)
		memcpy(buf, &l->cmos, sizeof(l->cmos));
	return ret;
}

_Static_assert(offsetof(struct cmos_regs, version) == 0,
	       "device__check_restore reads the version first");

static int cmos_restore(void *dev, const void *buf, size_t len)
{
	struct legacy_x86 *l = dev;
	int ret = device__check_restore("cmos", sizeof(l->cmos),
					CMOS_STATE_VERSION, buf, len);

	if (ret == 0)
		memcpy(&l->cmos, buf, sizeof(l->cmos));
	return ret;
}

static const struct device_ops cmos_ops = {
	.name = "cmos",
	.state_size = cmos_state_size,
	.save = cmos_save,
	.restore = cmos_restore,
};

int legacy_x86__init(struct legacy_x86 *l, struct vm *vm)
{
	int ret;

	memset(l, 0, sizeof(*l));
	l->vm = vm;
	l->cmos.version = CMOS_STATE_VERSION;
	ret = iotrap__register(&vm->io, IO_SPACE_PIO, CMOS_INDEX_PORT, 2,
			       cmos_trap, l, "cmos");
	for (size_t i = 0; ret == 0 && i < sizeof(sinks) / sizeof(sinks[0]);
	     i++)
		ret = iotrap__register(&vm->io, IO_SPACE_PIO, sinks[i].base,
				       sinks[i].len, sink_trap, l,
				       sinks[i].name);
	if (ret == 0)
		ret = vm__add_device(vm, &cmos_ops, l);
	return ret;
}
