/* KVM tests of the Linux boot path with the ring-0 test kernel
 * (vmm/guest/testkernel): ELF and bzImage loading, zero page, command
 * line, E820, MP table, initrd, CPUID leaves, the devices, both
 * boot-complete variants, pause at boot complete, device state round
 * trips, and failures. Small enough to run where ring 0 is interpreted
 * (PVM). Exits 77 where /dev/kvm is missing. */
#include "err.h"
#include "linux_x86.h"
#include "units.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#define TIMEOUT_NS (60ull * 1000000000ull)
#define INITRD_SIZE 3000u

static struct kvm_host kvm;
static char initrd_path[] = "/tmp/coldstart-tk-initrd.XXXXXX";
static char bzimage_path[] = "/tmp/coldstart-tk-bzimage.XXXXXX";
static uint32_t initrd_fnv;

struct boot_case {
	const char *kernel;
	const char *cmdline;
	const char *initrd;
	unsigned int vcpus;
	enum boottimer_action at_boot;
	uint64_t timeout_ns;
	const struct linux_drive *drives; /* their cmdline is appended */
	unsigned int nr_drives;
	const char *vsock; /* its Unix socket, or NULL: none */
};

struct boot_run {
	char *console;
	size_t console_len;
	enum vm_outcome outcome;
	char reason[512];
	struct boottimer_regs timer;
	struct timeline tl;
	uint64_t bytes_out;
	bool kvm_notify, irqfd; /* the first virtio device's paths */
};

/* The virtio devices' paths a case runs on: KVM's eventfds where the host
 * has them, then the exits (COLDSTART_VIRTIO_EXITS=1). */
static void use_exits(bool exits)
{
	if (exits)
		setenv("COLDSTART_VIRTIO_EXITS", "1", 1);
	else
		unsetenv("COLDSTART_VIRTIO_EXITS");
}

/* The paths taken are the ones asked for, where KVM offers them. */
static void expect_paths(const struct boot_run *r, bool exits)
{
	assert_int_equal(r->kvm_notify,
			 !exits && kvm__check_cap(&kvm, KVM_CAP_IOEVENTFD) > 0);
	assert_int_equal(r->irqfd,
			 !exits && kvm__check_cap(&kvm, KVM_CAP_IRQFD) > 0);
}

static void run_case(const struct boot_case *c, struct boot_run *r)
{
	struct linux_kernel k;
	struct linux_boot b;
	struct linux_machine m;
	struct vm *vm;
	FILE *console;
	struct vm_config cfg;
	char cmdline[1024];
	int n;

	memset(r, 0, sizeof(*r));
	console = open_memstream(&r->console, &r->console_len);
	assert_non_null(console);
	n = snprintf(cmdline, sizeof(cmdline), "%s ", c->cmdline);
	linux__virtio_cmdline(&(struct linux_virtio){ c->nr_drives,
						      c->vsock != NULL },
			      cmdline + n, sizeof(cmdline) - n);
	assert_int_equal(linux__open_kernel(&k, c->kernel), 0);
	assert_int_equal(linux__plan(&b, &k, cmdline, c->initrd, 32 * MiB,
				     c->vcpus ? c->vcpus : 1), 0);
	b.virtio.nr_drives = c->nr_drives; /* in the DSDT too */
	b.virtio.vsock = c->vsock != NULL;
	cfg = linux__vm_config(b.mem_size, b.nr_vcpus);
	cfg.io_threads = c->nr_drives + (c->vsock != NULL); /* spares */
	assert_int_equal(vm__create(&kvm, &cfg, &r->tl, &vm), 0);
	assert_int_equal(linux_machine__create(&m, vm,
			 &(struct linux_machine_opts){ console, c->at_boot }), 0);
	assert_int_equal(linux_machine__add_drives(&m, vm, c->drives,
						   c->nr_drives), 0);
	if (c->vsock)
		assert_int_equal(linux_machine__add_vsock(&m, vm, 3, c->vsock),
				 0);
	if (c->nr_drives || c->vsock) {
		const struct virtio_mmio *t = c->nr_drives ? &m.blk[0].t :
							      &m.vsock->t;

		r->kvm_notify = t->kvm_notify;
		r->irqfd = t->irq_fd >= 0;
	}
	assert_int_equal(linux__load(vm, &b), 0);
	assert_int_equal(vm__start(vm), 0);
	r->outcome = vm__wait(vm, c->timeout_ns ? c->timeout_ns : TIMEOUT_NS);
	snprintf(r->reason, sizeof(r->reason), "%s", vm->reason);
	r->timer = m.timer.regs;
	r->bytes_out = m.com1.bytes_out;
	vm__destroy(vm);
	linux_machine__destroy(&m);
	linux__plan_free(&b);
	linux__close_kernel(&k);
	fclose(console);
}

