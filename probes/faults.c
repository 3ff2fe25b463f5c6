/* Loader of probe faults: guest and host fault counts, the guest fault
 * handling histogram, and the timeline ring buffer (drained by the
 * aggregator), from which per-thread counts are derived. */
#include "loader.h"

#include "err.h"
#include "faults.skel.h"

#include <stdlib.h>

static void destroy(void *skel)
{
	faults_bpf__destroy(skel);
}

int faults__open(struct loader *l, const struct probes_setup *s)
{
	struct faults_bpf *skel = faults_bpf__open();
	int ret;

	if (!skel)
		return loader__error(errno, "faults", "opening");
	l->skel = skel;
	l->destroy = destroy;
	skel->rodata->targ_tgid = (__u32)s->tgid;
	skel->rodata->timed = s->set & PROBES_FAULTTIME;
	if (!skel->rodata->timed) {
		bpf_program__set_autoload(skel->progs.faults_walk, false);
		bpf_program__set_autoload(skel->progs.faults_tdp, false);
		bpf_program__set_autoload(skel->progs.faults_set_spte, false);
	}
	ret = loader__load(l, skel->skeleton, skel->obj, s);
	if (ret < 0)
		return ret;
	l->skip_tid = &skel->bss->skip_tid;
	l->counts = &skel->bss->counts[0][0];
	l->ringbuf = skel->maps.events;
	return 0;
}

int faults__collect(const struct loader *l, struct probes_report *r)
{
	const struct faults_bpf *skel = l->skel;

	r->guest_fault_unmatched = skel->bss->unmatched;
	r->timeline_lost += skel->bss->lost;
	return 0;
}

/* Per-CPU map values are read as an array of 8-byte aligned slots. */
_Static_assert(sizeof(struct faults_stage) % 8 == 0,
	       "faults_stage must be a multiple of 8 bytes");

int faults__drain_stages(const struct loader *l,
			 void (*fn)(void *ctx, const struct faults_event *e),
			 void *ctx)
{
	const struct faults_bpf *skel = l->skel;
	int cpus = libbpf_num_possible_cpus();
	struct faults_stage *st;
	__u32 zero = 0;

	if (cpus <= 0)
		return err__sys(-cpus, "probe faults: counting CPUs");
	st = calloc((size_t)cpus, sizeof(*st));
	if (!st)
		return err__sys(ENOMEM, "probe faults: stages");
	if (bpf_map__lookup_elem(skel->maps.stage, &zero, sizeof(zero), st,
				 (size_t)cpus * sizeof(*st), 0)) {
		free(st);
		return err__sys(errno, "probe faults: reading stages");
	}
	for (int cpu = 0; cpu < cpus; cpu++)
		for (__u32 i = 0; i < st[cpu].n && i < FAULTS_BATCH; i++)
			fn(ctx, &st[cpu].ev[i]);
	free(st);
	return 0;
}

/* The user-space twin of bits__hist_add(). */
static void hist_add(struct probes_hist *h, __u64 ns)
{
	int slot = ns ? 63 - __builtin_clzll(ns) : 0;

	h->slots[slot < PROBES_HIST_SLOTS ? slot : PROBES_HIST_SLOTS - 1]++;
	h->count++;
	h->sum_ns += ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

/* Per-thread fault counts and the guest fault histogram, from the
 * timeline: the BPF side keeps neither, which would cost a hash lookup
 * and atomics per fault. */
int faults__threads_from_timeline(struct probes_report *r)
{
	for (size_t i = 0; i < r->nr_timeline; i++) {
		const struct faults_event *e = &r->timeline[i];
		struct probes_thread *t = loader__thread(r, e->tid);

		if (!t)
			return err__sys(ENOMEM, "probes: threads");
		if (e->kind == FAULTS_GUEST) {
			if (r->set & PROBES_FAULTTIME)
				hist_add(&r->guest_fault, e->dur_ns);
			t->guest_faults++;
			t->vcpu = true;
			if (e->flags & FAULTS_FLAG_WRITE)
				t->guest_write_faults++;
		} else if (e->kind == FAULTS_HOST_USER) {
			t->host_faults_user++;
		} else if (e->kind == FAULTS_HOST_KERNEL) {
			t->host_faults_kernel++;
		}
	}
	return 0;
}
