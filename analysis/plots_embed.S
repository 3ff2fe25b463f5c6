/* Embeds the gnuplot scripts of plots/ in the coldstart binary, each
 * NUL-terminated, so `coldstart report` works from any directory. */
	.section .rodata.plots, "a"
	.globl plot_cdf_gp
	.globl plot_restore_gp
	.globl plot_rate_gp
	.globl plot_density_gp
	.globl plot_pool_gp
	.globl plot_pareto_gp
	.globl plot_session_gp
plot_cdf_gp:
	.incbin PLOT_CDF_GP
	.byte 0
plot_restore_gp:
	.incbin PLOT_RESTORE_GP
	.byte 0
plot_rate_gp:
	.incbin PLOT_RATE_GP
	.byte 0
plot_density_gp:
	.incbin PLOT_DENSITY_GP
	.byte 0
plot_pool_gp:
	.incbin PLOT_POOL_GP
	.byte 0
plot_pareto_gp:
	.incbin PLOT_PARETO_GP
	.byte 0
plot_session_gp:
	.incbin PLOT_SESSION_GP
	.byte 0
	.section .note.GNU-stack, "", @progbits
