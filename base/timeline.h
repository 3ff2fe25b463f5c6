/* A VM's life as named timestamps (CLOCK_MONOTONIC nanoseconds). Marks are
 * first-wins and atomic, so any vCPU thread may set them. */
#ifndef COLDSTART_TIMELINE_H
#define COLDSTART_TIMELINE_H

#include <stdint.h>
#include <stdio.h>

enum tl_event {
	TL_PROCESS_START,
	TL_KVM_OPENED,
	TL_RESTORE_START,
	TL_STATE_LOADED,
	TL_VM_CREATED,
	TL_MEM_READY,
	TL_VCPU_READY,
	TL_FIRST_RUN,
	TL_FIRST_PROGRESS, /* the guest's first signal of life */
	TL_GUEST_READY,
	TL_GUEST_DONE,
	TL_SNAPSHOT_SAVED,
	TL_TEARDOWN_DONE,
	TL_BOOT_COMPLETE, /* an OS guest's boot-complete signal */
	TL_GUEST_EXIT,    /* an OS guest reset or powered off */
	TL_AGENT_READY,   /* the guest agent accepted the host's connection */
	TL_COMMAND_SENT,  /* a command sent to the agent */
	TL_FIRST_OUTPUT,  /* its first byte of output back */
	TL_COMMAND_EXIT,  /* its exit status back */
	TL_PAUSED,        /* every vCPU paused (before a snapshot) */
	TL_COUNT
};

struct timeline {
	uint64_t t[TL_COUNT]; /* 0 = did not happen */
};

uint64_t timeline__now(void);

/* Records now for `ev` unless already recorded; tl may be NULL. */
void timeline__mark(struct timeline *tl, enum tl_event ev);

/* Nanoseconds from `from` to `to`, or -1 when either did not happen. */
double timeline__span_ns(const struct timeline *tl, enum tl_event from,
			 enum tl_event to);

/* Human name ("first KVM_RUN") and JSON key ("first_run"). */
const char *timeline__name(enum tl_event ev);
const char *timeline__key(enum tl_event ev);

/* Prints the events that happened in time order, in ms since
 * TL_PROCESS_START, with the step from the previous one. */
void timeline__print(FILE *out, const struct timeline *tl);

#endif
