/* `coldstart snapshot`: create a snapshot of the probe guest at READY (or
 * a diff against an earlier one), restore it with a chosen memory
 * strategy, merge diffs, inspect a snapshot. This file: create, merge
 * and the actions' table (the help, restore and inspect:
 * cmd_snapshot_*.c). */
#include "cmd_snapshot_int.h"

#include "args.h"
#include "commands.h"
#include "run_opts.h"
#include "diff.h"
#include "err.h"
#include "mem_restore.h"
#include "snap_linux.h"
#include "snapshot.h"
#include "tmpdir.h"

#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Before writing `dir`: the temporaries that killed writers of it left
 * behind are removed, each said on stderr. A parent that cannot be read
 * is not reported here: writing the snapshot fails with its reason. */
static void clean_stale(const char *dir)
{
	tmpdir__clean_stale(dir, tmpdir__print_stale, NULL);
}

/* Runs the guest to READY and saves it. */
static int create(struct kvm_host *kvm, const struct run_cli *o,
		  const char *dir, unsigned int flags, struct timeline *tl,
		  struct snapshot_stats *st)
{
	struct vm_config vcfg = runner__vm_config(&o->cfg);
	struct probe_params p = o->cfg.probe;
	struct probe probe;
	struct vm *vm;
	int ret = vm__create(kvm, &vcfg, tl, &vm);

	if (ret < 0)
		return ret;
	p.pause_at_ready = true;
	p.stop_at_ready = false;
	ret = probe__setup(&probe, vm, &p);
	if (ret == 0)
		ret = vm__start(vm);
	if (ret == 0)
		ret = vm__wait_paused(vm, o->cfg.timeout_ns);
	if (ret == 0)
		ret = snapshot__save(vm, &probe, dir, flags, st);
	if (ret == 0)
		timeline__mark(tl, TL_SNAPSHOT_SAVED);
	vm__end(vm, VM_STOPPED, "snapshot taken");
	vm__destroy(vm);
	timeline__mark(tl, TL_TEARDOWN_DONE);
	return ret;
}

struct diff_opts {
	const char *dir, *base, *kvm_path;
	const struct guest_mem_ops *strategy;
	uint32_t phase; /* enum probe_phase */
	uint64_t timeout_ns;
	unsigned int flags;
	bool json;
};

