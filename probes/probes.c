/* The probes together: one loader per row of the probe table, a reader
 * thread that drains the fault timeline while the target runs, and the
 * merged report. */
#include "loader.h"

#include "err.h"
#include "units.h"

#include <pthread.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define TIMELINE_MAX (1u << 21)     /* records kept; 64 MiB */

struct probes {
	pid_t tgid;
	unsigned int set;
	struct btf *vmlinux;
	struct btf *kvm; /* NULL where KVM is built in */
	struct loader loaders[PROBES_NR];
	bool attached[PEV_COUNT];
	uint64_t start_ns, end_ns;

	struct ring_buffer *rb;
	pthread_t reader;
	bool reader_running;
	int stop_fd; /* eventfd: the reader ends when it is written */
	pthread_barrier_t started; /* the reader published its tid */

	struct faults_event *timeline; /* appended by the reader only */
	size_t nr_timeline, cap_timeline;
	uint64_t timeline_dropped;
};

bool probes__built(void)
{
	return true;
}

static void append(struct probes *p, const struct faults_event *e)
{
	struct faults_event *grown;

	if (p->nr_timeline == p->cap_timeline) {
		size_t cap = p->cap_timeline ? p->cap_timeline * 2 : 4096;

		grown = cap <= TIMELINE_MAX
				? realloc(p->timeline, cap * sizeof(*grown))
				: NULL;
		if (!grown) {
			p->timeline_dropped++;
			return;
		}
		p->timeline = grown;
		p->cap_timeline = cap;
	}
	p->timeline[p->nr_timeline++] = *e;
}

/* A ring-buffer record: a batch of records (struct faults_stage.ev). */
static int on_record(void *ctx, void *data, size_t size)
{
	const struct faults_event *e = data;

	for (size_t i = 0; i < size / sizeof(*e); i++)
		append(ctx, &e[i]);
	return 0;
}

static void on_staged(void *ctx, const struct faults_event *e)
{
	append(ctx, e);
}

/* Drains the ring buffer when the BPF side wakes it (the buffer is half
 * full) and ends when stop_fd is written: it never polls, so it never
 * preempts a vCPU for nothing. Its own thread is excluded from what the
 * probes count, since it may live in the target. */
static void *reader_main(void *arg)
{
	struct probes *p = arg;
	struct pollfd fds[2] = {
		{ .fd = ring_buffer__epoll_fd(p->rb), .events = POLLIN },
		{ .fd = p->stop_fd, .events = POLLIN },
	};
	__u32 tid = (__u32)syscall(SYS_gettid);

	for (int i = 0; i < PROBES_NR; i++)
		if (p->loaders[i].skip_tid)
			*p->loaders[i].skip_tid = tid;
	pthread_barrier_wait(&p->started);
	while (!(fds[1].revents & POLLIN)) {
		if (poll(fds, 2, -1) < 0 && errno != EINTR)
			break;
		if (fds[0].revents & POLLIN)
			ring_buffer__consume(p->rb);
	}
	return NULL;
}

static int start_reader(struct probes *p)
{
	sigset_t all, old;
	int ret;

	for (int i = 0; i < PROBES_NR; i++) {
		struct bpf_map *map = p->loaders[i].ringbuf;

		if (!map)
			continue;
		if (!p->rb)
			p->rb = ring_buffer__new(bpf_map__fd(map), on_record,
						 p, NULL);
		else if (ring_buffer__add(p->rb, bpf_map__fd(map), on_record,
					  p) < 0)
			return err__sys(errno, "adding a ring buffer");
		if (!p->rb)
			return err__sys(errno, "creating the ring buffer "
					"reader");
	}
	if (!p->rb)
		return 0;
	p->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (p->stop_fd < 0)
		return err__sys(errno, "probes: eventfd");
	pthread_barrier_init(&p->started, NULL, 2);
	/* Signals (Ctrl-C, vCPU kicks) belong to the other threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&p->reader, NULL, reader_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		pthread_barrier_destroy(&p->started);
		return err__sys(ret, "starting the probe reader thread");
	}
	p->reader_running = true;
	pthread_barrier_wait(&p->started);
	pthread_barrier_destroy(&p->started);
	return 0;
}

static void stop_reader(struct probes *p)
{
	uint64_t one = 1;

	if (!p->reader_running)
		return;
	if (write(p->stop_fd, &one, sizeof(one)) != sizeof(one))
		pthread_cancel(p->reader); /* cannot happen with an eventfd */
	pthread_join(p->reader, NULL);
	p->reader_running = false;
	ring_buffer__consume(p->rb); /* what came after the last pass */
}

static int check_target(pid_t tgid)
{
	char path[64];

	if (tgid <= 0)
		return err__set(EINVAL, "probes: %d is not a process id",
				(int)tgid);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)tgid);
	if (access(path, F_OK))
		return err__set(ESRCH, "probes: no process %d", (int)tgid);
	return 0;
}

