/* The probe report of fixed synthetic inputs, text and JSON, against
 * tests/probes/probe_report.golden: every section, every "not observed"
 * branch and the sets' differences, byte for byte. The golden file names
 * the probe table it was made with; with another table (a probe added)
 * the test skips until it is regenerated, after a deliberate change of
 * the report too, with `test_probe_golden --write FILE`. */
#include "probe_report.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#ifndef GOLDEN
#error "GOLDEN (the golden file's path) is set by tests/probes/CMakeLists.txt"
#endif

#define T0 1000000000ull /* the reports' time origin */

/* n values spread over [1 ns, 5 ms], from seed. */
static void hist(struct probes_hist *h, uint64_t seed, int n)
{
	memset(h, 0, sizeof(*h));
	for (int i = 0; i < n; i++) {
		uint64_t v = (seed * 2654435761u + (uint64_t)i * 40503u) %
			     5000000 + 1;

		h->slots[63 - __builtin_clzll(v)]++;
		h->count++;
		h->sum_ns += v;
		if (v > h->max_ns)
			h->max_ns = v;
	}
}

/* Every probed event attached but kvm_exit; none fired in variant 1,
 * all but kvm_entry otherwise; kvmexit's helper attaches sys_enter. */
static void fill_events(struct probes_report *r, int variant)
{
	for (int ev = 0; ev < PEV_COUNT; ev++) {
		r->probed[ev] = r->set & probes__event_probe(ev);
		r->attached[ev] = r->probed[ev] && ev != PEV_KVM_EXIT;
		if (r->attached[ev] && variant != 1 && ev != PEV_KVM_ENTRY)
			r->events[ev] = 100 + (uint64_t)ev * 7;
	}
	if (r->set & PROBES_KVMEXIT)
		r->attached[PEV_SYS_ENTER_IOCTL] = true;
}

static void fill_exits(struct probes_report *r)
{
	static const unsigned int reasons[][2] = {
		{ 2, 50 }, { 6, 7 }, { KVMEXIT_REASON_ERROR, 1 }, { 50, 3 } };

	for (int k = 0; k < KVMEXIT_NR_KINDS; k++)
		r->exits[k] = (r->set & PROBES_KVMEXIT) ? 10 + k * 3 : 0;
	for (size_t i = 0; i < 4; i++) {
		unsigned int why = reasons[i][0], n = reasons[i][1];

		r->exit_reasons[why] = n;
		hist(&r->exit_handling[why], why == KVMEXIT_REASON_ERROR
					     ? 9 : why, (int)n);
	}
}

static void fill_hists(struct probes_report *r, unsigned int set,
		       int variant)
{
	if (set & PROBES_FAULTTIME)
		hist(&r->guest_fault, 11, 300);
	r->guest_fault_unmatched = 2;
	for (int i = 0; i < KVMIOCTL_NR; i += 2) {
		hist(&r->ioctl[i], 20 + (uint64_t)i, 5 + i);
		r->ioctl_errors[i] = (uint64_t)i % 3;
	}
	hist(&r->sched_delay, 31, 80);
	for (int i = 0; i < MMAPLOCK_NR_HISTS; i++)
		hist(&r->mmap_lock[i], 40 + (uint64_t)i, 20 * (i + 1));
	r->mmap_lock_acquired[0] = 77;
	r->mmap_lock_acquired[1] = 9;
	r->mmap_lock_failed = variant == 2 ? 3 : 0;
}

/* Three threads, the last two vCPUs. */
static void fill_threads(struct probes_report *r)
{
	r->nr_threads = 3;
	r->threads = calloc(3, sizeof(*r->threads));
	assert_non_null(r->threads);
	for (uint64_t t = 0; t < 3; t++) {
		struct probes_thread *th = &r->threads[t];

		th->tid = 4242 + (uint32_t)t;
		th->vcpu = t > 0;
		for (uint64_t k = 0; k < KVMEXIT_NR_KINDS; k++)
			th->exits[k] = k * t % 5;
		th->guest_faults = 30 * t;
		th->guest_write_faults = 10 * t;
		th->host_faults_user = 4 + t;
		th->host_faults_kernel = 2 * t;
		th->kvm_runs = 12 * t;
		th->kvm_run_ns = 1234567 * t;
		th->sched_waits = 3 * t;
		th->sched_delay_ns = 45678 * t;
		th->sched_delay_max_ns = 9999 * t;
	}
}

/* 200 faults from +2 ms, 45 us apart: guest, host user, host kernel. */
static void fill_timeline(struct probes_report *r, unsigned int set)
{
	r->nr_timeline = 200;
	r->timeline = calloc(200, sizeof(*r->timeline));
	assert_non_null(r->timeline);
	for (uint32_t i = 0; i < 200; i++) {
		struct faults_event *e = &r->timeline[i];

		e->ts = T0 + 2000000 + i * 45000ull + i % 7 * 1000ull;
		e->addr = 0x100000 + i * 4096ull;
		e->dur_ns = (set & PROBES_FAULTTIME) ? 1000 + i * 37 % 5000
						     : 0;
		e->tid = 4243 + i % 2;
		e->kind = (uint16_t)(1 + i % 3);
		e->flags = i % 4 == 0;
	}
}

