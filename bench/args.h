/* Parsing of command-line values: sizes, counts, durations, names. Pure
 * functions: 0 on success, -EINVAL with a message (err__last) naming the
 * option and the bad text otherwise. */
#ifndef COLDSTART_ARGS_H
#define COLDSTART_ARGS_H

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

/* Index of `text` in the NULL-terminated `names`; the error lists them. */
int args__choice(const char *opt, const char *text,
		 const char *const *names, unsigned int *out);

#endif