static int parse_diff(int argc, char **argv, struct diff_opts *o)
{
	static const struct option opts[] = {
		{ "diff-from", required_argument, NULL, 'b' },
		{ "pause-at", required_argument, NULL, 'p' },
		{ "mem-restore", required_argument, NULL, 'm' },
		{ "timeout", required_argument, NULL, 't' },
		{ "force", no_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ "kvm", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const phases[] = { "request", "compute", NULL };
	unsigned int which;
	int c, ret = 0;

	*o = (struct diff_opts){ .dir = argv[1],
				 .strategy = mem_restore__strategy("mmap"),
				 .phase = PROBE_PHASE_COMPUTE,
				 .timeout_ns = 60ull * 1000000000ull };
	optind = 2;
	opterr = 0;
	while (ret == 0 && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'b') {
			o->base = optarg;
		} else if (c == 'p') {
			ret = args__choice("--pause-at", optarg, phases, &which);
			o->phase = which ? PROBE_PHASE_COMPUTE
					 : PROBE_PHASE_REQUEST;
		} else if (c == 'm') {
			ret = mem__choose(mem_restore__strategies(),
					  "--mem-restore", optarg,
					  &o->strategy);
		} else if (c == 't') {
			ret = args__duration("--timeout", optarg, &o->timeout_ns);
		} else if (c == 'f') {
			o->flags |= SNAPSHOT_REPLACE;
		} else if (c == 'j') {
			o->json = true;
		} else if (c == 'k') {
			o->kvm_path = optarg;
		} else {
			ret = err__set(EINVAL, "unknown or incomplete option "
				       "'%s' (with --diff-from the workload "
				       "comes from BASE)", argv[optind - 1]);
		}
	}
	if (ret == 0)
		ret = args__no_operands(argc, argv);
	return ret;
}

/* Runs the restored base until every vCPU reported o->phase, then saves
 * the pages it wrote since the restore. */
static int diff_run(struct vm *vm, struct probe *probe,
		    const struct diff_opts *o, const struct snapshot_id *id,
		    struct snapshot_stats *st, uint64_t *dirty_pages)
{
	size_t words = vm->mem.size / 4096 / 64;
	uint64_t *dirty = calloc(words, sizeof(*dirty));
	int ret = dirty ? vm__dirty_log_start(vm)
			: err__set(ENOMEM, "allocating the dirty bitmap");

	probe__pause_at(probe, o->phase);
	if (ret == 0)
		ret = vm__start(vm);
	if (ret == 0)
		ret = vm__wait_paused(vm, o->timeout_ns);
	if (ret == -ECANCELED || ret == -ETIMEDOUT)
		ret = err__set(EINVAL, "the guest %s before every vCPU reported "
			       "PHASE %s%s%s", ret == -ETIMEDOUT ? "ran out of "
			       "time" : "ended", o->phase == PROBE_PHASE_COMPUTE
			       ? "compute" : "request", vm->reason[0] ? ": " : "",
			       vm->reason);
	if (ret == 0)
		ret = vm__dirty_log_get(vm, dirty);
	if (ret == 0)
		ret = snapshot__save_diff(vm, probe, o->dir, o->flags, id,
					  dirty, st);
	*dirty_pages = 0;
	for (size_t i = 0; ret == 0 && i < words; i++)
		*dirty_pages += (uint64_t)__builtin_popcountll(dirty[i]);
	free(dirty);
	return ret;
}

static int create_diff(struct kvm_host *kvm, const struct diff_opts *o,
		       struct timeline *tl, struct snapshot_stats *st,
		       uint64_t *dirty_pages)
{
	struct snapshot base;
	struct snapshot_id id;
	struct probe probe;
	struct vm *vm;
	int ret = snapshot__open(&base, o->base);

	if (ret < 0)
		return ret;
	if (base.compressed)
		ret = err__set(EINVAL, "%s is compressed; a diff needs a raw "
			       "base", o->base);
	if (ret == 0)
		ret = snapdiff__identity(&base, &id);
	if (ret == 0)
		ret = snapshot__restore(kvm, &base, o->strategy, tl, &vm, &probe);
	if (ret == 0) {
		ret = diff_run(vm, &probe, o, &id, st, dirty_pages);
		if (ret == 0)
			timeline__mark(tl, TL_SNAPSHOT_SAVED);
		vm__end(vm, VM_STOPPED, "snapshot taken");
		vm__destroy(vm);
	}
	snapshot__close(&base);
	return ret;
}

static void print_saved(const char *dir, const struct snapshot_stats *st,
			const char *note)
{
	printf("snapshot %s: state %" PRIu64 " bytes, memory %.1f MiB "
	       "(%.1f MiB of data, %.1f MiB on disk%s), saved in %.3f ms "
	       "(%.2f GB/s of guest memory)\n", dir, st->state_bytes,
	       (double)st->mem_size / MiB, (double)st->mem_data_bytes / MiB,
	       (double)st->mem_file_bytes / MiB, note, (double)st->ns / 1e6,
	       st->ns ? (double)st->mem_size / (double)st->ns : 0.0);
}

static json_t *saved_json(const char *command, const char *dir,
			  const struct snapshot_stats *st)
{
	return json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:f}", "command",
			 command, "dir", dir, "state_bytes",
			 (json_int_t)st->state_bytes, "mem_bytes",
			 (json_int_t)st->mem_size, "mem_data_bytes",
			 (json_int_t)st->mem_data_bytes, "mem_file_bytes",
			 (json_int_t)st->mem_file_bytes, "save_ns",
			 (json_int_t)st->ns, "save_gb_per_s",
			 st->ns ? (double)st->mem_size / (double)st->ns : 0.0);
}

static void print_json(json_t *doc)
{
	json_dumpf(doc, stdout, JSON_INDENT(2));
	fputc('\n', stdout);
	json_decref(doc);
}

static int cmd_create_diff(int argc, char **argv)
{
	struct timeline tl = { .t[TL_PROCESS_START] = cli_process_start };
	struct snapshot_stats st;
	struct kvm_host kvm;
	struct diff_opts o;
	uint64_t dirty = 0;
	int ret;

	if (parse_diff(argc, argv, &o) < 0)
		return cli__parse_error("snapshot create", "snapshot");
	clean_stale(o.dir);
	ret = kvm__open(&kvm, o.kvm_path);
	if (ret < 0)
		return cli__error(cli__exit_for(ret), "%s", err__last());
	timeline__mark(&tl, TL_KVM_OPENED);
	ret = create_diff(&kvm, &o, &tl, &st, &dirty);
	kvm__close(&kvm);
	if (ret < 0)
		return cli__error(ret == -EEXIST ? CLI_USAGE
						 : cli__exit_for(ret),
				  "snapshot create: %s", err__last());
	if (o.json) {
		json_t *doc = saved_json("snapshot create", o.dir, &st);

		json_object_set_new(doc, "diff_from", json_string(o.base));
		json_object_set_new(doc, "pause_at", json_string(
			o.phase == PROBE_PHASE_COMPUTE ? "compute" : "request"));
		json_object_set_new(doc, "dirty_pages", json_integer(
			(json_int_t)dirty));
		print_json(doc);
		return CLI_OK;
	}
	timeline__print(stdout, &tl);
	print_saved(o.dir, &st, ", a diff");
	printf("diff of %s: %" PRIu64 " pages (%.1f MiB) written since it\n",
	       o.base, dirty, (double)dirty * 4096 / MiB);
	return CLI_OK;
}

