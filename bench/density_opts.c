/* `bench density`'s options: the probe guest's workload or the user's
 * own Linux guest, checked before any VM starts. */
#include "density_int.h"

#include "args.h"
#include "cli.h"
#include "density.h"
#include "err.h"
#include "probe.h"
#include "run_linux.h"

#include <inttypes.h>
#include <string.h>

#define DEFAULT_SETTLE_NS 1000000000ull

/* The probe guest's options and the Linux guest's do not mix. */
static int check_probe(const struct density_opts *o)
{
	if (o->linux_opt)
		return err__set(EINVAL, "--%s needs --kernel", o->linux_opt);
	if (o->init % 4096 || o->ws % 4096)
		return err__set(EINVAL, "--init and --ws must be multiples of "
				"4 KiB");
	return 0;
}

static int check_linux(const struct density_opts *o)
{
	if (o->probe_opt)
		return err__set(EINVAL, "--%s is the probe guest's workload; a "
				"Linux guest touches what its kernel and init "
				"do, so it does not apply with --kernel",
				o->probe_opt);
	if (o->mem == 0 || o->mem % MEM_ALIGN)
		return err__set(EINVAL, "--mem: %" PRIu64 " bytes is not a "
				"multiple of 2 MiB", o->mem);
	if (o->settle_ns == 0)
		return err__set(EINVAL, "--settle must be above 0");
	if (o->timeout_given && o->timeout_ns == 0)
		return err__set(EINVAL, "--timeout must be above 0");
	if (o->exec && !o->rootfs)
		return err__set(EINVAL, "--exec needs --rootfs (the guest "
				"agent runs from the root disk)");
	if (o->rootfs && o->settle_given)
		return err__set(EINVAL, "--settle does not apply with --rootfs: "
				"its VMs are held once their agent answers");
	return 0;
}

/* The guest's common options: their values, and the first one given
 * that only a Linux guest takes (in the order of the help). */
static int guest_values(struct density_opts *o)
{
	const struct bench_common *c = &o->c;
	const char *const given[][2] = {
		{ c->initrd, "initrd" }, { c->cmdline, "cmdline" },
		{ c->mem, "mem" }, { c->vcpus, "vcpus" },
		{ c->allow_pvm ? "" : NULL, "allow-pvm" },
	};

	for (size_t i = 0; i < sizeof(given) / sizeof(given[0]); i++)
		if (given[i][0] && !o->linux_opt)
			o->linux_opt = given[i][1];
	if (c->mem && args__size("--mem", c->mem, &o->mem) < 0)
		return -EINVAL;
	if (c->vcpus && args__u64("--vcpus", c->vcpus, 1, PROBE_MAX_VCPUS,
				  &o->vcpus) < 0)
		return -EINVAL;
	return 0;
}

int density__check(void *opts)
{
	struct density_opts *o = opts;

	if (guest_values(o) < 0)
		return -EINVAL;
	if (!o->timeout_given)
		o->timeout_ns = o->rootfs ? DENSITY_ROOTFS_BOOT_TIMEOUT_NS
					  : DENSITY_BOOT_TIMEOUT_NS;
	return o->c.kernel ? check_linux(o) : check_probe(o);
}

void density__init(void *opts)
{
	struct density_opts *o = opts;

	*o = (struct density_opts){
		.c = { .count = 16, .warmup = 2, .count_max = DENSITY_MAX_VMS,
		       .warmup_max = 1000 },
		.init = 4ull << 20, .ws = 4ull << 20, .fresh = true,
		.clone = true, .mem = LINUX_DEFAULT_MEM, .vcpus = 1,
		.settle_ns = DEFAULT_SETTLE_NS };
}

static int set_budget(void *opts, const char *arg)
{
	return args__size("--budget", arg, &((struct density_opts *)opts)->budget);
}

static int set_mode(void *opts, const char *arg)
{
	struct density_opts *o = opts;

	return args__both("--mode", arg, "fresh", "clone", &o->fresh,
			  &o->clone);
}

/* The first option of each guest's own, for the error when they mix. */
static void note(const char **first, const char *name)
{
	if (!*first)
		*first = name;
}

static int set_init(void *opts, const char *arg)
{
	struct density_opts *o = opts;

	note(&o->probe_opt, "init");
	return args__size("--init", arg, &o->init);
}

static int set_ws(void *opts, const char *arg)
{
	struct density_opts *o = opts;

	note(&o->probe_opt, "ws");
	return args__size("--ws", arg, &o->ws);
}

static int set_settle(void *opts, const char *arg)
{
	struct density_opts *o = opts;

	note(&o->linux_opt, "settle");
	o->settle_given = true;
	return args__duration("--settle", arg, &o->settle_ns);
}

static int set_timeout(void *opts, const char *arg)
{
	struct density_opts *o = opts;

	note(&o->linux_opt, "timeout");
	o->timeout_given = true;
	return args__duration("--timeout", arg, &o->timeout_ns);
}

static int set_rootfs(void *opts, const char *arg)
{
	struct density_opts *o = opts;

	note(&o->linux_opt, "rootfs");
	if (!*arg)
		return err__set(EINVAL, "--rootfs needs an image");
	o->rootfs = arg;
	return 0;
}

static int set_exec(void *opts, const char *arg)
{
	struct density_opts *o = opts;

	note(&o->linux_opt, "exec");
	if (!*arg)
		return err__set(EINVAL, "--exec needs a command");
	if (strlen(arg) > DENSITY_MAX_EXEC)
		return err__set(EINVAL, "--exec: the command is longer than "
				"%d bytes", DENSITY_MAX_EXEC);
	o->exec = arg;
	return 0;
}

