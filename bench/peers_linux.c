/* bench peers --kernel: the same Linux guest, its root a read-only disk on
 * virtio-mmio, under `coldstart run --rootfs` and QEMU's microvm,
 * interleaved. The initramfs's init mounts the disk, runs one command from
 * the kernel command line (coldstart.run: a sequential read of the disk,
 * or /bin/true) and reboots, which ends either VMM; each one's console
 * goes to a file that proves the command ran and holds the read's time. */
#include "peers_int.h"

#include "child.h"
#include "cli.h"
#include "err.h"
#include "output.h"
#include "run_linux.h"
#include "timeline.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The first N MiB of the disk, past the guest's page cache; dd's last
 * line holds the bytes and its own time. */
#define READ_CMD                                                         \
	"dd if=/dev/vda of=/dev/null bs=1M count=%" PRIu64 " iflag=direct " \
	"2>&1 | tail -n 1"
#define TRIVIAL_CMD "/bin/true"
#define RAN_MARK "coldstart-init: output end status "
#define CONSOLE_MAX (1 << 20)

/* What the argv point into. */
struct linux_run {
	char dir[PATH_MAX]; /* the consoles' temporary directory */
	char console[NR_PEERS][PATH_MAX + 32];
	char err[NR_PEERS][PATH_MAX + 32]; /* each VMM's stderr */
	char serial[PATH_MAX + 40]; /* QEMU's file:CONSOLE */
	char rootfs[PATH_MAX + 8];
	char drive[2 * PATH_MAX + 64];
	char cmd[256];
	char cmdline[NR_PEERS][1024];
	char mem[NR_PEERS][32], vcpus[16], timeout[32];
};

/* QEMU's option syntax doubles a comma inside a value. */
static void qemu_escape(char *out, size_t size, const char *in)
{
	size_t n = 0;

	for (; *in && n + 2 < size; in++) {
		if (*in == ',')
			out[n++] = ',';
		out[n++] = *in;
	}
	out[n] = '\0';
}

/* coldstart appends its devices and coldstart.root itself; QEMU's microvm
 * has no i8042 to reset through, so its guest reboots by triple fault,
 * which -no-reboot turns into QEMU's exit. */
static void make_cmdlines(struct linux_run *l)
{
	const char *base = LINUX_DEFAULT_CMDLINE " quiet";
	const char *k = strstr(base, "reboot=k");
	int at = (int)(k - base);

	snprintf(l->cmdline[OURS], sizeof(l->cmdline[OURS]),
		 "%s coldstart.run=\"%s\"", base, l->cmd);
	snprintf(l->cmdline[QEMU], sizeof(l->cmdline[QEMU]),
		 "%.*sreboot=t%s coldstart.root=/dev/vda coldstart.run=\"%s\"",
		 at, base, k + strlen("reboot=k"), l->cmd);
}

static void ours_argv(struct peers *p, struct linux_run *l, const char *exe)
{
	char **c = p->argv[OURS];
	int n = 0;

	c[n++] = (char *)exe;
	c[n++] = "run";
	c[n++] = "--kernel";
	c[n++] = (char *)p->o.c.kernel;
	c[n++] = "--initrd";
	c[n++] = (char *)p->o.c.initrd;
	c[n++] = "--rootfs";
	c[n++] = l->rootfs;
	c[n++] = "--mem";
	c[n++] = l->mem[OURS];
	c[n++] = "--vcpus";
	c[n++] = l->vcpus;
	c[n++] = "--cmdline";
	c[n++] = l->cmdline[OURS];
	c[n++] = "--console";
	c[n++] = l->console[OURS];
	c[n++] = "--timeout";
	c[n++] = l->timeout;
	c[n++] = "-q";
	if (p->o.c.kvm_path) {
		c[n++] = "--kvm";
		c[n++] = (char *)p->o.c.kvm_path;
	}
	if (p->o.c.allow_pvm)
		c[n++] = "--allow-pvm";
	c[n] = NULL;
}

