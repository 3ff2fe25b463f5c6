/* The option tables are the parsers and the help: for every driver of
 * `coldstart bench` (its own table, the common rows it takes and another
 * room's it takes, the pool's), and for `coldstart run`'s, each row
 * parses with a valid value and its help lists it. A row whose setter
 * refuses a valid value, or one the help leaves out, fails here. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "commands.h"
#include "driver.h"
#include "err.h"
#include "opt.h"
#include "run_opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char jail_dir[] = "/tmp/coldstart-test-options-XXXXXX";
/* a regular file, for the suite's --kernel and --initrd */
static char file[] = "/tmp/coldstart-test-options-file-XXXXXX";
/* a pool configuration, for bench pool's --config */
static char config[] = "/tmp/coldstart-test-options-config-XXXXXX";

/* A valid value by driver, option and value name (NULL: any). */
static const struct {
	const char *driver, *opt, *arg, *value;
} values[] = {
	{ "boot", "mode", NULL, "process" },
	{ "pool", "workers", NULL, "2" }, { "pool", "mem", NULL, "64M" },
	{ "suite", NULL, "FILE", file }, { "suite", "only", NULL, "boot" },
	{ NULL, "seccomp", NULL, "off" }, { NULL, "workers", NULL, "1,2" },
	{ NULL, "strategy", NULL, "mmap" }, { NULL, "cache", NULL, "warm" },
	{ NULL, "mem", "LIST", "64M" }, { NULL, "ws", "LIST", "16M" },
	{ NULL, "pattern", NULL, "random" }, { NULL, "op", NULL, "write" },
	{ NULL, "jail", NULL, jail_dir },
	{ "pool", "config", NULL, config }, { "pool", "max", NULL, "8" },
	{ NULL, "mem-restore", NULL, "mmap" }, { NULL, "hold", NULL, "warm" },
	{ NULL, "on-empty", NULL, "wait" }, { NULL, "policy", NULL, "follow" },
	{ NULL, "arrivals", NULL, "poisson:5" }, { NULL, NULL, "F", "0.5" },
	{ NULL, NULL, "N", "2" }, { NULL, NULL, "DIR", "/tmp" },
	{ NULL, NULL, "PATH", "p" }, { NULL, NULL, "FILE", "f" },
	{ NULL, NULL, "TEXT", "t" }, { NULL, NULL, "SIZE", "8M" },
	{ NULL, NULL, "DUR", "1s" }, { NULL, NULL, "MODE", "both" },
	{ NULL, NULL, "SET", "all" }, { NULL, NULL, "HOW", "outside" },
	{ NULL, NULL, "K", "2" }, { NULL, NULL, "PAGES", "2" },
	{ NULL, NULL, "WHEN", "ready" }, { NULL, NULL, "WHAT", "abort" },
	{ NULL, NULL, "WHICH", "host" }, { NULL, NULL, "NAME", "memfd" },
	{ NULL, NULL, "OPTS", "-n 1" }, { NULL, NULL, "P", "0.05" },
	{ NULL, NULL, "PCT", "5" }, { NULL, NULL, "CMD", "true" },
	{ "ab", "format", NULL, "junit" },
	{ "session", "snapshots", NULL, "full" },
	{ "session", "merge", NULL, "every:3" },
	{ "session", "seed", NULL, "7" },
};

