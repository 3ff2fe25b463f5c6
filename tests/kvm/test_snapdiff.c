/* KVM tests of diff snapshots and the huge-page restore strategies: a base
 * at READY, diffs from the dirty log at later PHASEs, a full snapshot at
 * the same point; base plus diffs merged equals the full snapshot byte for
 * byte and finishes with the uninterrupted checksum; wrong bases and
 * failed merges are refused without leaving files. Huge-page variants run
 * on hugetlb pages the test reserves (as root) and gives back. Exits 77
 * without /dev/kvm. */
#include "diff.h"
#include "err.h"
#include "mem_restore.h"
#include "mem_source.h"
#include "probe.h"
#include "snapshot.h"
#include "snaptest.h"
#include "units.h"
#include "vm.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#define SECOND 1000000000ull
#define MEM (16 * MiB)

static const char *path(const char *name)
{
	static char buf[4][512];
	static unsigned int next;
	char *p = buf[next++ % 4];

	snaptest__path(p, sizeof(buf[0]), name);
	return p;
}

static struct probe_params workload(void)
{
	return (struct probe_params){ .init_bytes = 6 * MiB,
				      .ws_bytes = 4 * MiB,
				      .pattern = PROBE_PATTERN_RANDOM,
				      .op = PROBE_OP_WRITE, .seed = 5,
				      .compute_iters = 2000 };
}

static void identity(const char *dir, struct snapshot_id *id)
{
	struct snapshot s;

	if (snapshot__open_layer(&s, dir) < 0)
		fail_msg("open %s: %s", dir, err__last());
	assert_int_equal(snapdiff__identity(&s, id), 0);
	snapshot__close(&s);
}

/* Pauses the running VM at `phase`, saves the pages written since the
 * last dirty-log read as a diff of `base`; returns the dirty pages. */
static uint64_t diff_at(struct vm *vm, struct probe *probe, uint32_t phase,
			const char *base, const char *name)
{
	uint64_t words = vm->mem.size / 4096 / 64, n = 0;
	uint64_t *dirty = calloc(words, 8);
	struct snapshot_stats st;
	struct snapshot_id id;

	assert_non_null(dirty);
	probe__pause_at(probe, phase);
	vm__resume(vm);
	assert_int_equal(vm__wait_paused(vm, 30 * SECOND), 0);
	assert_int_equal(vm__dirty_log_get(vm, dirty), 0);
	identity(base, &id);
	if (snapshot__save_diff(vm, probe, path(name), 0, &id, dirty, &st) < 0)
		fail_msg("save diff: %s", err__last());
	for (uint64_t i = 0; i < words; i++)
		n += (uint64_t)__builtin_popcountll(dirty[i]);
	assert_int_equal(st.mem_data_bytes, st.mem_file_bytes);
	assert_true(st.mem_data_bytes <= n * 4096);
	free(dirty);
	return n;
}

/* base at READY, d1 at PHASE request, d2 and full at PHASE compute, all
 * from one VM with `vcpus` vCPUs. */
static void take_chain(unsigned int vcpus)
{
	struct vm_config cfg = { .mem_size = MEM, .nr_vcpus = vcpus,
				 .strict_io = true };
	struct probe_params p = workload();
	struct snapshot_stats st;
	struct probe probe;
	struct vm *vm;
	uint64_t d1, d2;

	snaptest__start_paused(&cfg, &p, &vm, &probe);
	assert_int_equal(snapshot__save(vm, &probe, path("base"), 0, &st), 0);
	assert_int_equal(vm__dirty_log_start(vm), 0);
	d1 = diff_at(vm, &probe, PROBE_PHASE_REQUEST, path("base"), "d1");
	d2 = diff_at(vm, &probe, PROBE_PHASE_COMPUTE, path("d1"), "d2");
	assert_int_equal(snapshot__save(vm, &probe, path("full"), 0, &st), 0);
	/* Between READY and PHASE request only ucall blocks and stacks
	 * change; the request phase writes every working-set page. */
	assert_true(d1 >= 1 && d1 <= 4u * vcpus);
	assert_true(d2 >= p.ws_bytes / 4096);
	assert_true(d2 < p.ws_bytes / 4096 + 8u * vcpus);
	vm__destroy(vm);
}