static void qemu_argv(struct peers *p, struct linux_run *l)
{
	/* no RTC, as coldstart's VM has none: with microvm's default one
	 * the guest waited about 12 s on "rtc_cmos: broken or not
	 * accessible" before its init, a cost of the peer's setup, not of
	 * QEMU */
	static const char *const fixed[] = {
		"-M", "microvm,rtc=off", "-enable-kvm", "-cpu", "host", "-nodefaults",
		"-no-user-config", "-display", "none", "-no-reboot", NULL };
	char **q = p->argv[QEMU];
	int n = 0;

	q[n++] = p->qemu_path;
	for (int i = 0; fixed[i]; i++)
		q[n++] = (char *)fixed[i];
	q[n++] = "-m";
	q[n++] = l->mem[QEMU];
	q[n++] = "-smp";
	q[n++] = l->vcpus;
	q[n++] = "-serial";
	q[n++] = l->serial;
	q[n++] = "-kernel";
	q[n++] = (char *)p->o.c.kernel;
	q[n++] = "-initrd";
	q[n++] = (char *)p->o.c.initrd;
	q[n++] = "-append";
	q[n++] = l->cmdline[QEMU];
	q[n++] = "-drive";
	q[n++] = l->drive;
	q[n++] = "-device";
	q[n++] = "virtio-blk-device,drive=root";
	q[n] = NULL;
}

static int build(struct peers *p, struct linux_run *l, const char *exe)
{
	char esc[2 * PATH_MAX];

	const char *tmp = getenv("TMPDIR");

	if (snprintf(l->dir, sizeof(l->dir), "%s/coldstart-peers-XXXXXX",
		     tmp && *tmp ? tmp : "/tmp") >= (int)sizeof(l->dir))
		return err__set(ENAMETOOLONG, "TMPDIR is too long");
	if (!mkdtemp(l->dir))
		return err__sys(errno, "creating a directory for the "
				"consoles in %s", l->dir);
	for (int k = 0; k < NR_PEERS; k++) {
		snprintf(l->console[k], sizeof(l->console[k]),
			 "%s/%s.console", l->dir, peers_names[k]);
		snprintf(l->err[k], sizeof(l->err[k]), "%s/%s.stderr",
			 l->dir, peers_names[k]);
	}
	snprintf(l->serial, sizeof(l->serial), "file:%s", l->console[QEMU]);
	/* a path ending in ",ro" would be read as PATH's mode: the last
	 * comma is always ours */
	snprintf(l->rootfs, sizeof(l->rootfs), "%s,ro", p->o.rootfs);
	qemu_escape(esc, sizeof(esc), p->o.rootfs);
	snprintf(l->drive, sizeof(l->drive), "id=root,file=%s,format=raw,"
		 "if=none,readonly=on", esc);
	if (p->read[OURS])
		snprintf(l->cmd, sizeof(l->cmd), READ_CMD,
			 p->o.read_bytes >> 20);
	else
		snprintf(l->cmd, sizeof(l->cmd), TRIVIAL_CMD);
	make_cmdlines(l);
	snprintf(l->mem[OURS], sizeof(l->mem[OURS]), "%" PRIu64, p->o.mem);
	snprintf(l->mem[QEMU], sizeof(l->mem[QEMU]), "%" PRIu64 "M",
		 p->o.mem >> 20);
	snprintf(l->vcpus, sizeof(l->vcpus), "%" PRIu64, p->o.vcpus);
	snprintf(l->timeout, sizeof(l->timeout), "%" PRIu64 "ms",
		 p->o.timeout_ns / 1000000);
	ours_argv(p, l, exe);
	qemu_argv(p, l);
	return 0;
}