/* What an option needs beside it (NULL driver: `coldstart run`). */
static const struct {
	const char *driver, *opt, *with[6];
} needs[] = {
	{ NULL, "initrd", { "--kernel", "k" } },
	{ NULL, "rootfs", { "--kernel", "k" } },
	{ NULL, "agent-port", { "--kernel", "k" } },
	{ NULL, "exec", { "--kernel", "k", "--rootfs", "r" } },
	{ NULL, "cmdline", { "--kernel", "k" } },
	{ NULL, "console", { "--kernel", "k" } },
	{ NULL, "allow-pvm", { "--kernel", "k" } },
	{ NULL, "drive", { "--kernel", "k" } },
	{ NULL, "vsock", { "--kernel", "k" } },
	{ NULL, "uid", { "--jail", jail_dir } },
	{ NULL, "gid", { "--jail", jail_dir } },
	{ NULL, "cpus", { "--jail", jail_dir } },
	{ NULL, "memory", { "--jail", jail_dir } },
	{ "density", "initrd", { "--kernel", "k" } },
	{ "density", "cmdline", { "--kernel", "k" } },
	{ "density", "mem", { "--kernel", "k" } },
	{ "density", "vcpus", { "--kernel", "k" } },
	{ "density", "settle", { "--kernel", "k" } },
	{ "density", "timeout", { "--kernel", "k" } },
	{ "density", "allow-pvm", { "--kernel", "k" } },
	{ "density", "rootfs", { "--kernel", "k" } },
	{ "density", "exec", { "--kernel", "k", "--rootfs", "r" } },
	{ "rate", "initrd", { "--kernel", "k" } },
	{ "boot", "initrd", { "--kernel", "k" } },
	{ "rate", "cmdline", { "--kernel", "k" } },
	{ "rate", "allow-pvm", { "--kernel", "k" } },
	{ "restore", "allow-pvm", { "--snapshot", "s" } },
	{ "restore", "exec", { "--snapshot", "s" } },
	{ "soak", "count", { "--every", "1" } },
	{ "suite", "initrd", { "--kernel", file } },
	{ "suite", "cmdline", { "--kernel", file } },
	{ "suite", "mem", { "--kernel", file } },
	{ "suite", "vcpus", { "--kernel", file } },
	{ "suite", "allow-pvm", { "--kernel", file } },
	{ "suite", "rootfs", { "--kernel", file } },
	{ "pool", "initrd", { "--kernel", "k" } },
	{ "pool", "cmdline", { "--kernel", "k" } },
	{ "pool", "mem", { "--kernel", "k" } },
	{ "session", "seed", { "--kills", "2" } },
	{ "peers", "kernel", { "--initrd", "i", "--rootfs", "r" } },
	{ "peers", "initrd", { "--kernel", "k", "--rootfs", "r" } },
	{ "peers", "rootfs", { "--kernel", "k", "--initrd", "i" } },
#define PEERS_LINUX { "--kernel", "k", "--initrd", "i", "--rootfs", "r" }
	{ "peers", "read", PEERS_LINUX },
	{ "peers", "timeout", PEERS_LINUX },
	{ "peers", "mem", PEERS_LINUX },
	{ "peers", "vcpus", PEERS_LINUX },
	{ "peers", "allow-pvm", PEERS_LINUX },
#undef PEERS_LINUX
};

/* Rows whose valid value is more than a unit test makes (a snapshot):
 * the check refusing the value as given shows that the row took it. */
static const struct {
	const char *driver, *opt, *refusal;
} refused[] = {
	{ "pool", "snapshot", "/tmp is not a snapshot coldstart can restore" },
	/* a guest with an agent is a rootfs guest's snapshot */
	{ "pool", "exec", "--exec: the guest has no agent" },
};

static const char *refusal_for(const char *driver, const struct opt *o)
{
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (!strcmp(refused[i].driver, driver) &&
		    !strcmp(refused[i].opt, o->name))
			return refused[i].refusal;
	return NULL;
}

static const char *value_for(const char *driver, const struct opt *o)
{
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		if ((!values[i].driver ||
		     (driver && !strcmp(values[i].driver, driver))) &&
		    (!values[i].opt || !strcmp(values[i].opt, o->name)) &&
		    (!values[i].arg || !strcmp(values[i].arg, o->arg)))
			return values[i].value;
	fail_msg("no valid value known for --%s %s", o->name, o->arg);
	return NULL;
}

/* argv for one option: NAME --opt[=]VALUE [what it needs] [operand]. */
static int make_argv(const char *driver, const struct opt *o, char **argv,
		     char *buf, size_t len, bool operand)
{
	int n = 0;

	argv[n++] = (char *)(driver ? driver : "run");
	if (!o->arg)
		snprintf(buf, len, "--%s", o->name);
	else
		snprintf(buf, len, "--%s=%s", o->name, value_for(driver, o));
	argv[n++] = buf;
	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++)
		if ((!needs[i].driver == !driver) &&
		    (!driver || !strcmp(needs[i].driver, driver)) &&
		    !strcmp(needs[i].opt, o->name)) {
			for (size_t w = 0; w < 6 && needs[i].with[w]; w++)
				argv[n++] = (char *)needs[i].with[w];
		}
	if (operand)
		argv[n++] = "boot";
	argv[n] = NULL;
	return n;
}

/* Whether the help text names the option as its row says. */
static void assert_listed(const char *help, const struct opt *o,
			  const char *who)
{
	char want[64];

	snprintf(want, sizeof(want), "--%s", o->name);
	if (!strstr(help, want))
		fail_msg("%s --help does not list %s", who, want);
	if (o->short_name) {
		snprintf(want, sizeof(want), "-%c, --%s", o->short_name,
			 o->name);
		if (!strstr(help, want))
			fail_msg("%s --help does not list %s", who, want);
	}
}

static char *driver_help(const struct bench_driver *d)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	bench__help(d, f);
	fclose(f);
	return text;
}

