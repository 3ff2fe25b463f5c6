/* What peers.c (the probe guest, the options, the document) and
 * peers_linux.c (the Linux guest on its root disk) share. */
#ifndef COLDSTART_PEERS_INT_H
#define COLDSTART_PEERS_INT_H

#include "driver.h"

#include <jansson.h>
#include <limits.h>
#include <stdint.h>

enum peer { OURS, QEMU, NR_PEERS };

#define PEERS_ARGV_MAX 40

struct peers_opts {
	struct bench_common c;
	const char *qemu;
	const char *rootfs;  /* --rootfs (with --kernel) */
	uint64_t timeout_ns; /* per run of the Linux guest */
	bool timeout_given;
	uint64_t read_bytes; /* --read: of the disk per run; 0: none */
	bool read_given;
	uint64_t mem;        /* bytes, from --mem (--kernel only) */
	uint64_t vcpus;
};

struct peers {
	struct peers_opts o;
	char qemu_path[PATH_MAX];
	char bios[64];          /* the temporary firmware file */
	char *argv[NR_PEERS][PEERS_ARGV_MAX];
	double *wall[NR_PEERS]; /* ns */
	double *rss[NR_PEERS];  /* peak RSS, KiB */
	double *read[NR_PEERS]; /* MiB/s (the Linux guest) */
	char left_out[NR_PEERS][320]; /* why a peer was not measured, or "" */
};

extern const char *const peers_names[NR_PEERS];

/* QEMU from --qemu or PATH into p->qemu_path; -ENOTSUP when it is not
 * there. */
int peers__find_qemu(struct peers *p);

/* Records why a peer is not measured and says so on stderr. */
void peers__leave_out(struct peers *p, enum peer who, const char *why);

/* QEMU looked up (one not found is left out; one named by --qemu must
 * be there) and the samples allocated, the reads' too when `reads`. */
int peers__prepare(struct peers *p, bool reads);

/* The document of what was measured: series PREFIX+PEER (wall ns),
 * rss.PREFIX+PEER (peak RSS KiB) and, when measured, read_mib_s.PEER;
 * ratios[PREFIX+"qemu.microvm"]; printed or written as --json and --out
 * say. Takes `config`. 0 or -errno. */
int peers__emit(struct peers *p, json_t *config, const char *prefix);

/* The Linux guest's whole benchmark (p->o.c.kernel set): measures,
 * writes the document; 0, an exit code (enum cli_exit) or -errno. */
int peers_linux__run(struct peers *p);

#endif
