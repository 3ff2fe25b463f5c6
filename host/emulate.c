/* The emulated SVM host: builds its initramfs (emulate_initrd.c) and
 * scratch disk, starts virtiofsd and QEMU, forwards the command's output
 * and reads its exit status from the console. */
#include "emulate.h"
#include "emulate_int.h"

#include "err.h"
#include "image.h"
#include "output.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define QEMU "qemu-system-x86_64"
#define MKFS "mkfs.ext4"
#define MARK "COLDSTART-EMULATE-"
#define TAIL_LINES 30

static const char *const virtiofsd_paths[] = {
	"/usr/lib/qemu/virtiofsd", /* Debian 12: qemu-system-common */
	"/usr/libexec/virtiofsd",  /* the separate virtiofsd package */
};

/* The work directory's files, by enum file (emulate_int.h). */
static const char *const file_names[] = {
	"scratch.img", "host-initrd.cpio.gz", "virtiofsd.sock",
	"stdout", "stderr", "qemu-virtiofsd.log",
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

/* Seconds from `a` to `b`. */
static double between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) +
	       (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static double since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return between(t, &now);
}

static void progress(const struct run *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void progress(const struct run *r, const char *fmt, ...)
{
	va_list ap;

	if (r->o->quiet)
		return;
	fputs("coldstart emulate: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static bool in_path(const char *name, char *buf, size_t size)
{
	const char *path = getenv("PATH");
	char dirs[4096], *save = NULL;

	snprintf(dirs, sizeof(dirs), "%s",
		 path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (char *d = strtok_r(dirs, ":", &save); d;
	     d = strtok_r(NULL, ":", &save)) {
		snprintf(buf, size, "%s/%s", d, name);
		if (access(buf, X_OK) == 0)
			return true;
	}
	/* mkfs.ext4 lives in /sbin, which a user's PATH may lack. */
	snprintf(buf, size, "/sbin/%s", name);
	return access(buf, X_OK) == 0;
}

static int find_virtiofsd(char *buf, size_t size)
{
	for (size_t i = 0; i < sizeof(virtiofsd_paths) / sizeof(*virtiofsd_paths);
	     i++)
		if (access(virtiofsd_paths[i], X_OK) == 0) {
			snprintf(buf, size, "%s", virtiofsd_paths[i]);
			return 0;
		}
	if (in_path("virtiofsd", buf, size))
		return 0;
	return err__set(ENOENT, "virtiofsd not found: install the Debian "
			"package qemu-system-common (or virtiofsd)");
}

int emulate__check_tools(void)
{
	char buf[PATH_MAX];

	if (!in_path(QEMU, buf, sizeof(buf)))
		return err__set(ENOENT, QEMU " not found: install the Debian "
				"package qemu-system-x86");
	if (find_virtiofsd(buf, sizeof(buf)) < 0)
		return -ENOENT;
	if (access(BUSYBOX, X_OK) < 0)
		return err__set(ENOENT, BUSYBOX " not found: install the "
				"Debian package busybox-static");
	if (!in_path(MKFS, buf, sizeof(buf)))
		return err__set(ENOENT, MKFS " not found: install the Debian "
				"package e2fsprogs");
	return 0;
}

/* ---- processes ---- */

static int spawn(char *const argv[], const char *log, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	int ret;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, log,
					 O_WRONLY | O_CREAT | O_APPEND, 0600);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	ret = posix_spawn(pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (ret)
		return err__sys(ret, "starting %s", argv[0]);
	return 0;
}

static int run_quiet(char *const argv[], const char *log)
{
	pid_t pid;
	int status, ret = spawn(argv, log, &pid);

	if (ret < 0)
		return ret;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return err__sys(errno, "waitpid(%s)", argv[0]);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return err__set(EIO, "%s failed (log: %s)", argv[0], log);
	return 0;
}

static int make_disk(struct run *r)
{
	char mkfs[PATH_MAX];
	uint64_t mib = r->o->disk_mib ? r->o->disk_mib : 16384;
	int fd = open(r->path[F_DISK], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		      0600);
	char *argv[] = { mkfs, "-q", "-F", "-E",
			 "lazy_itable_init=1,lazy_journal_init=1",
			 r->path[F_DISK], NULL };

	if (fd < 0)
		return err__sys(errno, "creating %s", r->path[F_DISK]);
	if (ftruncate(fd, (off_t)(mib << 20)) < 0) {
		close(fd);
		return err__sys(errno, "sizing the scratch disk %s",
				r->path[F_DISK]);
	}
	close(fd);
	in_path(MKFS, mkfs, sizeof(mkfs));
	return run_quiet(argv, r->path[F_LOG]);
}

static int start_virtiofsd(struct run *r)
{
	char sock[PATH_MAX + 16];
	char *argv[] = { r->virtiofsd, sock, "-o", "source=/", "-o",
			 "cache=auto", "-o", "sandbox=chroot", NULL };
	struct stat st;
	int ret;

	snprintf(sock, sizeof(sock), "--socket-path=%s", r->path[F_SOCK]);
	ret = spawn(argv, r->path[F_LOG], &r->virtiofsd_pid);
	for (int i = 0; ret == 0 && i < 100; i++) {
		if (stat(r->path[F_SOCK], &st) == 0)
			return 0;
		if (waitpid(r->virtiofsd_pid, NULL, WNOHANG) == r->virtiofsd_pid) {
			r->virtiofsd_pid = 0;
			return err__set(EIO, "virtiofsd exited at start (log: "
					"%s)", r->path[F_LOG]);
		}
		usleep(50000);
	}
	return ret ? ret : err__set(ETIMEDOUT, "virtiofsd made no socket in "
				    "5 s (log: %s)", r->path[F_LOG]);
}

static int start_qemu(struct run *r)
{
	const struct emulate_options *o = r->o;
	char qemu[PATH_MAX], smp[16], mem[32], memobj[96], con[PATH_MAX + 32],
		out[PATH_MAX + 32], err[PATH_MAX + 32], vfs[PATH_MAX + 32],
		drive[PATH_MAX + 64], kernel[PATH_MAX], append[160];
	uint64_t mib = o->mem_mib ? o->mem_mib : 4096;
	/* a test's way to have a boot never come up: the first, or with
	 * "all" every one */
	const char *test = getenv("COLDSTART_EMULATE_TEST_NO_READY");
	bool hang = test && (r->boot == 1 || !strcmp(test, "all"));
	char *argv[] = {
		qemu, "-nodefaults", "-no-user-config", "-accel", "tcg",
		"-cpu", "EPYC,+svm,+npt", "-smp", smp, "-m", mem,
		"-object", memobj, "-machine", "q35,memory-backend=mem",
		"-display", "none", "-monitor", "none", "-no-reboot",
		"-chardev", con, "-serial", "chardev:con",
		"-chardev", out, "-serial", "chardev:out",
		"-chardev", err, "-serial", "chardev:err",
		"-chardev", vfs, "-device",
		"vhost-user-fs-pci,chardev=vfs,tag=hostroot",
		"-drive", drive, "-device", "virtio-blk-pci,drive=scratch",
		"-kernel", kernel, "-initrd", r->path[F_INITRD], "-append",
		append, NULL,
	};

	snprintf(append, sizeof(append), "console=ttyS0 panic=-1 nowatchdog "
		 "quiet coldstart.emulated=" EMULATE_LABEL "%s%s",
		 o->cgroup_v1 ? " coldstart.cgroup=v1" : "",
		 hang ? " coldstart.test.noready" : "");
	in_path(QEMU, qemu, sizeof(qemu));
	snprintf(smp, sizeof(smp), "%u", o->vcpus ? o->vcpus : 2);
	snprintf(mem, sizeof(mem), "%lluM", (unsigned long long)mib);
	snprintf(memobj, sizeof(memobj),
		 "memory-backend-memfd,id=mem,size=%lluM,share=on",
		 (unsigned long long)mib);
	snprintf(con, sizeof(con), "file,id=con,path=%s,append=on", r->console);
	snprintf(out, sizeof(out), "file,id=out,path=%s,append=on",
		 r->path[F_STDOUT]);
	snprintf(err, sizeof(err), "file,id=err,path=%s,append=on",
		 r->path[F_STDERR]);
	snprintf(vfs, sizeof(vfs), "socket,id=vfs,path=%s", r->path[F_SOCK]);
	snprintf(drive, sizeof(drive),
		 "file=%s,format=raw,if=none,id=scratch,cache=writeback",
		 r->path[F_DISK]);
	if (output__pathf(kernel, sizeof(kernel), "%s/%s", r->image, IMAGE_KERNEL) < 0)
		return -ENAMETOOLONG;
	return spawn(argv, r->path[F_LOG], &r->qemu_pid);
}

/* Stops a child: SIGTERM, then SIGKILL after 2 s; reaps it. */
static void stop(pid_t *pid)
{
	if (*pid <= 0)
		return;
	kill(*pid, SIGTERM);
	for (int i = 0; i < 40; i++) {
		if (waitpid(*pid, NULL, WNOHANG) == *pid) {
			*pid = 0;
			return;
		}
		usleep(50000);
	}
	kill(*pid, SIGKILL);
	waitpid(*pid, NULL, 0);
	*pid = 0;
}

/* ---- watching the run ---- */

/* Copies what `fd` gained since the last call to `to`. */
static void forward(int fd, int to)
{
	char buf[65536];
	ssize_t n;

	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t off = 0, w; off < n; off += w) {
			w = write(to, buf + off, (size_t)(n - off));
			if (w <= 0)
				return; /* our stdout is gone: drop the rest */
		}
}

static void console_line(struct run *r, const char *line)
{
	/* Anywhere in the line: a kernel message may have started it. */
	line = strstr(line, MARK);
	if (!line)
		return;
	line += strlen(MARK);
	/* a sign of life from the host's user space: kernel messages alone
	 * (RCU stall reports every minute) keep coming from a wedged host */
	clock_gettime(CLOCK_MONOTONIC, &r->last_beat);
	if (!strncmp(line, "READY", 5) && !r->ready) {
		r->ready = true;
		clock_gettime(CLOCK_MONOTONIC, &r->ready_at);
		progress(r, "host up after %.1f s; running the command",
			 since(&r->boot_start));
	} else if (!strncmp(line, "EXIT ", 5)) {
		r->exited = true;
		r->exit_status = atoi(line + 5);
	} else if (!strncmp(line, "FAIL ", 5)) {
		r->failed = true;
		snprintf(r->fail_text, sizeof(r->fail_text), "%s", line + 5);
	} else if (!strncmp(line, "STALLED", 7) && !r->stalled) {
		r->stalled = true;
		clock_gettime(CLOCK_MONOTONIC, &r->stalled_at);
	}
}

/* Reads the console's new bytes, line by line. */
static void watch_console(struct run *r)
{
	char buf[4096];
	ssize_t n;

	while ((n = read(r->con_fd, buf, sizeof(buf))) > 0) {
		clock_gettime(CLOCK_MONOTONIC, &r->last_console);
		for (ssize_t i = 0; i < n; i++) {
			char ch = buf[i];

			if (ch == '\r')
				continue;
			if (ch != '\n' && r->line_len < sizeof(r->line) - 1) {
				r->line[r->line_len++] = ch;
				continue;
			}
			if (ch != '\n')
				continue; /* an overlong line: keep its start */
			r->line[r->line_len] = '\0';
			console_line(r, r->line);
			r->line_len = 0;
		}
	}
}

/* Lines of a kernel in trouble; the first one says why the host died. */
static const char *const kernel_faults[] = {
	"Kernel panic", "BUG:", "Oops:", "Out of memory", "soft lockup",
	"hung_task", "self-detected stall", "detected stalls on CPUs",
	"general protection fault",
};

static bool is_fault(const char *line)
{
	for (size_t i = 0; i < sizeof(kernel_faults) / sizeof(*kernel_faults); i++)
		if (strstr(line, kernel_faults[i]))
			return true;
	return false;
}

/* Prints the console's last lines (heartbeats left out) to stderr, and
 * copies its first kernel fault line, if any, into fault. */
static void console_tail(const struct run *r, char *fault, size_t size)
{
	char *text = NULL, *lines[TAIL_LINES] = { 0 };
	size_t len, k = 0;

	fault[0] = '\0';
	if (emulate__read_whole(r->console, &text, &len) < 0)
		return;
	text[len] = '\0';
	for (char *save = NULL, *l = strtok_r(text, "\r\n", &save); l;
	     l = strtok_r(NULL, "\r\n", &save)) {
		if (strstr(l, MARK "ALIVE") || strstr(l, MARK "READY"))
			continue;
		lines[k++ % TAIL_LINES] = l;
		if (!fault[0] && is_fault(l))
			snprintf(fault, size, "; its kernel said: %s", l);
	}
	if (k)
		fprintf(stderr, "coldstart emulate: the emulated host's console "
			"ended with:\n");
	for (size_t i = k > TAIL_LINES ? k - TAIL_LINES : 0; i < k; i++)
		fprintf(stderr, "  console: %s\n", lines[i % TAIL_LINES]);
	free(text);
}

/* Why the run ended without the command's status; -errno. */
static int host_failure(struct run *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int host_failure(struct run *r, int err, const char *fmt, ...)
{
	char what[512], fault[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	console_tail(r, fault, sizeof(fault));
	return err__set(err, "%s%s%s%s%s", what, fault,
			r->o->console ? " (console log: " : "",
			r->o->console ? r->o->console : "",
			r->o->console ? ")" : "");
}

static unsigned boot_limit(const struct emulate_options *o)
{
	return o->boot_timeout_s ? o->boot_timeout_s : 120;
}

/* A boot that did not come up (`why`): stopped, EAGAIN for emulate__run
 * to boot once more; the second time the message says so. */
static int not_up(struct run *r, const char *why)
{
	stop(&r->qemu_pid);
	return host_failure(r, EAGAIN, "the emulated host %s%s", why,
			    r->boot > 1 ? ", twice" : "");
}

/* Polls until QEMU ends, forwarding output; stops it on a timeout, a
 * stall, a boot that does not come up, or a signal. */
static int watch(struct run *r)
{
	unsigned stall = r->o->stall_s ? r->o->stall_s : 180;
	char why[96];
	int status;

	for (;;) {
		forward(r->out_fd, STDOUT_FILENO);
		forward(r->err_fd, STDERR_FILENO);
		watch_console(r);
		if (waitpid(r->qemu_pid, &status, WNOHANG) == r->qemu_pid) {
			r->qemu_pid = 0;
			break;
		}
		if (interrupted) {
			stop(&r->qemu_pid);
			return host_failure(r, EINTR, "interrupted (signal %d); "
					    "the emulated host was stopped",
					    (int)interrupted);
		}
		if (r->o->timeout_s && since(&r->start) > r->o->timeout_s) {
			stop(&r->qemu_pid);
			return host_failure(r, ETIMEDOUT, "the emulated host "
					    "ran out of its %u s (--timeout)",
					    r->o->timeout_s);
		}
		/* a boot that hangs (once in a CI run, under a loaded TCG)
		 * gets another try from emulate__run */
		if (!r->ready && since(&r->boot_start) > boot_limit(r->o)) {
			snprintf(why, sizeof(why), "did not come up within "
				 "%u s (--boot-timeout)", boot_limit(r->o));
			return not_up(r, why);
		}
		/* a CPU stuck in the host's kernel does not come back; the
		 * stacks it printed get a few seconds to reach the log */
		if (r->stalled && since(&r->stalled_at) > 5) {
			stop(&r->qemu_pid);
			return host_failure(r, ETIMEDOUT, "the emulated host's "
					    "kernel stalled (a CPU stuck in it "
					    "for over 20 s; its stacks are in "
					    "the console log)");
		}
		/* booting: any console output, else it is a boot that did
		 * not come up (tried once more); then the heartbeat */
		if (!r->ready && since(&r->last_console) > stall) {
			snprintf(why, sizeof(why), "stayed silent on its "
				 "console for %u s while it booted", stall);
			return not_up(r, why);
		}
		if (r->ready && since(&r->last_beat) > stall) {
			stop(&r->qemu_pid);
			return host_failure(r, ETIMEDOUT, "the emulated host "
					    "stalled: no heartbeat from its "
					    "init for %u s", stall);
		}
		usleep(100000);
	}
	forward(r->out_fd, STDOUT_FILENO);
	forward(r->err_fd, STDERR_FILENO);
	watch_console(r);
	if (r->failed)
		return host_failure(r, EIO, "the emulated host could not "
				    "start the command: %s", r->fail_text);
	if (!r->exited)
		return host_failure(r, EIO, "the emulated host ended (QEMU "
				    "%s %d) without the command's exit status",
				    WIFEXITED(status) ? "exit" : "signal",
				    WIFEXITED(status) ? WEXITSTATUS(status) :
				    WTERMSIG(status));
	return 0;
}

/* ---- setup and teardown ---- */

static int open_reader(const char *path, int *fd)
{
	int w = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (w < 0)
		return err__sys(errno, "creating %s", path);
	close(w);
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	return *fd < 0 ? err__sys(errno, "opening %s", path) : 0;
}

static int find_image(struct run *r)
{
	struct image_options io = { 0 };
	struct image_result ir;
	int ret;

	if (r->o->image_dir) {
		snprintf(r->image, sizeof(r->image), "%s", r->o->image_dir);
		return 0;
	}
	progress(r, "the host kernel: coldstart image build (cached after "
		 "the first run)");
	ret = image__build(&io, &ir);
	if (ret < 0)
		return err__set(ENOENT, "the emulated host's kernel: %s",
				err__last());
	snprintf(r->image, sizeof(r->image), "%s", ir.dir);
	return 0;
}

static int prepare(struct run *r)
{
	const char *parent = r->o->work_parent ? r->o->work_parent : "/var/tmp";
	int ret = emulate__check_tools();

	if (ret == 0)
		ret = find_virtiofsd(r->virtiofsd, sizeof(r->virtiofsd));
	if (ret == 0)
		ret = find_image(r);
	if (ret < 0)
		return ret;
	snprintf(r->work, sizeof(r->work), "%s/coldstart-emulate.XXXXXX",
		 parent);
	if (!mkdtemp(r->work)) {
		ret = err__sys(errno, "creating a work directory in %s",
			       parent);
		r->work[0] = '\0';
		return ret;
	}
	for (int i = 0; i <= F_LOG; i++)
		if (output__pathf(r->path[i], sizeof(r->path[i]), "%s/%s", r->work,
			  file_names[i]) < 0)
			return -ENAMETOOLONG;
	snprintf(r->console, sizeof(r->console), "%s",
		 r->o->console ? r->o->console : r->work);
	if (!r->o->console)
		strncat(r->console, "/console.log",
			sizeof(r->console) - strlen(r->console) - 1);
	ret = emulate__build_initrd(r->path[F_INITRD], r->image, r->o->argv,
				    r->o->outs, r->o->nr_outs);
	ret = ret ? ret : make_disk(r);
	ret = ret ? ret : open_reader(r->console, &r->con_fd);
	ret = ret ? ret : open_reader(r->path[F_STDOUT], &r->out_fd);
	ret = ret ? ret : open_reader(r->path[F_STDERR], &r->err_fd);
	return ret;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Stops what still runs and removes the work directory (the scratch disk
 * with it); a console kept with --console stays. After a failure the logs
 * stay, and the message says where. */
static void cleanup(struct run *r, bool failed)
{
	stop(&r->qemu_pid);
	stop(&r->virtiofsd_pid);
	close_fd(&r->out_fd);
	close_fd(&r->err_fd);
	close_fd(&r->con_fd);
	if (!r->work[0])
		return;
	unlink(r->path[F_DISK]);
	unlink(r->path[F_INITRD]);
	unlink(r->path[F_SOCK]);
	if (failed) {
		fprintf(stderr, "coldstart emulate: the emulated host's logs "
			"are in %s\n", r->work);
		return;
	}
	unlink(r->path[F_STDOUT]);
	unlink(r->path[F_STDERR]);
	unlink(r->path[F_LOG]);
	if (!r->o->console)
		unlink(r->console);
	rmdir(r->work);
}

/* One boot of the host (virtiofsd and QEMU) and the watch over it;
 * -EAGAIN when it did not come up in time (both processes stopped). */
static int boot(struct run *r)
{
	int ret;

	r->boot++;
	stop(&r->virtiofsd_pid);
	unlink(r->path[F_SOCK]);
	r->ready = r->exited = r->failed = r->stalled = false;
	r->line_len = 0;
	clock_gettime(CLOCK_MONOTONIC, &r->boot_start);
	r->last_console = r->last_beat = r->boot_start;
	ret = start_virtiofsd(r);
	ret = ret ? ret : start_qemu(r);
	return ret ? ret : watch(r);
}

int emulate__run(const struct emulate_options *o, struct emulate_result *res)
{
	struct run r = { .o = o, .out_fd = -1, .err_fd = -1, .con_fd = -1 };
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term,
			 ign = { .sa_handler = SIG_IGN }, old_pipe;
	int ret;

	if (!o->argv || !o->argv[0])
		return err__set(EINVAL, "no command to run");
	interrupted = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	/* A reader of our output that goes away must not leave QEMU
	 * running: forward() drops the output instead. */
	sigaction(SIGPIPE, &ign, &old_pipe);
	ret = prepare(&r);
	if (ret == 0) {
		clock_gettime(CLOCK_MONOTONIC, &r.start);
		progress(&r, "booting the emulated SVM host (QEMU TCG, %u "
			 "vCPUs, %llu MiB; kernel from %s)", o->vcpus ? o->vcpus : 2,
			 (unsigned long long)(o->mem_mib ? o->mem_mib : 4096),
			 r.image);
		ret = boot(&r);
	}
	/* The command has not started before the host is up: a boot that
	 * never came up is tried once more. */
	if (ret == -EAGAIN) {
		progress(&r, "%s; booting it once more", err__last());
		ret = boot(&r);
	}
	if (ret == -EAGAIN)
		ret = -ETIMEDOUT; /* its message says "twice" */
	if (ret == 0) {
		res->exit_status = r.exit_status;
		res->total_s = since(&r.start);
		res->boot_s = r.ready ? between(&r.boot_start, &r.ready_at)
				      : 0;
		progress(&r, "the command exited with status %d after %.1f s "
			 "(host up in %.1f s)", res->exit_status, res->total_s,
			 res->boot_s);
	}
	cleanup(&r, ret < 0 && ret != -ENOENT && ret != -EINTR);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGPIPE, &old_pipe, NULL);
	return ret;
}

/* Creates a VM (with the in-kernel irqchip or not) holding one vCPU;
 * -errno. */
static int hold_vm(int kvm, bool irqchip, int *vcpu)
{
	int vm = ioctl(kvm, KVM_CREATE_VM, 0);

	if (vm < 0)
		return err__sys(errno, "KVM_CREATE_VM");
	if (irqchip && ioctl(vm, KVM_CREATE_IRQCHIP, 0) < 0)
		return err__sys(errno, "KVM_CREATE_IRQCHIP");
	*vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	if (*vcpu < 0)
		return err__sys(errno, "KVM_CREATE_VCPU");
	return 0;
}

/* The emulated host's kernel live-patches its code (int3, then a
 * cross-CPU call) whenever one of KVM's static keys goes between 0 and
 * 1, and under QEMU's TCG such a patch now and then wedged both CPUs (one
 * looping in the int3 handler with interrupts off, the other waiting
 * for it in smp_call_function_single). The keys count vCPUs: without
 * a LAPIC (kvm_has_noapic_vcpu: the probe guest's VMs have none), with
 * a LAPIC software-disabled (apic_sw_disabled: every LAPIC at reset) or
 * hardware-disabled (apic_hw_disabled). Two idle vCPUs held for the
 * host's lifetime keep each count above 0, so the command's VMs never
 * flip them. */
int emulate__hold_kvm(void)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry entry;
	} base = { .hdr.nmsrs = 1,
		   .entry = { .index = 0x1b, /* IA32_APIC_BASE */
			      .data = 0xfee00000 /* the enable bit clear */ } };
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC), apic, noapic, ret;

	if (kvm < 0)
		return err__sys(errno, "opening /dev/kvm");
	ret = hold_vm(kvm, true, &apic);
	if (ret == 0)
		ret = hold_vm(kvm, false, &noapic);
	if (ret < 0)
		return ret;
	if (ioctl(apic, KVM_SET_MSRS, &base) != 1)
		return err__sys(errno ? errno : EIO, "KVM_SET_MSRS (disabling "
				"the held vCPU's LAPIC)");
	printf("holding\n");
	fflush(stdout);
	for (;;)
		pause();
}