static int cmd_create(int argc, char **argv)
{
	struct snapshot_stats st;
	struct timeline tl = { .t[TL_PROCESS_START] = cli_process_start };
	struct kvm_host kvm;
	struct run_cli o;
	unsigned int flags = 0;
	char *args[64];
	int n = 0, ret;

	if (argc > 1 && (!strcmp(argv[1], "--help") ||
			 !strcmp(argv[1], "-h"))) {
		cmd_snapshot__usage(stdout);
		return CLI_OK;
	}
	if (argc < 2 || argv[1][0] == '-')
		return usage_error("create: needs the snapshot's directory "
				   "DIR first");
	for (int i = 2; i < argc; i++)
		if (!strncmp(argv[i], "--diff-from", 11))
			return cmd_create_diff(argc, argv);
	args[n++] = "snapshot create";
	for (int i = 2; i < argc && n < 63; i++) {
		if (!strcmp(argv[i], "--force"))
			flags |= SNAPSHOT_REPLACE;
		else if (!strcmp(argv[i], "--compress"))
			flags |= SNAPSHOT_COMPRESS;
		else
			args[n++] = argv[i];
	}
	if (run_opts__parse(n, args, &o) < 0) {
		cli__error(CLI_USAGE, "snapshot create: %s", err__last());
		return cli__usage_error("snapshot");
	}
	if (o.help) {
		cmd_snapshot__usage(stdout);
		return CLI_OK;
	}
	clean_stale(argv[1]);
	if (o.kernel)
		return snap_linux__create(&o, argv[1], flags);
	ret = kvm__open(&kvm, o.kvm_path);
	if (ret < 0)
		return cli__error(cli__exit_for(ret), "%s", err__last());
	timeline__mark(&tl, TL_KVM_OPENED);
	ret = create(&kvm, &o, argv[1], flags, &tl, &st);
	kvm__close(&kvm);
	if (ret < 0)
		return cli__error(ret == -EEXIST ? CLI_USAGE
						 : cli__exit_for(ret),
				  "snapshot create: %s", err__last());
	if (o.json) {
		print_json(saved_json("snapshot create", argv[1], &st));
		return CLI_OK;
	}
	if (o.quiet)
		return CLI_OK;
	timeline__print(stdout, &tl);
	print_saved(argv[1], &st, flags & SNAPSHOT_COMPRESS ? ", zstd" : "");
	return CLI_OK;
}

static int cmd_merge(int argc, char **argv)
{
	char *pos[SNAPDIFF_MAX_CHAIN + 2];
	struct snapshot_stats st;
	unsigned int n = 0, flags = 0;
	bool json = false;
	int ret;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			cmd_snapshot__usage(stdout);
			return CLI_OK;
		} else if (!strcmp(argv[i], "--force")) {
			flags |= SNAPSHOT_REPLACE;
		} else if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (argv[i][0] == '-') {
			cli__error(CLI_USAGE, "snapshot merge: unknown option "
				   "'%s'", argv[i]);
			return cli__usage_error("snapshot");
		} else if (n == sizeof(pos) / sizeof(pos[0])) {
			cli__error(CLI_USAGE, "snapshot merge: at most %u diffs",
				   SNAPDIFF_MAX_CHAIN);
			return cli__usage_error("snapshot");
		} else {
			pos[n++] = argv[i];
		}
	}
	if (n < 3) {
		cli__error(CLI_USAGE, "snapshot merge needs BASE, at least one "
			   "DIFF and OUT");
		return cli__usage_error("snapshot");
	}
	clean_stale(pos[n - 1]);
	ret = snapshot__merge(pos[0], pos + 1, n - 2, pos[n - 1], flags, &st);
	if (ret < 0)
		return cli__error(ret == -EEXIST ? CLI_USAGE : CLI_FAIL,
				  "snapshot merge: %s", err__last());
	if (json) {
		json_t *doc = saved_json("snapshot merge", pos[n - 1], &st);
		json_t *diffs = json_array();

		for (unsigned int i = 1; i + 1 < n; i++)
			json_array_append_new(diffs, json_string(pos[i]));
		json_object_set_new(doc, "base", json_string(pos[0]));
		json_object_set_new(doc, "diffs", diffs);
		print_json(doc);
		return CLI_OK;
	}
	print_saved(pos[n - 1], &st, ", merged");
	return CLI_OK;
}

static bool is_action(const char *word)
{
	return !strcmp(word, "create") || !strcmp(word, "restore") ||
	       !strcmp(word, "merge") || !strcmp(word, "inspect");
}

int cmd_snapshot(int argc, char **argv)
{
	/* One help text covers every action. */
	if (argc >= 3 && is_action(argv[1]) &&
	    (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
		cmd_snapshot__usage(stdout);
		return CLI_OK;
	}
	if (argc >= 2 && !strcmp(argv[1], "create"))
		return cmd_create(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "restore"))
		return cmd_snapshot__restore(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "merge"))
		return cmd_merge(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "inspect"))
		return cmd_snapshot__inspect(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		cmd_snapshot__usage(stdout);
		return CLI_OK;
	}
	if (argc >= 2) {
		cli__error(CLI_USAGE, "snapshot: unknown action '%s' (create, "
			   "restore, merge or inspect)", argv[1]);
		return cli__usage_error("snapshot");
	}
	return usage_error("needs an action: create, restore, merge or "
			   "inspect");
}
