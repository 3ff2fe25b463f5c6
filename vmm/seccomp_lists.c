/* The allow-lists: every system call each thread role may make, with the
 * reason it needs it. A call missing here kills the VMM under --seccomp
 * kill; run with --seccomp log to find what a new feature needs. Rows
 * marked SAN exist only in sanitizer builds (ASan/UBSan/LSan make calls
 * of their own: shadow memory, alternate signal stacks, the leak check
 * at exit). */
#include "seccomp.h"

#include <linux/kvm.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#define M (1u << SECCOMP_MAIN)
#define V (1u << SECCOMP_VCPU)
#define U (1u << SECCOMP_UFFD)
#define R (1u << SECCOMP_REFILL)
#define ALL (M | V | U | R)

#if defined(__SANITIZE_ADDRESS__)
#define SAN(roles) (roles)
#else
#define SAN(roles) 0u
#endif

/* An ioctl allowed only with this request number (argument 1). */
#define IOCTL(roles, req, why) { roles, "ioctl", 1, (req), #req ": " why }

const struct seccomp_rule seccomp_rules[] = {
	/* every thread */
	{ ALL, "futex", -1, 0, "mutexes, condition variables, joins" },
	{ ALL, "rt_sigreturn", -1, 0, "return from the vCPU kick and SIGSYS handlers" },
	{ ALL, "rt_sigprocmask", -1, 0, "pthread_sigmask; glibc masks signals at thread exit" },
	{ ALL, "exit", -1, 0, "a thread ends" },
	{ ALL, "exit_group", -1, 0, "the process ends (also on fatal errors)" },
	{ ALL, "write", -1, 0, "messages to stderr, the guest console" },
	{ ALL, "mmap", -1, 0, "malloc of large blocks and new arenas" },
	{ ALL, "munmap", -1, 0, "free of large blocks" },
	{ ALL, "mprotect", -1, 0, "malloc grows a thread's arena" },
	{ ALL, "madvise", -1, 0, "glibc releases an exiting thread's stack, malloc trims" },
	{ ALL, "brk", -1, 0, "malloc grows the main heap" },
	{ ALL, "clock_gettime", -1, 0, "timeline marks when the vDSO falls back to the kernel" },
	{ ALL, "gettimeofday", -1, 0, "the same for wall-clock time" },
	{ ALL, "getpid", -1, 0, "pthread_kill names the process" },
	{ ALL, "gettid", -1, 0, "glibc's thread identity" },
	{ ALL, "tgkill", -1, 0, "pthread_kill kicks vCPUs out of KVM_RUN when a VM ends" },
	{ ALL, "sched_yield", -1, 0, "short spin-waits" },
	{ ALL, "restart_syscall", -1, 0, "a sleep interrupted by the kick signal resumes" },

	/* vCPU threads: the run loop and the devices its exits reach */
	IOCTL(V | M | R, KVM_RUN, "enter the guest; parking completes pending I/O"),
	IOCTL(V | M | R, KVM_GET_REGS, "name the guest's RIP when it stops"),
	IOCTL(V | M | R, KVM_IRQ_LINE, "the serial port raises its interrupt"),
	{ V | M | R, "fstat", -1, 0, "a failing vCPU checks whether its memory file shrank" },
	{ V | M | R, "newfstatat", -1, 0, "the same through glibc's fstat" },

	/* uffd handler threads */
	{ U | M | R, "read", -1, 0, "userfaultfd events (also the pool socket, files)" },
	{ U | M | R, "poll", -1, 0, "wait for a fault or the stop event" },
	{ U | M | R, "ppoll", -1, 0, "the same as glibc may issue it" },
	{ U | M | R, "pread64", -1, 0, "read a faulting page from the memory file" },
	IOCTL(U | M | R, UFFDIO_COPY, "fill a faulting page"),
	IOCTL(U | M | R, UFFDIO_ZEROPAGE, "fill a faulting hole with zeros"),
	IOCTL(U | M | R, UFFDIO_UNREGISTER, "give up the range when the handler fails"),
	IOCTL(U | M | R, UFFDIO_WAKE, "wake a vCPU waiting on a page"),

	/* making, restoring, running and destroying VMs (refill workers,
	 * and the control thread of the pool, whose requests may make
	 * their own VMs) */
	{ M | R, "close", -1, 0, "destroying a VM closes its fds" },
	{ M | R, "openat", -1, 0, "/dev/userfaultfd, /proc files for memory figures, outputs" },
	{ V | M | R, "lseek", -1, 0, "memory files' data extents (SEEK_DATA); stdio's console stream seeks on flush" },
	{ M | R, "memfd_create", -1, 0, "memfd guest memory" },
	{ M | R, "ftruncate", -1, 0, "size a memfd" },
	{ M | R, "fallocate", -1, 0, "populate or punch guest memory files" },
	{ M | R, "eventfd2", -1, 0, "the uffd handler's stop event" },
	{ M | R, "userfaultfd", -1, 0, "the uffd restore strategy" },
	{ M | R, "mremap", -1, 0, "realloc of large blocks" },
	{ M | R, "clone", -1, 0, "pthread_create (older glibc)" },
	{ M | R, "clone3", -1, 0, "pthread_create: vCPU and uffd threads" },
	{ M | R, "set_robust_list", -1, 0, "a new thread registers its robust futexes" },
	{ M | R, "rseq", -1, 0, "a new thread registers restartable sequences" },
	{ M | R, "rt_sigaction", -1, 0, "the kick handler is installed with the first VM" },
	{ M | R, "sched_getaffinity", -1, 0, "glibc sizes thread stacks and CPU sets" },
	{ M | R, "getrandom", -1, 0, "malloc's tcache seeds, temporary file names" },
	{ M | R, "nanosleep", -1, 0, "waits between retries" },
	{ M | R, "clock_nanosleep", -1, 0, "the same through glibc" },
	{ M | R, "getrusage", -1, 0, "CPU time of refill threads" },
	{ M | R, "prctl", -1, 0, "new threads set no_new_privs before their own filter" },
	{ M | R, "seccomp", -1, 0, "new vCPU and uffd threads load their own filter" },
	{ M | R, "ioctl", 1, USERFAULTFD_IOC_NEW, "USERFAULTFD_IOC_NEW: a uffd through /dev/userfaultfd" },
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
	IOCTL(M, TCGETS, "stdio asks whether stdout is a terminal"),

	/* the control thread only: results, outputs, the pool socket */
	{ M, "writev", -1, 0, "stdio and jansson output" },
	{ M, "rename", -1, 0, "outputs are written atomically (temp + rename)" },
	{ M, "renameat2", -1, 0, "the same as glibc may issue it" },
	{ M, "unlink", -1, 0, "remove a temporary output after a failure" },
	{ M, "fsync", -1, 0, "outputs reach the disk before they are renamed" },
	{ M, "fchmod", -1, 0, "outputs get ordinary permissions" },
	{ M, "mkdir", -1, 0, "--out directories" },
	{ M, "getdents64", -1, 0, "list a directory (--out, /proc)" },
	{ M, "accept4", -1, 0, "pool serve: a client connects" },
	{ M, "recvfrom", -1, 0, "pool serve: a request" },
	{ M, "sendto", -1, 0, "pool serve: a reply" },
	{ M, "getsockopt", 2, SO_PEERCRED, "pool serve: logs a client's pid and uid" },
	{ M, "shutdown", -1, 0, "pool serve: end a connection" },
	{ M, "wait4", -1, 0, "reap a child" },
	{ M, "uname", -1, 0, "host metadata in results" },
	{ M, "sysinfo", -1, 0, "host metadata in results" },
	{ M, "getuid", -1, 0, "host metadata in results" },
	{ M, "geteuid", -1, 0, "host metadata in results" },
	{ M, "readlink", -1, 0, "host metadata: /proc/self/exe" },

	/* sanitizer builds: ASan's allocator and thread bookkeeping, LSan's
	 * leak check at exit (it stops the world with a ptrace helper) */
	{ SAN(ALL), "sigaltstack", -1, 0, "ASan: each thread's alternate signal stack" },
	{ SAN(ALL), "getpid", -1, 0, "ASan: its reports" },
	{ SAN(ALL), "read", -1, 0, "ASan: /proc/self/maps" },
	{ SAN(ALL), "open", -1, 0, "ASan: /proc/self/maps" },
	{ SAN(ALL), "openat", -1, 0, "ASan: /proc/self/maps" },
	{ SAN(ALL), "close", -1, 0, "ASan: /proc/self/maps" },
	{ SAN(ALL), "sched_getaffinity", -1, 0, "ASan: thread setup" },
	{ SAN(ALL), "prctl", -1, 0, "LSan: the tracer's PR_SET_PTRACER/PDEATHSIG" },
	{ SAN(ALL), "clone", -1, 0, "LSan: its tracer thread" },
	{ SAN(ALL), "ptrace", -1, 0, "LSan: the tracer stops every thread" },
	{ SAN(ALL), "wait4", -1, 0, "LSan: the tracer waits for stopped threads" },
	{ SAN(ALL), "getdents64", -1, 0, "LSan: lists /proc/self/task" },
	{ SAN(ALL), "fstat", -1, 0, "LSan: reads /proc files" },
	{ SAN(ALL), "newfstatat", -1, 0, "LSan: reads /proc files" },
	{ SAN(ALL), "rt_sigaction", -1, 0, "LSan: the tracer's signal handlers" },
	{ SAN(ALL), "readlink", -1, 0, "ASan: symbolizing a report" },
	{ SAN(ALL), "pipe2", -1, 0, "ASan: symbolizing a report" },
	{ SAN(ALL), "process_vm_readv", -1, 0, "LSan: reads other threads' registers" },
	{ SAN(ALL), "nanosleep", -1, 0, "ASan: waits in its internal locks" },
	{ SAN(ALL), "sched_yield", -1, 0, "ASan: spins in its internal locks" },
};

const size_t seccomp_nr_rules = sizeof(seccomp_rules) / sizeof(seccomp_rules[0]);
