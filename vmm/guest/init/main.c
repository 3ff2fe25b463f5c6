/* coldstart-init: PID 1 of coldstart's Linux guest images. Mounts the
 * pseudo file systems, signals boot complete to the VMM, runs the workload
 * named on the kernel command line, signals done and reboots, so the VM
 * exits (reboot=k); or switches root to a disk and becomes the guest agent
 * there (rootfs.c), or runs coldstart.run there and reboots. Every line it
 * prints starts with "coldstart-init: ". */
#include "cmdline.h"
#include "rootfs.h"
#include "work.h"

#include "../guest_line.h"
#include "../probe_abi.h"
#include "err.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/io.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The contract with the VMM (Firecracker's boot timer values). */
#define TIMER_PORT GUEST_TIMER_PORT
#define TIMER_MMIO GUEST_TIMER_MMIO
#define TIMER_BOOT_COMPLETE GUEST_TIMER_BOOT_COMPLETE
#define TIMER_WORK_DONE GUEST_TIMER_WORK_DONE

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	guest__vline(STDOUT_FILENO, "coldstart-init: ", fmt, ap);
	va_end(ap);
}

static void mount_one(const char *src, const char *dir, const char *type)
{
	mkdir(dir, 0755);
	if (mount(src, dir, type, MS_NOSUID, NULL) < 0 && errno != EBUSY)
		say("error: mounting %s on %s: %s", type, dir,
		    strerror(errno));
}

/* Without /dev/console in the initramfs the kernel starts us with no
 * stdio; devtmpfs provides it. */
static void open_console(void)
{
	int fd;

	if (fcntl(STDOUT_FILENO, F_GETFD) >= 0)
		return;
	fd = open("/dev/console", O_RDWR | O_NOCTTY);
	if (fd < 0)
		return;
	for (int i = 0; i < 3; i++)
		if (fd != i)
			dup2(fd, i);
	if (fd > 2)
		close(fd);
}

static void boot_time(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_BOOTTIME, &ts) == 0)
		say("boottime_ms %.1f (guest clock at init start)",
		    (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6);
}

static int port_write(uint8_t value)
{
	if (ioperm(TIMER_PORT, 1, 1) < 0)
		return err__sys(errno, "ioperm(0x%x)", TIMER_PORT);
	outb(value, TIMER_PORT);
	return 0;
}

static int mmio_write(uint8_t value)
{
	int fd = open("/dev/mem", O_RDWR | O_SYNC);
	volatile uint8_t *p;

	if (fd < 0)
		return err__sys(errno, "opening /dev/mem");
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 TIMER_MMIO);
	close(fd);
	if (p == MAP_FAILED)
		return err__sys(errno, "mapping /dev/mem at 0x%lx",
				TIMER_MMIO);
	*p = value;
	munmap((void *)p, 4096);
	return 0;
}

/* Writes `value` on each channel in `signal` (enum init_signal bits). */
static int signal_write(unsigned signal, uint8_t value)
{
	int ret = 0;

	if (signal & INIT_SIGNAL_PORT)
		ret = port_write(value);
	if (ret == 0 && (signal & INIT_SIGNAL_MMIO))
		ret = mmio_write(value);
	return ret;
}

static void signal_boot(unsigned signal)
{
	if (signal_write(signal, TIMER_BOOT_COMPLETE) < 0)
		say("error: boot-complete signal: %s", err__last());
	else
		say("boot complete signal=%s",
		    signal == INIT_SIGNAL_PORT   ? "port"
		    : signal == INIT_SIGNAL_MMIO ? "mmio"
						 : "both");
}

static int read_cmdline(char *buf, size_t size)
{
	int fd = open("/proc/cmdline", O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return err__sys(errno, "opening /proc/cmdline");
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return err__sys(errno, "reading /proc/cmdline");
	buf[n] = '\0';
	return 0;
}

/* Waits for `pid`, reaping any orphan that PID 1 inherits meanwhile. */
static int wait_for(pid_t pid)
{
	int status;
	pid_t got;

	do
		got = waitpid(-1, &status, 0);
	while (got != pid && (got > 0 || errno == EINTR));
	if (got < 0)
		return err__sys(errno, "waitpid");
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* `shell` is busybox's in the initramfs, the disk's own /bin/sh after a
 * switch to it. */
static void run_command(const char *shell, const char *cmd)
{
	char *envp[] = { "PATH=/bin:/sbin:/usr/bin:/usr/sbin", "HOME=/",
			 "TERM=linux", NULL };
	pid_t pid;
	int status;

	say("output begin");
	pid = fork();
	if (pid == 0) {
		execle(shell, "sh", "-c", cmd, (char *)NULL, envp);
		say("error: exec %s: %s", shell, strerror(errno));
		_exit(127);
	}
	if (pid < 0) {
		say("error: fork: %s", strerror(errno));
		return;
	}
	status = wait_for(pid);
	if (status < 0)
		say("error: %s", err__last());
	say("output end status %d", status);
}

static void touch(const struct init_touch *t)
{
	uint64_t want = init_work__touch(t, NULL), got;
	uint8_t *mem = mmap(NULL, t->bytes, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem == MAP_FAILED) {
		say("error: touch: mapping %llu bytes: %s",
		    (unsigned long long)t->bytes, strerror(errno));
		return;
	}
	got = init_work__touch(t, mem);
	munmap(mem, t->bytes);
	say("touch bytes %llu pattern %s op %s checksum 0x%016llx %s",
	    (unsigned long long)t->bytes,
	    t->pattern == PROBE_PATTERN_RANDOM ? "random" : "seq",
	    t->op == PROBE_OP_READ ? "read" : "write",
	    (unsigned long long)got, got == want ? "ok" : "MISMATCH");
}

/* Returns the channels of the done signal (enum init_signal bits). */
static unsigned run_workload(void)
{
	static struct init_config cfg;
	static char cmdline[4096];

	if (read_cmdline(cmdline, sizeof(cmdline)) < 0 ||
	    init_cmdline__parse(cmdline, &cfg) < 0) {
		say("error: %s", err__last());
		/* Still tell the VMM, so it never waits for a lost signal. */
		signal_boot(INIT_SIGNAL_PORT);
		return INIT_SIGNAL_PORT;
	}
	if (cfg.root[0]) {
		/* the agent signals boot complete once it listens; a failure
		 * ends the VM, which the host waiting for the agent sees */
		say("switching root to %s", cfg.root);
		if (init_rootfs__switch(&cfg) < 0 || !cfg.has_run) {
			say("error: %s", err__last());
			return 0;
		}
	}
	signal_boot(cfg.signal);
	say("nr_cpus %ld", sysconf(_SC_NPROCESSORS_ONLN));
	if (cfg.has_run)
		run_command(cfg.root[0] ? "/bin/sh" : "/bin/busybox", cfg.run);
	if (cfg.has_touch)
		touch(&cfg.touch);
	return cfg.done;
}

int main(void)
{
	unsigned done;

	mount_one("devtmpfs", "/dev", "devtmpfs");
	open_console();
	say("start");
	boot_time();
	mount_one("proc", "/proc", "proc");
	mount_one("sysfs", "/sys", "sysfs");
	done = run_workload();
	if (done && signal_write(done, TIMER_WORK_DONE) < 0)
		say("error: done signal: %s", err__last());
	say("done, rebooting");
	sync();
	reboot(RB_AUTOBOOT);
	/* Returning makes the kernel panic; panic=-1 turns that into a
	 * reboot, so the VM still ends. */
	say("error: reboot: %s", strerror(errno));
	return 1;
}
