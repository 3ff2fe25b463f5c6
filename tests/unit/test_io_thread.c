/* Unit tests for a device's I/O thread (vmm/io_thread.c): its function
 * runs once the thread has loaded the io filter, and a filter the kernel
 * refuses is an error of io_thread__ready() naming the device, with the
 * function never run and the thread still reaped by io_thread__join();
 * spares made ahead serve the devices opened later. */
#include "err.h"
#include "io_thread.h"
#include "seccomp.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

static int ran;

static void fn(void *arg)
{
	__atomic_store_n(&ran, *(int *)arg, __ATOMIC_RELEASE);
}

static void runs_with_its_filter(void **state)
{
	struct io_thread t;
	int arg = 7;

	(void)state;
	assert_int_equal(seccomp__configure(SECCOMP_KILL, false), 0);
	ran = 0;
	assert_int_equal(io_thread__start(&t, "dev", fn, &arg), 0);
	assert_int_equal(io_thread__ready(&t), 0);
	assert_int_equal(io_thread__ready(&t), 0); /* asked again: the same */
	io_thread__join(&t);
	assert_int_equal(ran, 7);
	assert_int_equal(seccomp__configure(SECCOMP_OFF, false), 0);
}

/* A spare made ahead takes the device; the one left over ends. */
static void spares_serve_the_devices(void **state)
{
	struct io_thread t;
	int arg = 9;

	(void)state;
	assert_int_equal(seccomp__configure(SECCOMP_KILL, false), 0);
	ran = 0;
	assert_int_equal(io_thread__prestart(2), 0);
	assert_int_equal(io_thread__start(&t, "dev", fn, &arg), 0);
	assert_int_equal(io_thread__ready(&t), 0);
	io_thread__join(&t);
	assert_int_equal(ran, 9);
	io_thread__drop_spares();
	io_thread__drop_spares(); /* none left: nothing to do */
	assert_int_equal(seccomp__configure(SECCOMP_OFF, false), 0);
}

/* In a child whose own filter makes seccomp(2) fail with EACCES, so
 * that every later thread's load fails: what the io thread reports. */
static int child_with_failing_loads(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_seccomp, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { 4, f };
	struct io_thread t;
	int arg = 7, ret;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0 ||
	    seccomp__configure(SECCOMP_KILL, false) < 0)
		return 10;
	ran = 0;
	if (io_thread__start(&t, "virtio-blk", fn, &arg) < 0)
		return 11;
	ret = io_thread__ready(&t);
	io_thread__join(&t);
	if (ret != -EACCES)
		return 12;
	if (!strstr(err__last(), "virtio-blk: ") ||
	    !strstr(err__last(), "io thread's seccomp filter"))
		return 13;
	return __atomic_load_n(&ran, __ATOMIC_ACQUIRE) ? 14 : 0;
}

static void a_refused_filter_is_an_error_of_ready(void **state)
{
	int status;
	pid_t pid = fork();

	(void)state;
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(child_with_failing_loads());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(runs_with_its_filter),
		cmocka_unit_test(spares_serve_the_devices),
		cmocka_unit_test(a_refused_filter_is_an_error_of_ready),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
