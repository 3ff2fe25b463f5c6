/* Probe kvmioctl: latency of the KVM (and userfaultfd) ioctls a VMM
 * issues. Its row, its report section and, with BPF, its loader, which
 * gives the BPF side the ioctl numbers of this host's headers and reads
 * back one latency histogram per ioctl. */
#include "probe_row.h"

#include <inttypes.h>

static const char *const ioctl_names[KVMIOCTL_NR] = {
	[KVMIOCTL_CREATE_VM] = "KVM_CREATE_VM",
	[KVMIOCTL_CREATE_VCPU] = "KVM_CREATE_VCPU",
	[KVMIOCTL_SET_USER_MEMORY_REGION] = "KVM_SET_USER_MEMORY_REGION",
	[KVMIOCTL_SET_USER_MEMORY_REGION2] = "KVM_SET_USER_MEMORY_REGION2",
	[KVMIOCTL_RUN] = "KVM_RUN",
	[KVMIOCTL_SET_REGS] = "KVM_SET_REGS",
	[KVMIOCTL_SET_SREGS] = "KVM_SET_SREGS",
	[KVMIOCTL_SET_CPUID2] = "KVM_SET_CPUID2",
	[KVMIOCTL_GET_SUPPORTED_CPUID] = "KVM_GET_SUPPORTED_CPUID",
	[KVMIOCTL_UFFDIO_REGISTER] = "UFFDIO_REGISTER",
	[KVMIOCTL_UFFDIO_COPY] = "UFFDIO_COPY",
	[KVMIOCTL_UFFDIO_ZEROPAGE] = "UFFDIO_ZEROPAGE",
	[KVMIOCTL_UFFDIO_CONTINUE] = "UFFDIO_CONTINUE",
	[KVMIOCTL_OTHER_KVM] = "other KVM ioctls",
};

const char *probes__ioctl_name(enum kvmioctl_cmd cmd)
{
	return cmd < KVMIOCTL_NR ? ioctl_names[cmd] : "?";
}

/* ---- report ---- */

static void print(FILE *out, const struct probes_report *r,
		  const struct probe_report_opts *o)
{
	(void)o;
	fputs("KVM ioctls (syscall entry to exit):", out);
	if (!probes__observed(r, PEV_SYS_EXIT_IOCTL)) {
		fputs(" " PROBES_NOT_OBSERVED "\n", out);
		return;
	}
	fputc('\n', out);
	for (int i = 0; i < KVMIOCTL_NR; i++) {
		if (!r->ioctl[i].count)
			continue;
		fprintf(out, "  %-28s ", probes__ioctl_name(i));
		probes__print_hist(out, &r->ioctl[i]);
		if (r->ioctl_errors[i])
			fprintf(out, "; %" PRIu64 " failed",
				(uint64_t)r->ioctl_errors[i]);
		fputc('\n', out);
	}
}

static json_t *json(const struct probes_report *r,
		    const struct probe_report_opts *o)
{
	json_t *obj;

	(void)o;
	if (!probes__observed(r, PEV_SYS_EXIT_IOCTL))
		return json_null();
	obj = json_object();
	for (int i = 0; i < KVMIOCTL_NR; i++) {
		json_t *h = probes__hist_json(&r->ioctl[i]);

		json_object_set_new(h, "errors", json_integer(
			(json_int_t)r->ioctl_errors[i]));
		json_object_set_new(obj, probes__ioctl_name(i), h);
	}
	return obj;
}

/* ---- loader ---- */

#ifdef COLDSTART_PROBES_BPF
#include "loader.h"

#include "err.h"
#include "kvmioctl.skel.h"

#include <linux/kvm.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>

/* Linux 6.8; not in older headers. The argument is 160 bytes. */
#ifndef KVM_SET_USER_MEMORY_REGION2
#define KVM_SET_USER_MEMORY_REGION2 _IOC(_IOC_WRITE, KVMIO, 0x49, 160)
#endif

