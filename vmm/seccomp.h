/* seccomp-bpf allow-lists per thread role: each thread of the VMM loads
 * its role's filter (built from seccomp_lists.c by libseccomp at build
 * time) once its setup is done, so a compromised thread can make only the
 * system calls its job needs. */
#ifndef COLDSTART_SECCOMP_H
#define COLDSTART_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum seccomp_role {
	SECCOMP_MAIN = 0, /* the control thread after setup, pool connections */
	SECCOMP_VCPU,     /* a vCPU thread, from before its first KVM_RUN */
	SECCOMP_UFFD,     /* a userfaultfd handler thread */
	SECCOMP_REFILL,   /* a pool's refill worker */
	SECCOMP_IO,       /* a virtio device's I/O thread (disk, vsock) */
	SECCOMP_NR_ROLES,
};

enum seccomp_mode {
	SECCOMP_OFF = 0,
	SECCOMP_KILL, /* a call outside the list: report it, die by SIGSYS */
	SECCOMP_LOG,  /* allowed, logged by the kernel (audit type 1326) */
	SECCOMP_NR_MODES,
};

/* How a row's argument is compared (the low 32 bits: every argument the
 * lists name is an int or, for clone's flags, read by the kernel as
 * one). */
enum seccomp_cmp {
	SECCOMP_CMP_EQ = 0, /* equal to `value` */
	SECCOMP_CMP_BITS,   /* no bit set outside `value` (open flags) */
	SECCOMP_CMP_PID,    /* this process's id, patched in at load time */
};

/* The stand-in for the process's id in the generated programs: the
 * loader replaces it in every comparison; seccomp_gen checks that it
 * occurs nowhere else. */
#define SECCOMP_PID_PLACEHOLDER 0x5ecc0b1du

/* One row of the lists: which roles may make `name`, optionally only
 * with argument `arg` matching `value` as `cmp` says, and why. Several
 * rows for one call allow any of their matches. With `fail` set the
 * call is not allowed but fails with that errno (glibc's clone3, whose
 * flags sit in memory a filter cannot read: glibc then uses clone). */
struct seccomp_rule {
	unsigned int roles; /* 1u << enum seccomp_role */
	const char *name;   /* the system call, as libseccomp names it */
	int arg;            /* -1: any arguments; else this one must match */
	uint64_t value;
	const char *reason;
	enum seccomp_cmp cmp;
	int fail;
};

extern const struct seccomp_rule seccomp_rules[];
extern const size_t seccomp_nr_rules;

/* Sets the process's mode (before any thread installs a filter). KILL
 * installs the SIGSYS handler that names the offending call. With
 * `main_thread`, the calling thread is the VMM's control thread and
 * loads the main filter at seccomp__enter_main(); without it (in-process
 * benchmark drivers, which go on making VMs) only the other roles load
 * theirs. The
 * environment variable COLDSTART_SECCOMP_TEST=ROLE[:CALL] (a test hook)
 * makes the first thread of that role make a forbidden call right after
 * its filter is loaded: socket (the default), fork (clone with fork's
 * flags), newns (clone of a thread in a new user namespace), opath
 * (openat with O_PATH), ocreat (openat with O_CREAT), prctl (an option
 * no list holds), tgkill (to another process). */
int seccomp__configure(enum seccomp_mode mode, bool main_thread);

/* The control thread's setup is done: loads the main filter when called
 * from the thread that configured it with main_thread, once; else does
 * nothing. vm__start calls it after starting the vCPU threads (they do
 * not inherit it); callers whose setup goes on later (pool serve, once
 * it listens) call it themselves. */
int seccomp__enter_main(void);

/* The process's mode (SECCOMP_OFF until configured). */
enum seccomp_mode seccomp__mode(void);

/* Loads the role's filter on the calling thread only (threads it creates
 * later inherit it; filters stack, the strictest verdict wins). Sets
 * no_new_privs on the thread. A no-op when the mode is OFF. */
int seccomp__install(enum seccomp_role role);

/* Filters loaded so far per role, and the time they took in all. */
void seccomp__stats(uint64_t installed[SECCOMP_NR_ROLES], uint64_t *ns);

const char *seccomp__role_name(enum seccomp_role role);
const char *seccomp__mode_name(enum seccomp_mode mode);
/* 0 with *mode set, or -EINVAL with a message for an unknown name. */
int seccomp__parse_mode(const char *name, enum seccomp_mode *mode);
/* The x86-64 system call's name, or NULL. */
const char *seccomp__syscall_name(long nr);

/* A call that log mode let through, as the kernel logged it. */
struct seccomp_hit {
	long nr;
	char comm[16]; /* the thread's name: its role */
	unsigned int count;
};

/* The calls this process made outside its lists in log mode, from the
 * kernel log (/dev/kmsg; the kernel logs them asynchronously, so this
 * waits up to `wait_ms` for a first one). Returns how many distinct ones
 * (up to max) or -errno when the log cannot be read (not root, or
 * kernel.dmesg_restrict). */
int seccomp__logged(struct seccomp_hit *hits, size_t max, int wait_ms);

#endif
