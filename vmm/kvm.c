/* Opening /dev/kvm, checking what the host offers, naming its flavour. */
#include "kvm.h"

#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define CPUID_MAX_ENTRIES 256

static const struct {
	long cap;
	const char *name;
} required_caps[] = {
	{ KVM_CAP_USER_MEMORY, "KVM_CAP_USER_MEMORY" },
	{ KVM_CAP_EXT_CPUID, "KVM_CAP_EXT_CPUID" },
	{ KVM_CAP_IMMEDIATE_EXIT, "KVM_CAP_IMMEDIATE_EXIT" },
};

int kvm__ioctl(int fd, unsigned long request, void *arg, const char *name)
{
	int ret;

	do
		ret = ioctl(fd, request, arg);
	while (ret < 0 && errno == EINTR);
	if (ret < 0)
		return err__sys(errno, "%s", name);
	return ret;
}

int kvm__check_cap(const struct kvm_host *kvm, long cap)
{
	int ret = ioctl(kvm->fd, KVM_CHECK_EXTENSION, cap);

	return ret < 0 ? 0 : ret;
}

int kvm__open_device(const char *path)
{
	int fd = open(path ? path : KVM_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	if (!path)
		path = KVM_DEVICE_PATH;
	if (fd >= 0)
		return fd;
	if (errno == ENOENT)
		return err__set(ENODEV,
				"%s not found: this host offers no KVM (load "
				"kvm_intel, kvm_amd or kvm_pvm)", path);
	if (errno == EACCES || errno == EPERM)
		return err__set(EACCES,
				"cannot open %s: permission denied (run as root "
				"or join the kvm group)", path);
	return err__sys(errno, "cannot open %s", path);
}

static int check_host(struct kvm_host *kvm, const char *path)
{
	int ret = ioctl(kvm->fd, KVM_GET_API_VERSION, 0);

	if (ret < 0)
		return err__sys(errno, "KVM_GET_API_VERSION on %s", path);
	kvm->api_version = ret;
	if (ret != KVM_API_VERSION)
		return err__set(ENOTSUP, "%s speaks KVM API version %d, "
				"coldstart needs %d", path, ret, KVM_API_VERSION);
	for (size_t i = 0; i < sizeof(required_caps) / sizeof(required_caps[0]);
	     i++)
		if (!kvm__check_cap(kvm, required_caps[i].cap))
			return err__set(ENOTSUP, "%s lacks %s", path,
					required_caps[i].name);
	ret = KVM_IOCTL(kvm->fd, KVM_GET_VCPU_MMAP_SIZE, NULL);
	if (ret < 0)
		return ret;
	kvm->vcpu_mmap_size = (size_t)ret;
	return 0;
}

int kvm__supported_cpuid(struct kvm_host *kvm,
			 const struct kvm_cpuid2 **out)
{
	struct kvm_cpuid2 *cpuid = __atomic_load_n(&kvm->cpuid,
						   __ATOMIC_ACQUIRE);
	struct kvm_cpuid2 *first = NULL;
	int ret;

	if (cpuid) {
		*out = cpuid;
		return 0;
	}
	cpuid = calloc(1, sizeof(*cpuid) +
				  CPUID_MAX_ENTRIES * sizeof(cpuid->entries[0]));
	if (!cpuid)
		return err__set(ENOMEM, "allocating CPUID table");
	cpuid->nent = CPUID_MAX_ENTRIES;
	ret = KVM_IOCTL(kvm->fd, KVM_GET_SUPPORTED_CPUID, cpuid);
	if (ret < 0) {
		free(cpuid);
		return ret;
	}
	/* Threads that make VMs at once (a pool's refills) may all get
	 * here: the first table published is kept, the others freed. */
	if (!__atomic_compare_exchange_n(&kvm->cpuid, &first, cpuid, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		free(cpuid);
		cpuid = first;
	}
	*out = cpuid;
	return 0;
}

int kvm__open(struct kvm_host *kvm, const char *path)
{
	int ret;

	memset(kvm, 0, sizeof(*kvm));
	kvm->fd = -1;
	kvm->flavour = kvm__detect_flavour();
	if (!path)
		path = KVM_DEVICE_PATH;
	kvm->fd = kvm__open_device(path);
	if (kvm->fd < 0)
		return kvm->fd;
	ret = check_host(kvm, path);
	if (ret < 0)
		goto err_close;
	if (kvm->flavour == KVM_FLAVOUR_NONE)
		kvm->flavour = KVM_FLAVOUR_OTHER;
	return 0;

err_close:
	close(kvm->fd);
	kvm->fd = -1;
	return ret;
}

void kvm__close(struct kvm_host *kvm)
{
	free(kvm->cpuid);
	kvm->cpuid = NULL;
	if (kvm->fd >= 0)
		close(kvm->fd);
	kvm->fd = -1;
}

static int path_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* Whether /proc/cpuinfo's first "flags" line lists `flag`. */
static int cpu_has_flag(const char *flag)
{
	char line[4096];
	size_t len = strlen(flag);
	int found = 0;
	FILE *f = fopen("/proc/cpuinfo", "re");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		for (char *p = strstr(line, flag); p; p = strstr(p + 1, flag))
			if (p[-1] == ' ' && (p[len] == ' ' || p[len] == '\n'))
				found = 1;
		break;
	}
	fclose(f);
	return found;
}

enum kvm_flavour kvm__detect_flavour(void)
{
	if (path_exists("/sys/module/kvm_pvm"))
		return KVM_FLAVOUR_PVM;
	if (path_exists("/sys/module/kvm_intel") || cpu_has_flag("vmx"))
		return KVM_FLAVOUR_VMX;
	if (path_exists("/sys/module/kvm_amd") || cpu_has_flag("svm"))
		return KVM_FLAVOUR_SVM;
	return path_exists(KVM_DEVICE_PATH) ? KVM_FLAVOUR_OTHER
					    : KVM_FLAVOUR_NONE;
}

const char *kvm__flavour_name(enum kvm_flavour flavour)
{
	static const char *const names[] = {
		[KVM_FLAVOUR_NONE] = "none", [KVM_FLAVOUR_VMX] = "vmx",
		[KVM_FLAVOUR_SVM] = "svm",   [KVM_FLAVOUR_PVM] = "pvm",
		[KVM_FLAVOUR_OTHER] = "other",
	};

	return names[flavour];
}

/* Why no device is there, from what the kernel shows of KVM's modules. */
static void why_no_device(char *buf, size_t size, const char *path)
{
	static const char *const vendors[] = { "kvm_intel", "kvm_amd",
					       "kvm_pvm" };
	char mod[64];

	for (size_t i = 0; i < sizeof(vendors) / sizeof(vendors[0]); i++) {
		snprintf(mod, sizeof(mod), "/sys/module/%s", vendors[i]);
		if (path_exists(mod)) {
			snprintf(buf, size, "%s is loaded but no %s was "
				 "created: the module did not bind (its "
				 "messages in dmesg say why)", vendors[i], path);
			return;
		}
	}
	if (path_exists("/sys/module/kvm"))
		snprintf(buf, size, "kvm is loaded without a vendor module "
			 "(kvm_intel, kvm_amd or kvm_pvm): no %s", path);
	else if (cpu_has_flag("vmx") || cpu_has_flag("svm"))
		snprintf(buf, size, "no KVM module is loaded (modprobe "
			 "kvm_intel or kvm_amd): no %s", path);
	else
		snprintf(buf, size, "no %s and the CPU has neither VMX nor "
			 "SVM (nested virtualization is off)", path);
}

void kvm__emulated(char *buf, size_t size, const char *cmdline_path)
{
	char line[4096], *p, *end;
	FILE *f = fopen(cmdline_path ? cmdline_path : "/proc/cmdline", "re");
	size_t n = 0;

	buf[0] = '\0';
	if (!f)
		return;
	if (fgets(line, sizeof(line), f)) {
		for (p = strstr(line, KVM_EMULATED_PARAM); p;
		     p = strstr(p + 1, KVM_EMULATED_PARAM))
			if (p == line || p[-1] == ' ')
				break;
		if (p) {
			p += strlen(KVM_EMULATED_PARAM);
			end = p + strcspn(p, " \n");
			n = (size_t)(end - p) < size ? (size_t)(end - p)
						     : size - 1;
			memcpy(buf, p, n);
			buf[n] = '\0';
		}
	}
	fclose(f);
}

void kvm__where(struct kvm_where *where, const char *path)
{
	int fd, version;

	memset(where, 0, sizeof(*where));
	if (!path)
		path = KVM_DEVICE_PATH;
	kvm__emulated(where->emulated, sizeof(where->emulated), NULL);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			why_no_device(where->reason, sizeof(where->reason),
				      path);
		else if (errno == EACCES || errno == EPERM)
			snprintf(where->reason, sizeof(where->reason),
				 "%s exists but cannot be opened: permission "
				 "denied (run as root or join the kvm group)",
				 path);
		else
			snprintf(where->reason, sizeof(where->reason),
				 "%s cannot be opened: %s", path,
				 strerror(errno));
		return;
	}
	version = ioctl(fd, KVM_GET_API_VERSION, 0);
	close(fd);
	if (version < 0) {
		snprintf(where->reason, sizeof(where->reason),
			 "KVM_GET_API_VERSION on %s failed: %s", path,
			 strerror(errno));
		return;
	}
	where->api_version = version;
	if (version != KVM_API_VERSION) {
		snprintf(where->reason, sizeof(where->reason),
			 "%s speaks KVM API version %d, coldstart needs %d",
			 path, version, KVM_API_VERSION);
		return;
	}
	where->usable = true;
	where->flavour = kvm__detect_flavour();
	if (where->flavour == KVM_FLAVOUR_NONE)
		where->flavour = KVM_FLAVOUR_OTHER;
}

enum kvm_flavour kvm__device_flavour(void)
{
	struct kvm_where w;

	kvm__where(&w, NULL);
	return w.flavour;
}