static void expect_line(const struct boot_run *r, const char *line)
{
	if (!strstr(r->console, line))
		fail_msg("console lacks '%s':\n%s", line, r->console);
}

static void expect_checks_pass(const struct boot_run *r)
{
	expect_line(r, "coldstart test kernel\n");
	expect_line(r, "e820: 3 entries, ");
	expect_line(r, "cpuid: KVMKVMKVM\n");
	expect_line(r, "uart: 16550A\n");
	expect_line(r, "i8042: ok\n");
	expect_line(r, "rtc: year 20");
	expect_line(r, "workload done\n");
	expect_line(r, "acpi: rsdp 0x00000000000e0000, checksums ok, ");
	assert_null(strstr(r->console, "BAD"));
	assert_int_equal(r->bytes_out, r->console_len);
}

static void test_elf_boots(void **state)
{
	struct boot_case c = { .kernel = COLDSTART_TESTKERNEL_ELF,
			       .cmdline = "console=ttyS0 tk.signal=port" };
	struct boot_run r;

	(void)state;
	run_case(&c, &r);
	assert_int_equal(r.outcome, VM_COMPLETED);
	assert_string_equal(r.reason, "guest reset through the i8042");
	expect_checks_pass(&r);
	expect_line(&r, "cmdline: console=ttyS0 tk.signal=port \n");
	expect_line(&r, "mptable: 1 cpus\n");
	expect_line(&r, ", madt: 1 cpus\n");
	expect_line(&r, "initrd: none\n");
	/* 639 KiB below the EBDA plus 31 MiB above 1 MiB. */
	expect_line(&r, "e820: 3 entries, 32383 KiB RAM\n");
	assert_int_equal(r.timer.first, BOOTTIMER_VIA_PORT);
	assert_int_equal(r.timer.seen, BOOTTIMER_VIA_PORT);
	assert_int_equal(r.timer.done, 1);
	assert_true(r.tl.t[TL_BOOT_COMPLETE] > r.tl.t[TL_FIRST_RUN]);
	assert_true(r.tl.t[TL_GUEST_DONE] >= r.tl.t[TL_BOOT_COMPLETE]);
	assert_true(r.tl.t[TL_GUEST_EXIT] >= r.tl.t[TL_GUEST_DONE]);
	free(r.console);
}

static void test_bzimage_with_initrd(void **state)
{
	char want[64];
	struct boot_case c = { .kernel = bzimage_path, .initrd = initrd_path,
			       .cmdline = "tk.signal=mmio" };
	struct boot_run r;

	(void)state;
	run_case(&c, &r);
	assert_int_equal(r.outcome, VM_COMPLETED);
	expect_checks_pass(&r);
	snprintf(want, sizeof(want), "initrd: %u bytes fnv1a 0x%016x\n",
		 INITRD_SIZE, initrd_fnv);
	expect_line(&r, want);
	assert_int_equal(r.timer.first, BOOTTIMER_VIA_MMIO);
	assert_int_equal(r.timer.seen, BOOTTIMER_VIA_MMIO);
	free(r.console);
}

/* APs wait for INIT/SIPI that the test kernel never sends: the VM still
 * ends cleanly when vCPU 0 resets it. */
static void test_two_vcpus(void **state)
{
	struct boot_case c = { .kernel = COLDSTART_TESTKERNEL_ELF,
			       .cmdline = "tk.signal=both", .vcpus = 2 };
	struct boot_run r;

	(void)state;
	run_case(&c, &r);
	assert_int_equal(r.outcome, VM_COMPLETED);
	expect_line(&r, "mptable: 2 cpus\n");
	expect_line(&r, ", madt: 2 cpus\n");
	assert_int_equal(r.timer.first, BOOTTIMER_VIA_PORT);
	assert_int_equal(r.timer.seen, BOOTTIMER_VIA_PORT | BOOTTIMER_VIA_MMIO);
	free(r.console);
}

