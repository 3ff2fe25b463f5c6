/* Shared helpers of the fuzz targets and the writers of valid inputs. */
#include "fuzz.h"

#include "devstate.h"
#include "diff.h"
#include "format.h"
#include "guest.h"
#include "snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define PAGE 4096u

static char scratch[4096];

static int remove_one(const char *path, const struct stat *st, int flag,
		      struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

static void remove_scratch(void)
{
	if (scratch[0])
		nftw(scratch, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fuzz__scratch(const char *target)
{
	const char *base = getenv("TMPDIR");
	struct stat st;

	if (!base || !base[0])
		base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
			       access("/dev/shm", W_OK) == 0
			       ? "/dev/shm" : "/tmp";
	snprintf(scratch, sizeof(scratch), "%s/coldstart-fuzz-%s.XXXXXX", base,
		 target);
	if (!mkdtemp(scratch)) {
		perror(scratch);
		exit(1);
	}
	atexit(remove_scratch);
	return scratch;
}

void fuzz__report_paths(const char *target, char *input, char *out,
			size_t len)
{
	const char *dir = fuzz__scratch(target);

	snprintf(input, len, "%s/result.json", dir);
	snprintf(out, len, "%s/out", dir);
	mkdir(out, 0700);
}

void fuzz__write(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || (len && write(fd, data, len) != (ssize_t)len) ||
	    close(fd) < 0) {
		perror(path);
		exit(1);
	}
}

void fuzz__quiet_stdout(void)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		fflush(stdout);
		dup2(fd, STDOUT_FILENO);
		close(fd);
	}
}

void fuzz__fix_crc(uint8_t *buf, size_t len)
{
	struct snap_trailer t;

	if (len < sizeof(struct snap_header) + sizeof(t))
		return;
	memcpy(&t, buf + len - sizeof(t), sizeof(t));
	t.crc32 = (uint32_t)crc32(0, buf, (uInt)(len - sizeof(t)));
	memcpy(buf + len - sizeof(t), &t, sizeof(t));
}

void fuzz__machine_init(struct fuzz_machine *fm)
{
	struct linux_machine_opts o = { .console = NULL,
					.at_boot = BOOTTIMER_CONTINUE };

	memset(fm, 0, sizeof(*fm));
	fm->vm.fd = -1;
	fm->vm.irqchip = true;
	pthread_mutex_init(&fm->vm.lock, NULL);
	pthread_cond_init(&fm->vm.cond, NULL);
	iotrap__init(&fm->vm.io, false);
	if (linux_machine__create(&fm->m, &fm->vm, &o) < 0) {
		fprintf(stderr, "fuzz: the machine: %s\n", err__last());
		exit(1);
	}
}

void fuzz__machine_destroy(struct fuzz_machine *fm)
{
	linux_machine__destroy(&fm->m);
	pthread_cond_destroy(&fm->vm.cond);
	pthread_mutex_destroy(&fm->vm.lock);
}

/* ---- writers ---- */

uint8_t *fuzz__memory(unsigned int seed)
{
	uint8_t *mem = calloc(1, FUZZ_MEM_SIZE);

	if (!mem)
		exit(1);
	/* Some pages with data, one chunk of zstd's 64 KiB all zeros. */
	for (uint64_t p = 0; p < FUZZ_MEM_SIZE / PAGE; p += 3 + seed % 5)
		if (p / 16 != 7)
			for (unsigned int i = 0; i < 64; i++)
				mem[p * PAGE + i * 61] = (uint8_t)(p + i + seed);
	return mem;
}

static void begin(struct snap_writer *w, uint32_t nr_vcpus,
		  uint64_t created_ns, uint64_t mem_size)
{
	struct snap_header h = { .mem_size = mem_size,
				 .nr_vcpus = nr_vcpus,
				 .created_ns = created_ns };

	memcpy(h.cpu_vendor, "GenuineIntel", 12);
	snap__begin(w, &h);
}

/* vCPU and VM sections of the sizes KVM's structs have; their contents
 * are KVM's to check at restore. */
