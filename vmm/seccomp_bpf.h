/* The filters seccomp_gen compiles at build time (seccomp_bpf.c, in the
 * build tree), indexed by role and mode, and the system call names. */
#ifndef COLDSTART_SECCOMP_BPF_H
#define COLDSTART_SECCOMP_BPF_H

#include "seccomp.h"

#include <linux/filter.h>

extern const struct sock_fprog seccomp_progs[SECCOMP_NR_ROLES][SECCOMP_NR_MODES];
extern const char *const seccomp_syscall_names[];
extern const size_t seccomp_nr_syscall_names;

#endif