static void test_stop_at_boot(void **state)
{
	struct boot_case c = { .kernel = COLDSTART_TESTKERNEL_ELF,
			       .cmdline = "", .at_boot = BOOTTIMER_STOP };
	struct boot_run r;

	(void)state;
	run_case(&c, &r);
	assert_int_equal(r.outcome, VM_COMPLETED);
	assert_string_equal(r.reason, "stopped at boot complete");
	assert_true(r.tl.t[TL_BOOT_COMPLETE] != 0);
	assert_int_equal(r.tl.t[TL_GUEST_DONE], 0);
	assert_null(strstr(r.console, "workload done"));
	free(r.console);
}

static void test_triple_fault_fails(void **state)
{
	struct boot_case c = { .kernel = COLDSTART_TESTKERNEL_ELF,
			       .cmdline = "tk.exit=shutdown" };
	struct boot_run r;

	(void)state;
	run_case(&c, &r);
	assert_int_equal(r.outcome, VM_FAILED);
	assert_non_null(strstr(r.reason, "guest shut down"));
	assert_int_equal(r.tl.t[TL_GUEST_EXIT], 0);
	free(r.console);
}

/* ACPI S5 (what `poweroff` does) ends the VM as a clean exit. */
static void test_acpi_poweroff(void **state)
{
	struct boot_case c = { .kernel = COLDSTART_TESTKERNEL_ELF,
			       .cmdline = "tk.exit=poweroff" };
	struct boot_run r;

	(void)state;
	run_case(&c, &r);
	assert_int_equal(r.outcome, VM_COMPLETED);
	assert_string_equal(r.reason, "guest powered off (ACPI S5)");
	assert_true(r.tl.t[TL_GUEST_EXIT] != 0);
	free(r.console);
}

/* A panic resets the guest (panic=-1): still a failure, not an exit. */
static void test_panic_fails(void **state)
{
	struct boot_case c = { .kernel = COLDSTART_TESTKERNEL_ELF,
			       .cmdline = "tk.exit=panic" };
	struct boot_run r;

	(void)state;
	run_case(&c, &r);
	assert_int_equal(r.outcome, VM_FAILED);
	assert_string_equal(r.reason, "guest kernel panic: Kernel panic - not "
				      "syncing: test kernel asked to");
	free(r.console);
}

static void test_hang_times_out(void **state)
{
	struct boot_case c = { .kernel = COLDSTART_TESTKERNEL_ELF,
			       .cmdline = "tk.exit=hang",
			       .timeout_ns = 500000000ull };
	struct boot_run r;

	(void)state;
	run_case(&c, &r);
	assert_int_equal(r.outcome, VM_STOPPED);
	assert_non_null(strstr(r.reason, "timed out"));
	assert_true(r.tl.t[TL_GUEST_DONE] != 0);
	free(r.console);
}

/* A scratch disk of 1 MiB: sector 0 starts with "coldstart disk", the
 * rest zeros. */
static void make_disk(char *path)
{
	static const char head[16] = "coldstart disk!";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 1 << 20), 0);
	assert_int_equal(pwrite(fd, head, sizeof(head), 0), sizeof(head));
	close(fd);
}

static uint8_t disk_byte(const char *path, off_t at)
{
	uint8_t v = 0;
	int fd = open(path, O_RDONLY);

	assert_int_equal(pread(fd, &v, 1, at), 1);
	close(fd);
	return v;
}

/* The test kernel drives a virtio-blk disk in each mode, on KVM's
 * eventfd paths and on the exit paths: its capacity, sector 0, a write
 * read back (refused when read-only), its ID, a read past its end, and
 * the interrupt that said so; the file changes only in rw mode. */
