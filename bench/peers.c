/* The peers benchmark: whole-process wall time and peak RSS of a guest
 * that exits at once, under `qemu-system-x86_64 -M microvm -enable-kvm`
 * (our 64 KiB firmware writing to isa-debug-exit) and under `coldstart run
 * --stop-at ready -q`, interleaved; reported as QEMU/coldstart ratios.
 * Without QEMU (none in PATH, or one that cannot use KVM here) coldstart
 * is measured alone and the document records QEMU as left out. With
 * --kernel the guest is Linux on its root disk (peers_linux.c). */
#include "peers.h"
#include "peers_int.h"

#include "args.h"
#include "child.h"
#include "cli.h"
#include "err.h"
#include "output.h"
#include "timeline.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern const char peer_bios_start[], peer_bios_end[];

static int write_bios(struct peers *p)
{
	size_t len = (size_t)(peer_bios_end - peer_bios_start);
	int fd;

	snprintf(p->bios, sizeof(p->bios), "/tmp/coldstart-peer-XXXXXX");
	fd = mkstemp(p->bios);
	if (fd < 0)
		return err__sys(errno, "creating the peer firmware file");
	if (write(fd, peer_bios_start, len) != (ssize_t)len) {
		int ret = err__sys(errno ? errno : EIO, "writing %s", p->bios);

		close(fd);
		unlink(p->bios);
		return ret;
	}
	close(fd);
	return 0;
}

static void build_argv(struct peers *p, const char *exe)
{
	static const char *const qemu_args[] = {
		"-M", "microvm", "-enable-kvm", "-m", "16M", "-nodefaults",
		"-no-user-config", "-display", "none", "-device",
		"isa-debug-exit,iobase=0xf4,iosize=0x04", "-bios", NULL };
	char **q = p->argv[QEMU], **c = p->argv[OURS];
	int n = 0;

	q[n++] = p->qemu_path;
	for (int i = 0; qemu_args[i]; i++)
		q[n++] = (char *)qemu_args[i];
	q[n++] = p->bios;
	q[n] = NULL;
	n = 0;
	c[n++] = (char *)exe;
	c[n++] = "run";
	c[n++] = "--stop-at=ready";
	c[n++] = "-q";
	if (p->o.c.kvm_path) {
		c[n++] = "--kvm";
		c[n++] = (char *)p->o.c.kvm_path;
	}
	c[n] = NULL;
}

/* One run; its wall time and peak RSS. QEMU must end with the guest's
 * status, coldstart with 0: anything else is a failure, not a sample. */
static int one_run(struct peers *p, enum peer who, double *wall, double *rss)
{
	int want = who == QEMU ? PEERS_QEMU_GUEST_STATUS : 0, status, ret;
	struct rusage ru;
	uint64_t t0 = timeline__now();
	char buf[32];

	ret = child__run(p->argv[who], true, &status, &ru);
	*wall = (double)(timeline__now() - t0);
	*rss = (double)ru.ru_maxrss;
	if (ret == 0 && (!WIFEXITED(status) || WEXITSTATUS(status) != want))
		ret = err__set(who == QEMU ? ENOTSUP : EIO, "%s %s (want exit "
			       "%d)%s", who == QEMU ? "QEMU" : "coldstart run",
			       child__status_text(status, buf, sizeof(buf)),
			       want, who == QEMU ? ": it cannot run the guest "
			       "with KVM on this host" : "");
	return ret;
}

/* Alternates which peer goes first, so neither always inherits the
 * other's cache state. */
