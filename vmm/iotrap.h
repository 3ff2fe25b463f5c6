/* One registry for port I/O and MMIO traps, with one handler signature.
 * Registration happens before vCPUs start; dispatch is then read-only and
 * needs no lock. */
#ifndef COLDSTART_IOTRAP_H
#define COLDSTART_IOTRAP_H

#include <stdbool.h>
#include <stdint.h>

struct vcpu;

enum io_space {
	IO_SPACE_PIO = 0,
	IO_SPACE_MMIO = 1,
};

struct io_access {
	enum io_space space;
	uint64_t addr;
	uint32_t len;   /* 1, 2, 4 or 8 bytes */
	bool is_write;
	uint8_t *data;  /* len bytes: the value written, or where to read to */
};

/* Handler results besides -errno. */
enum {
	IOTRAP_CONTINUE = 0, /* resume the vCPU */
	IOTRAP_STOP = 1,     /* the handler ended this vCPU (vcpu__finish) */
};

typedef int (*iotrap_fn)(struct vcpu *vcpu, const struct io_access *access,
			 void *opaque);

struct iotrap {
	enum io_space space;
	uint64_t base, len;
	iotrap_fn fn;
	void *opaque;
	const char *name;
};

#define IOTRAP_MAX 32

struct iotrap_table {
	struct iotrap traps[IOTRAP_MAX]; /* sorted by (space, base) */
	unsigned int count;
	bool strict; /* unclaimed access stops the VM, else logged, ignored */
	unsigned long unclaimed; /* lenient mode: accesses ignored */
};

void iotrap__init(struct iotrap_table *t, bool strict);

/* Claims [base, base + len) in `space`. -EEXIST on overlap with an existing
 * trap, -ENOSPC when the table is full, -EINVAL for an empty range. */
int iotrap__register(struct iotrap_table *t, enum io_space space,
		     uint64_t base, uint64_t len, iotrap_fn fn, void *opaque,
		     const char *name);

/* The trap covering the whole access, or NULL. */
const struct iotrap *iotrap__find(const struct iotrap_table *t,
				  enum io_space space, uint64_t addr,
				  uint32_t len);

/* Runs the claiming handler. Unclaimed: strict -> -EFAULT with a message
 * naming the port or address; lenient -> reads return all ones, writes are
 * dropped, IOTRAP_CONTINUE. */
int iotrap__dispatch(struct iotrap_table *t, struct vcpu *vcpu,
		     const struct io_access *access);

#endif
