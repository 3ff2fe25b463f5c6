/* Timeline marks and their names. */
#include "timeline.h"

#include "units.h"

#include <stddef.h>

static const struct {
	const char *name, *key;
} events[TL_COUNT] = {
	[TL_PROCESS_START] = { "process start", "process_start" },
	[TL_KVM_OPENED] = { "/dev/kvm opened", "kvm_opened" },
	[TL_RESTORE_START] = { "restore start", "restore_start" },
	[TL_STATE_LOADED] = { "state loaded", "state_loaded" },
	[TL_VM_CREATED] = { "VM created", "vm_created" },
	[TL_MEM_READY] = { "memory ready", "memory_ready" },
	[TL_VCPU_READY] = { "vCPUs ready", "vcpu_ready" },
	[TL_FIRST_RUN] = { "first KVM_RUN", "first_run" },
	[TL_FIRST_PROGRESS] = { "first guest progress", "first_progress" },
	[TL_GUEST_READY] = { "guest READY", "ready" },
	[TL_GUEST_DONE] = { "guest DONE", "done" },
	[TL_SNAPSHOT_SAVED] = { "snapshot saved", "snapshot_saved" },
	[TL_TEARDOWN_DONE] = { "teardown done", "teardown_done" },
	[TL_BOOT_COMPLETE] = { "boot complete", "boot_complete" },
	[TL_GUEST_EXIT] = { "guest exit", "guest_exit" },
	[TL_AGENT_READY] = { "agent ready", "agent_ready" },
	[TL_COMMAND_SENT] = { "command sent", "command_sent" },
	[TL_FIRST_OUTPUT] = { "first output byte", "first_output" },
	[TL_COMMAND_EXIT] = { "command exit", "command_exit" },
	[TL_PAUSED] = { "VM paused", "paused" },
};

uint64_t timeline__now(void)
{
	return now_ns();
}

void timeline__mark(struct timeline *tl, enum tl_event ev)
{
	uint64_t expected = 0;

	if (!tl || __atomic_load_n(&tl->t[ev], __ATOMIC_RELAXED))
		return;
	__atomic_compare_exchange_n(&tl->t[ev], &expected, timeline__now(), 0,
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

const char *timeline__name(enum tl_event ev)
{
	return events[ev].name;
}

const char *timeline__key(enum tl_event ev)
{
	return events[ev].key;
}

void timeline__print(FILE *out, const struct timeline *tl)
{
	int printed[TL_COUNT] = { 0 };
	double prev = 0;

	fprintf(out, "%12s %12s  %s\n", "time (ms)", "step (ms)", "event");
	for (int n = 0; n < TL_COUNT; n++) {
		int next = -1;
		double t;

		for (int ev = 0; ev < TL_COUNT; ev++)
			if (tl->t[ev] && !printed[ev] &&
			    (next < 0 || tl->t[ev] < tl->t[next]))
				next = ev;
		if (next < 0)
			break;
		printed[next] = 1;
		t = (double)(tl->t[next] - tl->t[TL_PROCESS_START]) / 1e6;
		fprintf(out, "%12.3f %+12.3f  %s\n", t, t - prev,
			timeline__name((enum tl_event)next));
		prev = t;
	}
}

double timeline__span_ns(const struct timeline *tl, enum tl_event from,
			 enum tl_event to)
{
	return tl->t[from] && tl->t[to] ? (double)(tl->t[to] - tl->t[from])
					: -1;
}
