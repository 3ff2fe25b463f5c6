/* Bare-ioctl floor on x86-64: a 2 MiB guest in 64-bit ring 3 whose first
 * instruction writes to a port. Deliberately free of coldstart's VM layer
 * (no handles, threads or trap registry); it shares only the data helpers
 * that build the TSS, which cost nothing measurable. */
#include "floor.h"

#include "cpu_x86.h"
#include "err.h"
#include "kvm.h"

#include <linux/kvm.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define FLOOR_MEM (2ull << 20)
#define FLOOR_PML4 0x1000ull
#define FLOOR_PDPT 0x2000ull
#define FLOOR_PD 0x3000ull
#define FLOOR_TSS 0x4000ull
#define FLOOR_CODE 0x10000ull
#define FLOOR_PORT 0x10

int floor__open(struct floor *f, const char *path)
{
	int size;

	f->kvm_fd = kvm__open_device(path);
	if (f->kvm_fd < 0)
		return f->kvm_fd;
	size = KVM_IOCTL(f->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, NULL);
	if (size < 0) {
		close(f->kvm_fd);
		return size;
	}
	f->run_size = (size_t)size;
	return 0;
}

void floor__close(struct floor *f)
{
	close(f->kvm_fd);
}

/* One 2 MiB user page at 0, the TSS, and `out %al, $FLOOR_PORT`. */
static struct x86_segment fill_memory(uint8_t *mem)
{
	const uint64_t up = 0x7; /* present, writable, user */
	uint64_t *pml4 = (uint64_t *)(mem + FLOOR_PML4);
	uint64_t *pdpt = (uint64_t *)(mem + FLOOR_PDPT);
	uint64_t *pd = (uint64_t *)(mem + FLOOR_PD);

	pml4[0] = FLOOR_PDPT | up;
	pdpt[0] = FLOOR_PD | up;
	pd[0] = 0 | up | 0x80;
	mem[FLOOR_CODE] = 0xe6;
	mem[FLOOR_CODE + 1] = FLOOR_PORT;
	return x86__tss_open_iomap(mem + FLOOR_TSS, FLOOR_TSS, 0x40);
}

static int setup_vcpu(int vcpu, const struct x86_segment *tss)
{
	struct kvm_regs regs = { .rip = FLOOR_CODE, .rflags = 0x3002 };
	struct kvm_sregs s;
	int ret = KVM_IOCTL(vcpu, KVM_GET_SREGS, &s);

	if (ret < 0)
		return ret;
	x86__seg_to_kvm(&x86_user_code, &s.cs);
	x86__seg_to_kvm(&x86_user_data, &s.ss);
	s.ds = s.es = s.fs = s.gs = s.ss;
	x86__seg_to_kvm(tss, &s.tr);
	s.cr0 = 0x80050033; /* PG, AM, WP, NE, ET, MP, PE */
	s.cr3 = FLOOR_PML4;
	s.cr4 = 0x20;       /* PAE */
	s.efer = 0x500;     /* LMA, LME */
	ret = KVM_IOCTL(vcpu, KVM_SET_SREGS, &s);
	if (ret == 0)
		ret = KVM_IOCTL(vcpu, KVM_SET_REGS, &regs);
	return ret < 0 ? ret : 0;
}

static int run_vcpu(int vm, uint8_t *mem, size_t run_size)
{
	struct x86_segment tss = fill_memory(mem);
	struct kvm_userspace_memory_region region = {
		.memory_size = FLOOR_MEM, .userspace_addr = (uintptr_t)mem,
	};
	struct kvm_run *run;
	int vcpu, ret = KVM_IOCTL(vm, KVM_SET_USER_MEMORY_REGION, &region);

	if (ret < 0)
		return ret;
	vcpu = KVM_IOCTL(vm, KVM_CREATE_VCPU, NULL);
	if (vcpu < 0)
		return vcpu;
	run = mmap(NULL, run_size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	if (run == MAP_FAILED) {
		ret = err__sys(errno, "mmap of kvm_run");
		goto out_close;
	}
	ret = setup_vcpu(vcpu, &tss);
	if (ret == 0)
		ret = KVM_IOCTL(vcpu, KVM_RUN, NULL);
	if (ret == 0 && (run->exit_reason != KVM_EXIT_IO ||
			 run->io.port != FLOOR_PORT))
		ret = err__set(EIO, "floor guest: exit %u instead of a write "
			       "to port 0x%x", run->exit_reason, FLOOR_PORT);
	munmap(run, run_size);
out_close:
	close(vcpu);
	return ret;
}

int floor__cycle(struct floor *f)
{
	uint8_t *mem;
	int vm, ret;

	vm = KVM_IOCTL(f->kvm_fd, KVM_CREATE_VM, NULL);
	if (vm < 0)
		return vm;
	mem = mmap(NULL, FLOOR_MEM, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED) {
		ret = err__sys(errno, "mmap of floor guest memory");
		goto out_vm;
	}
	ret = run_vcpu(vm, mem, f->run_size);
	munmap(mem, FLOOR_MEM);
out_vm:
	close(vm);
	return ret;
}