static int measure(struct peers *p)
{
	uint64_t total = p->o.c.warmup + p->o.c.count;
	int ret = 0;

	for (uint64_t i = 0; ret == 0 && i < total; i++) {
		for (int k = 0; ret == 0 && k < NR_PEERS; k++) {
			enum peer who = (enum peer)((k + i) % NR_PEERS);
			double wall, rss;

			if (p->left_out[who][0])
				continue;
			ret = one_run(p, who, &wall, &rss);
			/* a QEMU that cannot use KVM here fails at once; the
			 * comparison is then left out, not the whole run */
			if (ret == -ENOTSUP && who == QEMU && i == 0) {
				peers__leave_out(p, QEMU, err__last());
				ret = 0;
				continue;
			}
			if (ret == 0 && i >= p->o.c.warmup) {
				p->wall[who][i - p->o.c.warmup] = wall;
				p->rss[who][i - p->o.c.warmup] = rss;
			}
		}
		output__progress("peers", (unsigned long)(i + 1),
				 (unsigned long)total);
	}
	output__progress_done();
	return ret;
}
static json_t *config_json(const struct peers *p)
{
	json_t *qemu = json_array();

	for (int i = 1; p->argv[QEMU][i]; i++)
		json_array_append_new(qemu, json_string(
			p->argv[QEMU][i] == p->bios ? "PEER_BIOS"
						    : p->argv[QEMU][i]));
	return json_pack("{s:s, s:s, s:o, s:o, s:I, s:I}", "guest",
			 "exit at once", "coldstart_cmd",
			 "run --stop-at=ready -q", "qemu_args", qemu,
			 "qemu_path", p->left_out[QEMU][0] ? json_null()
			 : json_string(p->qemu_path), "count",
			 (json_int_t)p->o.c.count, "warmup",
			 (json_int_t)p->o.c.warmup);
}

static int measure_all(struct peers *p)
{
	const char *exe = cli__self_exe();
	int ret;

	if (!exe)
		return err__set(ENOENT, "cannot find the coldstart binary");
	ret = peers__prepare(p, false);
	if (ret == 0)
		ret = write_bios(p);
	if (ret < 0)
		return ret;
	build_argv(p, exe);
	ret = measure(p);
	unlink(p->bios);
	if (ret < 0)
		return ret;
	return peers__emit(p, config_json(p), "");
}

static int run(void *opts)
{
	struct peers *p = opts;
	int ret = p->o.c.kernel ? peers_linux__run(p) : measure_all(p);

	for (int k = 0; k < NR_PEERS; k++) {
		free(p->wall[k]);
		free(p->rss[k]);
		free(p->read[k]);
	}
	return ret;
}

static void init(void *opts)
{
	struct peers *p = opts;

	p->o.c = (struct bench_common){ .count = 20, .warmup = 3,
					.count_max = 100000,
					.warmup_max = 100000 };
	p->o.timeout_ns = 300ull * 1000000000ull;
	p->o.vcpus = 1;
	p->o.read_bytes = 64ull << 20;
}

static int set_qemu(void *opts, const char *arg)
{
	((struct peers *)opts)->o.qemu = arg;
	return 0;
}

static int set_rootfs(void *opts, const char *arg)
{
	((struct peers *)opts)->o.rootfs = arg;
	return 0;
}

static int set_read(void *opts, const char *arg)
{
	struct peers_opts *o = &((struct peers *)opts)->o;

	o->read_given = true;
	return args__size("--read", arg, &o->read_bytes);
}

static int set_timeout(void *opts, const char *arg)
{
	struct peers_opts *o = &((struct peers *)opts)->o;

	o->timeout_given = true;
	return args__duration("--timeout", arg, &o->timeout_ns);
}

/* The option given that only the Linux guest takes, or NULL. */
static const char *linux_only(const struct peers_opts *o)
{
	return o->rootfs	  ? "rootfs"
	       : o->c.initrd	  ? "initrd"
	       : o->c.mem	  ? "mem"
	       : o->c.vcpus	  ? "vcpus"
	       : o->c.allow_pvm	  ? "allow-pvm"
	       : o->timeout_given ? "timeout"
	       : o->read_given	  ? "read"
				  : NULL;
}

