/* coldstart.root: from the initramfs to a disk, and the agent on it. */
#ifndef COLDSTART_INIT_ROOTFS_H
#define COLDSTART_INIT_ROOTFS_H

#include "../guest_initramfs.h"
#include "cmdline.h"

/* The directory of the initramfs that holds the virtio modules, and the
 * agent's path there (image/ writes both). */
#define INIT_MODULES_DIR "/" GUEST_MODULES_DIR
#define INIT_AGENT_PATH "/" GUEST_AGENT_FILE

/* Loads the virtio modules, mounts cfg->root (read-only if the disk is),
 * makes it the root (freeing the initramfs) and executes cfg->init there,
 * or the agent on cfg->agent_port. With cfg->has_run it returns 0 once
 * the disk is the root, for the caller to run the command; otherwise it
 * returns only on failure: -errno, err__last() says. */
int init_rootfs__switch(const struct init_config *cfg);

#endif