static const __u32 numbers[KVMIOCTL_NR] = {
	[KVMIOCTL_CREATE_VM] = KVM_CREATE_VM,
	[KVMIOCTL_CREATE_VCPU] = KVM_CREATE_VCPU,
	[KVMIOCTL_SET_USER_MEMORY_REGION] = KVM_SET_USER_MEMORY_REGION,
	[KVMIOCTL_SET_USER_MEMORY_REGION2] = KVM_SET_USER_MEMORY_REGION2,
	[KVMIOCTL_RUN] = KVM_RUN,
	[KVMIOCTL_SET_REGS] = KVM_SET_REGS,
	[KVMIOCTL_SET_SREGS] = KVM_SET_SREGS,
	[KVMIOCTL_SET_CPUID2] = KVM_SET_CPUID2,
	[KVMIOCTL_GET_SUPPORTED_CPUID] = KVM_GET_SUPPORTED_CPUID,
	[KVMIOCTL_UFFDIO_REGISTER] = UFFDIO_REGISTER,
	[KVMIOCTL_UFFDIO_COPY] = UFFDIO_COPY,
	[KVMIOCTL_UFFDIO_ZEROPAGE] = UFFDIO_ZEROPAGE,
	[KVMIOCTL_UFFDIO_CONTINUE] = UFFDIO_CONTINUE,
	[KVMIOCTL_OTHER_KVM] = 0, /* matched by type */
};

static void destroy(void *skel)
{
	kvmioctl_bpf__destroy(skel);
}

static int open_probe(struct loader *l, const struct probes_setup *s)
{
	struct kvmioctl_bpf *skel = kvmioctl_bpf__open();
	int ret;

	if (!skel)
		return loader__error(errno, "kvmioctl", "opening");
	l->skel = skel;
	l->destroy = destroy;
	skel->rodata->targ_tgid = (__u32)s->tgid;
	for (int i = 0; i < KVMIOCTL_NR; i++)
		skel->rodata->cmds[i] = numbers[i];
	ret = loader__load(l, skel->skeleton, skel->obj, s);
	if (ret < 0)
		return ret;
	l->skip_tid = &skel->bss->skip_tid;
	l->counts = &skel->bss->counts[0][0];
	return 0;
}

static void add_thread(void *ctx, __u32 tid, const void *v)
{
	const struct kvmioctl_thread *kt = v;
	struct probes_report *r = ctx;
	struct probes_thread *t = loader__thread(r, tid);

	if (!t)
		return;
	t->kvm_runs += kt->runs;
	t->kvm_run_ns += kt->run_ns;
	if (kt->runs)
		t->vcpu = true;
}

/* A thread still inside KVM_RUN when observing stopped is a vCPU too,
 * and its time so far counts. */
static void add_pending(void *ctx, __u32 tid, const void *v)
{
	const struct kvmioctl_pending *p = v;
	struct probes_report *r = ctx;
	struct probes_thread *t;

	if (p->cmd != KVMIOCTL_RUN)
		return;
	t = loader__thread(r, tid);
	if (!t)
		return;
	t->vcpu = true;
	if (r->end_ns > p->ts)
		t->kvm_run_ns += r->end_ns - p->ts;
}

static int collect(const struct loader *l, struct probes_report *r)
{
	const struct kvmioctl_bpf *skel = l->skel;
	struct kvmioctl_pending pending;
	struct kvmioctl_thread value;
	int ret;

	for (__u32 i = 0; i < KVMIOCTL_NR; i++) {
		r->ioctl_errors[i] = skel->bss->errors[i];
		if (bpf_map__lookup_elem(skel->maps.latency, &i, sizeof(i),
					 &r->ioctl[i], sizeof(r->ioctl[i]), 0))
			return err__sys(errno, "probe kvmioctl: reading "
					"latencies");
	}
	r->threads_dropped += skel->bss->threads_full;
	ret = loader__for_each_thread(skel->maps.threads, &value,
				      sizeof(value), add_thread, r);
	if (ret < 0)
		return ret;
	return loader__for_each_thread(skel->maps.pending, &pending,
				       sizeof(pending), add_pending, r);
}
#endif

const struct probe_row kvmioctl__row = {
	.name = "kvmioctl",
	.bit = PROBES_KVMIOCTL,
	PROBE_ROW_LOADER(open_probe, collect),
	.print = print,
	.json_key = "ioctls",
	.json = json,
};
