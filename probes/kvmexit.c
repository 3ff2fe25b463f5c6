/* Loader of probe kvmexit: VM exits by kind and thread, and the VMM's
 * time to handle exits to user space. */
#include "loader.h"

#include "err.h"
#include "kvmexit.skel.h"

#include <linux/kvm.h>
#include <string.h>

static void destroy(void *skel)
{
	kvmexit_bpf__destroy(skel);
}

int kvmexit__open(struct loader *l, const struct probes_setup *s)
{
	struct kvmexit_bpf *skel = kvmexit_bpf__open();
	int ret;

	if (!skel)
		return loader__error(errno, "kvmexit", "opening");
	l->skel = skel;
	l->destroy = destroy;
	skel->rodata->targ_tgid = (__u32)s->tgid;
	skel->rodata->kvm_run_cmd = KVM_RUN;
	ret = loader__load(l, skel->skeleton, skel->obj, s);
	if (ret < 0)
		return ret;
	l->skip_tid = &skel->bss->skip_tid;
	l->counts = &skel->bss->counts[0][0];
	return 0;
}

static void add_thread(void *ctx, __u32 tid, const void *v)
{
	const struct kvmexit_thread *kt = v;
	struct probes_report *r = ctx;
	struct probes_thread *t = loader__thread(r, tid);

	if (!t)
		return;
	for (int k = 0; k < KVMEXIT_NR_KINDS; k++) {
		t->exits[k] += kt->kinds[k];
		if (kt->kinds[k] && k != KVMEXIT_EMULATE)
			t->vcpu = true;
	}
}

int kvmexit__collect(const struct loader *l, struct probes_report *r)
{
	const struct kvmexit_bpf *skel = l->skel;
	struct kvmexit_thread value;

	memcpy(r->exits, skel->bss->kinds, sizeof(r->exits));
	memcpy(r->exit_reasons, skel->bss->reasons, sizeof(r->exit_reasons));
	r->threads_dropped += skel->bss->threads_full;
	for (__u32 i = 0; i < KVMEXIT_NR_REASONS; i++)
		if (bpf_map__lookup_elem(skel->maps.handling, &i, sizeof(i),
					 &r->exit_handling[i],
					 sizeof(r->exit_handling[i]), 0))
			return err__sys(errno, "probe kvmexit: reading "
					"handling times");
	return loader__for_each_thread(skel->maps.threads, &value,
				       sizeof(value), add_thread, r);
}
