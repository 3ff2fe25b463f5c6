/* Pure logic of the benchmark drivers: boot's phase order, rate's default
 * concurrency levels, density's line fit, VMs per GiB and budget
 * prediction, memstat's smaps arithmetic and text opening; and the held
 * child's release (end of file after EINTR, a child that ignores its
 * release). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "boot.h"
#include "child.h"
#include "density.h"
#include "memstat.h"
#include "rate.h"
#include "result.h"
#include "result_new.h"
#include "report_driver.h"
#include "soak.h"
#include "commands.h"
#include "suite.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>

static void phase_order_by_mean_time(void **state)
{
	/* 4 events x 3 samples; event 1 is missing in one sample, event 3
	 * happens before event 2 on average. */
	const double t[] = {
		0, 0, 0,
		5, NAN, 5,
		30, 31, 29,
		10, 12, 11,
	};
	size_t order[4];

	(void)state;
	assert_int_equal(boot__phase_order(t, 4, 3, order), 3);
	assert_int_equal(order[0], 0);
	assert_int_equal(order[1], 3);
	assert_int_equal(order[2], 2);
	assert_int_equal(boot__phase_order(t, 4, 0, order), 0);
}

static void default_levels(void **state)
{
	unsigned int l[16];

	(void)state;
	assert_int_equal(rate__default_levels(2, l, 16), 3);
	assert_int_equal(l[0], 1);
	assert_int_equal(l[1], 2);
	assert_int_equal(l[2], 4);
	assert_int_equal(rate__default_levels(3, l, 16), 4); /* 1 2 4 6 */
	assert_int_equal(l[3], 6);
	assert_int_equal(rate__default_levels(1, l, 16), 2); /* 1 2 */
	assert_int_equal(rate__default_levels(64, l, 3), 3);
}

static void fit_exact_line(void **state)
{
	const double x[] = { 1, 2, 3, 4 }, y[] = { 1500, 2500, 3500, 4500 };
	double slope, icpt;

	(void)state;
	assert_int_equal(density__fit(x, y, 4, &slope, &icpt), 0);
	assert_float_equal(slope, 1000, 1e-9);
	assert_float_equal(icpt, 500, 1e-9);
}

static void fit_noisy_line(void **state)
{
	/* Least squares of (1,1), (2,3), (3,2): slope 0.5, intercept 1. */
	const double x[] = { 1, 2, 3 }, y[] = { 1, 3, 2 };
	double slope, icpt;

	(void)state;
	assert_int_equal(density__fit(x, y, 3, &slope, &icpt), 0);
	assert_float_equal(slope, 0.5, 1e-12);
	assert_float_equal(icpt, 1, 1e-12);
}

static void fit_rejects_degenerate(void **state)
{
	const double x[] = { 2, 2 }, y[] = { 1, 3 };
	double slope, icpt;

	(void)state;
	assert_int_equal(density__fit(x, y, 1, &slope, &icpt), -EINVAL);
	assert_int_equal(density__fit(x, y, 2, &slope, &icpt), -EINVAL);
}

static void vms_per_gib(void **state)
{
	(void)state;
	assert_float_equal(density__vms_per_gib(1024), 1024, 1e-9);
	assert_float_equal(density__vms_per_gib(4096), 256, 1e-9);
	assert_float_equal(density__vms_per_gib(0), 0, 0);
	assert_float_equal(density__vms_per_gib(-5), 0, 0);
}

static void predict_next_vm(void **state)
{
	const double vms[] = { 1, 2, 3 }, line[] = { 6000, 8000, 10000 };
	const double falling[] = { 6000, 5900, 5800 }, bent[] = { 6000, 7000 };

	(void)state;
	/* After one VM, the next is expected to cost as much again. */
	assert_float_equal(density__predict_next(vms, line, 1), 12000, 1e-9);
	assert_float_equal(density__predict_next(vms, line, 3), 12000, 1e-9);
	assert_float_equal(density__predict_next(vms, bent, 2), 8000, 1e-9);
	/* Noise that tilts the fit down never predicts memory freed. */
	assert_float_equal(density__predict_next(vms, falling, 3), 5800, 1e-9);
}

static void add_lines(struct memstat *m, const char *const *lines, bool guest)
{
	for (size_t i = 0; lines[i]; i++)
		memstat__add_line(m, lines[i], guest);
}

