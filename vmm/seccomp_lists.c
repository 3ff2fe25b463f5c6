/* The allow-lists: every system call each thread role may make, with the
 * reason it needs it. A call missing here kills the VMM under --seccomp
 * kill; run with --seccomp log to find what a new feature needs. Rows
 * marked SAN exist only in sanitizer builds (ASan/UBSan/LSan make calls
 * of their own: shadow memory, alternate signal stacks, the leak check
 * at exit). */
#include "seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>

/* Linux 6.5's, for older headers */
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

#define M (1u << SECCOMP_MAIN)
#define V (1u << SECCOMP_VCPU)
#define U (1u << SECCOMP_UFFD)
#define R (1u << SECCOMP_REFILL)
#define D (1u << SECCOMP_IO) /* a device's I/O thread */
#define ALL (M | V | U | R | D)

#if defined(__SANITIZE_ADDRESS__)
#define SAN(roles) (roles)
#else
#define SAN(roles) 0u
#endif

/* The flags glibc's pthread_create gives clone: a thread, nothing
 * else (no new namespaces, no fork-like child). */
#define THREAD_FLAGS                                                        \
	(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | \
	 CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID |                \
	 CLONE_CHILD_CLEARTID)
/* The open flags each role may use: no O_PATH, O_DIRECT, O_SYNC or
 * O_NOATIME anywhere; refill workers read and map, and make no named
 * file: only a restored drive's unnamed overlay (O_TMPFILE in $TMPDIR;
 * a file system without it, as overlayfs before Linux 6.6, would need
 * O_CREAT, which kills a refill worker: give the pool a TMPDIR with
 * O_TMPFILE, or --seccomp log or off). */
#define OPEN_COMMON                                                         \
	(O_RDWR | O_NONBLOCK | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC |       \
	 __O_TMPFILE)
#define OPEN_MAIN                                                           \
	(OPEN_COMMON | O_WRONLY | O_CREAT | O_EXCL | O_TRUNC | O_APPEND)
#define OPEN_REFILL OPEN_COMMON

/* Rows: a call with any arguments; with argument `arg` equal to `value`;
 * with no flag outside `value` in argument `arg`; with argument `arg`
 * this process's id; a call that fails with errno `e` instead. */
#define ANY(roles, name, why) { roles, name, -1, 0, why, SECCOMP_CMP_EQ, 0 }
#define ARG(roles, name, arg, value, why) \
	{ roles, name, arg, value, why, SECCOMP_CMP_EQ, 0 }
#define FLAGS(roles, name, arg, value, why) \
	{ roles, name, arg, value, why, SECCOMP_CMP_BITS, 0 }
#define OWN_PID(roles, name, arg, why) \
	{ roles, name, arg, 0, why, SECCOMP_CMP_PID, 0 }
#define FAILS(roles, name, e, why) { roles, name, -1, 0, why, SECCOMP_CMP_EQ, e }
/* An ioctl allowed only with this request number (argument 1). */
#define IOCTL(roles, req, why) ARG(roles, "ioctl", 1, (req), #req ": " why)

