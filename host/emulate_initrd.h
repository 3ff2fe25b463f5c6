/* The emulated host's initramfs (emulate_initrd.c), which emulate.c
 * writes before it starts QEMU. */
#ifndef COLDSTART_EMULATE_INITRD_H
#define COLDSTART_EMULATE_INITRD_H

#include <stddef.h>

/* The host's busybox, copied into the initramfs. */
#define BUSYBOX "/bin/busybox"

/* Reads the regular file `path` whole into *data (malloc'd, one byte
 * longer than *size); 0 or -errno with a message. */
int emulate__read_whole(const char *path, char **data, size_t *size);

/* Writes `path`, the host's initramfs: busybox, its /init, the modules of
 * the guest image `image`, the script that runs `argv` and the list of
 * the `outs` (made when missing). 0 or -errno with a message. */
int emulate__build_initrd(const char *path, const char *image,
			  char *const *argv, const char *const *outs,
			  size_t nr_outs);

#endif
