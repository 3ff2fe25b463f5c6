/* The coldstart guest init's options, parsed from the kernel command line
 * (/proc/cmdline). Pure: no I/O, so unit tests run it on the host. */
#ifndef COLDSTART_INIT_CMDLINE_H
#define COLDSTART_INIT_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How the init tells the VMM that boot is complete (a bit set). */
enum init_signal {
	INIT_SIGNAL_PORT = 1, /* I/O port 0x3f0 */
	INIT_SIGNAL_MMIO = 2, /* MMIO 0xC0000000 */
};

#define INIT_RUN_MAX 2048
#define INIT_PATH_MAX 256
/* 64 GiB: more than any guest we boot, small enough that page counts and
 * offsets never overflow. */
#define INIT_TOUCH_MAX (64ull << 30)

/* A memory-touch workload: every page of a fresh anonymous mapping once,
 * in the probe guest's orders (vmm/guest/probe_work.h). */
struct init_touch {
	uint64_t bytes;   /* a multiple of 4 KiB */
	uint32_t pattern; /* PROBE_PATTERN_SEQ or PROBE_PATTERN_RANDOM */
	uint32_t op;      /* PROBE_OP_READ or PROBE_OP_WRITE */
};

struct init_config {
	unsigned signal; /* enum init_signal bits for byte 123; never 0 */
	unsigned done;   /* the same for byte 124 after the workload; 0: none */
	bool has_run;
	char run[INIT_RUN_MAX]; /* coldstart.run: a busybox sh -c command */
	bool has_touch;
	struct init_touch touch;
	char root[INIT_PATH_MAX];  /* coldstart.root: "" = stay in RAM */
	char init[INIT_PATH_MAX];  /* coldstart.init: "" = our agent */
	uint32_t agent_port;       /* coldstart.agent (default 1024) */
};

/*
 * Parses the kernel command line. Recognized words (others are ignored,
 * except unknown coldstart.* words, which are errors so typos show):
 *   coldstart.boot=port|mmio|both       boot-complete signal (default port)
 *   coldstart.done=port|mmio|both|none  workload-done signal (default port)
 *   coldstart.run=CMD                   run CMD with busybox sh -c
 *   coldstart.touch=SIZE[:seq|random][:read|write]
 *                                       SIZE is bytes with K, M or G suffix
 *   coldstart.root=DEV                  load the virtio modules, mount DEV
 *                                       (ext4; read-only if the disk is) and
 *                                       switch root to it, then run the
 *                                       guest agent as PID 1; with
 *                                       coldstart.run, run CMD with the
 *                                       disk's /bin/sh instead and reboot
 *   coldstart.agent=PORT                the agent's vsock port (1024)
 *   coldstart.init=PATH                 run PATH of the root instead of
 *                                       the agent (a user's own)
 * Double quotes group words as the kernel does (coldstart.run="a b") and
 * are removed, so CMD cannot contain a double quote. Returns 0, or -EINVAL
 * with err__last() naming the problem; `cfg` is fully written either way.
 */
int init_cmdline__parse(const char *cmdline, struct init_config *cfg);

/* Parses SIZE ("64M", "4096", "1G"): bytes rounded up to 4 KiB pages. */
int init_cmdline__size(const char *text, uint64_t *bytes);

#endif