static void read_all(const char *file, uint8_t **buf, size_t *len)
{
	struct stat st;
	int fd = open(file, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	*len = (size_t)st.st_size;
	*buf = malloc(*len);
	assert_non_null(*buf);
	assert_int_equal(pread(fd, *buf, *len, 0), (ssize_t)*len);
	close(fd);
}

/* Memory files equal byte for byte; state files hold the same sections
 * with the same contents, but for the clocks (kvmclock, and the TSC among
 * the MSRs), which advance between two saves of one paused VM. */
static void assert_same_snapshot(const char *a, const char *b)
{
	struct snap_reader ra, rb;
	struct snap_section sa, sb;
	const void *pa, *pb;
	size_t ca = 0, cb = 0;
	char fa[600], fb[600];
	uint8_t *x, *y, *u, *v;
	size_t lx, ly;

	snprintf(fa, sizeof(fa), "%s/memory", a);
	snprintf(fb, sizeof(fb), "%s/memory", b);
	read_all(fa, &x, &lx);
	read_all(fb, &y, &ly);
	assert_int_equal(lx, ly);
	assert_memory_equal(x, y, lx);
	free(x);
	free(y);
	snprintf(fa, sizeof(fa), "%s/state", a);
	snprintf(fb, sizeof(fb), "%s/state", b);
	read_all(fa, &u, &lx);
	read_all(fb, &v, &ly);
	assert_int_equal(snap__parse(&ra, u, lx), 0);
	assert_int_equal(snap__parse(&rb, v, ly), 0);
	while (snap__next(&ra, &ca, &sa, &pa)) {
		assert_int_equal(snap__next(&rb, &cb, &sb, &pb), 1);
		assert_int_equal(sa.type, sb.type);
		assert_int_equal(sa.index, sb.index);
		assert_int_equal(sa.len, sb.len);
		if (sa.type != SNAP_VM_CLOCK && sa.type != SNAP_VCPU_MSRS)
			assert_memory_equal(pa, pb, sa.len);
	}
	assert_int_equal(snap__next(&rb, &cb, &sb, &pb), 0);
	free(u);
	free(v);
}

static void restore_and_check(const char *dir, const char *strategy)
{
	struct snapshot snap;
	struct probe probe;
	struct vm *vm;
	int ret;

	if (snapshot__open(&snap, dir) < 0)
		fail_msg("open %s: %s", dir, err__last());
	ret = snapshot__restore(&kvm, &snap, mem_restore__strategy(strategy),
				NULL, &vm, &probe);
	if (ret < 0)
		fail_msg("restore %s with %s: %s", dir, strategy, err__last());
	assert_int_equal(vm__start(vm), 0);
	if (vm__wait(vm, 30 * SECOND) != VM_COMPLETED)
		fail_msg("%s: %s", strategy, vm->reason);
	assert_int_equal(probe.state.done, snap.cfg.nr_vcpus);
	assert_int_equal(probe.state.checksum,
			 probe__expected_checksum(&snap.params,
						  snap.cfg.nr_vcpus));
	vm__destroy(vm);
	snapshot__close(&snap);
}

static int merge2(const char *base, const char *d1, const char *d2,
		  const char *out)
{
	char *diffs[2] = { (char *)d1, (char *)d2 };
	struct snapshot_stats st;

	return snapshot__merge(base, diffs, d2 ? 2 : 1, out, 0, &st);
}

static void test_merge_equals_full(void **state)
{
	(void)state;
	take_chain(2);
	if (merge2(path("base"), path("d1"), path("d2"), path("merged")) < 0)
		fail_msg("merge: %s", err__last());
	assert_same_snapshot(path("merged"), path("full"));
	restore_and_check(path("merged"), "eager");
	restore_and_check(path("full"), "mmap");
	/* d2 was taken against d1, not against a merge of base and d1. */
	assert_int_equal(merge2(path("base"), path("d1"), NULL, path("m1")), 0);
	assert_int_equal(merge2(path("m1"), path("d2"), NULL, path("m2")), -EINVAL);
	assert_non_null(strstr(err__last(), "was not taken against"));
}

/* The memory an open diff resolves to is, byte for byte, the full
 * snapshot's taken at the same point: through two links, the second
 * written over the first's memfd in place. */
static void assert_resolves_to(const char *diff, const char *full)
{
	struct snapshot s;
	uint8_t *want, *got;
	size_t len;
	char file[PATH_MAX];

	snprintf(file, sizeof(file), "%s/memory", full);
	read_all(file, &want, &len);
	assert_int_equal(snapshot__open(&s, diff), 0);
	assert_int_equal(s.chain_len, 2);
	got = malloc(len);
	assert_non_null(got);
	assert_int_equal(pread(s.mem_fd, got, len, 0), (ssize_t)len);
	assert_memory_equal(got, want, len);
	snapshot__close(&s);
	free(got);
	free(want);
}

static void test_diff_restores_directly(void **state)
{
	/* A diff restores through its recorded base chain with any
	 * strategy, to the uninterrupted checksum. */
	(void)state;
	assert_resolves_to(path("d2"), path("full"));
	restore_and_check(path("d2"), "uffd");
	restore_and_check(path("d2"), "mmap");
	restore_and_check(path("d1"), "eager");
}

static void test_wrong_base_refused(void **state)
{
	struct vm_config cfg = { .mem_size = MEM, .nr_vcpus = 1,
				 .strict_io = true };
	struct probe_params p = workload();
	struct snapshot_stats st;
	struct snapshot snap;
	struct probe probe;
	struct vm *vm;

	(void)state;
	/* Another snapshot of the same shape is not d1's base. */
	snaptest__start_paused(&cfg, &p, &vm, &probe);
	assert_int_equal(snapshot__save(vm, &probe, path("other"), 0, &st), 0);
	vm__destroy(vm);
	assert_int_equal(merge2(path("other"), path("d1"), NULL, path("bad")),
			 -EINVAL);
	assert_non_null(strstr(err__last(), "was not taken against"));
	assert_int_not_equal(access(path("bad"), F_OK), 0);
	/* A full snapshot where a diff is expected. */
	assert_int_equal(merge2(path("base"), path("full"), NULL, path("bad")),
			 -EINVAL);
	assert_non_null(strstr(err__last(), "not a diff"));
	/* The base replaced under its recorded path: the diff is refused on
	 * open, naming both. */
	assert_int_equal(rename(path("base"), path("base.orig")), 0);
	assert_int_equal(rename(path("other"), path("base")), 0);
	assert_int_equal(snapshot__open(&snap, path("d1")), -EINVAL);
	assert_non_null(strstr(err__last(), "was not taken against"));
	/* And a missing base is named. */
	assert_int_equal(rename(path("base"), path("other")), 0);
	assert_true(snapshot__open(&snap, path("d1")) < 0);
	assert_non_null(strstr(err__last(), "whose base"));
	assert_int_equal(rename(path("base.orig"), path("base")), 0);
	restore_and_check(path("d1"), "mmap");
}

static int count_entries(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static void test_merge_atomic(void **state)
{
	char small[600], out[700];

	(void)state;
	/* An existing output is kept unless replaced. */
	assert_int_equal(merge2(path("base"), path("d1"), path("d2"),
				path("full")), -EEXIST);
	assert_same_snapshot(path("merged"), path("full"));
	/* Out of space half-way: no output, no temporary directory. */
	snaptest__path(small, sizeof(small), "small");
	assert_int_equal(mkdir(small, 0755), 0);
	if (mount("coldstart-test", small, "tmpfs", 0, "size=1m") < 0) {
		fprintf(stderr, "skipping the out-of-space merge: mount: %s\n",
			strerror(errno));
		return;
	}
	snprintf(out, sizeof(out), "%s/m", small);
	assert_int_equal(merge2(path("base"), path("d1"), path("d2"), out),
			 -ENOSPC);
	assert_int_equal(count_entries(small), 0);
	umount(small);
}

/* hugetlb pages for the huge-page tests: reserved here as root, the old
 * pool size restored afterwards. */
static const char nr_path[] = "/proc/sys/vm/nr_hugepages";
static long old_nr = -1;

static long read_long(const char *file)
{
	FILE *f = fopen(file, "r");
	long v = -1;

	if (f && fscanf(f, "%ld", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

static int write_long(const char *file, long v)
{
	FILE *f = fopen(file, "w");
	int ok = f && fprintf(f, "%ld\n", v) > 0;

	if (f && fclose(f) != 0)
		ok = 0;
	return ok ? 0 : -1;
}

static bool reserve_hugepages(long n)
{
	old_nr = read_long(nr_path);
	if (old_nr < 0 || write_long(nr_path, old_nr + n) < 0) {
		old_nr = -1;
		return false;
	}
	return mem__need_hugepages((size_t)n * MEM_ALIGN, "test") == 0;
}

static void give_back_hugepages(void)
{
	if (old_nr >= 0)
		write_long(nr_path, old_nr);
	old_nr = -1;
}

/* Restores with a huge-page strategy; returns what it did. */
static struct mem_stats restore_huge(const char *dir, const char *strategy)
{
	struct snapshot snap;
	struct probe probe;
	struct mem_stats ms;
	struct vm *vm;

	assert_int_equal(snapshot__open(&snap, dir), 0);
	if (snapshot__restore(&kvm, &snap, mem_restore__strategy(strategy),
			      NULL, &vm, &probe) < 0)
		fail_msg("%s: %s", strategy, err__last());
	assert_int_equal(vm__start(vm), 0);
	if (vm__wait(vm, 30 * SECOND) != VM_COMPLETED)
		fail_msg("%s: %s", strategy, vm->reason);
	assert_int_equal(probe.state.checksum,
			 probe__expected_checksum(&snap.params,
						  snap.cfg.nr_vcpus));
	mem__settle(&vm->mem);
	ms = vm->mem.stats;
	vm__destroy(vm);
	snapshot__close(&snap);
	return ms;
}

static void test_hugetlb_variants(void **state)
{
	struct mem_stats ms;

	(void)state;
	/* 4 more than needed: kvm.snapshot may take 4 of them meanwhile
	 * (ctest -j2); fewer than cli.snapdiff's 16, whose exit-77 check
	 * must still find the pool short. */
	if (!reserve_hugepages((long)(MEM / MEM_ALIGN) + 4)) {
		give_back_hugepages();
		skip();
	}
	ms = restore_huge(path("merged"), "uffd-huge");
	/* Whole 2 MiB pages: at most one fault per huge page of memory. */
	if (ms.faults < 1 || ms.faults > MEM / MEM_ALIGN)
		fail_msg("uffd-huge served %llu faults for %llu huge pages",
			 (unsigned long long)ms.faults,
			 (unsigned long long)(MEM / MEM_ALIGN));
	assert_int_equal(ms.bytes_read % MEM_ALIGN, 0);
	ms = restore_huge(path("d2"), "eager-huge");
	assert_int_equal(ms.faults, 0);
	assert_true(ms.bytes_read >= workload().init_bytes);
	give_back_hugepages();
}

static void test_hugetlb_missing_is_enotsup(void **state)
{
	struct snapshot snap;
	struct probe probe;
	struct vm *vm;

	(void)state;
	if (mem__need_hugepages(MEM, "test") == 0)
		skip(); /* the host has a pool of its own */
	assert_int_equal(snapshot__open(&snap, path("merged")), 0);
	for (const char *const *s = (const char *const[]){ "uffd-huge",
							  "eager-huge", NULL };
	     *s; s++) {
		assert_int_equal(snapshot__restore(&kvm, &snap,
						   mem_restore__strategy(*s),
						   NULL, &vm, &probe),
				 -ENOTSUP);
		assert_non_null(strstr(err__last(), "nr_hugepages"));
	}
	snapshot__close(&snap);
}

static void test_thp_variant(void **state)
{
	struct mem_stats ms;

	(void)state;
	if (mem_source__thp_available() < 0)
		skip();
	ms = restore_huge(path("merged"), "eager-thp");
	assert_true(ms.bytes_read >= workload().init_bytes);
}

int main(void)
{
	/* In order: later tests use the snapshots earlier ones made. */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_equals_full),
		cmocka_unit_test(test_diff_restores_directly),
		cmocka_unit_test(test_wrong_base_refused),
		cmocka_unit_test(test_merge_atomic),
		cmocka_unit_test(test_hugetlb_missing_is_enotsup),
		cmocka_unit_test(test_hugetlb_variants),
		cmocka_unit_test(test_thp_variant),
	};

	return snaptest__main("snapdiff", tests, give_back_hugepages);
}
