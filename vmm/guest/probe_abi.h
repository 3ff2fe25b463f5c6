/* Versioned ABI between the VMM and the probe guest: memory layout, boot
 * info and the ucall port protocol. Self-contained: freestanding guest code
 * and the hosted VMM both include it, so it uses only compiler builtins. */
#ifndef COLDSTART_PROBE_ABI_H
#define COLDSTART_PROBE_ABI_H

#include <stdint.h>

#define PROBE_ABI_VERSION 1u
#define PROBE_BOOT_MAGIC 0x65626f7270736377ull /* "wcsprobe" */

/*
 * Guest-physical layout; guest-virtual addresses are identical (identity
 * map). The first 2 MiB is mapped with 4 KiB pages so each part gets its own
 * permissions; the workload region above it uses 2 MiB pages.
 *
 *   0x000000  unmapped (catches null pointers)
 *   0x001000  GDT                      read-only
 *   0x002000  boot info                read-only
 *   0x003000  TSS with I/O bitmap      read-only, supervisor (see below)
 *   0x010000  guest image              read-write-execute
 *   0x080000  page tables              not mapped
 *   0x100000  per-vCPU stacks          read-write, no-execute
 *   0x200000  workload region          read-write, no-execute
 */
#define PROBE_GDT_GPA 0x1000ull
#define PROBE_BOOT_INFO_GPA 0x2000ull
/* PVM ignores RFLAGS.IOPL for ring-3 port I/O and consults the TSS I/O
 * permission bitmap instead, reading the TSS through the guest's page
 * tables: the TSS must be mapped and its bitmap must allow the port. */
#define PROBE_TSS_GPA 0x3000ull
#define PROBE_TSS_SIZE 0x3000ull
#define PROBE_IMAGE_GPA 0x10000ull
#define PROBE_IMAGE_MAX (0x80000ull - PROBE_IMAGE_GPA)
#define PROBE_PT_GPA 0x80000ull
#define PROBE_PT_END 0x100000ull
#define PROBE_STACK_GPA 0x100000ull
#define PROBE_STACK_SIZE 0x4000ull
#define PROBE_MAX_VCPUS 64u
#define PROBE_WORK_GPA 0x200000ull
#define PROBE_PAGE_SIZE 4096ull

/* Selectors PVM requires (they equal the host's user selectors). */
#define PROBE_SEL_CODE 0x33u /* GDT index 6, DPL 3, 64-bit code */
#define PROBE_SEL_DATA 0x2bu /* GDT index 5, DPL 3, data */
#define PROBE_SEL_TSS 0x40u  /* GDT index 8, 16-byte system descriptor */

enum probe_pattern {
	PROBE_PATTERN_SEQ = 0,    /* pages in address order */
	PROBE_PATTERN_RANDOM = 1, /* a seeded permutation of the pages */
	PROBE_PATTERN_STRIDE = 2, /* every stride-th page, then the next lane */
};

enum probe_op {
	PROBE_OP_READ = 0,
	PROBE_OP_WRITE = 1,
};

/* Deliberate misbehaviour, so tests can prove the VMM's error paths. */
enum probe_misbehave {
	PROBE_MISBEHAVE_NONE = 0,
	PROBE_MISBEHAVE_ABORT = 1,    /* ucall ABORT with code 42 */
	PROBE_MISBEHAVE_BAD_PORT = 2, /* port write nobody claims */
	PROBE_MISBEHAVE_FAULT = 3,    /* write to the read-only boot info */
	PROBE_MISBEHAVE_HANG = 4,     /* spin forever after READY */
};

#define PROBE_ABORT_TEST_CODE 42u
#define PROBE_BAD_PORT 0x99u

/* Read-only to the guest. All sizes in bytes, multiples of 4 KiB. */
struct probe_boot_info {
	uint64_t magic;
	uint32_t abi_version;
	uint32_t nr_vcpus;
	uint64_t mem_size;      /* all guest memory */
	uint64_t work_gpa;      /* start of the workload region */
	uint64_t init_bytes;    /* F: first-touched (written) before READY */
	uint64_t ws_bytes;      /* W: touched by the request phase */
	uint64_t compute_iters; /* C: spin iterations per vCPU after the WS */
	uint64_t seed;
	uint32_t pattern;  /* enum probe_pattern */
	uint32_t op;       /* enum probe_op */
	uint32_t stride;   /* pages, for PROBE_PATTERN_STRIDE */
	uint32_t misbehave; /* enum probe_misbehave */
};

_Static_assert(sizeof(struct probe_boot_info) == 80, "boot info layout");

/*
 * ucall: the guest fills a struct probe_ucall in its own writable memory and
 * writes the struct's address (32-bit OUT) to PROBE_UCALL_PORT. The VMM
 * validates the address, reads the struct, acts, and resumes the vCPU
 * (except after DONE and ABORT, which end that vCPU).
 */
#define PROBE_UCALL_PORT 0x1000u

enum probe_ucall_cmd {
	PROBE_UCALL_READY = 1, /* init phase complete; waits for all vCPUs */
	PROBE_UCALL_PHASE = 2, /* args[0] = phase number */
	PROBE_UCALL_DONE = 3,  /* args[0] = checksum, args[1] = pages touched */
	PROBE_UCALL_ABORT = 4, /* args[0] = guest error code */
};

enum probe_phase {
	PROBE_PHASE_INIT = 1,
	PROBE_PHASE_REQUEST = 2,
	PROBE_PHASE_COMPUTE = 3,
};

struct probe_ucall {
	uint32_t cmd;
	uint32_t vcpu;
	uint64_t args[2];
};

_Static_assert(sizeof(struct probe_ucall) == 24, "ucall layout");

#endif
