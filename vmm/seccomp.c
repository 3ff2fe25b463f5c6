/* Loads the build-time filters per thread role, reports a forbidden call
 * from the SIGSYS handler, and reads log mode's findings back from the
 * kernel log. */
#include "seccomp.h"

#include "err.h"
#include "seccomp_bpf.h"
#include "timeline.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static const char *const role_names[] = {
	[SECCOMP_MAIN] = "main", [SECCOMP_VCPU] = "vcpu",
	[SECCOMP_UFFD] = "uffd", [SECCOMP_REFILL] = "refill",
	[SECCOMP_IO] = "io",
};
static const char *const mode_names[] = {
	[SECCOMP_OFF] = "off", [SECCOMP_KILL] = "kill", [SECCOMP_LOG] = "log",
};

/* Threads' names in log mode, which the kernel's records carry. */
static const char *const thread_names[] = {
	[SECCOMP_MAIN] = "cs-main", [SECCOMP_VCPU] = "cs-vcpu",
	[SECCOMP_UFFD] = "cs-uffd", [SECCOMP_REFILL] = "cs-refill",
	[SECCOMP_IO] = "cs-io",
};

static enum seccomp_mode mode;
static int test_role = -1; /* COLDSTART_SECCOMP_TEST's role */
static char test_call[16];  /* and the forbidden call it makes */
static uint64_t installed[SECCOMP_NR_ROLES], install_ns;
static __thread int thread_role = -1;
static bool main_pending; /* the main filter is still to be loaded */
static pid_t main_tid;    /* by this thread */

const char *seccomp__role_name(enum seccomp_role role)
{
	return role < SECCOMP_NR_ROLES ? role_names[role] : "?";
}

const char *seccomp__mode_name(enum seccomp_mode m)
{
	return m < SECCOMP_NR_MODES ? mode_names[m] : "?";
}

int seccomp__parse_mode(const char *name, enum seccomp_mode *out)
{
	for (int m = 0; m < SECCOMP_NR_MODES; m++)
		if (!strcmp(name, mode_names[m])) {
			*out = (enum seccomp_mode)m;
			return 0;
		}
	return err__set(EINVAL, "--seccomp: '%s' is not kill, log or off",
			name);
}

const char *seccomp__syscall_name(long nr)
{
	if (nr < 0 || (size_t)nr >= seccomp_nr_syscall_names)
		return NULL;
	return seccomp_syscall_names[nr];
}

/* Appends s at *p (async-signal-safe). */
static void put(char **p, char *end, const char *s)
{
	while (*s && *p < end)
		*(*p)++ = *s++;
}

static void put_num(char **p, char *end, long v)
{
	char d[24];
	int n = 0;

	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10) > 0 && n < (int)sizeof(d));
	while (n > 0 && *p < end)
		*(*p)++ = d[--n];
}

/* A call outside the thread's list (kill mode): name it on stderr, then
 * make it again. SIGSYS is blocked inside its handler, so the kernel now
 * resets it to the default action and the process dies by SIGSYS, as it
 * would without the report. */
static void on_sigsys(int sig, siginfo_t *si, void *ctx)
{
	const greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;
	const char *name = seccomp__syscall_name(si->si_syscall);
	char buf[320], *p = buf, *end = buf + sizeof(buf);

	(void)sig;
	put(&p, end, "coldstart: seccomp: the ");
	put(&p, end, thread_role >= 0 ? role_names[thread_role] : "?");
	put(&p, end, " thread made system call ");
	put(&p, end, name ? name : "?");
	put(&p, end, " (");
	put_num(&p, end, si->si_syscall);
	put(&p, end, "), which its allow-list does not hold: killing the "
		     "VMM (--seccomp log finds what a new feature needs)\n");
	if (write(STDERR_FILENO, buf, (size_t)(p - buf)) < 0)
		p = buf;
	syscall(si->si_syscall, g[REG_RDI], g[REG_RSI], g[REG_RDX],
		g[REG_R10], g[REG_R8], g[REG_R9]);
	_exit(128 + SIGSYS); /* not reached */
}