static void check_row(const struct bench_driver *d, const struct opt *o,
		      const char *help)
{
	char *argv[10], buf[128];
	void *opts = calloc(1, d->size);
	int argc = make_argv(d->name, o, argv, buf, sizeof(buf), d->operands);
	size_t nr;
	const struct bench_driver *const *table = bench__drivers(&nr);
	int ret = bench__parse(d, table, nr, argc, argv, opts);
	const char *refusal = refusal_for(d->name, o);

	if (refusal && (ret != -EINVAL || !strstr(err__last(), refusal)))
		fail_msg("bench %s %s: %d: %s (expected: %s)", d->name, buf,
			 ret, err__last(), refusal);
	else if (!refusal && ret != 0)
		fail_msg("bench %s %s: %d: %s", d->name, buf, ret, err__last());
	if (ret == 0 && d->release)
		d->release(opts);
	if (!o->help || !*o->help)
		fail_msg("bench %s --%s has no help", d->name, o->name);
	assert_listed(help, o, d->name);
	free(opts);
}

static void every_driver_row_parses_and_is_listed(void **state)
{
	size_t n, rows = 0;
	const struct bench_driver *const *d = bench__drivers(&n);

	(void)state;
	for (size_t i = 0; i < n; i++) {
		struct opt common[17];
		const struct opt *more = d[i]->more_opts ? d[i]->more_opts()
							  : NULL;
		char *help;

		help = driver_help(d[i]);
		bench__common_rows(d[i]->common, common, 16);
		for (const struct opt *o = common; o->name || o->help; o++)
			if (o->name) {
				check_row(d[i], o, help);
				rows++;
			}
		for (const struct opt *o = d[i]->opts; o && (o->name || o->help);
		     o++)
			if (o->name) {
				check_row(d[i], o, help);
				rows++;
			}
		for (const struct opt *o = more; o && (o->name || o->help); o++)
			if (o->name) {
				check_row(d[i], o, help);
				rows++;
			}
		free(help);
	}
	assert_true(rows > 80);
}

static void run_rows_parse_and_are_listed(void **state)
{
	char *text = NULL, *argv[8], buf[128];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct run_cli o;

	(void)state;
	assert_non_null(f);
	run_opts__help(f);
	fclose(f);
	for (const struct opt *r = run_opts__table(); r->name || r->help; r++) {
		int argc;

		if (!r->name)
			continue;
		argc = make_argv(NULL, r, argv, buf, sizeof(buf), false);
		if (run_opts__parse(argc, argv, &o) != 0)
			fail_msg("run %s: %s", buf, err__last());
		assert_listed(text, r, "run");
		assert_true(r->help && *r->help);
		if (o.jail.dir_fd >= 0 && o.jail.dir)
			close(o.jail.dir_fd);
	}
	free(text);
}

/* The generator: a row's default, continuation lines and the built-in
 * help; an unknown option is refused with the parser's message. */
static int set_flag(void *ctx, const char *arg)
{
	(void)arg;
	*(int *)ctx = 1;
	return 0;
}

static void show_seven(const void *ctx, char *buf, size_t len)
{
	(void)ctx;
	snprintf(buf, len, "7");
}

static void generated_help_and_refusals(void **state)
{
	static const struct opt rows[] = {
		{ "flag", 'f', NULL, false, "first line\nsecond line",
		  set_flag, show_seven },
		OPT_END,
	};
	int flag = 0;
	struct opt_set set = { .opts = rows, .ctx = &flag };
	char *text = NULL, *argv[] = { "x", "-f", NULL },
	     *bad[] = { "x", "--nope", NULL };
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	opt__help(f, &set, 1);
	fclose(f);
	assert_string_equal(text, "  -f, --flag       first line\n"
			    "                   second line (default 7)\n"
			    "  -h, --help       this help\n");
	free(text);
	assert_int_equal(opt__parse(2, argv, &set, 1, OPT_NO_OPERANDS), 0);
	assert_int_equal(flag, 1);
	assert_int_equal(opt__parse(2, bad, &set, 1, OPT_NO_OPERANDS),
			 -EINVAL);
	assert_string_equal(err__last(), "unknown or incomplete option "
			    "'--nope'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_driver_row_parses_and_is_listed),
		cmocka_unit_test(run_rows_parse_and_are_listed),
		cmocka_unit_test(generated_help_and_refusals),
	};
	int ret, fd;

	/* the jailed user must be able to search it */
	if (!mkdtemp(jail_dir) || chmod(jail_dir, 0711) < 0)
		return 1;
	fd = mkstemp(file);
	if (fd < 0)
		return 1;
	close(fd);
	fd = mkstemp(config);
	if (fd < 0 || write(fd, "{\"size\": 2}\n", 12) != 12)
		return 1;
	close(fd);
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(jail_dir);
	unlink(file);
	unlink(config);
	return ret;
}
