/* Test kernel entry. The first 0x200 bytes stand where a bzImage's
 * protected-mode code has its 32-bit entry; the 64-bit entry follows at
 * +0x200, as the boot protocol places it, so the same flat image serves
 * as ELF (entry startup_64) and, wrapped in a setup header, as bzImage.
 * The VMM enters in 64-bit ring 0, interrupts off, rsi = zero page. */
	.section .text.head, "ax"
	.globl _head
_head:
	ud2
	.org 0x200
	.globl startup_64
startup_64:
	lea	stack_top(%rip), %rsp
	mov	%rsi, %rdi
	call	tk_main
1:	cli
	hlt
	jmp	1b

	.section .bss
	.balign 16
stack:
	.skip 8192
stack_top:
	.section .note.GNU-stack, "", @progbits