static int load_all(struct probes *p)
{
	struct probes_setup setup = { .tgid = p->tgid, .set = p->set };
	int ret;

	p->vmlinux = btf__load_vmlinux_btf();
	if (!p->vmlinux)
		return err__set(ENOTSUP, "probes: this kernel has no BTF "
				"(/sys/kernel/btf/vmlinux), which CO-RE "
				"probes need");
	setup.vmlinux = p->vmlinux;
	/* Where KVM is a module its tracepoints' types are in its BTF. */
	p->kvm = btf__load_module_btf("kvm", p->vmlinux);
	setup.kvm = p->kvm;
	for (int i = 0; i < PROBES_NR; i++) {
		const struct probe_row *row = probes__row(i);

		if (!(p->set & row->bit) || !row->open)
			continue;
		p->loaders[i].name = row->name;
		ret = row->open(&p->loaders[i], &setup);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int probes__load(pid_t tgid, unsigned int set, struct probes **out)
{
	struct probes *p;
	int ret = check_target(tgid);

	if (ret == 0 && !(set & PROBES_ALL))
		ret = err__set(EINVAL, "probes: no probe chosen");
	if (ret < 0)
		return ret;
	p = calloc(1, sizeof(*p));
	if (!p)
		return err__sys(ENOMEM, "probes");
	p->tgid = tgid;
	p->stop_fd = -1;
	p->set = set & PROBES_ALL;
	for (int i = 0; i < PROBES_NR; i++)
		if (p->set & probes__row(i)->bit)
			p->set |= probes__row(i)->needs;
	loader__init_libbpf();
	ret = load_all(p);
	/* The kernel's BTF (tens of MiB parsed) is needed only to load. */
	btf__free(p->kvm);
	btf__free(p->vmlinux);
	p->kvm = p->vmlinux = NULL;
	malloc_trim(0);
	if (ret == 0)
		ret = start_reader(p);
	if (ret < 0) {
		probes__destroy(p);
		return ret;
	}
	*out = p;
	return 0;
}

int probes__start(struct probes *p)
{
	int ret = 0;

	for (int i = 0; ret == 0 && i < PROBES_NR; i++)
		if (p->loaders[i].skel)
			ret = loader__attach(&p->loaders[i], p->attached);
	if (ret < 0)
		return ret;
	p->start_ns = now_ns();
	return 0;
}

int probes__attach(pid_t tgid, unsigned int set, struct probes **out)
{
	int ret = probes__load(tgid, set, out);

	if (ret < 0)
		return ret;
	ret = probes__start(*out);
	if (ret < 0) {
		probes__destroy(*out);
		*out = NULL;
	}
	return ret;
}

static void detach_all(struct probes *p)
{
	for (int i = 0; i < PROBES_NR; i++)
		loader__detach(&p->loaders[i]);
}

static int by_time(const void *a, const void *b)
{
	const struct faults_event *x = a, *y = b;

	return (x->ts > y->ts) - (x->ts < y->ts);
}

/* The reader appends in drain order; per-CPU batches interleave. */
static void hand_over_timeline(struct probes *p, struct probes_report *r)
{
	if (p->nr_timeline)
		qsort(p->timeline, p->nr_timeline, sizeof(*p->timeline),
		      by_time);
	r->timeline = p->timeline;
	r->nr_timeline = p->nr_timeline;
	r->timeline_lost += p->timeline_dropped;
	p->timeline = NULL;
	p->nr_timeline = p->cap_timeline = 0;
}

int probes__finish(struct probes *p, struct probes_report **out)
{
	struct probes_report *r;
	int ret = 0;

	p->end_ns = now_ns();
	detach_all(p);
	stop_reader(p);
	if (p->loaders[PROBES_INDEX_FAULTS].skel)
		ret = faults__drain_stages(&p->loaders[PROBES_INDEX_FAULTS],
					   on_staged, p);
	if (ret < 0)
		return ret;
	r = calloc(1, sizeof(*r));
	if (!r)
		return err__sys(ENOMEM, "probes: the report");
	r->tgid = (uint32_t)p->tgid;
	r->set = p->set;
	for (int ev = 0; ev < PEV_COUNT; ev++)
		r->probed[ev] = p->set & probes__event_probe(ev);
	r->start_ns = p->start_ns;
	r->end_ns = p->end_ns;
	memcpy(r->attached, p->attached, sizeof(r->attached));
	for (int i = 0; ret == 0 && i < PROBES_NR; i++) {
		if (!p->loaders[i].skel)
			continue;
		loader__sum_counts(&p->loaders[i], r);
		ret = probes__row(i)->collect(&p->loaders[i], r);
	}
	if (ret < 0) {
		probes__report_free(r);
		return ret;
	}
	hand_over_timeline(p, r);
	ret = faults__threads_from_timeline(r);
	if (ret < 0) {
		probes__report_free(r);
		return ret;
	}
	*out = r;
	return 0;
}

void probes__destroy(struct probes *p)
{
	if (!p)
		return;
	detach_all(p);
	stop_reader(p);
	ring_buffer__free(p->rb);
	if (p->stop_fd >= 0)
		close(p->stop_fd);
	for (int i = PROBES_NR - 1; i >= 0; i--)
		loader__close(&p->loaders[i]);
	btf__free(p->kvm);
	btf__free(p->vmlinux);
	free(p->timeline);
	free(p);
}
