/* Loader of probe schedlat: run-queue delay per thread and overall. */
#include "loader.h"

#include "schedlat.h"
#include "schedlat.skel.h"

static void destroy(void *skel)
{
	schedlat_bpf__destroy(skel);
}

int schedlat__open(struct loader *l, const struct probes_setup *s)
{
	struct schedlat_bpf *skel = schedlat_bpf__open();
	int ret;

	if (!skel)
		return loader__error(errno, "schedlat", "opening");
	l->skel = skel;
	l->destroy = destroy;
	skel->rodata->targ_tgid = (__u32)s->tgid;
	ret = loader__load(l, skel->skeleton, skel->obj, s);
	if (ret < 0)
		return ret;
	l->skip_tid = &skel->bss->skip_tid;
	l->counts = &skel->bss->counts[0][0];
	return 0;
}

static void add_thread(void *ctx, __u32 tid, const void *v)
{
	const struct schedlat_thread *st = v;
	struct probes_report *r = ctx;
	struct probes_thread *t = loader__thread(r, tid);

	if (!t)
		return;
	t->sched_waits += st->waits;
	t->sched_delay_ns += st->delay_ns;
	if (st->max_ns > t->sched_delay_max_ns)
		t->sched_delay_max_ns = st->max_ns;
}

int schedlat__collect(const struct loader *l, struct probes_report *r)
{
	const struct schedlat_bpf *skel = l->skel;
	struct schedlat_thread value;

	r->sched_delay = skel->bss->delay_hist;
	r->threads_dropped += skel->bss->threads_full;
	return loader__for_each_thread(skel->maps.threads, &value,
				       sizeof(value), add_thread, r);
}
