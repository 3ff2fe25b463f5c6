/* coldstart.root: from the initramfs to a disk, and the agent on it. */
#ifndef COLDSTART_INIT_ROOTFS_H
#define COLDSTART_INIT_ROOTFS_H

#include "cmdline.h"

/* The directory of the initramfs that holds the virtio modules, and the
 * agent's path there (image/ writes both). */
#define INIT_MODULES_DIR "/lib/modules/coldstart"
#define INIT_AGENT_PATH "/bin/coldstart-agent"

/* Loads the virtio modules, mounts cfg->root, makes it the root (freeing
 * the initramfs) and executes cfg->init there, or the agent on
 * cfg->agent_port. Returns only on failure: -errno, err__last() says. */
int init_rootfs__switch(const struct init_config *cfg);

#endif
