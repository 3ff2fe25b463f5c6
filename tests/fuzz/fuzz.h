/* What the fuzz targets share: libFuzzer's entry points, a scratch
 * directory, whole-file writes, state files with a correct checksum, the
 * machine whose devices the device and state targets drive, and the
 * writers of valid inputs that seed the corpora (seeds.c) and set up the
 * diff target's base. */
#ifndef COLDSTART_FUZZ_H
#define COLDSTART_FUZZ_H

#include "err.h"
#include "format.h"
#include "linux_x86.h"
#include "vm.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A new directory for this process's files (under $TMPDIR, else /dev/shm,
 * else /tmp), removed at exit; exits on failure (setup, not input). */
const char *fuzz__scratch(const char *target);

/* A report target's paths in its scratch directory: the document it
 * reads (input, "DIR/result.json") and the --out directory it writes
 * (out, "DIR/out", made here); each buffer holds len bytes. */
void fuzz__report_paths(const char *target, char *input, char *out,
			size_t len);

/* Replaces the file at `path` with `len` bytes; exits on failure. */
void fuzz__write(const char *path, const void *data, size_t len);

/* An input read from the front: fuzz__take() returns its next n bytes
 * (n <= 8) as a little-endian number, zeros past its end. */
struct fuzz_input {
	const uint8_t *p;
	size_t left;
};
uint64_t fuzz__take(struct fuzz_input *in, size_t n);

/* Points fd 1 at /dev/null: what the CLI code prints is not looked at. */
void fuzz__quiet_stdout(void);

/* Sets the CRC-32 of a state file image (format.h) to what its bytes
 * hold, so mutated images get past the checksum to the sections. */
void fuzz__fix_crc(uint8_t *buf, size_t len);

/* A VM without KVM (fd -1: the irqchip ioctls fail, as the devices
 * handle) with the devices of a Linux guest's machine registered. */
struct fuzz_machine {
	struct vm vm;
	struct linux_machine m;
};
void fuzz__machine_init(struct fuzz_machine *fm);
void fuzz__machine_destroy(struct fuzz_machine *fm);

/* ---- writers of valid inputs (the project's own writers underneath) ---- */

#define FUZZ_MEM_SIZE (4ull << 20) /* guest memory of the generated snapshots */
#define FUZZ_BASE_CREATED 1700000000000000000ull

/* Guest memory with a few written pages (malloc'ed, FUZZ_MEM_SIZE). */
uint8_t *fuzz__memory(unsigned int seed);

/* A probe guest's state file image for FUZZ_MEM_SIZE bytes of memory
 * (compression 0 or 1), caller frees w->buf. */
void fuzz__state_probe(struct snap_writer *w, uint32_t compression,
		       uint64_t created_ns);

/* A Linux guest's state (irqchip sections, vm.guest naming `kernel`, the
 * machine's device sections; with `virtio`, vm.virtio: an overlay
 * drive, a read-only one and a vsock device), caller frees w->buf. */
void fuzz__state_linux(struct snap_writer *w, const char *kernel,
		       bool virtio);

/* A probe guest's diff, of a VM with `mem_size` bytes of memory, against
 * a base (of FUZZ_MEM_SIZE) whose state image is `base_state` (at
 * `base_path`, as the diff records it), dirty pages from `bitmap`. */
void fuzz__state_diff(struct snap_writer *w, const uint8_t *base_state,
		      size_t base_len, const char *base_path,
		      const uint64_t *bitmap, uint64_t mem_size);

/* Writes a snapshot directory `dir` (made if missing): `state` and raw
 * `mem` (FUZZ_MEM_SIZE bytes, zero pages left as holes). */
void fuzz__write_snapshot(const char *dir, const struct snap_writer *state,
			  const uint8_t *mem);

#endif
