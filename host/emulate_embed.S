/* Embeds the emulated host's /init (emulate_init.sh), NUL-terminated, so
 * `coldstart emulate` works from any directory. */
	.section .rodata.emulate, "a"
	.globl emulate_init_sh
emulate_init_sh:
	.incbin EMULATE_INIT_SH
	.byte 0
	.section .note.GNU-stack, "", @progbits
