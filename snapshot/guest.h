/* Section vm.guest: what an OS guest was booted from (kernel, initrd,
 * command line), recorded at snapshot time for reports and inspect. The
 * probe guest has its own section (device.probe) instead. */
#ifndef COLDSTART_SNAPSHOT_GUEST_H
#define COLDSTART_SNAPSHOT_GUEST_H

#include <stddef.h>
#include <stdint.h>

#define SNAP_GUEST_PATH_MAX 1024
#define SNAP_GUEST_CMDLINE_MAX 2048

/* Fixed-size record, NUL-terminated strings, zero-padded. */
struct snap_guest_rec {
	uint32_t kind;         /* enum snap_guest (snapshot.h) */
	uint32_t kernel_crc32; /* zlib CRC-32 of the whole file */
	uint32_t initrd_crc32; /* 0 without an initrd */
	uint32_t reserved;
	uint64_t kernel_bytes;
	uint64_t initrd_bytes;
	char kernel[SNAP_GUEST_PATH_MAX]; /* absolute path */
	char initrd[SNAP_GUEST_PATH_MAX]; /* "" = none */
	char cmdline[SNAP_GUEST_CMDLINE_MAX];
};
_Static_assert(sizeof(struct snap_guest_rec) == 32 + 2 * SNAP_GUEST_PATH_MAX +
						       SNAP_GUEST_CMDLINE_MAX,
	       "guest record layout");

/* Fills `g` for a guest of `kind` booted from `kernel` (and `initrd`,
 * NULL: none) with `cmdline`: absolute paths, sizes and CRC-32s of the
 * files. -errno naming the file or the field that does not fit. */
int snapguest__describe(struct snap_guest_rec *g, uint32_t kind,
			const char *kernel, const char *initrd,
			const char *cmdline);

/* Copies and checks a vm.guest payload: exact size, terminated strings,
 * a known kind. -EINVAL naming the problem. */
int snapguest__parse(const void *payload, size_t len,
		     struct snap_guest_rec *out);

#endif
