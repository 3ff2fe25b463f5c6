/* `coldstart snapshot restore`: restores DIR, runs it to DONE, checks it. */
#include "cmd_snapshot_int.h"

#include "args.h"
#include "cli.h"
#include "err.h"
#include "jail.h"
#include "mem_restore.h"
#include "output.h"
#include "snap_linux.h"
#include "snapshot.h"

#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

/* Before KVM is opened: a mistyped DIR says so, not "no KVM". */
static int check_dir(const char *dir)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, SNAPSHOT_STATE_FILE);
	if (access(path, R_OK) == 0)
		return CLI_OK;
	return cli__error(CLI_USAGE, "snapshot restore: no such snapshot "
			  "'%s' (%s: %s)", dir, path, strerror(errno));
}

struct restore_opts {
	const char *dir, *kvm_path;
	const struct guest_mem_ops *strategy;
	uint64_t timeout_ns;
	bool json;
	enum seccomp_mode seccomp;
	struct jail_opts jail;
};

static int parse_restore(int argc, char **argv, struct restore_opts *o)
{
	static const struct option opts[] = {
		{ "mem-restore", required_argument, NULL, 'm' },
		{ "timeout", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "kvm", required_argument, NULL, 'k' },
		{ "seccomp", required_argument, NULL, 's' },
		JAIL_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	int c, ret = 0;

	*o = (struct restore_opts){ .dir = argv[1],
				    .strategy = mem_restore__strategy("mmap"),
				    .timeout_ns = 60ull * 1000000000ull,
				    .seccomp = SECCOMP_KILL };
	jail__init(&o->jail);
	optind = 2;
	opterr = 0;
	while (ret == 0 && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'm') {
			ret = mem__choose(mem_restore__strategies(),
					  "--mem-restore", optarg,
					  &o->strategy);
		} else if (c == 't') {
			ret = args__duration("--timeout", optarg, &o->timeout_ns);
		} else if (c == 'j') {
			o->json = true;
		} else if (c == 'k') {
			o->kvm_path = optarg;
		} else if (c == 's') {
			ret = seccomp__parse_mode(optarg, &o->seccomp);
		} else {
			ret = jail__parse_option(&o->jail, c, optarg);
			if (ret == 1)
				ret = args__bad_option(argv);
		}
	}
	if (ret == 0)
		ret = args__no_operands(argc, argv);
	if (ret == 0)
		ret = jail__check(&o->jail);
	return ret;
}

struct restore_result {
	struct timeline tl;
	enum vm_outcome outcome;
	char reason[512];
	struct probe_state probe;
	struct mem_stats mem;
	uint64_t expected;
	unsigned int nr_vcpus;
};

static int restore_run(struct kvm_host *kvm, const struct restore_opts *o,
		       struct restore_result *res)
{
	struct snapshot snap;
	struct probe probe;
	struct vm *vm = NULL;
	int ret;

	timeline__mark(&res->tl, TL_RESTORE_START);
	ret = snapshot__open(&snap, o->dir);
	if (ret < 0)
		return ret;
	timeline__mark(&res->tl, TL_STATE_LOADED);
	ret = snapshot__restore(kvm, &snap, o->strategy, &res->tl, &vm, &probe);
	if (ret == 0)
		ret = vm__start(vm);
	if (ret == 0) {
		vm__wait(vm, o->timeout_ns);
		res->outcome = vm->outcome;
		snprintf(res->reason, sizeof(res->reason), "%s", vm->reason);
		probe__save_state(&probe, &res->probe);
		mem__settle(&vm->mem);
		res->mem = vm->mem.stats;
		res->nr_vcpus = vm->nr_vcpus;
	}
	vm__destroy(vm);
	timeline__mark(&res->tl, TL_TEARDOWN_DONE);
	if (ret == 0)
		res->expected = probe__expected_checksum(&snap.params,
							 snap.cfg.nr_vcpus);
	snapshot__close(&snap);
	return ret;
}

static bool restore_ok(const struct restore_result *r)
{
	return r->outcome == VM_COMPLETED && r->probe.done == r->nr_vcpus &&
	       r->probe.checksum == r->expected;
}

static double since(const struct timeline *tl, enum tl_event from,
		    enum tl_event to)
{
	double ns = timeline__span_ns(tl, from, to);

	return ns < 0 ? -1 : ns / 1e6;
}

/* "X.XXX ms" from restore start to `to`, or "never" when it did not
 * happen; formatted into buf. */