const struct seccomp_rule seccomp_rules[] = {
	/* every thread */
	ANY(ALL, "futex", "mutexes, condition variables, joins"),
	ANY(ALL, "rt_sigreturn", "return from the vCPU kick and SIGSYS handlers"),
	ANY(ALL, "rt_sigprocmask", "pthread_sigmask; glibc masks signals at thread exit"),
	ANY(ALL, "exit", "a thread ends"),
	ANY(ALL, "exit_group", "the process ends (also on fatal errors)"),
	ANY(ALL, "write", "messages to stderr, the guest console"),
	ANY(ALL, "mmap", "malloc of large blocks and new arenas"),
	ANY(ALL, "munmap", "free of large blocks"),
	ANY(ALL, "mprotect", "malloc grows a thread's arena"),
	ANY(ALL, "madvise", "glibc releases an exiting thread's stack, malloc trims"),
	ANY(ALL, "brk", "malloc grows the main heap"),
	ANY(ALL, "clock_gettime", "timeline marks when the vDSO falls back to the kernel"),
	ANY(ALL, "gettimeofday", "the same for wall-clock time"),
	ANY(ALL, "getpid", "pthread_kill names the process"),
	ANY(ALL, "gettid", "glibc's thread identity"),
	OWN_PID(ALL, "tgkill", 0, "pthread_kill kicks vCPUs out of KVM_RUN when a VM ends: "
	  "only this process's threads"),
	ANY(ALL, "sched_yield", "short spin-waits"),
	ANY(ALL, "restart_syscall", "a sleep interrupted by the kick signal resumes"),

	/* vCPU threads: the run loop and the devices its exits reach */
	IOCTL(V | M | R, KVM_RUN, "enter the guest; parking completes pending I/O"),
	IOCTL(V | M | R, KVM_GET_REGS, "name the guest's RIP when it stops"),
	IOCTL(V | M | R | D, KVM_IRQ_LINE, "the serial port and the virtio devices raise "
	      "their interrupts"),
	ANY(V | M | R, "fstat", "a failing vCPU checks whether its memory file shrank"),
	ANY(V | M | R, "newfstatat", "the same through glibc's fstat"),

	/* uffd handler threads */
	ANY(U | M | R, "read", "userfaultfd events (also the pool socket, files)"),
	ANY(U | M | R, "poll", "wait for a fault or the stop event"),
	ANY(U | M | R, "ppoll", "the same as glibc may issue it"),
	ANY(U | M | R, "pread64", "read a faulting page from the memory file"),
	IOCTL(U | M | R, UFFDIO_COPY, "fill a faulting page"),
	IOCTL(U | M | R, UFFDIO_ZEROPAGE, "fill a faulting hole with zeros"),
	IOCTL(U | M | R, UFFDIO_UNREGISTER, "give up the range when the handler fails"),
	IOCTL(U | M | R, UFFDIO_WAKE, "wake a vCPU waiting on a page"),

	/* virtio devices' I/O threads: the disk's requests, the vsock
	 * device's sockets (Unix-domain only: guest connections to
	 * PATH_PORT, the host's to PATH). A thread's filters stack: the
	 * I/O threads of a pool's restored VMs start from a refill worker
	 * or the control thread (a request's own VM), whose lists then
	 * hold theirs too (IO). */
#define IO (D | M | R)
	ANY(D, "read", "the device's notification eventfd"),
	ANY(IO, "preadv", "a disk read request, into its buffers"),
	ANY(D, "pread64", "a block copied up into a disk's overlay"),
	ANY(IO, "pwritev", "a disk write request, from its buffers"),
	ANY(IO, "pwrite64", "a disk write request into an overlay"),
	ANY(IO, "fdatasync", "a disk flush request"),
	ANY(IO, "epoll_wait", "vsock: wait for the guest and the sockets"),
	ANY(IO, "epoll_pwait", "the same as glibc may issue it"),
	ANY(IO, "epoll_ctl", "vsock: which events each socket waits for"),
	ANY(IO, "accept4", "vsock: the host connects to PATH"),
	ARG(D, "socket", 0, AF_UNIX, "vsock: a guest connects to host port P, "
	    "PATH_P (Unix-domain sockets only; never jailed, nor in a pool's "
	    "VMs, whose devices have no PATH)"),
	ANY(IO, "connect", "the same"),
	ANY(IO, "recvfrom", "vsock: the host's bytes"),
	ANY(IO, "sendto", "vsock: the guest's bytes"),
	ANY(IO, "shutdown", "vsock: the guest stops sending"),
	ANY(D, "close", "vsock: a connection ends"),

	/* making, restoring, running and destroying VMs (refill workers,
	 * and the control thread of the pool, whose requests may make
	 * their own VMs) */
	ANY(M | R, "close", "destroying a VM closes its fds"),
	FLAGS(M, "openat", 2, OPEN_MAIN, "/dev/userfaultfd, /proc files for memory figures, "
	  "snapshots, outputs (made new, never through a link)"),
	FLAGS(R, "openat", 2, OPEN_REFILL, "/dev/userfaultfd, /proc files, snapshots: "
	  "never made, truncated or appended to"),
	ANY(V | M | R, "lseek", "memory files' data extents (SEEK_DATA); stdio's console stream seeks on flush"),
	ANY(M | R, "memfd_create", "memfd guest memory"),
	ANY(M | R, "epoll_create1", "a vsock device's I/O thread waits on its sockets"),
	ANY(M | R, "ftruncate", "size a memfd"),
	ANY(M | R, "fallocate", "populate or punch guest memory files"),
	ANY(M | R, "eventfd2", "the uffd handler's stop event"),
	ANY(M | R, "userfaultfd", "the uffd restore strategy"),
	ANY(M | R, "mremap", "realloc of large blocks"),
	ARG(M | R, "clone", 0, THREAD_FLAGS, "pthread_create: vCPU and uffd threads, "
	  "nothing but a thread"),
	FAILS(M | R, "clone3", ENOSYS, "its flags are in memory a filter cannot read: "
	  "fails, glibc's pthread_create then calls clone"),
	ANY(M | R, "set_robust_list", "a new thread registers its robust futexes"),
	ANY(M | R, "rseq", "a new thread registers restartable sequences"),
	ANY(M | R, "rt_sigaction", "the kick handler is installed with the first VM"),
	ANY(M | R, "sched_getaffinity", "glibc sizes thread stacks and CPU sets"),
	ANY(M | R, "getrandom", "malloc's tcache seeds, temporary file names"),
	ANY(M | R, "nanosleep", "waits between retries"),
	ANY(M | R, "clock_nanosleep", "the same through glibc"),
	ANY(M | R, "getrusage", "CPU time of refill threads"),
	ARG(M | R, "prctl", 0, PR_SET_NO_NEW_PRIVS, "new threads set no_new_privs before "
	  "their own filter"),
	ARG(M | R, "prctl", 0, PR_SET_NAME, "log mode names new threads by role"),
	ARG(M | R, "prctl", 0, PR_SET_VMA, "name guest memory [anon:coldstart-guest]"),
	ARG(M | R, "fcntl", 1, F_GETFL, "regfile__open clears O_NONBLOCK (a snapshot's wset)"),
	ARG(M | R, "fcntl", 1, F_SETFL, "the same"),
	ARG(M | R, "fcntl", 1, F_DUPFD_CLOEXEC, "jailed: a drive's image or disk layer, "
	    "kept open from before the jail (jail__open)"),
	ARG(M | R, "seccomp", 0, SECCOMP_SET_MODE_FILTER, "new vCPU and uffd threads load "
	  "their own filter"),
	ARG(M | R, "ioctl", 1, USERFAULTFD_IOC_NEW, "USERFAULTFD_IOC_NEW: a uffd through /dev/userfaultfd"),
	IOCTL(M | R, UFFDIO_API, "set up a new uffd"),
	IOCTL(M | R, UFFDIO_REGISTER, "register guest memory with a new uffd"),
	IOCTL(M | R, KVM_CREATE_VM, "a new VM"),
	IOCTL(M | R, KVM_CHECK_EXTENSION, "capabilities of a new VM"),
	IOCTL(M | R, KVM_GET_VCPU_MMAP_SIZE, "map a new vCPU's kvm_run"),
	IOCTL(M | R, KVM_CREATE_VCPU, "a new vCPU"),
	IOCTL(M | R, KVM_SET_USER_MEMORY_REGION, "give a VM its memory"),
	IOCTL(M | R, KVM_SET_TSS_ADDR, "x86 VM setup"),
	IOCTL(M | R, KVM_SET_IDENTITY_MAP_ADDR, "x86 VM setup"),
	IOCTL(M | R, KVM_CREATE_IRQCHIP, "in-kernel interrupt controllers"),
	IOCTL(M | R, KVM_IOEVENTFD, "a virtio device's notifications without exits"),
	IOCTL(M | R, KVM_IRQFD, "a virtio device's interrupts through an eventfd"),
	IOCTL(M | R, KVM_CREATE_PIT2, "in-kernel timer"),
	IOCTL(M | R, KVM_REINJECT_CONTROL, "drop missed PIT ticks"),
	IOCTL(M | R, KVM_GET_SUPPORTED_CPUID, "CPUID for OS guests"),
	IOCTL(M | R, KVM_SET_CPUID2, "a vCPU's CPUID"),
	IOCTL(M | R, KVM_GET_CPUID2, "snapshot a vCPU's CPUID"),
	IOCTL(M | R, KVM_GET_MSR_INDEX_LIST, "which MSRs to save"),
	IOCTL(M | R, KVM_GET_TSC_KHZ, "snapshot the TSC rate"),
	IOCTL(M | R, KVM_SET_TSC_KHZ, "restore the TSC rate"),
	IOCTL(M | R, KVM_GET_CLOCK, "snapshot kvmclock"),
	IOCTL(M | R, KVM_SET_CLOCK, "restore kvmclock"),
	IOCTL(M | R, KVM_GET_DIRTY_LOG, "diff snapshots"),
	IOCTL(M | R, KVM_GET_IRQCHIP, "snapshot the irqchip"),
	IOCTL(M | R, KVM_SET_IRQCHIP, "restore the irqchip"),
	IOCTL(M | R, KVM_GET_PIT2, "snapshot the PIT"),
	IOCTL(M | R, KVM_SET_PIT2, "restore the PIT"),
	IOCTL(M | R, KVM_SET_REGS, "vCPU setup and restore"),
	IOCTL(M | R, KVM_GET_SREGS, "snapshot a vCPU"),
	IOCTL(M | R, KVM_SET_SREGS, "vCPU setup and restore"),
	IOCTL(M | R, KVM_GET_MSRS, "snapshot a vCPU"),
	IOCTL(M | R, KVM_SET_MSRS, "vCPU setup and restore"),
	IOCTL(M | R, KVM_GET_LAPIC, "snapshot a vCPU"),
	IOCTL(M | R, KVM_SET_LAPIC, "restore a vCPU"),
	IOCTL(M | R, KVM_GET_MP_STATE, "snapshot a vCPU"),
	IOCTL(M | R, KVM_SET_MP_STATE, "restore a vCPU"),
	IOCTL(M | R, KVM_GET_VCPU_EVENTS, "snapshot a vCPU"),
	IOCTL(M | R, KVM_SET_VCPU_EVENTS, "restore a vCPU"),
	IOCTL(M | R, KVM_GET_DEBUGREGS, "snapshot a vCPU"),
	IOCTL(M | R, KVM_SET_DEBUGREGS, "restore a vCPU"),
	IOCTL(M | R, KVM_GET_XCRS, "snapshot a vCPU"),
	IOCTL(M | R, KVM_SET_XCRS, "restore a vCPU"),
	IOCTL(M | R, KVM_GET_XSAVE, "snapshot a vCPU"),
	IOCTL(M | R, KVM_GET_XSAVE2, "snapshot a vCPU (large XSAVE areas)"),
	IOCTL(M | R, KVM_SET_XSAVE, "restore a vCPU"),
	IOCTL(M | V, TCGETS, "stdio asks whether its stream (stdout, the guest console: a "
	      "tty, /dev/null) is a terminal at its first write"),

	/* the control thread only: results, outputs, the pool socket */
	ANY(M, "writev", "stdio and jansson output"),
	ANY(M, "rename", "outputs are written atomically (temp + rename)"),
	ANY(M, "renameat2", "the same as glibc may issue it"),
	ANY(M, "unlink", "remove a temporary output after a failure"),
	ANY(M, "fsync", "outputs reach the disk before they are renamed"),
	ANY(M, "fchmod", "outputs get ordinary permissions"),
	ANY(M, "mkdir", "--out directories"),
	ANY(M, "access", "snapshot restore --save: is the new snapshot's "
	    "directory there"),
	ANY(M, "faccessat2", "the same as glibc may issue it"),
	ANY(M, "pwrite64", "snapshot restore --save: memory pages and disk "
	    "blocks written at their offsets"),
	ANY(M, "getdents64", "list a directory (--out, /proc)"),
	ANY(M, "accept4", "pool serve: a client connects"),
	ANY(M, "recvfrom", "pool serve: a request"),
	ANY(M, "sendto", "pool serve: a reply"),
	ARG(M, "getsockopt", 2, SO_PEERCRED, "pool serve: a client's pid and uid (its "
	    "connections are counted per client)"),
	ARG(M, "getsockopt", 2, SO_PEERPIDFD, "pool serve, jailed: a client outside its "
	    "PID namespace, told apart by its pidfd"),
	ANY(M, "fstatfs", "pool serve, jailed: is a client's pidfd one of pidfs"),
	ARG(M, "socketpair", 0, AF_UNIX, "run --exec, snapshot restore --exec, a pool's "
	    "requests: the guest agent, through the VM's own vsock device (no socket "
	    "file, which a jailed VMM could not reach)"),
	ANY(M, "shutdown", "pool serve: end a connection"),
	ANY(M, "wait4", "reap a child"),
	ANY(M, "uname", "host metadata in results"),
	ANY(M | R, "sysinfo", "host metadata in results; glibc's qsort sizes its buffer "
	    "by the host's memory (the prefetch strategy sorts its working set)"),
	ANY(M, "getuid", "host metadata in results"),
	ANY(M, "geteuid", "host metadata in results"),
	ANY(M, "readlink", "host metadata: /proc/self/exe"),

	/* sanitizer builds: ASan's allocator and thread bookkeeping, LSan's
	 * leak check at exit (it stops the world with a ptrace helper) */
	ANY(SAN(ALL), "sigaltstack", "ASan: each thread's alternate signal stack"),
	ANY(SAN(ALL), "getpid", "ASan: its reports"),
	ANY(SAN(ALL), "read", "ASan: /proc/self/maps"),
	ANY(SAN(ALL), "open", "ASan: /proc/self/maps"),
	ANY(SAN(ALL), "openat", "ASan: /proc/self/maps"),
	ANY(SAN(ALL), "close", "ASan: /proc/self/maps"),
	ANY(SAN(ALL), "sched_getaffinity", "ASan: thread setup"),
	ANY(SAN(ALL), "prctl", "LSan: the tracer's PR_SET_PTRACER/PDEATHSIG"),
	ANY(SAN(ALL), "clone", "LSan: its tracer thread"),
	ANY(SAN(ALL), "ptrace", "LSan: the tracer stops every thread"),
	ANY(SAN(ALL), "wait4", "LSan: the tracer waits for stopped threads"),
	ANY(SAN(ALL), "getdents64", "LSan: lists /proc/self/task"),
	ANY(SAN(ALL), "fstat", "LSan: reads /proc files"),
	ANY(SAN(ALL), "newfstatat", "LSan: reads /proc files"),
	ANY(SAN(ALL), "rt_sigaction", "LSan: the tracer's signal handlers"),
	ANY(SAN(ALL), "readlink", "ASan: symbolizing a report"),
	ANY(SAN(ALL), "pipe2", "ASan: symbolizing a report"),
	ANY(SAN(ALL), "process_vm_readv", "LSan: reads other threads' registers"),
	ANY(SAN(ALL), "nanosleep", "ASan: waits in its internal locks"),
	ANY(SAN(ALL), "sched_yield", "ASan: spins in its internal locks"),
};

const size_t seccomp_nr_rules = sizeof(seccomp_rules) / sizeof(seccomp_rules[0]);
