/* Fuzz target: a diff snapshot's state file (checksum made right) above a
 * valid full base snapshot: the diff section's reader and checks against
 * the base, the merge into memory a restore does (snapshot__open) and
 * `coldstart snapshot merge`'s (snapshot__merge). The diff names its base
 * by the relative path "base": each run works in the target's scratch
 * directory and returns to where libFuzzer keeps its files. */
#include "fuzz.h"

#include "diff.h"
#include "format.h"
#include "snapshot.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_MEM (1ull << 30)
#define PAGE 4096u

static const char *scratch;

/* The base's memory: written pages in a few short runs, with holes
 * between longer than a merge reads at once (256 pages), one run at the
 * very end. Each run is a file extent the merge finds with lseek and
 * copies with a read and a write: fuzz__memory's scattered pages, an
 * extent each, cost some 2,000 system calls per input, most of its time;
 * these cost a few dozen, copy little, and take the merge through the same
 * cases (and its split of a long run). */
static uint8_t *base_memory(void)
{
	static const struct {
		uint64_t first, pages;
	} runs[] = { { 0, 8 }, { 40, 16 }, { 200, 24 }, { 700, 1 },
		     { FUZZ_MEM_SIZE / PAGE - 1, 1 } };
	uint8_t *mem = calloc(1, FUZZ_MEM_SIZE);

	if (!mem)
		exit(1);
	for (size_t r = 0; r < sizeof(runs) / sizeof(runs[0]); r++)
		for (uint64_t p = runs[r].first;
		     p < runs[r].first + runs[r].pages; p++)
			for (unsigned int i = 0; i < 64; i++)
				mem[p * PAGE + i * 61] = (uint8_t)(p + i + 1);
	return mem;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct snap_writer base;
	uint8_t *mem = base_memory(), *dirty = fuzz__memory(2);
	int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	(void)argc, (void)argv;
	scratch = fuzz__scratch("diff");
	if (cwd < 0 || chdir(scratch) < 0)
		exit(1);
	fuzz__state_probe(&base, 0, FUZZ_BASE_CREATED);
	fuzz__write_snapshot("base", &base, mem);
	/* The diff's memory as its seeds describe it, and one resized to
	 * whatever other size a mutated diff claims. */
	fuzz__write_snapshot("diffmem", &base, dirty);
	mkdir("diff", 0700);
	free(base.buf);
	free(mem);
	free(dirty);
	if (fchdir(cwd) < 0)
		exit(1);
	close(cwd);
	return 0;
}

static void place_memory(uint64_t size)
{
	int fd;

	unlink("diff/memory");
	if (size == FUZZ_MEM_SIZE) {
		if (symlink("../diffmem/memory", "diff/memory") < 0)
			exit(1);
		return;
	}
	fd = open("other", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)(size < MAX_MEM ? size : MAX_MEM)))
		exit(1);
	close(fd);
	if (symlink("../other", "diff/memory") < 0)
		exit(1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *diffs[] = { "diff" };
	struct snapshot_stats st;
	struct snap_reader r;
	struct snapshot s;
	uint8_t *buf = malloc(size ? size : 1);
	int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (!buf || cwd < 0 || chdir(scratch) < 0)
		exit(1);
	memcpy(buf, data, size);
	fuzz__fix_crc(buf, size);
	if (snap__parse(&r, buf, size) == 0) {
		fuzz__write("diff/state", buf, size);
		place_memory(r.hdr.mem_size);
		if (snapshot__open(&s, "diff") == 0)
			snapshot__close(&s);
		snapshot__merge("base", diffs, 1, "out", SNAPSHOT_REPLACE,
				&st);
	}
	free(buf);
	if (fchdir(cwd) < 0)
		exit(1);
	close(cwd);
	return 0;
}
