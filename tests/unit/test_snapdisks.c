/* Unit tests for a Linux guest's snapshot directory and its drives'
 * written blocks (snapshot/snapdir.c): snapshot__check takes one whose
 * overlay drives each have disk.N, a regular file of the drive's size,
 * and refuses, naming the file, one whose disk.0 is missing, of another
 * size, a FIFO or a symbolic link (which a restore would not open). */
#include "err.h"
#include "format.h"
#include "guest.h"
#include "snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#define MEM (2u << 20)
#define DISK_BYTES (4u << 20)

static char dir[64], disk0[96], disk1[96];

/* A Linux guest's state file: what snapshot__open_layer checks, with
 * vm.virtio `v`. The vCPU's registers are KVM's to check at restore. */
static void write_state(const struct snap_virtio_rec *v)
{
	static const uint8_t zero[sizeof(struct kvm_pit_state2) +
				  sizeof(struct kvm_irqchip) +
				  sizeof(struct kvm_lapic_state)];
	struct snap_header h = { .mem_size = MEM, .nr_vcpus = 1,
				 .created_ns = 1 };
	struct snap_vm_config cfg = { .mem_size = MEM, .nr_vcpus = 1,
				      .irqchip = 1,
				      .guest = SNAP_GUEST_LINUX };
	struct snap_memory mem = { .size = MEM, .page_size = 4096 };
	struct snap_guest_rec g = { .kind = SNAP_GUEST_LINUX,
				    .kernel = "/boot/vmlinuz" };
	struct snap_writer w;
	int fd;

	memcpy(h.cpu_vendor, "GenuineIntel", 12);
	snap__begin(&w, &h);
	snap__add(&w, SNAP_VM_CONFIG, 0, &cfg, sizeof(cfg));
	snap__add(&w, SNAP_VM_GUEST, 0, &g, sizeof(g));
	snap__add(&w, SNAP_VM_VIRTIO, 0, v, sizeof(*v));
	snap__add(&w, SNAP_VM_PIC_MASTER, 0, zero, sizeof(struct kvm_irqchip));
	snap__add(&w, SNAP_VM_PIC_SLAVE, 0, zero, sizeof(struct kvm_irqchip));
	snap__add(&w, SNAP_VM_IOAPIC, 0, zero, sizeof(struct kvm_irqchip));
	snap__add(&w, SNAP_VM_PIT, 0, zero, sizeof(struct kvm_pit_state2));
	snap__add(&w, SNAP_VCPU_LAPIC, 0, zero,
		  sizeof(struct kvm_lapic_state));
	snap__add(&w, SNAP_MEMORY, 0, &mem, sizeof(mem));
	assert_int_equal(snap__finish(&w), 0);
	assert_int_equal(snapshot__write_file(dir, SNAPSHOT_STATE_FILE, w.buf,
					      w.len), 0);
	free(w.buf);
	fd = snapshot__new_file(dir, SNAPSHOT_MEMORY_FILE);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, MEM), 0);
	close(fd);
}

/* Drive 0 an overlay drive, drive 1 read-only (no disk.1). */
static void write_snapshot(void)
{
	struct snap_virtio_rec v = { .version = SNAP_VIRTIO_VERSION,
				     .nr_drives = 2 };

	strcpy(v.drive[0].path, "/var/lib/img/root.ext4");
	v.drive[0].bytes = DISK_BYTES;
	v.drive[0].layer_bytes = 4096;
	v.drive[0].mode = SNAP_DRIVE_OVERLAY;
	strcpy(v.drive[1].path, "/var/lib/img/data.ext4");
	v.drive[1].bytes = 1 << 20;
	v.drive[1].mode = SNAP_DRIVE_RO;
	write_state(&v);
}

static void make_disk(const char *path, off_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, size), 0);
	assert_int_equal(pwrite(fd, "x", 1, 4096), 1);
	close(fd);
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/coldstart-snapdisks-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(disk0, sizeof(disk0), "%s/disk.0", dir);
	snprintf(disk1, sizeof(disk1), "%s/disk.1", dir);
	write_snapshot();
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static void refused(int errnum, const char *what)
{
	assert_int_equal(snapshot__check(dir), -errnum);
	if (!strstr(err__last(), disk0) || !strstr(err__last(), what))
		fail_msg("expected %s and \"%s\" in: %s", disk0, what,
			 err__last());
}

static void with_its_disk_it_opens(void **state)
{
	struct snapshot s;

	(void)state;
	make_disk(disk0, DISK_BYTES);
	assert_int_equal(snapshot__check(dir), 0);
	assert_int_equal(snapshot__open_layer(&s, dir), 0);
	assert_int_equal(s.virtio.nr_drives, 2);
	assert_int_equal(s.virtio.drive[0].mode, SNAP_DRIVE_OVERLAY);
	snapshot__close(&s);
}

static void without_disk0(void **state)
{
	(void)state;
	/* the read-only drive's disk.1 does not make up for it */
	make_disk(disk1, DISK_BYTES);
	refused(ENOENT, "are missing");
}

static void disk0_of_another_size(void **state)
{
	(void)state;
	make_disk(disk0, DISK_BYTES - 512);
	refused(EINVAL, "span 4193792 bytes; the disk has 4194304");
	assert_int_equal(unlink(disk0), 0);
	make_disk(disk0, DISK_BYTES + 4096);
	refused(EINVAL, "span 4198400 bytes");
}

static void disk0_a_fifo(void **state)
{
	(void)state;
	assert_int_equal(mkfifo(disk0, 0600), 0);
	refused(EINVAL, "not a regular file");
}

/* A link to a file of the right size: a restore opens disk.N without
 * following links, so the check refuses it before a VM is made. */
static void disk0_a_symbolic_link(void **state)
{
	char real[128];

	(void)state;
	snprintf(real, sizeof(real), "%s/elsewhere", dir);
	make_disk(real, DISK_BYTES);
	assert_int_equal(symlink(real, disk0), 0);
	refused(ELOOP, "symbolic link");
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(with_its_disk_it_opens),
		T(without_disk0),
		T(disk0_of_another_size),
		T(disk0_a_fifo),
		T(disk0_a_symbolic_link),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
