/* Parsing of command-line values: sizes, counts, durations, names. Pure
 * functions: 0 on success, -EINVAL with a message (err__last) naming the
 * option and the bad text otherwise. */
#ifndef COLDSTART_ARGS_H
#define COLDSTART_ARGS_H

#include <stdbool.h>
#include <stdint.h>

/* "4096", "4k", "64M", "2G", "1T" (binary units, case-insensitive, optional
 * "iB"/"B" suffix). */
int args__size(const char *opt, const char *text, uint64_t *out);

/* Decimal unsigned integer within [min, max]; "1e6"-style exponents and
 * k/M/G decimal suffixes (1k = 1000) are accepted for counts. */
int args__u64(const char *opt, const char *text, uint64_t min, uint64_t max,
	      uint64_t *out);

/* "250ms", "10s", "2m", "500us", a bare number means seconds; result in
 * nanoseconds. */
int args__duration(const char *opt, const char *text, uint64_t *ns);

/* A probability strictly between 0 and 1 ("0.01", "5e-2"), e.g. a
 * significance level. */
int args__probability(const char *opt, const char *text, double *out);

/* Index of `text` in the NULL-terminated `names`; the error lists them. */
int args__choice(const char *opt, const char *text,
		 const char *const *names, unsigned int *out);

/* `--mode both|FIRST|SECOND`: *first and *second say which of the two
 * series run ("both" sets both). */
int args__both(const char *opt, const char *text, const char *first,
	       const char *second, bool *a, bool *b);

/* The error for what getopt_long() just refused (an unknown option or one
 * missing its value): "unknown or incomplete option 'ARG'"; -EINVAL. */
int args__bad_option(char *const argv[]);

/* After getopt_long(): -EINVAL "unexpected argument 'ARG'" when operands
 * remain (optind < argc), else 0. */
int args__no_operands(int argc, char *const argv[]);

struct option;

/* The option loop every command shares: getopt_long() over argv from its
 * start, quiet (opterr off), stopping at the first error. Calls
 * one(c, optarg, ctx) for each option other than -h/--help (its short
 * option must be 'h'). Returns 1 when help was asked for, 0 when every
 * option was taken (optind then indexes the first operand), or the
 * first error: -EINVAL from args__bad_option for an unknown or
 * incomplete option, else what one() returned. */
int args__getopt(int argc, char **argv, const char *shortopts,
		 const struct option *longopts,
		 int (*one)(int c, char *arg, void *ctx), void *ctx);

#endif
