/* What every probe's loader shares: kernel BTF, skipping tracepoints the
 * kernel lacks, attaching program by program, libbpf's messages in our
 * errors. Internal to probes/. */
#ifndef COLDSTART_PROBES_LOADER_H
#define COLDSTART_PROBES_LOADER_H

#include "probe_row.h"
#include "target.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#define LOADER_MAX_PROGS 16

struct probes_setup {
	pid_t tgid;
	unsigned int set; /* enum probes_set */
	const struct btf *vmlinux;
	const struct btf *kvm; /* the kvm module's BTF, or NULL (built in) */
};

/* One loaded probe: its skeleton and the pieces the aggregator needs. */
struct loader {
	const char *name;
	void *skel;                     /* the probe's generated skeleton */
	void (*destroy)(void *skel);
	struct bpf_object *obj;
	__u32 *skip_tid;                /* in the loaded bss */
	/* [TARGET_MAX_CPUS][TARGET_COUNT_STRIDE], in the loaded bss */
	const __u64 *counts;
	struct bpf_map *ringbuf;        /* a timeline, or NULL */
	struct bpf_link *links[LOADER_MAX_PROGS];
	size_t nr_links;
};

/* Routes libbpf's messages into err__last() (once per process). */
void loader__init_libbpf(void);

/* Turns off programs whose tracepoint this kernel lacks, then loads the
 * object through its skeleton. -EACCES without permission. */
int loader__load(struct loader *l, struct bpf_object_skeleton *s,
		 struct bpf_object *obj, const struct probes_setup *setup);

/* Attaches each loaded program on its own, marking what attached. */
int loader__attach(struct loader *l, bool attached[PEV_COUNT]);

void loader__detach(struct loader *l);

/* Detaches and destroys the skeleton; a zeroed loader is a no-op. */
void loader__close(struct loader *l);

/* The error for a failed skeleton open or load of probe `name`. */
int loader__error(int err, const char *name, const char *what);

/* The index of the tracepoint a "tp_btf/NAME" section names, or -1. */
int loader__event_of_section(const char *section);

/* Reads every value of a per-thread hash map (u32 tid keys) and calls
 * fn(ctx, tid, value) for each. */
int loader__for_each_thread(struct bpf_map *map, void *value, size_t size,
			    void (*fn)(void *ctx, __u32 tid, const void *v),
			    void *ctx);

/* Adds the probe's per-CPU event counts to the report's. */
void loader__sum_counts(const struct loader *l, struct probes_report *r);

/* Finds or adds the report's entry for `tid`; NULL on -ENOMEM, counted
 * in r->threads_dropped. */
struct probes_thread *loader__thread(struct probes_report *r, __u32 tid);

/* What the aggregator calls of probe faults (faults.c) after detaching:
 * the timeline's per-thread counts and guest fault histogram; and each
 * CPU's records not yet in the ring buffer, passed to fn. */
int faults__threads_from_timeline(struct probes_report *r);
int faults__drain_stages(const struct loader *l,
			 void (*fn)(void *ctx, const struct faults_event *e),
			 void *ctx);

#endif