static void add_cpu_state(struct snap_writer *w, uint32_t nr_vcpus)
{
	static const uint8_t zero[sizeof(struct kvm_xsave)];
	struct kvm_clock_data clock = { .clock = 12345 };
	uint64_t tsc_khz = 2000000;

	snap__add(w, SNAP_VM_CLOCK, 0, &clock, sizeof(clock));
	for (uint32_t i = 0; i < nr_vcpus; i++) {
		snap__add(w, SNAP_VCPU_REGS, i, zero, sizeof(struct kvm_regs));
		snap__add(w, SNAP_VCPU_SREGS, i, zero,
			  sizeof(struct kvm_sregs));
		snap__add(w, SNAP_VCPU_XSAVE, i, zero, sizeof(zero));
		snap__add(w, SNAP_VCPU_EVENTS, i, zero,
			  sizeof(struct kvm_vcpu_events));
		snap__add(w, SNAP_VCPU_TSC_KHZ, i, &tsc_khz, sizeof(tsc_khz));
	}
}

static void add_memory(struct snap_writer *w, uint32_t compression,
		       uint64_t mem_size)
{
	struct snap_memory mem = { .size = mem_size,
				   .data_bytes = mem_size / 4,
				   .page_size = PAGE,
				   .compression = compression };

	snap__add(w, SNAP_MEMORY, 0, &mem, sizeof(mem));
}

static void finish(struct snap_writer *w)
{
	if (snap__finish(w) < 0) {
		fprintf(stderr, "fuzz: writing a state: %s\n", err__last());
		exit(1);
	}
}

/* Only a probe with no init and working set fits 2 MiB of memory. */
static void state_probe(struct snap_writer *w, uint32_t compression,
			uint64_t created_ns, uint64_t mem_size)
{
	struct snap_vm_config cfg = { .mem_size = mem_size, .nr_vcpus = 2,
				      .guest = SNAP_GUEST_PROBE };
	bool room = mem_size > (2u << 20);
	struct snap_probe rec = { .init_bytes = room ? 64 * PAGE : 0,
				  .ws_bytes = room ? 16 * PAGE : 0,
				  .compute_iters = 10, .seed = 7, .stride = 1,
				  .ready = 2, .phase = { 2, 2 } };

	begin(w, 2, created_ns, mem_size);
	snap__add(w, SNAP_VM_CONFIG, 0, &cfg, sizeof(cfg));
	add_cpu_state(w, 2);
	snap__add(w, SNAP_DEV_PROBE, 0, &rec, sizeof(rec));
	add_memory(w, compression, mem_size);
	finish(w);
}

void fuzz__state_probe(struct snap_writer *w, uint32_t compression,
		       uint64_t created_ns)
{
	state_probe(w, compression, created_ns, FUZZ_MEM_SIZE);
}

/* Drive records as a snapshot writes them; the images need not exist
 * (they are checked at restore, not at open). */
static void add_virtio(struct snap_writer *w)
{
	struct snap_virtio_rec v = { .version = SNAP_VIRTIO_VERSION,
				     .nr_drives = 2, .vsock = 1,
				     .vsock_cid = 3 };

	v.drive[0] = (struct snap_drive_rec){
		.path = "/var/lib/coldstart/rootfs.ext4", .bytes = 64 << 20,
		.mtime_ns = FUZZ_BASE_CREATED, .layer_bytes = 3 * PAGE,
		.crc32 = 0x12345678, .mode = SNAP_DRIVE_OVERLAY,
	};
	v.drive[1] = (struct snap_drive_rec){
		.path = "/var/lib/coldstart/data.img", .bytes = 1 << 20,
		.mtime_ns = FUZZ_BASE_CREATED, .crc32 = 0x9abcdef0,
		.mode = SNAP_DRIVE_RO,
	};
	snap__add(w, SNAP_VM_VIRTIO, 0, &v, sizeof(v));
}

