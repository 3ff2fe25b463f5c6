/* Firecracker's boot-complete signals, so its guest images work unchanged:
 * byte 123 written to I/O port 0x3f0 (the original boot timer) or to the
 * MMIO page at 0xC0000000 (today's). Either marks "boot complete" once
 * and records which variant fired. Byte 124 on either is our init's
 * "guest done" (workload finished). At boot complete the VM can pause
 * (for a snapshot) or end (for boot benchmarks). */
#ifndef COLDSTART_BOOTTIMER_H
#define COLDSTART_BOOTTIMER_H

#include <stdbool.h>
#include <stdint.h>

struct vm;

#define BOOTTIMER_PORT 0x3f0
#define BOOTTIMER_MMIO_GPA 0xc0000000ull
#define BOOTTIMER_MMIO_SIZE 0x1000ull
#define BOOTTIMER_BOOT_COMPLETE 123
#define BOOTTIMER_GUEST_DONE 124

/* Which signal fired, as bits. */
enum boottimer_variant {
	BOOTTIMER_VIA_PORT = 1u << 0,
	BOOTTIMER_VIA_MMIO = 1u << 1,
};

struct boottimer_regs {
	uint32_t version;
	uint32_t seen;   /* enum boottimer_variant bits that fired */
	uint32_t first;  /* the variant that fired first, 0 = none yet */
	uint32_t done;   /* guest-done signals received */
};

#define BOOTTIMER_STATE_VERSION 1

enum boottimer_action {
	BOOTTIMER_CONTINUE = 0, /* note it and let the guest run on */
	BOOTTIMER_PAUSE,        /* pause every vCPU (vm__wait_paused) */
	BOOTTIMER_STOP,         /* end the VM as completed */
};

struct boottimer {
	struct vm *vm;
	enum boottimer_action at_boot; /* what the first signal does */
	/* What a guest-done signal does: CONTINUE (the default), PAUSE,
	 * so a guest that exits right after it can be held alive there, or
	 * STOP, when the work measured ends there (a pool's request). */
	enum boottimer_action at_done;
	struct boottimer_regs regs;    /* under vm->lock */
};

/* Claims port 0x3f0 and the MMIO page and registers device "boottimer";
 * at_done starts as BOOTTIMER_CONTINUE (set it before vCPUs start). */
int boottimer__init(struct boottimer *t, struct vm *vm,
		    enum boottimer_action at_boot);

/* "port", "mmio" or NULL: the name of one variant bit. */
const char *boottimer__variant_name(uint32_t variant);

#endif
