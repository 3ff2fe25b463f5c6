/* Guest memory behind a small backend interface. A backend provides one
 * host mapping of the whole guest-physical range; the snapshot engine adds
 * restore strategies as further backends. Guest memory is never mapped
 * executable on the host. */
#ifndef COLDSTART_MEM_H
#define COLDSTART_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct guest_mem;

struct guest_mem_ops {
	const char *name;
	const char *help;
	bool restore; /* fills memory from a snapshot file (src_fd) */
	bool file_pages; /* pages not resident may still hold file data */
	/* Maps m->size bytes into m->host (and m->fd when file-backed). */
	int (*map)(struct guest_mem *m);
	/* Releases what map() created. */
	void (*unmap)(struct guest_mem *m);
	/* Optional: ends background work (a fault handler thread) once no
	 * vCPU runs, so that the stats are final. */
	void (*settle)(struct guest_mem *m);
};

/* What a backend did to bring memory in, for restore strategies. */
struct mem_stats {
	uint64_t bytes_read;  /* from the source file */
	uint64_t faults;      /* faults served by a handler (uffd) */
	uint64_t handler_ns;  /* time spent serving them */
	uint64_t setup_ns;    /* time map() took */
};

struct guest_mem {
	const struct guest_mem_ops *ops;
	uint8_t *host;
	size_t size;
	int fd;     /* -1 for anonymous memory */
	int src_fd; /* snapshot memory file to restore from, borrowed; -1 */
	uint64_t src_bytes; /* its validated size (mem_source.bytes) */
	const char *wset_path; /* working-set file for prefetch (owned copy),
				* or NULL */
	const struct zmem *zmem; /* compressed source, or NULL (raw) */
	struct mem_stats stats;
	void *priv; /* backend's own state */
	/* While a diff is tracked (vm__dirty_log_start): a bit per 4 KiB
	 * page the VMM's devices may have written (mem__mark_written), which
	 * KVM's dirty log does not see; else NULL. */
	uint64_t *written;
	/* Called (from any thread) when the backend can no longer provide
	 * memory, e.g. a lazy restore lost its file; set by the VM. */
	void (*fail)(void *ctx, const char *reason);
	void *fail_ctx;
};

/* Backends by name: "anon" (default), "memfd", "hugetlb" (2 MiB pages from
 * the hugetlb pool; fails clearly when none are reserved). */
const struct guest_mem_ops *mem__backend(const char *name);
/* NULL-terminated list, for help text. */
const struct guest_mem_ops *const *mem__backends(void);

/* The entry named `name` in the NULL-terminated `list`, or NULL. */
const struct guest_mem_ops *mem__find(const struct guest_mem_ops *const *list,
				      const char *name);

/* mem__find for a command-line option: -EINVAL naming `opt` and listing
 * every name in `list` when `name` is not one of them. */
int mem__choose(const struct guest_mem_ops *const *list, const char *opt,
		const char *name, const struct guest_mem_ops **out);

/* Creates memory of `size` bytes (a positive multiple of 2 MiB). */
int mem__create(struct guest_mem *m, const struct guest_mem_ops *ops,
		size_t size);

/* Where a restore strategy's contents come from (borrowed). */
struct zmem;

struct mem_source {
	int fd;                /* raw, page-aligned memory file */
	uint64_t bytes;        /* its size when validated; 0: its size now */
	const char *wset_path; /* working-set file (prefetch), may be NULL */
	const struct zmem *zmem; /* fd is zstd chunks (snapshot/zmem.h) */
};

/* The same for a restore strategy (src required) or any backend (src
 * ignored, may be NULL). */
int mem__create_from(struct guest_mem *m, const struct guest_mem_ops *ops,
		     size_t size, const struct mem_source *src);

/* 0, or -EIO with a message when the source file of a restore has
 * shrunk since the memory was created (truncated under a lazy restore, so
 * guest accesses to its lost pages fail). */
int mem__check_source(const struct guest_mem *m);

/* Sets the failure hook before memory is used (mem__create_from clears
 * it); backends with a handler thread call it at most once. */
void mem__on_failure(struct guest_mem *m, void (*fail)(void *, const char *),
		     void *ctx);
void mem__destroy(struct guest_mem *m);

/* Makes m->stats final (a handler thread may still be accounting the last
 * fault it served): call once every vCPU and every device's I/O thread
 * has stopped, before reading them. No guest access may follow: one that
 * does is not left waiting for a handler, but may read zeros where the
 * snapshot had data. */
void mem__settle(struct guest_mem *m);

/* -ENOTSUP with a message naming `what` and how to reserve pages, unless
 * the hugetlb pool has enough free 2 MiB pages for `size` bytes. */
int mem__need_hugepages(size_t size, const char *what);

/* Checked translation: the host address of [gpa, gpa + len), or NULL when
 * any part of it lies outside guest memory (overflow-safe). */
void *mem__gpa_to_host(const struct guest_mem *m, uint64_t gpa, uint64_t len);

/* Records that a device may write [gpa, gpa + len) (in guest memory),
 * when writes are tracked (m->written); from any thread. */
void mem__mark_written(const struct guest_mem *m, uint64_t gpa, uint64_t len);

#define MEM_ALIGN (2ull << 20)

/* Guest memory's name in /proc/PID/maps: "[anon:coldstart-guest]" where
 * the kernel names anonymous mappings, "/memfd:coldstart-guest" for memfd. */
#define MEM_VMA_NAME "coldstart-guest"

#endif
