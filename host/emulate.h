/* The emulated SVM host: where coldstart gets a real KVM on a machine
 * without a usable /dev/kvm. QEMU's TCG emulates an x86 host with AMD SVM
 * and nested paging; Debian's cloud kernel (from `coldstart image build`)
 * boots in it and loads kvm_amd. The command runs there in a root made of
 * this machine's own files (virtiofs, read-only, under an overlay whose
 * writes go to a scratch ext4 disk), so every binary, library and build
 * directory is where it is here; only the --out directories are written
 * back. Timings inside are functional only (a software CPU, ~30x slower). */
#ifndef COLDSTART_EMULATE_H
#define COLDSTART_EMULATE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The label results carry when measured inside (see kvm__emulated). */
#define EMULATE_LABEL "qemu-tcg-svm"

#define EMULATE_MAX_OUTS 8

struct emulate_options {
	char *const *argv;    /* the command; argv[0] looked up in PATH */
	const char *outs[EMULATE_MAX_OUTS]; /* writable host directories */
	size_t nr_outs;
	unsigned vcpus;       /* 0: 2 */
	uint64_t mem_mib;     /* 0: 4096 */
	uint64_t disk_mib;    /* scratch disk, sparse; 0: 16384 */
	unsigned timeout_s;   /* whole run; 0: none */
	unsigned stall_s;     /* console silent this long: stalled; 0: 180 */
	unsigned boot_timeout_s; /* not up this long: boot again, once; 0: 120 */
	const char *image_dir; /* kernel and modules; NULL: image__build's */
	const char *console;  /* keep the host's console log here, or NULL */
	const char *work_parent; /* scratch disk's directory; NULL: /var/tmp */
	bool quiet;           /* no progress lines on stderr */
	bool cgroup_v1;       /* the host mounts cgroup v1 (cpu,cpuacct and
			       * memory hierarchies), not v2 */
};

struct emulate_result {
	int exit_status;    /* the command's exit status (128+N: signal N) */
	double boot_s;      /* QEMU start to the command's start */
	double total_s;     /* QEMU start to power-off */
};

/* Whether every tool the emulated host needs is installed; when not,
 * -ENOENT with a message naming the Debian package to install. Does not
 * build or download the kernel image. */
int emulate__check_tools(void);

/* Boots the emulated host, runs o->argv in it with its stdout and stderr
 * forwarded to ours as they come, and powers it off. 0 with r filled when
 * the command ran to its end (whatever its status); -ENOENT when a tool or
 * the kernel image is missing (the CLI exits 77); -ETIMEDOUT when the run
 * outlived timeout_s, the host stalled or did not come up within
 * boot_timeout_s twice (a first boot that did not is tried once more);
 * -EIO when the host ended without the command's status; -EINTR when interrupted (SIGINT, SIGTERM). Each
 * failure's message ends with the console's last lines. */
int emulate__run(const struct emulate_options *o, struct emulate_result *r);

/* Inside the emulated host: keeps one idle VM (in-kernel irqchip, one
 * vCPU that never runs) until killed; prints "holding" once it exists.
 * Returns only on failure (-errno). */
int emulate__hold_kvm(void);

#endif
