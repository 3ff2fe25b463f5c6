/* The peers benchmark's trivial guest for QEMU: a 64 KiB flat firmware
 * image (QEMU maps -bios below 4 GiB and starts at its last 16 bytes in
 * real mode) that writes PEER_EXIT_VALUE to isa-debug-exit at port 0xf4,
 * which ends QEMU with status (value << 1) | 1 = 33. Embedded in the
 * coldstart binary as data; never executed on the host. */
	.section .rodata.peer_bios, "a"
	.globl peer_bios_start
	.globl peer_bios_end
	.balign 16
peer_bios_start:
	.fill 0xfff0, 1, 0
	.code16
reset_vector:			/* physical 0xfffffff0 */
	movb $0x10, %al		/* PEER_EXIT_VALUE */
	outb %al, $0xf4
1:	hlt
	jmp 1b
	.fill peer_bios_start + 0x10000 - ., 1, 0
peer_bios_end:
	.code64
	.section .note.GNU-stack, "", @progbits
