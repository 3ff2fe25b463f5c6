/* eBPF probes that explain where a VMM process spends its time: VM exits,
 * guest and host memory faults, KVM ioctl latency, scheduling delay and
 * mmap_lock contention, observed for one process (all its threads) from
 * attach to finish. Library code: returns 0 or -errno with the reason in
 * err__last(). Without BPF support in the build, probes__attach() fails
 * with -ENOTSUP and everything else still works. */
#ifndef COLDSTART_PROBES_H
#define COLDSTART_PROBES_H

#include "events.h"
#include "faults.h"
#include "hist.h"
#include "kvmexit.h"
#include "kvmioctl.h"
#include "mmaplock.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct probes;

/* The probes, to choose from: bits of a set, one per row of the probe
 * table (probe_row.h), in the order of COLDSTART_PROBES in
 * probes/CMakeLists.txt: PROBES_KVMEXIT, PROBES_FAULTS, ... */
enum probes_index {
#define PROBE(name, NAME) PROBES_INDEX_##NAME,
#include "probes_list.h"
#undef PROBE
	PROBES_NR
};

enum probes_set {
#define PROBE(name, NAME) PROBES_##NAME = 1u << PROBES_INDEX_##NAME,
#include "probes_list.h"
#undef PROBE
	PROBES_ALL = (1u << PROBES_NR) - 1,
};

/* The set `default` names: every probe whose row is not marked costly. */
#define PROBES_DEFAULT (probes__default_set())

/* What one thread of the target did, merged across probes. Fault counts
 * come from the timeline: faults it lost are in the totals only. */
struct probes_thread {
	uint32_t tid;
	bool vcpu; /* it issued KVM_RUN or took VM exits */
	uint64_t exits[KVMEXIT_NR_KINDS];
	uint64_t guest_faults, guest_write_faults;
	uint64_t host_faults_user, host_faults_kernel;
	uint64_t kvm_runs, kvm_run_ns;
	uint64_t sched_waits, sched_delay_ns, sched_delay_max_ns;
};

struct probes_report {
	uint32_t tgid;
	unsigned int set;          /* enum probes_set: what was asked for */
	uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC, attach to finish */
	bool probed[PEV_COUNT];    /* its probe was in the set */
	bool attached[PEV_COUNT];  /* false: not probed or kernel lacks it */
	uint64_t events[PEV_COUNT]; /* firings for the target */

	uint64_t exits[KVMEXIT_NR_KINDS];
	uint64_t exit_reasons[KVMEXIT_NR_REASONS]; /* KVM_EXIT_* to user */
	/* VMM time from an exit to user space to the thread's next KVM_RUN */
	struct probes_hist exit_handling[KVMEXIT_NR_REASONS];

	struct probes_hist guest_fault; /* fault start to SPTE set (from
					 * the timeline) */
	uint64_t guest_fault_unmatched;  /* SPTEs set with no start seen */

	struct probes_hist ioctl[KVMIOCTL_NR];
	uint64_t ioctl_errors[KVMIOCTL_NR];

	struct probes_hist sched_delay; /* all threads of the target */

	struct probes_hist mmap_lock[MMAPLOCK_NR_HISTS];
	uint64_t mmap_lock_acquired[2]; /* read, write */
	uint64_t mmap_lock_failed;

	uint64_t threads_dropped; /* events a full per-thread table missed */
	size_t nr_threads;
	struct probes_thread *threads; /* ascending tid */

	/* Guest and host faults one by one, in time order (owned). */
	size_t nr_timeline;
	struct faults_event *timeline;
	uint64_t timeline_lost; /* records that did not fit */

	/* A probe's own results beyond the fields above, by enum
	 * probes_index: set by its collect, freed with the report. */
	void *data[PROBES_NR];
};

/* Whether this build has the probes at all (clang, bpftool, libbpf and
 * kernel BTF were found at configure time). */
bool probes__built(void);

/* Loads the probes in `set` (enum probes_set) and attaches them to
 * process `tgid` (any pid of it is not enough: pass the thread-group id).
 * Tracepoints this kernel lacks are skipped and reported as not attached.
 * -ENOTSUP: no BPF in this build or no kernel BTF; -EACCES: not allowed
 * to load BPF; -ESRCH: no such process. */
int probes__attach(pid_t tgid, unsigned int set, struct probes **out);

/* probes__attach() in two steps: loading (the slow part: BTF, the
 * verifier) and attaching, for callers that must not load while they
 * measure. After probes__load() nothing is observed until
 * probes__start(). */
int probes__load(pid_t tgid, unsigned int set, struct probes **out);
int probes__start(struct probes *p);

/* A comma-separated list of probe names (the table's) and the groups
 * default and all into a set; "" is default. -EINVAL, with an error
 * naming every probe, otherwise. */
int probes__parse_set(const char *text, unsigned int *set);

unsigned int probes__default_set(void);

/* The names of the probes in `set`, in table order, joined by `sep` (the
 * last two by `last`), into buf (truncated to size, always terminated):
 * for help texts and errors. Returns buf. */
const char *probes__set_names(char *buf, size_t size, unsigned int set,
			      const char *sep, const char *last);

/* The probe (one bit of enum probes_set) that counts an event. */
unsigned int probes__event_probe(enum probes_ev ev);

/* A probe's name ("kvmexit"...) from its bit; "?" for anything else. */
const char *probes__probe_name(unsigned int bit);

/* Stops observing (detaches, drains the timeline) and returns what was
 * seen; the caller frees it with probes__report_free(). Call once. */
int probes__finish(struct probes *p, struct probes_report **out);

/* Detaches if needed and frees; NULL is a no-op. */
void probes__destroy(struct probes *p);

void probes__report_free(struct probes_report *r);

/* "kvm:kvm_pio", "kvmmmu:kvm_mmu_spte_requested", ... */
const char *probes__event_name(enum probes_ev ev);
/* "port I/O in", "KVM_RUN", ... */
const char *probes__exit_kind_name(enum kvmexit_kind kind);
const char *probes__ioctl_name(enum kvmioctl_cmd cmd);
/* "IO", "MMIO", ...; the error slot is "KVM_RUN error (EINTR)". */
const char *probes__exit_reason_name(unsigned int reason);

/* The tracepoint an exit kind is counted from. */
enum probes_ev probes__exit_kind_event(enum kvmexit_kind kind);

/* Whether the tracepoint attached and fired for the target: anything
 * derived from one that did not is "not observed", never zero. */
bool probes__observed(const struct probes_report *r, enum probes_ev ev);

/* The p-th percentile (0..100) of a histogram in ns, interpolated
 * linearly inside its log2 slot (the top slot ends at the maximum); exact
 * for one value; 0 for an empty histogram. */
double probes__hist_percentile(const struct probes_hist *h, double p);

#endif
