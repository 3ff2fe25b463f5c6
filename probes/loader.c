/* Loading and attaching probes program by program, so a kernel without
 * some tracepoint still gets every probe it can run. */
#include "loader.h"

#include "err.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SECTION_PREFIX "tp_btf/"

/* libbpf's last warning, appended to our messages. Process-wide because
 * libbpf's print hook is. */
static char libbpf_msg[256];
static pthread_once_t libbpf_once = PTHREAD_ONCE_INIT;

static int on_libbpf_print(enum libbpf_print_level level, const char *fmt,
			   va_list ap)
{
	va_list copy;
	size_t n;

	if (getenv("COLDSTART_PROBES_DEBUG")) {
		va_copy(copy, ap);
		vfprintf(stderr, fmt, copy);
		va_end(copy);
	}
	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(libbpf_msg, sizeof(libbpf_msg), fmt, ap);
	n = strlen(libbpf_msg);
	while (n && libbpf_msg[n - 1] == '\n')
		libbpf_msg[--n] = '\0';
	return 0;
}

static void init_libbpf(void)
{
	libbpf_set_print(on_libbpf_print);
}

void loader__init_libbpf(void)
{
	pthread_once(&libbpf_once, init_libbpf);
}

int loader__error(int err, const char *name, const char *what)
{
	if (err == EPERM)
		return err__set(EACCES, "probe %s: %s: not permitted (loading "
				"eBPF needs root or CAP_BPF and CAP_PERFMON)",
				name, what);
	if (libbpf_msg[0])
		return err__set(err, "probe %s: %s: %s (libbpf: %s)", name,
				what, strerror(err), libbpf_msg);
	return err__set(err, "probe %s: %s: %s", name, what, strerror(err));
}

int loader__event_of_section(const char *section)
{
	size_t len = strlen(SECTION_PREFIX);

	if (strncmp(section, SECTION_PREFIX, len))
		return -1;
	for (int ev = 0; ev < PEV_COUNT; ev++)
		if (!strcmp(section + len, probes__event_tracepoint(ev)))
			return ev;
	return -1;
}

/* Whether the kernel has the tracepoint: its btf_trace_* typedef, in
 * vmlinux or, where KVM is a module, in the kvm module's BTF (which
 * libbpf also searches when it attaches). */
static bool kernel_has(const struct probes_setup *setup, const char *section)
{
	char name[128];

	snprintf(name, sizeof(name), "btf_trace_%s",
		 section + strlen(SECTION_PREFIX));
	if (btf__find_by_name_kind(setup->vmlinux, name, BTF_KIND_TYPEDEF) >= 0)
		return true;
	return setup->kvm &&
	       btf__find_by_name_kind(setup->kvm, name, BTF_KIND_TYPEDEF) >= 0;
}

int loader__load(struct loader *l, struct bpf_object_skeleton *s,
		 struct bpf_object *obj, const struct probes_setup *setup)
{
	struct bpf_program *prog;
	int ret;

	l->obj = obj;
	bpf_object__for_each_program(prog, obj)
		if (bpf_program__autoload(prog) &&
		    !kernel_has(setup, bpf_program__section_name(prog)))
			bpf_program__set_autoload(prog, false);
	libbpf_msg[0] = '\0';
	ret = bpf_object__load_skeleton(s);
	if (ret < 0)
		return loader__error(-ret, l->name, "loading");
	return 0;
}

int loader__attach(struct loader *l, bool attached[PEV_COUNT])
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, l->obj) {
		struct bpf_link *link;
		int ev;

		if (!bpf_program__autoload(prog))
			continue;
		if (l->nr_links == LOADER_MAX_PROGS)
			return err__set(E2BIG, "probe %s: more than %d "
					"programs", l->name, LOADER_MAX_PROGS);
		link = bpf_program__attach(prog);
		if (!link)
			continue; /* reported as not attached */
		l->links[l->nr_links++] = link;
		ev = loader__event_of_section(bpf_program__section_name(prog));
		if (ev >= 0)
			attached[ev] = true;
	}
	return 0;
}

void loader__detach(struct loader *l)
{
	while (l->nr_links)
		bpf_link__destroy(l->links[--l->nr_links]);
}

void loader__close(struct loader *l)
{
	loader__detach(l);
	if (l->skel)
		l->destroy(l->skel);
	l->skel = NULL;
}

int loader__for_each_thread(struct bpf_map *map, void *value, size_t size,
			    void (*fn)(void *ctx, __u32 tid, const void *v),
			    void *ctx)
{
	__u32 key, next;
	int ret;

	for (ret = bpf_map__get_next_key(map, NULL, &next, sizeof(next));
	     ret == 0;
	     ret = bpf_map__get_next_key(map, &key, &next, sizeof(next))) {
		key = next;
		if (bpf_map__lookup_elem(map, &key, sizeof(key), value, size,
					 0) == 0)
			fn(ctx, key, value);
	}
	if (ret != -ENOENT)
		return err__sys(-ret, "reading map %s", bpf_map__name(map));
	return 0;
}

void loader__sum_counts(const struct loader *l, struct probes_report *r)
{
	for (int cpu = 0; cpu < TARGET_MAX_CPUS; cpu++)
		for (int ev = 0; ev < PEV_COUNT; ev++)
			r->events[ev] +=
				l->counts[cpu * TARGET_COUNT_STRIDE + ev];
}

static int by_tid(const void *a, const void *b)
{
	const struct probes_thread *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

struct probes_thread *loader__thread(struct probes_report *r, __u32 tid)
{
	struct probes_thread key = { .tid = tid }, *t, *grown;

	t = r->nr_threads ? bsearch(&key, r->threads, r->nr_threads,
				    sizeof(key), by_tid)
			  : NULL;
	if (t)
		return t;
	grown = realloc(r->threads, (r->nr_threads + 1) * sizeof(*grown));
	if (!grown) {
		r->threads_dropped++;
		return NULL;
	}
	r->threads = grown;
	r->threads[r->nr_threads++] = key;
	qsort(r->threads, r->nr_threads, sizeof(key), by_tid);
	return bsearch(&key, r->threads, r->nr_threads, sizeof(key), by_tid);
}
