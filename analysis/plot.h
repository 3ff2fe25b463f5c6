/* gnuplot, run on the scripts of plots/ that the build embeds in the
 * binary: the script goes to gnuplot's stdin, its variables on -e. */
#ifndef COLDSTART_PLOT_H
#define COLDSTART_PLOT_H

#include <stdbool.h>
#include <stddef.h>

/* The embedded script plots/NAME.gp ("cdf", "restore", "rate",
 * "density", "pool", "pareto"), or NULL. */
const char *plot__script(const char *name);

/* Whether a gnuplot executable is on PATH. */
bool plot__available(void);

/* "base.ext" as one file name that stays in its directory: every byte
 * but letters, digits, '.', '_', '+' and '-' becomes '-', as does a
 * leading '.'; cut to fit `len`, keeping ".ext". */
void plot__file_name(char *out, size_t len, const char *base,
		     const char *ext);

/* Runs gnuplot in `dir` on script `name` with `vars` (gnuplot commands,
 * typically "in='x.csv'; fmt='png'; ..."), which must not set `out`:
 * gnuplot draws to its stdout, a temporary file made in `dir` (never a
 * name gnuplot opens, so never through a planted link), which is renamed
 * to dir/out only when gnuplot succeeded and wrote something. 0 or
 * -errno with a message (-ENOENT: no gnuplot; -EINVAL: `out` is not
 * a name plot__file_name makes). */
int plot__run(const char *dir, const char *name, const char *vars,
	      const char *out);

#endif