static const char *span(const struct timeline *tl, enum tl_event to,
			char buf[32])
{
	double ms = since(tl, TL_RESTORE_START, to);

	if (ms < 0)
		return "never";
	snprintf(buf, 32, "%.3f ms", ms);
	return buf;
}

static void print_restore(const struct restore_opts *o,
			  const struct restore_result *r)
{
	char run[32], done[32];

	timeline__print(stdout, &r->tl);
	printf("strategy %s: memory ready in %.3f ms, %.1f MiB read, %" PRIu64
	       " faults served in %.3f ms\n", o->strategy->name,
	       (double)r->mem.setup_ns / 1e6, (double)r->mem.bytes_read / MiB,
	       r->mem.faults, (double)r->mem.handler_ns / 1e6);
	printf("restore start -> first KVM_RUN %s, -> DONE %s\n",
	       span(&r->tl, TL_FIRST_RUN, run), span(&r->tl, TL_GUEST_DONE, done));
	printf("outcome: %s%s%s\n", vm__outcome_name(r->outcome),
	       r->reason[0] ? ": " : "", r->reason);
	if (r->probe.done == r->nr_vcpus)
		printf("checksum: 0x%016" PRIx64 " (%s 0x%016" PRIx64 ")\n",
		       r->probe.checksum,
		       r->probe.checksum == r->expected
			       ? "matches the prediction"
			       : "WRONG, the host predicted",
		       r->expected);
}

static void print_restore_json(const struct restore_opts *o,
			       const struct restore_result *r)
{
	json_t *doc = json_pack(
		"{s:s, s:s, s:s, s:o, s:s, s:s, s:{s:I, s:I, s:I, s:I}, s:b, "
		"s:I}",
			"command", "snapshot restore", "dir", o->dir,
			"mem_restore", o->strategy->name, "timeline_ns",
			output__timeline_json(&r->tl),
			"outcome", vm__outcome_name(r->outcome), "reason",
			r->reason, "memory", "setup_ns",
			(json_int_t)r->mem.setup_ns, "bytes_read",
			(json_int_t)r->mem.bytes_read, "faults",
			(json_int_t)r->mem.faults, "handler_ns",
			(json_int_t)r->mem.handler_ns, "success",
			restore_ok(r), "pages_touched",
			(json_int_t)r->probe.pages);
	json_dumpf(doc, stdout, JSON_INDENT(2));
	fputc('\n', stdout);
	json_decref(doc);
}

int cmd_snapshot__restore(int argc, char **argv)
{
	struct restore_result res = { .tl.t[TL_PROCESS_START] = cli_process_start };
	struct restore_opts o;
	struct kvm_host kvm;
	int ret, code;

	if (argc > 1 && (!strcmp(argv[1], "--help") ||
			 !strcmp(argv[1], "-h"))) {
		cmd_snapshot__usage(stdout);
		return CLI_OK;
	}
	if (argc < 2 || argv[1][0] == '-')
		return usage_error("restore: needs the snapshot's directory "
				   "DIR first");
	/* before the options: which options apply depends on the guest
	 * the snapshot holds (a Linux one takes --console) */
	if (check_dir(argv[1]) != CLI_OK)
		return CLI_USAGE;
	if (snap_linux__is_linux(argv[1]))
		return snap_linux__restore(argc, argv);
	if (parse_restore(argc, argv, &o) < 0)
		return cli__parse_error("snapshot restore", "snapshot");
	ret = snapshot__check(o.dir);
	if (ret < 0)
		return load_error(ret);
	/* jailed, the VMM is a child that enters the jail once set up */
	ret = jail__start(&o.jail, &code);
	if (ret < 0)
		return cli__error(CLI_FAIL, "snapshot restore: %s", err__last());
	if (ret == 1)
		return code;
	ret = run_opts__seccomp_start("snapshot restore", o.seccomp, true);
	if (ret)
		return ret;
	ret = kvm__open(&kvm, o.kvm_path);
	if (ret < 0)
		return cli__error(cli__exit_for(ret), "%s", err__last());
	timeline__mark(&res.tl, TL_KVM_OPENED);
	ret = restore_run(&kvm, &o, &res);
	kvm__close(&kvm);
	if (ret < 0)
		return load_error(ret);
	if (o.json)
		print_restore_json(&o, &res);
	else
		print_restore(&o, &res);
	run_opts__seccomp_report();
	if (restore_ok(&res))
		return CLI_OK;
	fprintf(stderr, "coldstart: restored guest failed: %s\n",
		res.outcome == VM_COMPLETED ? "the checksum is wrong"
					    : res.reason);
	return CLI_FAIL;
}
