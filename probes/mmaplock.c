/* Probe mmaplock: mmap_lock wait and write-hold times. Its row, its
 * report section and, with BPF, its loader. */
#include "probe_row.h"

#include <inttypes.h>
#include <string.h>

static const char *const mmap_keys[MMAPLOCK_NR_HISTS] = {
	[MMAPLOCK_WAIT_READ] = "read_wait",
	[MMAPLOCK_WAIT_WRITE] = "write_wait",
	[MMAPLOCK_HOLD_WRITE] = "write_hold",
};

/* ---- report ---- */

static void print(FILE *out, const struct probes_report *r,
		  const struct probe_report_opts *o)
{
	static const char *const what[MMAPLOCK_NR_HISTS] = {
		"read waits", "write waits", "write holds" };

	(void)o;
	fputs("mmap_lock:", out);
	if (!probes__observed(r, PEV_MMAP_LOCK_ACQUIRED)) {
		fputs(" " PROBES_NOT_OBSERVED "\n", out);
		return;
	}
	fputc('\n', out);
	for (int i = 0; i < MMAPLOCK_NR_HISTS; i++) {
		fprintf(out, "  %-12s ", what[i]);
		probes__print_hist(out, &r->mmap_lock[i]);
		fputc('\n', out);
	}
	if (r->mmap_lock_failed)
		fprintf(out, "  %" PRIu64 " acquisitions failed (trylock or "
			"killed)\n", (uint64_t)r->mmap_lock_failed);
}

static json_t *json(const struct probes_report *r,
		    const struct probe_report_opts *o)
{
	json_t *obj;

	(void)o;
	if (!probes__observed(r, PEV_MMAP_LOCK_ACQUIRED))
		return json_null();
	obj = json_pack("{s:I, s:I, s:I}", "read_acquired",
			(json_int_t)r->mmap_lock_acquired[0], "write_acquired",
			(json_int_t)r->mmap_lock_acquired[1], "failed",
			(json_int_t)r->mmap_lock_failed);
	for (int i = 0; i < MMAPLOCK_NR_HISTS; i++)
		json_object_set_new(obj, mmap_keys[i],
				    probes__hist_json(&r->mmap_lock[i]));
	return obj;
}

/* ---- loader ---- */

#ifdef COLDSTART_PROBES_BPF
#include "loader.h"

#include "mmaplock.skel.h"

static void destroy(void *skel)
{
	mmaplock_bpf__destroy(skel);
}

static int open_probe(struct loader *l, const struct probes_setup *s)
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

static int collect(const struct loader *l, struct probes_report *r)
{
	const struct mmaplock_bpf *skel = l->skel;

	memcpy(r->mmap_lock, skel->bss->hists, sizeof(r->mmap_lock));
	memcpy(r->mmap_lock_acquired, skel->bss->acquired,
	       sizeof(r->mmap_lock_acquired));
	r->mmap_lock_failed = skel->bss->failed;
	return 0;
}
#endif

const struct probe_row mmaplock__row = {
	.name = "mmaplock",
	.bit = PROBES_MMAPLOCK,
	.costly = true, /* three programs per guest fault */
	PROBE_ROW_LOADER(open_probe, collect),
	.print = print,
	.json_key = "mmap_lock",
	.json = json,
};
