/* Diff snapshots: only the pages the guest wrote since a base snapshot
 * (KVM's dirty log), and merging a base plus diffs into a full snapshot.
 *
 * A diff is a snapshot directory like any other whose state file holds a
 * memory.diff section: the base's identity and a bitmap of the pages
 * written since the base. Its memory file is raw and of full size, with
 * the dirty pages at their own offsets and holes everywhere else (and
 * where a dirty page is all zeros). A diff's base may itself be a diff. */
#ifndef COLDSTART_SNAPSHOT_DIFF_H
#define COLDSTART_SNAPSHOT_DIFF_H

#include "format.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

struct snapshot;
struct snap_writer;

/* A restore resolves at most this many diffs above a full snapshot. */
#define SNAPDIFF_MAX_CHAIN 32u

/* Section memory.diff: this header, the base's path (NUL-terminated,
 * padded to 8 bytes), then the bitmap (bit p of 64-bit word p / 64 is
 * page p, as KVM_GET_DIRTY_LOG fills it). */
struct snap_mem_diff {
	uint32_t base_crc32;  /* the base state file's CRC-32 trailer */
	uint32_t path_len;    /* bytes of the path, with its NUL */
	uint64_t base_mem_size;
	uint64_t base_created_ns;
	uint64_t dirty_pages; /* bits set in the bitmap */
	uint64_t bitmap_bytes; /* mem_size / 4096 / 8 */
};
_Static_assert(sizeof(struct snap_mem_diff) == 40, "diff header layout");

/* What identifies a snapshot to the diffs taken against it: its state
 * file's CRC (which covers its creation time), memory size and creation
 * time, and where it was. */
struct snapshot_id {
	uint32_t crc32;
	uint64_t mem_size;
	uint64_t created_ns;
	char path[PATH_MAX]; /* absolute */
};

/* The identity of an open snapshot; -errno when its path cannot be made
 * absolute. */
int snapdiff__identity(const struct snapshot *s, struct snapshot_id *id);

/* A parsed memory.diff section; borrows the snapshot's state image. */
struct snapdiff {
	struct snap_mem_diff hdr;
	const char *base_path;
	const uint64_t *bitmap;
};

/* Parses and checks the memory.diff section of `s` against its memory
 * size: 1 with *d filled, 0 when `s` is not a diff, -EINVAL with a
 * message naming the problem. */
int snapdiff__parse(const struct snapshot *s, struct snapdiff *d);

/* Whether `d` was taken against `base`; -EINVAL naming both otherwise. */
int snapdiff__check_base(const struct snapdiff *d, const char *diff_dir,
			 const struct snapshot *base);

/* Adds the memory.diff section for a diff of `mem_size` bytes taken
 * against `base`, with `bitmap` from the dirty log. */
void snapdiff__add_section(struct snap_writer *w, const struct snapshot_id *base,
			   const uint64_t *bitmap, uint64_t mem_size);

/* Writes the non-zero pages of `len` bytes at `src` to `fd` at offset
 * `off`, leaving holes for zero pages; adds the bytes written to *data. */
int snapdiff__write_pages(int fd, const uint8_t *src, uint64_t off,
			  size_t len, uint64_t *data);

/* When `s` (opened with snapshot__open_layer) is a diff: opens its base
 * chain (each base checked against the diff above it), merges base and
 * diff into an in-memory file (memfd) and makes that s->mem_fd, so every
 * restore strategy sees full memory. No-op for a full snapshot. */
int snapdiff__materialize(struct snapshot *s, unsigned int depth);

/* Writes the full snapshot equal to `base` plus `diffs` (in order, each
 * taken against the one before it) into `out`, atomically like
 * snapshot__save (flags: SNAPSHOT_REPLACE). `st` as snapshot__save. */
struct snapshot_stats;
int snapshot__merge(const char *base, char *const *diffs, unsigned int n,
		    const char *out, unsigned int flags,
		    struct snapshot_stats *st);

#endif