static void smaps_lines(void **state)
{
	static const char *const rollup[] = {
		"55d0c0000000-7ffd00000000 ---p 00000000 00:00 0  [rollup]\n",
		"Rss:               20000 kB\n", "Pss:               15000 kB\n",
		"Pss_Anon:           9000 kB\n", "Shared_Clean:       6000 kB\n",
		"Private_Clean:      1000 kB\n", "Private_Dirty:      8000 kB\n",
		"VmFlags: rd wr mr mw me ac sd mg\n", NULL,
	};
	static const char *const guest[] = {
		"Rss:                8192 kB\n", "Pss:                6144 kB\n",
		"Private_Clean:         0 kB\n", "Private_Dirty:      4096 kB\n",
		"Anonymous:          2048 kB\n", "AnonHugePages:      2048 kB\n",
		"VmFlags: rd wr mr mw me ac sd\n", NULL,
	};
	struct memstat m = { 0 };

	(void)state;
	add_lines(&m, rollup, false);
	add_lines(&m, guest, true);
	assert_int_equal(m.rss_kib, 20000);
	assert_int_equal(m.pss_kib, 15000); /* Pss_Anon is not Pss */
	assert_int_equal(m.uss_kib, 9000);
	assert_int_equal(m.guest_rss_kib, 8192);
	assert_int_equal(m.guest_pss_kib, 6144);
	assert_int_equal(m.guest_private_kib, 4096);
	assert_int_equal(m.guest_anon_kib, 2048); /* not AnonHugePages too */
	/* Only the guest mapping's flags count, and only the whole word. */
	assert_false(m.guest_mergeable);
	memstat__add_line(&m, "VmFlags: rd wr mgx\n", true);
	assert_false(m.guest_mergeable);
	memstat__add_line(&m, "VmFlags: rd wr mg\n", true);
	assert_true(m.guest_mergeable);
}

static void beyond_guest(void **state)
{
	struct memstat m = { .rss_kib = 20000, .pss_kib = 15000,
			     .uss_kib = 9000, .guest_rss_kib = 8192,
			     .guest_pss_kib = 6144, .guest_private_kib = 4096 };
	struct memstat_beyond b;

	(void)state;
	memstat__beyond_guest(&m, &b);
	assert_int_equal(b.rss_kib, 20000 - 8192);
	assert_int_equal(b.pss_kib, 15000 - 6144);
	assert_int_equal(b.uss_kib, 9000 - 4096);
	assert_int_equal(memstat__overhead_kib(&m), b.uss_kib);
	/* smaps rounds per mapping: a guest share above the total is 0. */
	m.pss_kib = 6000;
	memstat__beyond_guest(&m, &b);
	assert_int_equal(b.pss_kib, 0);
}

/* density's newest VM is measured after its executable files were
 * opened as a later start opens them: memstat__open_text opens the
 * binary a process runs (seen here through inotify), once per file;
 * a process that is gone is an error. */
static void open_text_opens_the_binary(void **state)
{
	char exe[PATH_MAX], ev[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC), opened;
	pid_t gone = fork();

	(void)state;
	assert_true(n > 0 && fd >= 0 && gone >= 0);
	if (gone == 0)
		_exit(0);
	waitpid(gone, NULL, 0);
	exe[n] = '\0';
	assert_true(inotify_add_watch(fd, exe, IN_OPEN) >= 0);
	opened = memstat__open_text(getpid());
	/* the binary, libc, cmocka...: each once */
	assert_true(opened >= 3);
	n = read(fd, ev, sizeof(ev));
	assert_int_equal(n, (ssize_t)sizeof(struct inotify_event));
	assert_true(((struct inotify_event *)ev)->mask & IN_OPEN);
	close(fd);
	assert_int_equal(memstat__open_text(gone), -ENOENT);
}

/* A keyed number from a /proc-style file: the line must start with the
 * key; a missing key or file is -1. */
static void file_number(void **state)
{
	char path[] = "/tmp/coldstart-filenum.XXXXXX";
	int fd = mkstemp(path);
	static const char text[] = "rchar: 10\nxread_bytes: 7\n"
				   "read_bytes: 4096\nksm_merging_pages 12\n";

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1),
			 (ssize_t)sizeof(text) - 1);
	close(fd);
	assert_int_equal(memstat__file_number(path, "read_bytes:"), 4096);
	assert_int_equal(memstat__file_number(path, "ksm_merging_pages"), 12);
	assert_int_equal(memstat__file_number(path, "write_bytes:"), -1);
	unlink(path);
	assert_int_equal(memstat__file_number(path, "read_bytes:"), -1);
}

static void ksm_run_text(void **state)
{
	(void)state;
	assert_string_equal(memstat__ksm_run_text(0), "off");
	assert_string_equal(memstat__ksm_run_text(1), "on");
	assert_string_equal(memstat__ksm_run_text(2), "off, unmerging");
	assert_string_equal(memstat__ksm_run_text(-1), "unknown");
}

static void await_release_after_eintr(void **state)
{
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], "x", 1), 1);
	close(p[1]);
	/* A stale EINTR once made end of file a busy loop; the alarm's
	 * default action ends the test instead of hanging it. */
	errno = EINTR;
	alarm(10);
	assert_int_equal(child__await_release(p[0]), 0);
	alarm(0);
	close(p[0]);
}

