/* Fuzz target: a guest kernel file, bzImage or ELF vmlinux: recognised
 * and checked by linux__open_kernel, planned into 64 MiB of guest memory
 * with an initrd (linux__plan), and loaded into that memory by
 * linux__load (kernel, initrd, command line, zero page, MP and ACPI
 * tables, page tables) up to the first vCPU ioctl, which fails here: the
 * VM has no KVM behind it. */
#include "fuzz.h"

#include "linux_x86.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MEM_SIZE (64ull << 20)

static char kernel[PATH_MAX], initrd[PATH_MAX];
static struct vm vm;
static struct vcpu vcpu = { .fd = -1 };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = fuzz__scratch("kernel");
	static const uint8_t cpio[4096] = { '0', '7', '0', '7', '0', '1' };

	(void)argc, (void)argv;
	snprintf(kernel, sizeof(kernel), "%s/kernel", dir);
	snprintf(initrd, sizeof(initrd), "%s/initrd", dir);
	fuzz__write(initrd, cpio, sizeof(cpio));
	vm.mem.host = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (vm.mem.host == MAP_FAILED)
		exit(1);
	vm.mem.size = MEM_SIZE;
	vm.mem_size = MEM_SIZE;
	vm.fd = -1;
	vm.nr_vcpus = 1;
	vm.vcpus = &vcpu;
	vcpu.vm = &vm;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct linux_kernel k;
	struct linux_boot b;

	fuzz__write(kernel, data, size);
	if (linux__open_kernel(&k, kernel) < 0)
		return 0;
	if (linux__plan(&b, &k, "console=ttyS0 reboot=k panic=-1", initrd,
			MEM_SIZE, 1) == 0) {
		linux__load(&vm, &b);
		linux__plan_free(&b);
	}
	linux__close_kernel(&k);
	return 0;
}
