/* Loader of probe mmaplock: mmap_lock wait and write-hold times. */
#include "loader.h"

#include "mmaplock.h"
#include "mmaplock.skel.h"

#include <string.h>

static void destroy(void *skel)
{
	mmaplock_bpf__destroy(skel);
}

int mmaplock__open(struct loader *l, const struct probes_setup *s)
{
	struct mmaplock_bpf *skel = mmaplock_bpf__open();
	int ret;

	if (!skel)
		return loader__error(errno, "mmaplock", "opening");
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

int mmaplock__collect(const struct loader *l, struct probes_report *r)
{
	const struct mmaplock_bpf *skel = l->skel;

	memcpy(r->mmap_lock, skel->bss->hists, sizeof(r->mmap_lock));
	memcpy(r->mmap_lock_acquired, skel->bss->acquired,
	       sizeof(r->mmap_lock_acquired));
	r->mmap_lock_failed = skel->bss->failed;
	return 0;
}