static void release_kills_a_stuck_child(void **state)
{
	char *stuck[] = { "/bin/sh", "-c", "echo held; exec sleep 60", NULL };
	char *polite[] = { "/bin/sh", "-c", "echo held; exec cat >/dev/null",
			   NULL };
	struct child_held h;
	char line[16];
	int status;

	(void)state;
	assert_int_equal(child__hold(polite, 5000, &h, line, sizeof(line)), 0);
	assert_string_equal(line, "held");
	status = child__release(&h, 5000);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(child__hold(stuck, 5000, &h, line, sizeof(line)), 0);
	assert_int_equal(child__release(&h, 100), -ETIMEDOUT);
	/* Killed and reaped: the pid no longer names our child. */
	assert_int_equal(waitpid(h.pid, &status, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

/* A child past its timeout is killed and reaped; one that ends in time
 * gives its status and rusage, at once (peers' wall time includes it). */
static void run_timeout_kills_a_late_child(void **state)
{
	char *late[] = { "/bin/sh", "-c", "exec sleep 60", NULL };
	char *quick[] = { "/bin/sh", "-c", "echo oops >&2; exit 3", NULL };
	char err[] = "/tmp/coldstart-unit-XXXXXX", text[16] = "";
	struct rusage ru;
	int status = 0, fd = mkstemp(err);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(child__run_timeout(quick, err, 5000, &status, &ru), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 3);
	assert_true(ru.ru_maxrss > 0);
	/* stderr went to the file */
	assert_int_equal(read(fd, text, sizeof(text) - 1), 5);
	assert_string_equal(text, "oops\n");
	close(fd);
	unlink(err);
	assert_int_equal(child__run_timeout(late, "/dev/null", 100, &status,
					    &ru), -ETIMEDOUT);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	assert_int_equal(waitpid(-1, &status, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

/* What a driver leaves out is listed once per part and reason. */
static void result_skip_lists_each_once(void **state)
{
	json_t *doc = result__new("unit", NULL);
	const json_t *list;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_non_null(doc);
	assert_int_equal(json_array_size(json_object_get(doc, "skipped")), 0);
	result__skip(doc, "cold cache", "on %s", "tmpfs");
	result__skip(doc, "cold cache", "on %s", "tmpfs");
	result__skip(doc, "strategy eager-huge", "no huge pages");
	list = json_object_get(doc, "skipped");
	assert_int_equal(json_array_size(list), 2);
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(list, 0), "why")), "on tmpfs");
	f = open_memstream(&text, &len);
	assert_non_null(f);
	result__print_skipped(f, doc, true);
	fclose(f);
	assert_non_null(strstr(text, "## Left out"));
	assert_non_null(strstr(text, "\n- strategy eager-huge: no huge pages\n"));
	free(text);
	json_decref(doc);
}

/* md as result__write stores it for `doc`, in a fresh directory. */
static char *written_md(const json_t *doc, const char *md)
{
	char dir[] = "/tmp/coldstart-result-XXXXXX", path[64], *text;
	FILE *f;
	long len;

	assert_non_null(mkdtemp(dir));
	assert_int_equal(result__write(doc, dir, md), 0);
	snprintf(path, sizeof(path), "%s/unit.md", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)len + 1);
	assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	unlink(path);
	snprintf(path, sizeof(path), "%s/unit.json", dir);
	unlink(path);
	rmdir(dir);
	return text;
}

/* A driver's Markdown from an emulated host says so under its title;
 * a native host's is written as the driver made it. */
static void result_md_says_emulated(void **state)
{
	json_t *doc = result__new("unit", NULL), *kvm;
	char *text;

	(void)state;
	assert_non_null(doc);
	kvm = json_object_get(json_object_get(doc, "sysinfo"), "kvm");
	assert_non_null(kvm);
	json_object_set_new(kvm, "emulated", json_null());
	text = written_md(doc, "# unit\n\nbody\n");
	assert_string_equal(text, "# unit\n\nbody\n");
	free(text);
	json_object_set_new(kvm, "emulated", json_string("qemu-tcg-svm"));
	text = written_md(doc, "# unit\n\nbody\n");
	assert_string_equal(text, "# unit\n\n> **Measured inside an emulated "
			    "SVM host (QEMU TCG): timings are functional; "
			    "compare only ratios within this run.**\n\n"
			    "body\n");
	free(text);
	json_decref(doc);
}

/* bench soak's KVM slab figure: caches named *kvm*, slabs x pages per
 * slab x page size; anything not slabinfo 2.x is refused. */
static void soak_kvm_slab_sums_kvm_caches(void **state)
{
	static const char text[] =
		"slabinfo - version: 2.1\n"
		"# name            <active_objs> <num_objs> <objsize> "
		"<objperslab> <pagesperslab> : tunables <limit> <batchcount> "
		"<sharedfactor> : slabdata <active_slabs> <num_slabs> "
		"<sharedavail>\n"
		"kvm_async_pf           0      0    136   30    1 : tunables    0"
		"    0    0 : slabdata      0      0      0\n"
		"kvm_vcpu               2      2  10432    3    8 : tunables    0"
		"    0    0 : slabdata      1      1      0\n"
		"kvm_mmu_page_header  120    120    184   22    1 : tunables    0"
		"    0    0 : slabdata      6      6      0\n"
		"dentry             12000  12000    192   21    1 : tunables    0"
		"    0    0 : slabdata    600    600      0\n";
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");
	json_t *by = json_object();
	long long kib = -1;

	(void)state;
	assert_non_null(f);
	assert_int_equal(soak__kvm_slab(f, 4096, &kib, by), 0);
	fclose(f);
	assert_int_equal(kib, 8 * 4 + 6 * 4); /* kvm_vcpu + mmu headers */
	assert_int_equal(json_object_size(by), 3);
	assert_int_equal(json_integer_value(json_object_get(by, "kvm_vcpu")), 32);
	assert_null(json_object_get(by, "dentry"));
	json_decref(by);
	f = fmemopen((void *)"MemTotal: 1 kB\n", 15, "r");
	assert_int_equal(soak__kvm_slab(f, 4096, &kib, NULL), -EINVAL);
	fclose(f);
}

/* One list of drivers: every descriptor the report iterates belongs to
 * exactly one driver that `coldstart bench` runs, under the same name,
 * and is the one the report finds for that name. */
static void report_descriptors_match_drivers(void **state)
{
	size_t n;
	const struct bench_driver *const *d = bench__drivers(&n);

	(void)state;
	for (size_t k = 0; k < report__nr_drivers; k++) {
		const struct report_driver *rd = report__drivers[k];
		size_t named = 0;

		for (size_t i = 0; i < n; i++)
			named += !strcmp(d[i]->name, rd->name);
		assert_int_equal(named, 1);
		assert_ptr_equal(report__driver(rd->name), rd);
		/* `help report` lists the plots from plot_what, the CSV
		 * files from csv_name: a plot must say what it shows */
		assert_true(!rd->plot || (rd->plot_what && *rd->plot_what));
		assert_true(!rd->csv == !rd->csv_name);
	}
}

/* The suite's arguments are the drivers' own: a driver in the suite has
 * quick and smoke arguments, all three Linux ones or none, all three
 * root-disk ones or none, or (one that measures the user's guest alone)
 * the Linux or root-disk ones only; a driver out of it none at all; the
 * suite never runs itself. */
static void suite_args_in_descriptors(void **state)
{
	size_t n, in_suite = 0;
	const struct bench_driver *const *d = bench__drivers(&n);

	(void)state;
	for (size_t i = 0; i < n; i++) {
		const struct suite_args *a = &d[i]->suite;
		bool linux_guest = a->linux_full != NULL;
		bool root = a->root_full != NULL;

		assert_true(root == (a->root_quick != NULL) &&
			    root == (a->root_smoke != NULL));
		if (!a->quick) {
			assert_null(a->smoke);
			assert_true(linux_guest == (a->linux_quick != NULL) &&
				    linux_guest == (a->linux_smoke != NULL));
			continue;
		}
		in_suite++;
		assert_string_not_equal(d[i]->name, "suite");
		assert_non_null(a->smoke);
		assert_true(linux_guest == (a->linux_quick != NULL) &&
			    linux_guest == (a->linux_smoke != NULL));
	}
	assert_true(in_suite > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(phase_order_by_mean_time),
		cmocka_unit_test(default_levels),
		cmocka_unit_test(fit_exact_line),
		cmocka_unit_test(fit_noisy_line),
		cmocka_unit_test(fit_rejects_degenerate),
		cmocka_unit_test(vms_per_gib),
		cmocka_unit_test(predict_next_vm),
		cmocka_unit_test(smaps_lines),
		cmocka_unit_test(beyond_guest),
		cmocka_unit_test(file_number),
		cmocka_unit_test(ksm_run_text),
		cmocka_unit_test(await_release_after_eintr),
		cmocka_unit_test(release_kills_a_stuck_child),
		cmocka_unit_test(run_timeout_kills_a_late_child),
		cmocka_unit_test(result_skip_lists_each_once),
		cmocka_unit_test(result_md_says_emulated),
		cmocka_unit_test(soak_kvm_slab_sums_kvm_caches),
		cmocka_unit_test(report_descriptors_match_drivers),
		cmocka_unit_test(suite_args_in_descriptors),
		cmocka_unit_test(open_text_opens_the_binary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