static void test_virtio_blk_disk(void **state)
{
	static const enum vblk_mode modes[] = { VBLK_COW, VBLK_RW, VBLK_RO };
	char path[32];
	struct linux_drive d = { .path = path };
	struct boot_case c = { .kernel = COLDSTART_TESTKERNEL_ELF,
			       .cmdline = "tk.signal=port", .drives = &d,
			       .nr_drives = 1 };
	struct boot_run r;

	(void)state;
	for (size_t i = 0; i < 2 * sizeof(modes) / sizeof(modes[0]); i++) {
		bool exits = i >= sizeof(modes) / sizeof(modes[0]);

		strcpy(path, "/tmp/coldstart-tk-disk.XXXXXX");
		make_disk(path);
		d.mode = modes[i % (sizeof(modes) / sizeof(modes[0]))];
		use_exits(exits);
		run_case(&c, &r);
		use_exits(false);
		expect_paths(&r, exits);
		assert_int_equal(r.outcome, VM_COMPLETED);
		expect_checks_pass(&r);
		expect_line(&r, "virtio_mmio.device=512@0xd0000000:5\n");
		expect_line(&r, "virtio-blk: capacity 2048 sectors\n");
		expect_line(&r, "virtio-blk: sector 0: "
				"636f6c647374617274206469736b2100\n");
		expect_line(&r, d.mode == VBLK_RO ?
			    "virtio-blk: write refused (read-only)\n" :
			    "virtio-blk: write read back ok\n");
		expect_line(&r, "virtio-blk: id coldstart-tk-disk.");
		expect_line(&r, "virtio-blk: past the end: error status\n");
		expect_line(&r, "virtio-blk: interrupt status 1\n");
		/* sector 1's byte 1 is the pattern's 4 only after rw */
		assert_int_equal(disk_byte(path, 513),
				 d.mode == VBLK_RW ? 4 : 0);
		free(r.console);
		unlink(path);
	}
}

struct host_side {
	char path[64];
	char heard[128], answer[128];
	int ok;
};

static int unix_fd(const char *path, bool listening)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (listening ? bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
				listen(fd, 1) < 0 :
			connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static ssize_t read_some(int fd, char *buf, size_t size)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n = poll(&p, 1, 30000) == 1 ? read(fd, buf, size - 1) : -1;

	buf[n > 0 ? n : 0] = '\0';
	return n;
}

/* The host's half of the test kernel's vsock check: answers its
 * connection to port 1234, then connects to its port 5000. */
static void *host_side(void *arg)
{
	struct host_side *h = arg;
	char sub[80], ok[32];
	int lfd, fd = -1;

	snprintf(sub, sizeof(sub), "%s_1234", h->path);
	lfd = unix_fd(sub, true);
	if (lfd < 0)
		return NULL;
	if (poll(&(struct pollfd){ .fd = lfd, .events = POLLIN }, 1, 30000) == 1)
		fd = accept(lfd, NULL, NULL);
	if (fd < 0 || read_some(fd, h->heard, sizeof(h->heard)) <= 0 ||
	    write(fd, "hi guest", 8) != 8 || read_some(fd, ok, sizeof(ok)))
		goto out;
	close(fd);
	for (int i = 0; i < 3000 && (fd = unix_fd(h->path, false)) < 0; i++)
		usleep(10000);
	if (fd < 0 || write(fd, "CONNECT 5000\n", 13) != 13 ||
	    read_some(fd, ok, sizeof(ok)) <= 0 || strncmp(ok, "OK ", 3) ||
	    write(fd, "ping", 4) != 4 ||
	    read_some(fd, h->answer, sizeof(h->answer)) <= 0)
		goto out;
	h->ok = 1;
out:
	if (fd >= 0)
		close(fd);
	close(lfd);
	unlink(sub);
	return NULL;
}

/* The test kernel talks to the host over vsock both ways: its
 * connection to a host port (PATH_1234), and the host's to its port
 * (CONNECT 5000 on PATH). */
