/* Embeds coldstart-init (the guest images' PID 1) in the coldstart binary,
 * so `coldstart image build` packs the init of the same build. */
	.section .rodata.init_image, "a"
	.balign 16
	.globl init_image_start
	.globl init_image_end
init_image_start:
	.incbin INIT_IMAGE_PATH
init_image_end:
	.section .note.GNU-stack, "", @progbits
