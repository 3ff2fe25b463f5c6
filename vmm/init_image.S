/* Embeds coldstart-init (the guest images' PID 1) and coldstart-agent (the
 * rootfs guests' command runner) in the coldstart binary, so `coldstart
 * image build` packs the guest programs of the same build. */
	.section .rodata.init_image, "a"
	.balign 16
	.globl init_image_start
	.globl init_image_end
init_image_start:
	.incbin INIT_IMAGE_PATH
init_image_end:
	.balign 16
	.globl agent_image_start
	.globl agent_image_end
agent_image_start:
	.incbin AGENT_IMAGE_PATH
agent_image_end:
	.section .note.GNU-stack, "", @progbits
