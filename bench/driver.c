/* The drivers' common options, one table for all of them, and each
 * driver's parse and help made from its descriptor's tables. */
#include "driver.h"

#include "args.h"
#include "err.h"
#include "run_opts.h"

#include <getopt.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int set_count(void *ctx, const char *arg)
{
	struct bench_common *c = ctx;

	return args__u64("--count", arg, 1, c->count_max, &c->count);
}

static int set_warmup(void *ctx, const char *arg)
{
	struct bench_common *c = ctx;

	return args__u64("--warmup", arg, 0, c->warmup_max, &c->warmup);
}

static int set_json(void *ctx, const char *arg)
{
	(void)arg;
	((struct bench_common *)ctx)->json = true;
	return 0;
}

static int set_out(void *ctx, const char *arg)
{
	((struct bench_common *)ctx)->out_dir = arg;
	return 0;
}

static int set_kvm(void *ctx, const char *arg)
{
	((struct bench_common *)ctx)->kvm_path = arg;
	return 0;
}

/* The guest's options are kept as given: the driver passes them on to
 * `coldstart run` (whose parser checks them) or reads them itself. */
#define GUEST_OPTION(field) \
static int set_##field(void *ctx, const char *arg) \
{ \
	((struct bench_common *)ctx)->field = arg; \
	return 0; \
}
GUEST_OPTION(kernel)
GUEST_OPTION(initrd)
GUEST_OPTION(cmdline)
GUEST_OPTION(mem)
GUEST_OPTION(vcpus)

static int set_allow_pvm(void *ctx, const char *arg)
{
	(void)arg;
	((struct bench_common *)ctx)->allow_pvm = true;
	return 0;
}

static void show_count(const void *ctx, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRIu64, ((const struct bench_common *)ctx)->count);
}

static void show_warmup(const void *ctx, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRIu64,
		 ((const struct bench_common *)ctx)->warmup);
}

/* In the order of enum bench_common_opt. */
static const struct opt common[] = {
	{ "count", 'n', "N", false, "counted samples", set_count, show_count },
	{ "warmup", 'w', "N", false, "uncounted samples first", set_warmup,
	  show_warmup },
	{ "json", 0, NULL, false, "the result document on stdout", set_json,
	  NULL },
	{ "out", 0, "DIR", false, "also write DIR/DRIVER.json and "
	  "DIR/DRIVER.md", set_out, NULL },
	{ "kvm", 0, "PATH", false, "KVM device (default /dev/kvm)", set_kvm,
	  NULL },
	{ "kernel", 0, "FILE", false, "boot a Linux guest (bzImage or ELF "
	  "vmlinux) instead of the\nprobe guest; refused on PVM hosts (exit "
	  "77) unless\n--allow-pvm", set_kernel, NULL },
	{ "initrd", 0, "FILE", false, "its initial ramdisk", set_initrd, NULL },
	{ "cmdline", 0, "TEXT", false, "its kernel command line (default: "
	  "`coldstart run`'s)", set_cmdline, NULL },
	{ "mem", 0, "SIZE", false, "guest memory (default: the least the "
	  "probe guest needs,\n256M with --kernel)", set_mem, NULL },
	{ "vcpus", 0, "N", false, "vCPUs per VM (default 1)", set_vcpus, NULL },
	{ "allow-pvm", 0, NULL, false, "boot the Linux guest even on a PVM "
	  "host, where ordinary\nkernels cannot", set_allow_pvm, NULL },
	OPT_END,
};

#define GUEST_HEADING "The guest (as `coldstart run` takes it):"

void bench__common_rows(unsigned int mask, struct opt *rows, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; common[i].name && n < max; i++) {
		if (!(mask & (1u << i)))
			continue;
		if (((1u << i) & BENCH_GUEST) &&
		    !(mask & ((1u << i) - 1) & BENCH_GUEST) && n < max)
			rows[n++] = (struct opt)OPT_HEADING(GUEST_HEADING);
		if (n < max)
			rows[n++] = common[i];
	}
	rows[n] = (struct opt)OPT_END;
}

struct bench_common *bench__common(const struct bench_driver *d, void *o)
{
	return (struct bench_common *)((char *)o + d->common_at);
}

#define COMMON_MAX 16
#define OUT_HELP_LEN 128

