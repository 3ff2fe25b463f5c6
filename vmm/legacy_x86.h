/* The PC's legacy I/O that Linux probes and that needs no real device:
 * a CMOS RTC that reports the host's time (so timekeeping starts right and
 * nothing warns about an unreadable clock) and quiet sinks for POST codes,
 * PCI configuration probes, the other COM ports, VGA, port 0x92 and the
 * floppy controller. Sinks read as all ones, drop writes and count, never
 * log: Linux hits some of them (port 0x80 for I/O delays) thousands of
 * times. */
#ifndef COLDSTART_LEGACY_X86_H
#define COLDSTART_LEGACY_X86_H

#include <stdint.h>

struct vm;

struct cmos_regs {
	uint32_t version;
	uint8_t index; /* selected register, NMI-disable bit stripped */
	uint8_t pad[3];
};

#define CMOS_STATE_VERSION 1

struct legacy_x86 {
	struct vm *vm;
	struct cmos_regs cmos;
	uint64_t sink_accesses; /* atomic */
};

/* A calendar time in UTC as the RTC shows it: mon 1-12, mday 1-31,
 * wday 0-6 from Sunday. */
struct rtc_time {
	int64_t year;
	int mon, mday, wday, hour, min, sec;
};

/* Seconds since the epoch to UTC calendar time, without libc's time zone
 * machinery (which opens files). */
void legacy_x86__civil_time(int64_t secs, struct rtc_time *t);

/* Claims the RTC ports 0x70-0x71 and the sink ranges, registers device
 * "cmos". */
int legacy_x86__init(struct legacy_x86 *l, struct vm *vm);

#endif
