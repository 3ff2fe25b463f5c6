/* The host's KVM: /dev/kvm, its API version, capabilities and flavour. One
 * struct kvm_host serves any number of VMs in a process. */
#ifndef COLDSTART_KVM_H
#define COLDSTART_KVM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum kvm_flavour {
	KVM_FLAVOUR_NONE = 0, /* no usable /dev/kvm */
	KVM_FLAVOUR_VMX,      /* Intel VT-x */
	KVM_FLAVOUR_SVM,      /* AMD-V */
	KVM_FLAVOUR_PVM,      /* kvm_pvm: ring-0 guest code is emulated */
	KVM_FLAVOUR_OTHER,    /* /dev/kvm works, mechanism unknown */
};

struct kvm_cpuid2;

struct kvm_host {
	int fd;
	int api_version;
	enum kvm_flavour flavour;
	size_t vcpu_mmap_size;
	struct kvm_cpuid2 *cpuid; /* KVM_GET_SUPPORTED_CPUID, loaded lazily */
};

/* Where the KVM device lives; tests may point it elsewhere. */
#define KVM_DEVICE_PATH "/dev/kvm"

/* Opens `path` (NULL for /dev/kvm), checks the API version and the
 * capabilities coldstart needs. Returns 0 or -errno; -ENODEV (no device),
 * -EACCES and -ENOTSUP mean the host cannot run VMs (the CLI exits 77). */
int kvm__open(struct kvm_host *kvm, const char *path);
void kvm__close(struct kvm_host *kvm);

/* Just opens the device: an fd, or -ENODEV / -EACCES / -errno with a
 * message that says what to do. */
int kvm__open_device(const char *path);

/* The host-supported CPUID table, read on first use and cached: the ioctl
 * costs about 0.4 ms on nested hosts, where every CPUID traps. Safe from
 * any number of threads (concurrent first uses each read it, one table
 * is kept); owned by kvm. */
int kvm__supported_cpuid(struct kvm_host *kvm,
			 const struct kvm_cpuid2 **out);

/* Value of KVM_CHECK_EXTENSION (0 when absent). */
int kvm__check_cap(const struct kvm_host *kvm, long cap);

/* Detects the flavour from loaded modules and CPU flags; does not need
 * /dev/kvm to be openable. */
enum kvm_flavour kvm__detect_flavour(void);
const char *kvm__flavour_name(enum kvm_flavour flavour);

/* Where KVM runs for this process: a usable device (opened, API version
 * read) and its flavour, or none and why; and whether this host is itself
 * the emulated SVM host that `coldstart emulate` boots (its kernel command
 * line carries coldstart.emulated=NAME). */
struct kvm_where {
	bool usable;
	enum kvm_flavour flavour; /* KVM_FLAVOUR_NONE when !usable */
	int api_version;	  /* 0 when the device could not be asked */
	char emulated[32];	  /* "qemu-tcg-svm", or "" on a native host */
	char reason[256];	  /* why not usable; "" when usable */
};

/* Fills `where` for `path` (NULL: /dev/kvm); never fails, never prints. */
void kvm__where(struct kvm_where *where, const char *path);

/* kvm__where()'s flavour alone: KVM_FLAVOUR_NONE without a usable device
 * (a loaded kvm_pvm that did not bind is no PVM host). */
enum kvm_flavour kvm__device_flavour(void);

/* The emulation marker of this host's kernel command line, read from
 * `cmdline_path` (NULL: /proc/cmdline) into buf ("" when absent). */
void kvm__emulated(char *buf, size_t size, const char *cmdline_path);

/* The kernel command-line word that marks an emulated host. */
#define KVM_EMULATED_PARAM "coldstart.emulated="

/* Runs ioctl(2), retrying on EINTR; on failure records "NAME: strerror"
 * and returns -errno. */
int kvm__ioctl(int fd, unsigned long request, void *arg, const char *name);
#define KVM_IOCTL(fd, req, arg) kvm__ioctl((fd), (req), (arg), #req)

#endif