int seccomp__configure(enum seccomp_mode m, bool main_thread)
{
	const char *hook = getenv("COLDSTART_SECCOMP_TEST");
	struct sigaction sa = { .sa_sigaction = on_sigsys,
				.sa_flags = SA_SIGINFO };

	mode = m;
	main_pending = main_thread;
	main_tid = gettid();
	test_role = -1;
	for (int r = 0; hook && r < SECCOMP_NR_ROLES; r++) {
		size_t n = strlen(role_names[r]);

		if (!strncmp(hook, role_names[r], n) &&
		    (hook[n] == 0 || hook[n] == ':')) {
			test_role = r;
			snprintf(test_call, sizeof(test_call), "%s",
				 hook[n] ? hook + n + 1 : "socket");
		}
	}
	if (m != SECCOMP_KILL)
		return 0;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL) < 0)
		return err__sys(errno, "installing the SIGSYS handler");
	return 0;
}

enum seccomp_mode seccomp__mode(void)
{
	return mode;
}

/* The test hook's forbidden calls, by name: each is outside the role's
 * list, or beside an allowed form of the call, and harmless if log mode
 * lets it through. */
static void forbidden_call(const char *name)
{
	long r = -1;

	if (!strcmp(name, "fork")) /* clone with fork's flags */
		r = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	else if (!strcmp(name, "newns")) /* a thread in a new user ns */
		r = syscall(SYS_clone, CLONE_VM | CLONE_THREAD | CLONE_SIGHAND |
				       CLONE_NEWUSER, 0, 0, 0, 0);
	else if (!strcmp(name, "opath"))
		r = syscall(SYS_openat, AT_FDCWD, "/", O_PATH | O_CLOEXEC);
	else if (!strcmp(name, "ocreat"))
		r = syscall(SYS_openat, AT_FDCWD, "/dev/null",
			    O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
	else if (!strcmp(name, "prctl"))
		syscall(SYS_prctl, PR_GET_DUMPABLE, 0, 0, 0, 0);
	else if (!strcmp(name, "tgkill")) /* signal 0 to init: a probe */
		syscall(SYS_tgkill, 1, 1, 0);
	else
		/* AF_INET: no role may make one (the main and I/O threads
		 * make Unix-domain sockets) */
		r = syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
	if (r == 0 && !strcmp(name, "fork"))
		_exit(0); /* the child log mode let be made */
	if (r > 0 && strcmp(name, "fork"))
		close((int)r);
}

/* The test hook: a forbidden call, once per process. */
static void violate(void)
{
	static int done;

	if (__atomic_exchange_n(&done, 1, __ATOMIC_SEQ_CST))
		return;
	forbidden_call(test_call);
}

/* The program with this process's id in place of the placeholder
 * (tgkill may signal this process's threads only), or NULL. */
static struct sock_filter *with_pid(const struct sock_fprog *prog)
{
	struct sock_filter *f = malloc(prog->len * sizeof(*f));
	uint32_t pid = (uint32_t)getpid();

	for (unsigned int i = 0; f && i < prog->len; i++) {
		f[i] = prog->filter[i];
		if (f[i].code == (BPF_JMP | BPF_JEQ | BPF_K) &&
		    f[i].k == SECCOMP_PID_PLACEHOLDER)
			f[i].k = pid;
	}
	return f;
}

/* Loads the role's program on the calling thread. */
static int load(enum seccomp_role role)
{
	struct sock_fprog prog = seccomp_progs[role][mode];
	int ret = 0;

	prog.filter = with_pid(&seccomp_progs[role][mode]);
	if (!prog.filter)
		return err__set(ENOMEM, "the %s thread's seccomp filter",
				role_names[role]);
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		ret = err__sys(errno, "loading the %s thread's seccomp "
			       "filter", role_names[role]);
	free(prog.filter);
	return ret;
}

int seccomp__install(enum seccomp_role role)
{
	uint64_t t0 = timeline__now();
	sigset_t sys;
	int ret;

	if (mode == SECCOMP_OFF || role >= SECCOMP_NR_ROLES)
		return 0;
	/* vCPU threads start with every signal blocked: a blocked SIGSYS
	 * would kill without the report */
	sigemptyset(&sys);
	sigaddset(&sys, SIGSYS);
	pthread_sigmask(SIG_UNBLOCK, &sys, NULL);
	if (mode == SECCOMP_LOG) /* the kernel logs the thread's name */
		prctl(PR_SET_NAME, thread_names[role], 0, 0, 0);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return err__sys(errno, "PR_SET_NO_NEW_PRIVS");
	ret = load(role);
	if (ret < 0)
		return ret;
	thread_role = (int)role;
	__atomic_add_fetch(&installed[role], 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&install_ns, timeline__now() - t0,
			   __ATOMIC_RELAXED);
	if ((int)role == test_role)
		violate();
	return 0;
}

int seccomp__enter_main(void)
{
	if (!main_pending || gettid() != main_tid)
		return 0;
	main_pending = false;
#if defined(__SANITIZE_ADDRESS__)
	/* LeakSanitizer's check at exit clones a tracer from this thread,
	 * which inherits its filter; killed there, it left the process
	 * waiting forever. Sanitizer builds (the tests') keep the control
	 * thread unfiltered; vCPU, uffd and refill threads keep theirs. */
	return 0;
#else
	return seccomp__install(SECCOMP_MAIN);
#endif
}

void seccomp__stats(uint64_t out[SECCOMP_NR_ROLES], uint64_t *ns)
{
	for (int r = 0; r < SECCOMP_NR_ROLES; r++)
		out[r] = __atomic_load_n(&installed[r], __ATOMIC_RELAXED);
	*ns = __atomic_load_n(&install_ns, __ATOMIC_RELAXED);
}

/* Adds the call in one kernel log record, if it is a seccomp record
 * (audit type 1326) of this process. */
static size_t note_record(const char *rec, const char *pid, struct seccomp_hit *hits,
			  size_t n, size_t max)
{
	const char *c = strstr(rec, " comm=\""), *s = strstr(rec, " syscall=");
	char comm[16] = "";
	long nr;

	if (!strstr(rec, "type=1326") || !strstr(rec, pid) || !s)
		return n;
	nr = strtol(s + 9, NULL, 10);
	if (c)
		sscanf(c + 7, "%15[^\"]", comm);
	for (size_t i = 0; i < n; i++)
		if (hits[i].nr == nr && !strcmp(hits[i].comm, comm)) {
			hits[i].count++;
			return n;
		}
	if (n == max)
		return n;
	hits[n] = (struct seccomp_hit){ .nr = nr, .count = 1 };
	memcpy(hits[n].comm, comm, sizeof(comm));
	return n + 1;
}

/* One pass over the kernel log from its start. */
static int scan_kmsg(const char *pid, struct seccomp_hit *hits, size_t max)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	char rec[8192];
	size_t n = 0;
	ssize_t len;

	if (fd < 0)
		return err__sys(errno, "reading the kernel log (/dev/kmsg)");
	memset(hits, 0, max * sizeof(*hits));
	for (;;) {
		len = read(fd, rec, sizeof(rec) - 1);
		if (len < 0 && errno == EPIPE) /* overwritten: go on */
			continue;
		if (len <= 0)
			break;
		rec[len] = 0;
		n = note_record(rec, pid, hits, n, max);
	}
	close(fd);
	return (int)n;
}

int seccomp__logged(struct seccomp_hit *hits, size_t max, int wait_ms)
{
	char pid[32];
	int n;

	snprintf(pid, sizeof(pid), " pid=%d ", (int)getpid());
	for (int waited = 0;; waited += 20) {
		n = scan_kmsg(pid, hits, max);
		if (n != 0 || waited >= wait_ms)
			return n;
		usleep(20000);
	}
}
