/* Unit tests for the files base/output.c makes beside user data: the
 * umask gives their mode with no chmod by path, a link at the final name
 * is replaced and never written through, and no temporary outlives a
 * failure. */
#include "output.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

static int chmod_calls;

/* Replaces libc's for this binary: a chmod by path follows whatever lies
 * at the path by then, so output.c must never need one. Counted and
 * refused, so a writer that relied on it also ends with the wrong mode. */
int chmod(const char *path, mode_t mode)
{
	(void)path;
	(void)mode;
	chmod_calls++;
	errno = EPERM;
	return -1;
}

static char dir[256];

static int make_dir(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s/coldstart-output-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	chmod_calls = 0;
	return mkdtemp(dir) ? 0 : -1;
}

static int remove_entry(const char *path, const struct stat *st, int type,
			struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

static int remove_dir(void **state)
{
	(void)state;
	return nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* Entries of dir, "." and ".." left out. */
static int entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static void read_back(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* The mode is 0666 less the umask, from open() itself. */
static void test_mode_from_umask(void **state)
{
	char path[PATH_MAX], text[64];
	struct stat st;
	mode_t old = umask(027);

	(void)state;
	assert_int_equal(output__write_file(dir, "a.txt", "hello\n", 6), 0);
	umask(old);
	snprintf(path, sizeof(path), "%s/a.txt", dir);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(chmod_calls, 0);
	read_back(path, text, sizeof(text));
	assert_string_equal(text, "hello\n");
	assert_int_equal(entries(), 1);
}

/* A symlink at the final name is replaced by the new file; the file it
 * pointed at is left as it was. */
static void test_link_at_final_name_replaced(void **state)
{
	char victim[PATH_MAX], link[PATH_MAX], text[64];
	struct stat st;
	FILE *f;

	(void)state;
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(link, sizeof(link), "%s/out.json", dir);
	f = fopen(victim, "w");
	assert_non_null(f);
	fputs("victim\n", f);
	fclose(f);
	assert_int_equal(symlink("victim", link), 0);
	assert_int_equal(output__write_file(dir, "out.json", "{}\n", 3), 0);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	read_back(victim, text, sizeof(text));
	assert_string_equal(text, "victim\n");
	read_back(link, text, sizeof(text));
	assert_string_equal(text, "{}\n");
	assert_int_equal(entries(), 2);
}

/* The temporary is a new file in the destination directory, named
 * ".NAME." and six random characters; abort removes it. */
static void test_temp_beside_and_aborted(void **state)
{
	struct output_file f, g;
	char path[PATH_MAX], prefix[PATH_MAX];

	(void)state;
	snprintf(path, sizeof(path), "%s/plot.png", dir);
	snprintf(prefix, sizeof(prefix), "%s/.plot.png.", dir);
	assert_int_equal(output__file_open(&f, path, 0666), 0);
	assert_int_equal(output__file_open(&g, path, 0666), 0);
	assert_true(f.fd >= 0 && g.fd >= 0);
	assert_int_equal(strncmp(f.tmp, prefix, strlen(prefix)), 0);
	assert_int_equal(strlen(f.tmp), strlen(prefix) + 6);
	assert_string_not_equal(f.tmp, g.tmp);
	assert_int_equal(entries(), 2);
	output__file_abort(&f);
	output__file_abort(&g);
	assert_int_equal(entries(), 0);
	assert_int_equal(access(path, F_OK), -1);
}

/* A rename that fails (a directory holds the final name) is an error
 * that leaves no temporary behind. */
static void test_failed_rename_removes_temp(void **state)
{
	char sub[PATH_MAX], inner[PATH_MAX];
	struct output_file f;

	(void)state;
	snprintf(sub, sizeof(sub), "%s/taken", dir);
	snprintf(inner, sizeof(inner), "%s/taken/x", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(mkdir(inner, 0755), 0);
	assert_int_equal(output__file_open(&f, sub, 0666), 0);
	assert_int_equal(output__write_all(f.fd, "x", 1), 0);
	assert_true(output__file_commit(&f, true) < 0);
	assert_int_equal(f.fd, -1);
	assert_int_equal(entries(), 1);
	assert_true(output__write_file(dir, "taken", "x", 1) < 0);
	assert_int_equal(entries(), 1);
}

/* A new directory with the umask's mode, no chmod. */
static void test_mkdtemp_mode(void **state)
{
	char tmpl[PATH_MAX];
	struct stat st;
	mode_t old = umask(027);
	int ret;

	(void)state;
	snprintf(tmpl, sizeof(tmpl), "%s/snap.tmp.1.XXXXXX", dir);
	ret = output__mkdtemp(tmpl);
	umask(old);
	assert_int_equal(ret, 0);
	assert_null(strstr(tmpl, "XXXXXX"));
	assert_int_equal(lstat(tmpl, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0750);
	assert_int_equal(chmod_calls, 0);
	snprintf(tmpl, sizeof(tmpl), "%s/no-template", dir);
	assert_int_equal(output__mkdtemp(tmpl), -EINVAL);
}

/* A word a shell reads back as the same one argument. */
static void test_shell_word(void **state)
{
	const char *const cases[][2] = {
		{ "plain/path_1.0:x=y,z@h+-", "plain/path_1.0:x=y,z@h+-" },
		{ "", "''" },
		{ "two words", "'two words'" },
		{ "python3 -c 'print(6*7)'",
		  "'python3 -c '\\''print(6*7)'\\'''" },
		{ "$HOME;rm -rf `x`", "'$HOME;rm -rf `x`'" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[128] = "";
		FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");

		assert_non_null(f);
		output__shell_word(f, cases[i][0]);
		fclose(f);
		assert_string_equal(buf, cases[i][1]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_mode_from_umask,
						make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_link_at_final_name_replaced,
						make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_temp_beside_and_aborted,
						make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_failed_rename_removes_temp,
						make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_mkdtemp_mode,
						make_dir, remove_dir),
		cmocka_unit_test(test_shell_word),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