/* A report of `set`; variant 1 observed nothing, variant 2 lost some. */
static struct probes_report *make(unsigned int set, int variant)
{
	struct probes_report *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	r->tgid = 4242;
	r->set = set;
	if (set & PROBES_FAULTTIME)
		r->set |= PROBES_FAULTS;
	r->start_ns = T0 + 1000;
	r->end_ns = T0 + 12345678;
	fill_events(r, variant);
	fill_exits(r);
	fill_hists(r, set, variant);
	r->threads_dropped = variant == 2 ? 5 : 0;
	fill_threads(r);
	if ((r->set & PROBES_FAULTS) && variant != 1) {
		fill_timeline(r, set);
		r->timeline_lost = variant == 2 ? 17 : 0;
	}
	return r;
}

static void write_json(FILE *out, const struct probes_report *r,
		       const struct probe_report_opts *o)
{
	json_t *j = probe_report__json(r, o);
	char *text = json_dumps(j, JSON_INDENT(2));

	fprintf(out, "%s\n", text);
	free(text);
	json_decref(j);
}

static void write_rows(FILE *out)
{
	char names[256];

	fprintf(out, "rows: %s\n", probes__set_names(names, sizeof(names),
						     PROBES_ALL, ",", ","));
}

static void write_all(FILE *out)
{
	const unsigned int sets[] = {
		PROBES_KVMEXIT, PROBES_DEFAULT, PROBES_ALL, PROBES_FAULTTIME,
		PROBES_MMAPLOCK, PROBES_KVMIOCTL | PROBES_SCHEDLAT,
		PROBES_FAULTS };
	static const char *const names[] = { "setup", "boot", "workload",
					     "teardown" };
	struct probe_report_opts o = { .origin_ns = T0 };

	write_rows(out);
	for (uint64_t i = 0; i < 4; i++)
		o.phases[o.nr_phases++] = (struct report_phase){ names[i],
			T0 + 1000000 + i * 2500000,
			T0 + 1000000 + (i + 1) * 2500000 };
	for (size_t s = 0; s < sizeof(sets) / sizeof(sets[0]); s++)
		for (int v = 0; v < 3; v++) {
			struct probes_report *r = make(sets[s], v);

			fprintf(out, "==== set %#x variant %d\n", sets[s], v);
			probe_report__print(out, r, &o);
			/* JSON of two: all sections observed, and none. */
			if ((sets[s] == PROBES_FAULTTIME && v == 0) ||
			    (sets[s] == PROBES_KVMEXIT && v == 1))
				write_json(out, r, &o);
			if (sets[s] == PROBES_FAULTTIME && v == 0)
				probe_report__write_csv(out, r, &o);
			probes__report_free(r);
		}
}

static char *slurp(FILE *f, long *size)
{
	char *text;

	fseek(f, 0, SEEK_END);
	*size = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)*size + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)*size, f), *size);
	return text;
}

static void test_report_matches_golden(void **state)
{
	FILE *got = tmpfile(), *want = fopen(GOLDEN, "r");
	long got_size, want_size;
	char *a, *b;

	(void)state;
	assert_non_null(got);
	assert_non_null(want);
	write_all(got);
	a = slurp(got, &got_size);
	b = slurp(want, &want_size);
	for (long i = 0; i < got_size && i < want_size; i++)
		if (a[i] != b[i]) {
			print_error("first difference at byte %ld: ...%.60s\n",
				    i, a + (i > 30 ? i - 30 : 0));
			break;
		}
	assert_int_equal(got_size, want_size);
	assert_memory_equal(a, b, (size_t)got_size);
	free(a);
	free(b);
	fclose(got);
	fclose(want);
}

/* Whether the golden file was made with this probe table. */
static bool same_rows(void)
{
	char want[300] = "", got[300] = "";
	FILE *f = fopen(GOLDEN, "r"), *mem = fmemopen(got, sizeof(got), "w");

	if (f && !fgets(want, sizeof(want), f))
		want[0] = '\0';
	if (f)
		fclose(f);
	if (mem) {
		write_rows(mem);
		fclose(mem);
	}
	if (!strcmp(want, got))
		return true;
	printf("skipping: the golden file is of another probe table (%.*s); "
	       "regenerate it with test_probe_golden --write FILE\n",
	       (int)strcspn(want, "\n"), want);
	return false;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_matches_golden),
	};

	if (argc == 3 && !strcmp(argv[1], "--write")) {
		FILE *f = fopen(argv[2], "w");

		if (!f)
			return 1;
		write_all(f);
		return fclose(f) ? 1 : 0;
	}
	if (!same_rows())
		return 77;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
