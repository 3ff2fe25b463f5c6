/* Probe guest entry: the VMM starts every vCPU here in 64-bit ring 3 with
 * rsp at the top of its own stack, rdi = vCPU index, rsi = boot info. */
	.section .text.start, "ax"
	.globl _start
_start:
	xor	%ebp, %ebp
	call	probe_main
	/* probe_main never returns; if it does, stop with a fault. */
1:	ud2
	jmp	1b
	.section .note.GNU-stack, "", @progbits
