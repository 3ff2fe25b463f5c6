/* Fuzz target: a snapshot's state file. The input is parsed as it is
 * (checksum included), then with its checksum made right so mutations
 * reach every section reader: snapshot__open_layer (VM config, memory,
 * guest record and virtio devices, irqchip and device sections, probe
 * parameters, the memory file's index, the drives' disk.N files), the
 * diff section, the device states restored into a Linux guest's devices,
 * and `coldstart snapshot inspect`. */
#include "fuzz.h"

#include "cli.h"
#include "commands.h"
#include "devstate.h"
#include "diff.h"
#include "format.h"
#include "guest.h"
#include "snapshot.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The largest memory file a raw snapshot gets here (sparse on tmpfs). */
#define MAX_MEM (1ull << 36)

static char dir[PATH_MAX], raw_path[PATH_MAX], zmem_path[PATH_MAX];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *base = fuzz__scratch("state");
	uint8_t *mem = fuzz__memory(1);
	uint64_t data, file;
	int fd;

	(void)argc, (void)argv;
	fuzz__quiet_stdout();
	snprintf(dir, sizeof(dir), "%s/snap", base);
	snprintf(raw_path, sizeof(raw_path), "%s/raw", base);
	snprintf(zmem_path, sizeof(zmem_path), "%s/zmem", base);
	mkdir(dir, 0700);
	fd = open(zmem_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || zmem__write(mem, FUZZ_MEM_SIZE, NULL, fd, &data,
				  &file) < 0)
		exit(1);
	close(fd);
	free(mem);
	return 0;
}

/* The memory file: the compressed one the seeds describe when the state
 * says zstd, else a sparse raw file of the header's size. */
static void place_memory(const struct snap_reader *r)
{
	char path[PATH_MAX];
	const struct snap_memory *m;
	size_t len;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, SNAPSHOT_MEMORY_FILE);
	unlink(path);
	m = snap__find(r, SNAP_MEMORY, 0, &len);
	if (m && len == sizeof(*m) && m->compression == 1) {
		if (symlink(zmem_path, path) < 0)
			exit(1);
		return;
	}
	fd = open(raw_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)(r->hdr.mem_size < MAX_MEM
					   ? r->hdr.mem_size : MAX_MEM)) < 0)
		exit(1);
	close(fd);
	if (symlink(raw_path, path) < 0)
		exit(1);
}

/* Each overlay drive's disk.N as its record sizes it (sparse, capped),
 * so the open reaches the disks' check; none left from the last input. */
static void place_disks(const struct snap_reader *r)
{
	struct snap_virtio_rec v;
	char path[PATH_MAX];
	const void *p;
	size_t len;
	int fd;

	for (unsigned int i = 0; i < SNAP_MAX_DRIVES; i++) {
		snprintf(path, sizeof(path), "%s/" SNAPSHOT_DISK_FILE_FMT, dir,
			 i);
		unlink(path);
	}
	p = snap__find(r, SNAP_VM_VIRTIO, 0, &len);
	if (!p || snapguest__parse_virtio(p, len, &v) < 0)
		return;
	for (unsigned int i = 0; i < v.nr_drives; i++) {
		if (v.drive[i].mode != SNAP_DRIVE_OVERLAY)
			continue;
		snprintf(path, sizeof(path), "%s/" SNAPSHOT_DISK_FILE_FMT, dir,
			 i);
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0 || ftruncate(fd, (off_t)(v.drive[i].bytes < MAX_MEM
						    ? v.drive[i].bytes
						    : MAX_MEM)) < 0)
			exit(1);
		close(fd);
	}
}

static void restore_devices(const struct snap_reader *r)
{
	struct fuzz_machine fm;

	fuzz__machine_init(&fm);
	devstate__restore(&fm.vm, r);
	fuzz__machine_destroy(&fm);
}

static void inspect(bool json)
{
	char *argv[] = { "snapshot", "inspect", dir, "--json", NULL };

	cmd_snapshot(json ? 4 : 3, argv);
	fflush(stdout);
}

static void open_snapshot(void)
{
	struct snapshot s;
	struct snapdiff d;

	if (snapshot__open_layer(&s, dir) < 0)
		return;
	snapdiff__parse(&s, &d);
	restore_devices(&s.r);
	snapshot__close(&s);
	inspect(true);
	inspect(false);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snap_reader r;
	char path[PATH_MAX];
	uint8_t *buf;

	snap__parse(&r, data, size);
	buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	fuzz__fix_crc(buf, size);
	if (snap__parse(&r, buf, size) == 0) {
		snprintf(path, sizeof(path), "%s/%s", dir, SNAPSHOT_STATE_FILE);
		fuzz__write(path, buf, size);
		place_memory(&r);
		place_disks(&r);
		devstate__check(&r);
		open_snapshot();
	}
	free(buf);
	return 0;
}