static void vsock_both_ways(bool exits)
{
	struct host_side h = { .ok = 0 };
	struct boot_case c = { .kernel = COLDSTART_TESTKERNEL_ELF,
			       .cmdline = "tk.signal=port", .vsock = h.path,
			       .timeout_ns = 20ull * 1000000000ull };
	struct boot_run r;
	pthread_t t;

	snprintf(h.path, sizeof(h.path), "/tmp/coldstart-tk-vsock.%d",
		 (int)getpid());
	assert_int_equal(pthread_create(&t, NULL, host_side, &h), 0);
	use_exits(exits);
	run_case(&c, &r);
	use_exits(false);
	pthread_join(t, NULL);
	expect_paths(&r, exits);
	if (r.outcome != VM_COMPLETED)
		fail_msg("outcome %d (%s):\n%s", r.outcome, r.reason,
			 r.console);
	expect_checks_pass(&r);
	expect_line(&r, "virtio_mmio.device=512@0xd0004000:11\n");
	expect_line(&r, "vsock: guest cid 3\n");
	expect_line(&r, "vsock: connected to host port 1234\n");
	expect_line(&r, "vsock: host says hi guest\n");
	expect_line(&r, "vsock: closed\n");
	expect_line(&r, "vsock: served the host\n");
	assert_string_equal(h.heard, "hello from the guest");
	assert_string_equal(h.answer, "echo: ping");
	assert_int_equal(h.ok, 1);
	assert_int_equal(access(h.path, F_OK), -1); /* removed */
	free(r.console);
}

static void test_virtio_vsock_both_ways(void **state)
{
	(void)state;
	vsock_both_ways(false);
	vsock_both_ways(true);
}

/* A disk that cannot be opened fails the machine with its name. */
static void test_virtio_blk_bad_disk(void **state)
{
	struct linux_drive d = { .path = "/nonexistent/rootfs.ext4",
				 .mode = VBLK_RO };
	struct linux_machine m;
	struct timeline tl = { 0 };
	struct vm_config cfg = linux__vm_config(32 * MiB, 1);
	struct vm *vm;

	(void)state;
	assert_int_equal(vm__create(&kvm, &cfg, &tl, &vm), 0);
	assert_int_equal(linux_machine__create(&m, vm,
			 &(struct linux_machine_opts){ NULL, BOOTTIMER_PAUSE }), 0);
	assert_int_equal(linux_machine__add_drives(&m, vm, &d, 1), -ENOENT);
	assert_non_null(strstr(err__last(), "/nonexistent/rootfs.ext4"));
	assert_int_equal(m.nr_blk, 0);
	vm__destroy(vm);
	linux_machine__destroy(&m);
}

static void round_trip(struct vm *vm, const char *name)
{
	struct device *d = vm__find_device(vm, name);
	size_t n;
	uint8_t *a, *b;

	assert_non_null(d);
	n = d->ops->state_size(d->dev);
	a = malloc(n);
	b = malloc(n);
	assert_int_equal(d->ops->save(d->dev, a, n), 0);
	assert_int_equal(d->ops->restore(d->dev, a, n), 0);
	assert_int_equal(d->ops->save(d->dev, b, n), 0);
	assert_memory_equal(a, b, n);
	assert_int_equal(d->ops->save(d->dev, a, n - 1), -EINVAL);
	assert_int_equal(d->ops->restore(d->dev, a, n + 1), -EINVAL);
	((uint32_t *)b)[0] = 99; /* every state starts with its version */
	assert_int_equal(d->ops->restore(d->dev, b, n), -EINVAL);
	assert_non_null(strstr(err__last(), "version 99"));
	free(a);
	free(b);
}

/* Pauses at boot complete (how snapshots of Linux guests are taken),
 * checks the devices' state, round-trips it, and resumes to the end. */