static char *slurp(const char *path)
{
	char *text = malloc(CONSOLE_MAX + 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = 0, got;

	if (!text || fd < 0) {
		free(text);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while (n < CONSOLE_MAX &&
	       (got = read(fd, text + n, (size_t)(CONSOLE_MAX - n))) > 0)
		n += got;
	close(fd);
	text[n] = '\0';
	return text;
}

/* The console's last line, for a message. */
static void last_line(const char *text, char *out, size_t size)
{
	const char *end = text + strlen(text), *start;

	while (end > text && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	start = end;
	while (start > text && start[-1] != '\n')
		start--;
	snprintf(out, size, "%.*s", (int)(end - start), start);
}

/* dd's "N bytes (...) copied, S s, ..." line. */
static int parse_read(const char *text, double *mib_s)
{
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n'), *c = strstr(line, " copied, ");
		unsigned long long bytes;
		double s;

		if (sscanf(line, "%llu bytes (", &bytes) == 1 && c &&
		    (!nl || c < nl) && (s = strtod(c + 9, NULL)) > 0 &&
		    bytes > 0) {
			*mib_s = (double)bytes / (1 << 20) / s;
			return 0;
		}
		line = nl ? nl + 1 : NULL;
	}
	return -1;
}

/* The run counts only if the guest's command ran and exited 0, and, for
 * a read, dd said how long it took. */
static int check_console(const char *path, enum peer who, double *mib_s)
{
	char *text = slurp(path), last[160];
	const char *ran;
	int ret = 0;

	if (!text)
		return err__sys(errno ? errno : ENOMEM, "reading %s's console "
				"%s", peers_names[who], path);
	ran = strstr(text, RAN_MARK);
	last_line(text, last, sizeof(last));
	if (!ran)
		ret = err__set(EIO, "%s: the guest did not run its command "
			       "(its console ends: \"%s\")", peers_names[who],
			       last);
	else if (atoi(ran + strlen(RAN_MARK)) != 0)
		ret = err__set(EIO, "%s: the guest's command exited %d",
			       peers_names[who], atoi(ran + strlen(RAN_MARK)));
	else if (mib_s && parse_read(text, mib_s) < 0)
		ret = err__set(EIO, "%s: no dd timing on the guest's console "
			       "(it ends: \"%s\")", peers_names[who], last);
	free(text);
	return ret;
}

/* A VMM that failed: its status and the first line it wrote on stderr.
 * QEMU failing at once is taken as QEMU unable to run here (-ENOTSUP). */
static int vmm_failed(const struct linux_run *l, enum peer who, int status)
{
	char *text = slurp(l->err[who]), *nl, buf[32];
	int ret;

	if (text && (nl = strchr(text, '\n')))
		*nl = '\0';
	ret = err__set(who == QEMU ? ENOTSUP : EIO, "%s %s: %s",
		       who == QEMU ? "QEMU" : "coldstart run",
		       child__status_text(status, buf, sizeof(buf)),
		       text && *text ? text : "(nothing on stderr)");
	free(text);
	return ret;
}

static int one_run(struct peers *p, struct linux_run *l, enum peer who,
		   double *wall, double *rss, double *mib_s)
{
	int status, ret, ms = (int)(p->o.timeout_ns / 1000000);
	struct rusage ru;
	uint64_t t0;

	unlink(l->console[who]);
	t0 = timeline__now();
	/* stderr kept for the message if it fails (QEMU's warnings would
	 * repeat every run) */
	ret = child__run_timeout(p->argv[who], l->err[who], ms, &status, &ru);
	*wall = (double)(timeline__now() - t0);
	*rss = (double)ru.ru_maxrss;
	if (ret == 0 && (!WIFEXITED(status) || WEXITSTATUS(status) != 0))
		return vmm_failed(l, who, status);
	if (ret == 0)
		ret = check_console(l->console[who], who,
				    p->read[who] ? mib_s : NULL);
	return ret;
}

/* Alternates which peer goes first, as the probe guest's runs do. */
static int measure(struct peers *p, struct linux_run *l)
{
	uint64_t total = p->o.c.warmup + p->o.c.count;
	int ret = 0;

	for (uint64_t i = 0; ret == 0 && i < total; i++) {
		for (int k = 0; ret == 0 && k < NR_PEERS; k++) {
			enum peer who = (enum peer)((k + i) % NR_PEERS);
			double wall, rss, mib_s = 0;
			uint64_t at = i - p->o.c.warmup;

			if (p->left_out[who][0])
				continue;
			ret = one_run(p, l, who, &wall, &rss, &mib_s);
			if (ret == -ENOTSUP && who == QEMU && i == 0) {
				peers__leave_out(p, QEMU, err__last());
				ret = 0;
				continue;
			}
			if (ret < 0 || i < p->o.c.warmup)
				continue;
			p->wall[who][at] = wall;
			p->rss[who][at] = rss;
			if (p->read[who])
				p->read[who][at] = mib_s;
		}
		output__progress("peers", (unsigned long)(i + 1),
				 (unsigned long)total);
	}
	output__progress_done();
	return ret;
}

/* An argv as the document records it: the consoles' temporary paths
 * named CONSOLE. */
static json_t *args_json(char *const *argv, const struct linux_run *l)
{
	json_t *a = json_array();

	for (int i = 1; argv[i]; i++)
		json_array_append_new(a, json_string(
			argv[i] == l->console[OURS] ? "CONSOLE"
			: argv[i] == l->serial	    ? "file:CONSOLE"
						    : argv[i]));
	return a;
}

static json_t *config_json(const struct peers *p, const struct linux_run *l)
{
	json_t *c = json_pack(
		"{s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:o, s:o, s:o, s:I, "
		"s:I, s:I}", "guest", "Linux, root on a read-only virtio-mmio "
		"disk: boot, one command, reboot", "kernel", p->o.c.kernel,
		"initrd", p->o.c.initrd, "rootfs", p->o.rootfs, "command",
		l->cmd, "mem_bytes", (json_int_t)p->o.mem, "vcpus",
		(json_int_t)p->o.vcpus, "coldstart_args",
		args_json(p->argv[OURS], l), "qemu_args",
		args_json(p->argv[QEMU], l), "qemu_path",
		p->left_out[QEMU][0] ? json_null() : json_string(p->qemu_path),
		"count", (json_int_t)p->o.c.count, "warmup",
		(json_int_t)p->o.c.warmup, "timeout_ns",
		(json_int_t)p->o.timeout_ns);

	if (c && p->read[OURS]) {
		json_object_set_new(c, "read_cmd", json_string(l->cmd));
		json_object_set_new(c, "read_bytes",
				    json_integer((json_int_t)p->o.read_bytes));
	}
	return c;
}

int peers_linux__run(struct peers *p)
{
	const char *exe = cli__self_exe();
	struct linux_run *l;
	int ret;

	/* the files first (exit 1), as `run` checks them, then the host
	 * (exit 77) */
	for (int pass = 0; pass < 2; pass++) {
		ret = run_linux__check_guest("bench peers", p->o.c.kernel,
					     p->o.c.initrd, NULL, p->o.mem,
					     (unsigned int)p->o.vcpus,
					     pass == 0 || p->o.c.allow_pvm);
		if (ret != CLI_OK)
			return ret;
		if (pass == 0 && access(p->o.rootfs, R_OK) < 0)
			return cli__error(CLI_FAIL, "bench peers: --rootfs "
					  "%s: %s", p->o.rootfs,
					  strerror(errno));
	}
	if (!exe)
		return err__set(ENOENT, "cannot find the coldstart binary");
	l = calloc(1, sizeof(*l));
	if (!l)
		return err__set(ENOMEM, "out of memory");
	ret = peers__prepare(p, p->o.read_bytes > 0);
	if (ret == 0)
		ret = build(p, l, exe);
	if (ret == 0) {
		ret = measure(p, l);
		for (int k = 0; k < NR_PEERS; k++) {
			unlink(l->console[k]);
			unlink(l->err[k]);
		}
		rmdir(l->dir);
	}
	if (ret == 0)
		ret = peers__emit(p, config_json(p, l), "rootfs.");
	free(l);
	return ret;
}