static int check(void *opts)
{
	struct peers_opts *o = &((struct peers *)opts)->o;
	int ret;

	if (!o->c.kernel)
		return linux_only(o) ? err__set(EINVAL, "--%s needs --kernel",
						linux_only(o))
				     : 0;
	if (!o->c.initrd || !o->rootfs)
		return err__set(EINVAL, "--kernel needs --initrd and --rootfs "
				"(the guest's init runs the command on its "
				"root disk)");
	if (o->read_bytes % (1u << 20))
		return err__set(EINVAL, "--read: a whole number of MiB");
	if (o->timeout_ns < 1000000000ull)
		return err__set(EINVAL, "--timeout: at least 1s");
	ret = args__size("--mem", o->c.mem ? o->c.mem : "256M", &o->mem);
	if (ret == 0 && (o->mem == 0 || o->mem % (2ull << 20)))
		ret = err__set(EINVAL, "--mem %s: not a multiple of 2 MiB",
			       o->c.mem);
	if (ret == 0 && o->c.vcpus)
		ret = args__u64("--vcpus", o->c.vcpus, 1, 64, &o->vcpus);
	return ret;
}

static const struct opt table[] = {
	{ "qemu", 0, "PATH", false, "the QEMU binary (default: "
	  "qemu-system-x86_64 in PATH)", set_qemu, NULL },
	{ "rootfs", 0, "PATH", false, "with --kernel and --initrd: the "
	  "guest's root disk, an ext4\nimage (`coldstart image build "
	  "--rootfs`'s), read-only to both", set_rootfs, NULL },
	{ "read", 0, "SIZE", false, "with --kernel: the guest's command "
	  "reads SIZE of its disk\n(whole MiB; default 64M; 0: it runs "
	  "/bin/true instead)", set_read, NULL },
	{ "timeout", 0, "DUR", false, "with --kernel: kill a run after DUR "
	  "(default 300s)", set_timeout, NULL },
	OPT_END,
};

const struct bench_driver peers_driver = {
	.name = "peers",
	.summary = "QEMU microvm beside coldstart, as ratios: an instant "
		   "guest, or Linux on a root disk",
	.usage = "Usage: coldstart bench peers [OPTIONS]\n"
		 "Whole-process wall time and peak RSS of a guest that exits "
		 "at once, under\nQEMU (-M microvm -enable-kvm, our 64 KiB "
		 "firmware writing to isa-debug-exit)\nand under `coldstart "
		 "run --stop-at ready -q`, interleaved; reported as\n"
		 "QEMU/coldstart ratios of the medians. Without QEMU in PATH "
		 "(or one that cannot use KVM\nhere) coldstart runs alone and "
		 "the results say QEMU was left out. A sample is\none run of "
		 "each; --kvm is coldstart's device.\n"
		 "With --kernel K --initrd I --rootfs R: the same Linux guest "
		 "on both, its root\nthe read-only disk R (virtio-mmio), "
		 "running one command and rebooting:\nwall time and peak RSS "
		 "of the whole run, and the command's sequential O_DIRECT\n"
		 "read of the disk's first --read bytes in MiB/s "
		 "(docs/commands.md).\n",
	.common = BENCH_COUNT | BENCH_WARMUP | BENCH_JSON | BENCH_OUT |
		  BENCH_KVM | BENCH_KERNEL | BENCH_INITRD | BENCH_MEM |
		  BENCH_VCPUS | BENCH_ALLOW_PVM,
	.opts = table,
	.size = sizeof(struct peers),
	.common_at = offsetof(struct peers, o.c),
	.init = init,
	.check = check,
	.run = run,
	/* the user's guest only on its root disk: a sample is two whole
	 * Linux runs, each reading --read of the disk */
	.suite = { .quick = "-n 10 -w 2", .smoke = "-n 2 -w 1",
		   .root_full = "-n 10 -w 2", .root_quick = "-n 4 -w 1",
		   .root_smoke = "-n 2 -w 0 --read 16M" },
};
