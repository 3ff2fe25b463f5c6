/* kvm-hold: keeps one idle VM open in the e2e rig's emulated host, so
 * that KVM's static keys in the host kernel keep a non-zero count while
 * the cases create and destroy their VMs one after another.
 *
 * Each 0 <-> 1 change of such a key (preempt notifiers: any VM exists;
 * apic_sw_disabled: any vCPU with a software-disabled local APIC, which a
 * vCPU is from creation until its guest enables it) makes the host kernel
 * rewrite its own code with int3 breakpoints (text_poke_bp). Under QEMU's
 * multi-threaded TCG that rewriting has, now and then, left both emulated
 * CPUs looping through the int3 handler with interrupts off: the host
 * froze without a message. This VM has an in-kernel irqchip and one vCPU
 * that never runs, so its APIC stays software-disabled, and it lives until
 * the host powers off.
 *
 * Usage: kvm-hold   (prints "kvm-hold: holding" once the VM exists)
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static int fail(const char *what)
{
	fprintf(stderr, "kvm-hold: %s: %s\n", what, strerror(errno));
	return 1;
}

int main(void)
{
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	int vm, vcpu;

	if (kvm < 0)
		return fail("open /dev/kvm");
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0)
		return fail("KVM_CREATE_VM");
	if (ioctl(vm, KVM_CREATE_IRQCHIP, 0) < 0)
		return fail("KVM_CREATE_IRQCHIP");
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	if (vcpu < 0)
		return fail("KVM_CREATE_VCPU");
	printf("kvm-hold: holding\n");
	fflush(stdout);
	for (;;)
		pause();
}