void fuzz__state_linux(struct snap_writer *w, const char *kernel,
		       bool virtio)
{
	struct snap_vm_config cfg = { .mem_size = FUZZ_MEM_SIZE,
				      .nr_vcpus = 1, .irqchip = 1,
				      .guest = SNAP_GUEST_LINUX };
	static const uint8_t zero[sizeof(struct kvm_pit_state2) +
				  sizeof(struct kvm_irqchip) +
				  sizeof(struct kvm_lapic_state)];
	struct snap_guest_rec g;
	struct fuzz_machine fm;

	if (snapguest__describe(&g, SNAP_GUEST_LINUX, kernel, NULL,
				"console=ttyS0 reboot=k panic=-1") < 0) {
		fprintf(stderr, "fuzz: %s\n", err__last());
		exit(1);
	}
	begin(w, 1, FUZZ_BASE_CREATED, FUZZ_MEM_SIZE);
	snap__add(w, SNAP_VM_CONFIG, 0, &cfg, sizeof(cfg));
	snap__add(w, SNAP_VM_GUEST, 0, &g, sizeof(g));
	if (virtio)
		add_virtio(w);
	snap__add(w, SNAP_VM_PIC_MASTER, 0, zero, sizeof(struct kvm_irqchip));
	snap__add(w, SNAP_VM_PIC_SLAVE, 0, zero, sizeof(struct kvm_irqchip));
	snap__add(w, SNAP_VM_IOAPIC, 0, zero, sizeof(struct kvm_irqchip));
	snap__add(w, SNAP_VM_PIT, 0, zero, sizeof(struct kvm_pit_state2));
	add_cpu_state(w, 1);
	snap__add(w, SNAP_VCPU_LAPIC, 0, zero, sizeof(struct kvm_lapic_state));
	fuzz__machine_init(&fm);
	if (devstate__save(&fm.vm, w) < 0)
		exit(1);
	fuzz__machine_destroy(&fm);
	add_memory(w, 0, FUZZ_MEM_SIZE);
	finish(w);
}

void fuzz__state_diff(struct snap_writer *w, const uint8_t *base_state,
		      size_t base_len, const char *base_path,
		      const uint64_t *bitmap, uint64_t mem_size)
{
	struct snapshot_id id = { .mem_size = FUZZ_MEM_SIZE,
				  .created_ns = FUZZ_BASE_CREATED };
	struct snap_writer probe;
	struct snap_section sec;
	struct snap_reader r;
	struct snap_trailer t;
	const void *payload;
	size_t cursor = 0;

	memcpy(&t, base_state + base_len - sizeof(t), sizeof(t));
	id.crc32 = t.crc32;
	snprintf(id.path, sizeof(id.path), "%s", base_path);
	/* The base's sections, then the diff's own. */
	state_probe(&probe, 0, FUZZ_BASE_CREATED + 1, mem_size);
	if (snap__parse(&r, probe.buf, probe.len) < 0)
		exit(1);
	begin(w, r.hdr.nr_vcpus, FUZZ_BASE_CREATED + 1, mem_size);
	while (snap__next(&r, &cursor, &sec, &payload))
		snap__add(w, sec.type, sec.index, payload, (size_t)sec.len);
	snapdiff__add_section(w, &id, bitmap, mem_size);
	finish(w);
	free(probe.buf);
}

void fuzz__write_snapshot(const char *dir, const struct snap_writer *state,
			  const uint8_t *mem)
{
	char path[PATH_MAX];
	uint64_t data = 0;
	int fd;

	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/%s", dir, SNAPSHOT_STATE_FILE);
	fuzz__write(path, state->buf, state->len);
	snprintf(path, sizeof(path), "%s/%s", dir, SNAPSHOT_MEMORY_FILE);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, FUZZ_MEM_SIZE) < 0 ||
	    snapdiff__write_pages(fd, mem, 0, FUZZ_MEM_SIZE, &data) < 0) {
		perror(path);
		exit(1);
	}
	close(fd);
}

uint64_t fuzz__take(struct fuzz_input *in, size_t n)
{
	uint64_t v = 0;

	n = n < in->left ? n : in->left;
	memcpy(&v, in->p, n);
	in->p += n;
	in->left -= n;
	return v;
}
