/* Probe schedlat: run-queue delay per thread and overall. Its row, its
 * report section and, with BPF, its loader. */
#include "probe_row.h"

#include <inttypes.h>

/* ---- report ---- */

static void print(FILE *out, const struct probes_report *r,
		  const struct probe_report_opts *o)
{
	uint64_t waits = 0, sum = 0, max = 0;
	unsigned int vcpus = 0;
	char a[24], b[24];

	(void)o;
	fputs("scheduling delay (runnable to running): ", out);
	if (!probes__observed(r, PEV_SCHED_SWITCH) || !r->sched_delay.count) {
		fputs(PROBES_NOT_OBSERVED "\n", out);
		return;
	}
	for (size_t i = 0; i < r->nr_threads; i++) {
		const struct probes_thread *t = &r->threads[i];

		if (!t->vcpu)
			continue;
		vcpus++;
		waits += t->sched_waits;
		sum += t->sched_delay_ns;
		if (t->sched_delay_max_ns > max)
			max = t->sched_delay_max_ns;
	}
	if (vcpus)
		fprintf(out, "%u vCPU threads %" PRIu64 " waits, total %s, "
			"max %s; ", vcpus, waits,
			probes__fmt_ns(a, sizeof(a), (double)sum),
			probes__fmt_ns(b, sizeof(b), (double)max));
	else
		fputs("no vCPU thread seen; ", out);
	fputs("all threads ", out);
	probes__print_hist(out, &r->sched_delay);
	fputc('\n', out);
}

static json_t *json(const struct probes_report *r,
		    const struct probe_report_opts *o)
{
	(void)o;
	return probes__hist_or_null(r, PEV_SCHED_SWITCH, &r->sched_delay);
}

/* ---- loader ---- */

#ifdef COLDSTART_PROBES_BPF
#include "loader.h"

#include "schedlat.skel.h"

static void destroy(void *skel)
{
	schedlat_bpf__destroy(skel);
}

static int open_probe(struct loader *l, const struct probes_setup *s)
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

static int collect(const struct loader *l, struct probes_report *r)
{
	const struct schedlat_bpf *skel = l->skel;
	struct schedlat_thread value;

	r->sched_delay = skel->bss->delay_hist;
	r->threads_dropped += skel->bss->threads_full;
	return loader__for_each_thread(skel->maps.threads, &value,
				       sizeof(value), add_thread, r);
}
#endif

const struct probe_row schedlat__row = {
	.name = "schedlat",
	.bit = PROBES_SCHEDLAT,
	PROBE_ROW_LOADER(open_probe, collect),
	.print = print,
	.json_key = "sched_delay",
	.json = json,
};