/* The --out row's help names the driver's files. */
static void name_files(const struct bench_driver *d, struct opt *rows,
		       char *buf, size_t len)
{
	for (; rows->name; rows++)
		if (rows->set == set_out) {
			snprintf(buf, len, "also write DIR/%s.json and "
				 "DIR/%s.md", d->name, d->name);
			rows->help = buf;
		}
}

/* The common rows first (-n, -w lead every help), then the driver's,
 * then the guest's, then another room's (the pool's). */
static size_t sets_of(const struct bench_driver *d, void *o,
		      struct opt *rows, struct opt *guest, char *out_help,
		      struct opt_set *sets)
{
	static const struct opt none[] = { OPT_END };
	size_t n = 0;

	bench__common_rows(d->common & ~BENCH_GUEST, rows, COMMON_MAX);
	bench__common_rows(d->common & BENCH_GUEST, guest, COMMON_MAX);
	name_files(d, rows, out_help, OUT_HELP_LEN);
	sets[n++] = (struct opt_set){ .opts = rows,
				      .ctx = bench__common(d, o) };
	sets[n++] = (struct opt_set){ .opts = d->opts ? d->opts : none,
				      .ctx = o };
	sets[n++] = (struct opt_set){ .opts = guest,
				      .ctx = bench__common(d, o) };
	if (d->more_opts)
		sets[n++] = (struct opt_set){ .opts = d->more_opts(),
					      .ctx = (char *)o + d->more_at };
	return n;
}

/* One of `coldstart run`'s options, as given, to pass on. */
static int forward(void *ctx, const struct opt *row, const char *arg)
{
	struct bench_common *c = ctx;
	char *name = c->forwarded_names[c->nr_forwarded];

	if (c->nr_forwarded + 2 > BENCH_FORWARD_MAX)
		return err__set(E2BIG, "too many options");
	snprintf(name, sizeof(c->forwarded_names[0]), "--%s", row->name);
	c->forwarded[c->nr_forwarded++] = name;
	if (arg)
		c->forwarded[c->nr_forwarded++] = (char *)arg;
	return 0;
}

int bench__parse(const struct bench_driver *d,
		 const struct bench_driver *const *table, size_t nr, int argc,
		 char **argv, void *o)
{
	struct opt rows[COMMON_MAX + 1], guest[COMMON_MAX + 1];
	char out_help[OUT_HELP_LEN];
	struct opt_set sets[5];
	struct run_cli scratch; /* what run's setters fill: unused */
	size_t n = sets_of(d, o, rows, guest, out_help, sets);
	int ret;

	if (d->forwards) {
		run_opts__defaults(&scratch);
		sets[n++] = (struct opt_set){ .opts = run_opts__table(),
					      .ctx = &scratch, .hidden = true,
					      .taken = forward,
					      .taken_ctx = bench__common(d, o) };
	}
	memset(o, 0, d->size);
	if (d->init)
		d->init(o);
	bench__common(d, o)->table = table;
	bench__common(d, o)->nr_table = nr;
	ret = d->prepare ? d->prepare(o, argc, argv) : 0;
	if (ret == 0)
		ret = opt__parse(argc, argv, sets, n,
				 d->operands ? OPT_OPERANDS_LAST
					     : OPT_NO_OPERANDS);
	if (ret == 0 && d->operands) {
		bench__common(d, o)->operands = argv + optind;
		bench__common(d, o)->nr_operands = argc - optind;
	}
	if (ret == 0 && d->check)
		ret = d->check(o);
	if (ret != 0 && d->release)
		d->release(o);
	return ret;
}

void bench__help(const struct bench_driver *d, FILE *out)
{
	struct opt rows[COMMON_MAX + 1], guest[COMMON_MAX + 1];
	char out_help[OUT_HELP_LEN];
	struct opt_set sets[4];
	void *o;
	size_t n;

	o = calloc(1, d->size);
	if (!o)
		return;
	if (d->init)
		d->init(o); /* the defaults the help shows */
	n = sets_of(d, o, rows, guest, out_help, sets);
	fprintf(out, "%s\n", d->usage);
	opt__help(out, sets, n);
	if (d->epilog)
		fputs(d->epilog, out);
	if (d->more_help)
		d->more_help(out);
	free(o);
}
