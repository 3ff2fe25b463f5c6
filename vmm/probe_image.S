/* Embeds the probe guest's flat binary in the coldstart binary. */
	.section .rodata.probe_image, "a"
	.balign 16
	.globl probe_image_start
	.globl probe_image_end
probe_image_start:
	.incbin PROBE_IMAGE_PATH
probe_image_end:
	.section .note.GNU-stack, "", @progbits