const struct opt density__options[] = {
	{ "budget", 0, "SIZE", false, "start a VM only while the predicted "
	  "PSS plus kernel memory\nwith it stays within SIZE (the first VM "
	  "always starts)", set_budget, NULL },
	{ "mode", 0, "MODE", false, "fresh, clone or both (default both)",
	  set_mode, NULL },
	{ "settle", 0, "DUR", false, "with --kernel: longest a clone runs "
	  "before it is held\n(default 1s)", set_settle, NULL },
	{ "timeout", 0, "DUR", false, "with --kernel: longest a guest may "
	  "take to signal boot\ncomplete, each fresh VM and the clones' "
	  "snapshot\n(default 60s; with --rootfs 180s)", set_timeout, NULL },
	{ "rootfs", 0, "PATH", false, "with --kernel: every VM's root disk, "
	  "one ext4 image\nshared read-only, each VM writing to an unnamed "
	  "overlay\nof its own; VMs are held once their agent answers",
	  set_rootfs, NULL },
	{ "exec", 0, "CMD", false, "with --rootfs: run CMD (sh -c) in each "
	  "VM through its\nagent before it is held (it must exit 0)",
	  set_exec, NULL },
	OPT_HEADING("The probe guest (default), held after its workload ran "
		    "to DONE:"),
	{ "init", 0, "SIZE", false, "guest memory touched before READY "
	  "(default 4M)", set_init, NULL },
	{ "ws", 0, "SIZE", false, "working set read after READY (default 4M)",
	  set_ws, NULL },
	OPT_END,
};

void density__linux_args(const struct density_opts *o, char **argv, int *n,
		       char *mem, char *vcpus, size_t size, char *rootfs,
		       size_t rootfs_size)
{
	if (o->rootfs)
		snprintf(rootfs, rootfs_size, "%s,overlay", o->rootfs);
	snprintf(mem, size, "--mem=%" PRIu64, o->mem);
	snprintf(vcpus, size, "--vcpus=%" PRIu64, o->vcpus);
	argv[(*n)++] = "--kernel";
	argv[(*n)++] = (char *)o->c.kernel;
	if (o->c.initrd) {
		argv[(*n)++] = "--initrd";
		argv[(*n)++] = (char *)o->c.initrd;
	}
	if (o->c.cmdline) {
		argv[(*n)++] = "--cmdline";
		argv[(*n)++] = (char *)o->c.cmdline;
	}
	argv[(*n)++] = mem;
	argv[(*n)++] = vcpus;
	if (o->c.allow_pvm)
		argv[(*n)++] = "--allow-pvm";
	if (o->rootfs) { /* the mode is spelled out: the path may hold commas */
		argv[(*n)++] = "--rootfs";
		argv[(*n)++] = (char *)rootfs;
	}
}

/* A rootfs guest's: the image (its size is density_disk.c's), the
 * command, and where its VMs are held instead. */
static void rootfs_config(const struct density_opts *o, json_t *cfg)
{
	json_object_set_new(cfg, "rootfs", json_string(o->rootfs));
	json_object_set_new(cfg, "exec", o->exec ? json_string(o->exec)
						 : json_null());
	json_object_del(cfg, "settle_ns");
	json_object_set_new(cfg, "fresh_held_at", json_string(
		"agent (booted until its agent answered and --exec ran, then "
		"paused)"));
	json_object_set_new(cfg, "clone_held_at", json_string(
		"agent (restored from a snapshot taken when its agent "
		"listened, resumed until the agent answered and --exec ran, "
		"then paused)"));
}

json_t *density__config_json(const struct density_opts *o)
{
	json_t *cfg = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I}",
				"guest", o->c.kernel ? "linux" : "probe",
				"clone_mem_restore", "mmap", "mode",
				o->fresh && o->clone ? "both" :
				o->fresh ? "fresh" : "clone", "budget_bytes",
				(json_int_t)o->budget, "count",
				(json_int_t)o->c.count, "warmup",
				(json_int_t)o->c.warmup);
	json_t *g;

	if (!o->c.kernel)
		g = json_pack("{s:I, s:I, s:s, s:s}", "init_bytes",
			      (json_int_t)o->init, "ws_bytes",
			      (json_int_t)o->ws, "fresh_held_at", "done",
			      "clone_held_at", "done");
	else /* result__new names the kernel and initrd by sha256 */
		g = json_pack("{s:s, s:s?, s:s, s:I, s:I, s:I, s:I, s:s, "
			      "s:s}",
			      "kernel", o->c.kernel, "initrd", o->c.initrd,
			      "cmdline", o->c.cmdline ? o->c.cmdline
						    : LINUX_DEFAULT_CMDLINE,
			      "mem_bytes", (json_int_t)o->mem, "vcpus",
			      (json_int_t)o->vcpus, "boot_timeout_ns",
			      (json_int_t)o->timeout_ns, "settle_ns",
			      (json_int_t)o->settle_ns, "fresh_held_at",
			      "boot (paused at the boot-complete signal)",
			      "clone_held_at", "done or settle (resumed until "
			      "the done signal or settle_ns, then paused)");
	json_object_update(cfg, g);
	json_decref(g);
	if (o->rootfs)
		rootfs_config(o, cfg);
	return cfg;
}

int density__check_guest(const struct density_opts *o)
{
	if (!o->c.kernel)
		return CLI_OK;
	return run_linux__check_guest("bench density", o->c.kernel, o->c.initrd,
				      o->c.cmdline, o->mem,
				      (unsigned int)o->vcpus, o->c.allow_pvm);
}
