/* Option tables: one row per option (long name, short name, value name,
 * help text, setter) drives both getopt_long() and the --help text, so
 * the parser and the help cannot drift apart. */
#ifndef COLDSTART_OPT_H
#define COLDSTART_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* One row. A row with a NULL name is a heading when it has help (printed
 * as is), else the end of the table. */
struct opt {
	const char *name;  /* long name, without "--" */
	char short_name;   /* 0: long only; never 'h' (--help is built in) */
	const char *arg;   /* the value's name in the help ("N", "DIR");
			    * NULL: a flag that takes none */
	bool optional;     /* the value may be left out: --name[=ARG] */
	const char *help;  /* what it does; each '\n' starts an indented
			    * continuation line */
	/* Takes the option (arg NULL for a flag or a left-out optional
	 * value): 0, or -EINVAL with err__set naming the option. */
	int (*set)(void *ctx, const char *arg);
	/* The default shown after the help, as " (default TEXT)" (NULL: none
	 * shown): written to buf from ctx, which holds the defaults. */
	void (*show)(const void *ctx, char *buf, size_t len);
};

/* A table and the object its setters fill. */
struct opt_set {
	const struct opt *opts;
	void *ctx;
	bool hidden; /* not in the help (options taken to pass on) */
	/* Told of each option taken from this table, after its setter,
	 * with the value as given (NULL: nobody is): 0 or -errno with a
	 * message. */
	int (*taken)(void *taken_ctx, const struct opt *row, const char *arg);
	void *taken_ctx;
};

#define OPT_END { .name = NULL }
#define OPT_HEADING(text) { .name = NULL, .help = (text) }

/* What may follow or come between the options. */
enum opt_operands {
	OPT_NO_OPERANDS,  /* none: an operand is an error */
	OPT_OPERANDS_LAST, /* the options end at the first operand */
	OPT_OPERANDS_ANY, /* anywhere, moved after the options */
};

/* The tables' options over argv (argv[0] is the command), quiet and
 * stopping at the first error; with operands, optind indexes the first
 * when it returns 0. Returns 1 when
 * -h/--help was given, 0 when every option was taken, or -EINVAL with
 * err__last() saying why (args__bad_option's message for an unknown or
 * incomplete option, else the setter's). */
int opt__parse(int argc, char **argv, const struct opt_set *sets, size_t n,
	       enum opt_operands operands);

/* The option lines of the tables' help, in table order, then
 * "-h, --help  this help"; values shown by `show` read each set's ctx. */
void opt__help(FILE *out, const struct opt_set *sets, size_t n);

/* The row whose long name is `name`, or NULL. */
const struct opt *opt__find(const struct opt_set *sets, size_t n,
			    const char *name);

#endif