static void test_pause_at_boot(void **state)
{
	struct linux_kernel k;
	struct linux_boot b;
	struct linux_machine m;
	struct timeline tl = { 0 };
	struct vm *vm;
	struct vm_config cfg;
	const char *names[] = { "serial.com1", "i8042", "boottimer", "cmos",
				"acpi.pm" };

	(void)state;
	assert_int_equal(linux__open_kernel(&k, COLDSTART_TESTKERNEL_ELF), 0);
	assert_int_equal(linux__plan(&b, &k, "", NULL, 32 * MiB, 1), 0);
	cfg = linux__vm_config(b.mem_size, 1);
	assert_int_equal(vm__create(&kvm, &cfg, &tl, &vm), 0);
	assert_int_equal(linux_machine__create(&m, vm,
			 &(struct linux_machine_opts){ NULL, BOOTTIMER_PAUSE }), 0);
	assert_int_equal(vm->nr_devices, 5);
	assert_int_equal(linux__load(vm, &b), 0);
	assert_int_equal(vm__start(vm), 0);
	assert_int_equal(vm__wait_paused(vm, TIMEOUT_NS), 0);
	assert_true(tl.t[TL_BOOT_COMPLETE] != 0);
	assert_int_equal(tl.t[TL_GUEST_DONE], 0);
	assert_int_equal(m.timer.regs.first, BOOTTIMER_VIA_PORT);
	assert_true(m.com1.bytes_out > 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		round_trip(vm, names[i]);
	vm__resume(vm);
	assert_int_equal(vm__wait(vm, TIMEOUT_NS), VM_COMPLETED);
	assert_true(tl.t[TL_GUEST_EXIT] != 0);
	assert_int_equal(m.timer.regs.done, 1);
	vm__destroy(vm);
	linux_machine__destroy(&m);
	linux__plan_free(&b);
	linux__close_kernel(&k);
}

/* A bzImage around the flat test kernel: protocol 2.15, 64-bit entry,
 * loaded at 16 MiB where the image is linked. */
static void write_bzimage(void)
{
	uint8_t setup[5 * 512] = { 0 };
	uint16_t v16;
	uint32_t v32;
	uint64_t v64 = 0x1000000;
	FILE *in = fopen(COLDSTART_TESTKERNEL_BIN, "rb");
	int fd = mkstemp(bzimage_path);
	uint8_t buf[65536];
	size_t n;

	assert_non_null(in);
	assert_true(fd >= 0);
	setup[0x1f1] = 4;
	setup[0x1fe] = 0x55, setup[0x1ff] = 0xaa;
	setup[0x201] = 0x6a;
	memcpy(setup + 0x202, "HdrS", 4);
	v16 = 0x020f, memcpy(setup + 0x206, &v16, 2);
	setup[0x211] = 0x01;                      /* LOADED_HIGH */
	v32 = 0x7fffffff, memcpy(setup + 0x22c, &v32, 4);
	v16 = 0x0001, memcpy(setup + 0x236, &v16, 2); /* XLF_KERNEL_64 */
	v32 = 2047, memcpy(setup + 0x238, &v32, 4);
	memcpy(setup + 0x258, &v64, 8);
	v32 = 1 << 20, memcpy(setup + 0x260, &v32, 4); /* init_size */
	assert_int_equal(write(fd, setup, sizeof(setup)), sizeof(setup));
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(write(fd, buf, n), (ssize_t)n);
	fclose(in);
	close(fd);
}

static void write_initrd(void)
{
	uint8_t data[INITRD_SIZE];
	int fd = mkstemp(initrd_path);

	assert_true(fd >= 0);
	initrd_fnv = 2166136261u;
	for (unsigned int i = 0; i < INITRD_SIZE; i++) {
		data[i] = (uint8_t)(i * 7 + (i >> 8));
		initrd_fnv = (initrd_fnv ^ data[i]) * 16777619u;
	}
	assert_int_equal(write(fd, data, sizeof(data)), sizeof(data));
	close(fd);
}

static int setup_files(void **state)
{
	(void)state;
	write_bzimage();
	write_initrd();
	return 0;
}

static int remove_files(void **state)
{
	(void)state;
	unlink(bzimage_path);
	unlink(initrd_path);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_elf_boots),
		cmocka_unit_test(test_bzimage_with_initrd),
		cmocka_unit_test(test_two_vcpus),
		cmocka_unit_test(test_stop_at_boot),
		cmocka_unit_test(test_triple_fault_fails),
		cmocka_unit_test(test_panic_fails),
		cmocka_unit_test(test_acpi_poweroff),
		cmocka_unit_test(test_hang_times_out),
		cmocka_unit_test(test_pause_at_boot),
		cmocka_unit_test(test_virtio_blk_disk),
		cmocka_unit_test(test_virtio_blk_bad_disk),
		cmocka_unit_test(test_virtio_vsock_both_ways),
	};
	int ret = kvm__open(&kvm, NULL);

	if (ret < 0) {
		fprintf(stderr, "skipping: %s\n", err__last());
		return 77;
	}
	ret = cmocka_run_group_tests(tests, setup_files, remove_files);
	kvm__close(&kvm);
	return ret;
}
