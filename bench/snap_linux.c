/* Linux guests in snapshots: create at boot complete, restore to exit. */
#include "snap_linux.h"

#include "args.h"
#include "cli.h"
#include "err.h"
#include "guest/agent_abi.h"
#include "diff.h"
#include "guest_devices.h"
#include "jail.h"
#include "kvm.h"
#include "linux_x86.h"
#include "mem_restore.h"
#include "output.h"
#include "regfile.h"
#include "restore.h"
#include "run_exec.h"
#include "run_linux.h"
#include "snapshot.h"
#include "tmpdir.h"
#include "units.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define SECOND 1000000000ull

/* Boots the planned guest to boot complete (paused) and saves it, with
 * its drives' written blocks and its vsock device. */
static int boot_and_save(struct kvm_host *kvm, const struct run_cli *o,
			 const struct linux_boot *b,
			 const struct snap_guest_rec *rec, FILE *console,
			 const char *dir, unsigned int flags,
			 struct timeline *tl, struct snapshot_stats *st)
{
	const char *paths[LINUX_MAX_DRIVES];
	struct guestdev_save g;
	struct linux_machine m;
	struct vm *vm;
	int ret = run_linux__boot_paused(kvm, o, b, console,
					 "the snapshot is taken there", tl,
					 &vm, &m);

	if (ret < 0)
		return ret;
	for (unsigned int i = 0; i < o->nr_drives; i++)
		paths[i] = o->drives[i].path;
	/* a root disk's guest pauses once its agent listens */
	ret = guestdev__describe(&g, &m, paths, o->has_rootfs);
	if (ret == 0)
		ret = snapshot__save_guest(vm, rec,
					   m.nr_blk || m.vsock ? &g.virtio
							       : NULL,
					   dir, flags, st);
	if (ret == 0)
		timeline__mark(tl, TL_SNAPSHOT_SAVED);
	vm__end(vm, VM_STOPPED, "snapshot taken");
	run_linux__teardown(vm, &m, tl);
	return ret;
}

static void print_created(const char *dir, const struct snap_guest_rec *g,
			  const struct timeline *tl,
			  const struct snapshot_stats *st, bool json)
{
	if (json) {
		json_t *doc = json_pack(
			"{s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:I, s:I, s:I, "
			"s:I, s:I, s:I}",
			"command", "snapshot create", "dir", dir, "guest",
			"linux", "kernel", g->kernel, "initrd", g->initrd,
			"cmdline", g->cmdline, "timeline_ns",
			output__timeline_json(tl), "state_bytes",
			(json_int_t)st->state_bytes, "mem_bytes",
			(json_int_t)st->mem_size, "mem_data_bytes",
			(json_int_t)st->mem_data_bytes, "mem_file_bytes",
			(json_int_t)st->mem_file_bytes, "disk_bytes",
			(json_int_t)st->disk_bytes, "save_ns",
			(json_int_t)st->ns);

		json_dumpf(doc, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
		json_decref(doc);
		return;
	}
	timeline__print(stdout, tl);
	printf("snapshot %s: Linux guest paused at boot complete; state %" PRIu64
	       " bytes, memory %.1f MiB (%.1f MiB of data), ", dir,
	       st->state_bytes, (double)st->mem_size / MiB,
	       (double)st->mem_data_bytes / MiB);
	if (st->disk_bytes)
		printf("disks' written blocks %.1f MiB, ",
		       (double)st->disk_bytes / MiB);
	printf("saved in %.3f ms\n", (double)st->ns / 1e6);
}

/* The command line the snapshot's guest boots with. Inside the emulated
 * host, QEMU's TCG checks a restored guest's user-space port I/O against
 * the TSS I/O bitmap as if TR were "available" (KVM restores it "busy",
 * as hardware keeps it), so the restored init's port write of its done
 * signal faults and the guest panics; coldstart-init signals by MMIO
 * with coldstart.done=mmio, which is added there to the default command
 * line (a --cmdline of the user's is taken as it is). */
static const char *create_cmdline(const struct run_cli *o)
{
	struct kvm_where w;

	if (o->cmdline)
		return o->cmdline;
	kvm__where(&w, o->kvm_path);
	if (!w.emulated[0])
		return LINUX_DEFAULT_CMDLINE;
	if (!o->quiet && !o->json)
		fprintf(stderr, "coldstart: snapshot create: in the emulated "
			"host a restored guest's port I/O from user space "
			"faults; the command line gets coldstart.done=mmio "
			"(coldstart-init then signals done by MMIO)\n");
	return LINUX_DEFAULT_CMDLINE " coldstart.done=mmio";
}

int snap_linux__create(const struct run_cli *given, const char *dir,
		       unsigned int flags)
{
	static struct run_cli o; /* with the agent's vsock device */
	struct timeline tl = { .t[TL_PROCESS_START] = cli_process_start };
	struct snap_guest_rec rec;
	struct snapshot_stats st;
	struct linux_kernel k;
	struct linux_boot b = { .initrd_fd = -1 };
	struct kvm_host kvm;
	FILE *console = NULL;
	char *cmdline = NULL;
	int code = CLI_OK, ret;

	o = *given;
	ret = linux__open_kernel(&k, o.kernel);
	if (ret == 0 && o.exec)
		ret = err__set(EINVAL, "--exec: a snapshot is taken when the "
			       "guest's agent is ready, before any command; "
			       "give --exec to `snapshot restore`");
	/* a root disk's guest is reached through its agent: a vsock device,
	 * without a socket file unless --vsock names one */
	if (ret == 0 && o.has_rootfs && !o.has_vsock) {
		o.has_vsock = true;
		o.vsock_cid = 3;
	}
	if (ret == 0)
		ret = run_linux__plan(&b, &k, &o, create_cmdline(&o), &cmdline);
	if (ret == 0)
		ret = snapguest__describe(&rec, SNAP_GUEST_LINUX, o.kernel,
					  o.initrd, cmdline);
	if (ret == 0)
		ret = run_linux__open_console(o.console, o.json, o.quiet,
					      &console);
	if (ret < 0)
		code = cli__error(CLI_FAIL, "snapshot create: %s", err__last());
	else if (kvm__device_flavour() == KVM_FLAVOUR_PVM && !o.allow_pvm)
		code = cli__error(CLI_SKIP, "snapshot create --kernel: %s",
				  run_linux__pvm_refusal());
	else if ((ret = kvm__open(&kvm, o.kvm_path)) < 0)
		code = cli__error(cli__exit_for(ret), "%s", err__last());
	if (code == CLI_OK) {
		timeline__mark(&tl, TL_KVM_OPENED);
		ret = boot_and_save(&kvm, &o, &b, &rec, console, dir, flags,
				    &tl, &st);
		kvm__close(&kvm);
		if (ret < 0)
			code = cli__error(ret == -EEXIST ? CLI_USAGE
							 : cli__exit_for(ret),
					  "snapshot create: %s", err__last());
		else if (!o.quiet)
			print_created(dir, &rec, &tl, &st, o.json);
	}
	run_linux__close_console(console);
	linux__plan_free(&b);
	free(cmdline);
	linux__close_kernel(&k);
	return code;
}

/* Only the state file's structure and vm.config are read, so a Linux
 * snapshot with a damaged section still takes the Linux path, which
 * then names the damage. */
bool snap_linux__is_linux(const char *dir)
{
	struct snap_vm_config cfg = { 0 };
	struct snap_reader r;
	char path[PATH_MAX];
	uint8_t *buf = NULL;
	const void *p;
	size_t len = 0;
	bool linux_guest = false;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/%s", dir, SNAPSHOT_STATE_FILE) >=
	    (int)sizeof(path))
		return false;
	f = regfile__fopen(path);
	if (f && fseek(f, 0, SEEK_END) == 0 && ftell(f) > 0 &&
	    ftell(f) <= (64l << 20)) {
		len = (size_t)ftell(f);
		buf = malloc(len);
		rewind(f);
		if (buf && fread(buf, 1, len, f) != len)
			len = 0;
	}
	if (f)
		fclose(f);
	if (buf && len && snap__parse(&r, buf, len) == 0 &&
	    (p = snap__find(&r, SNAP_VM_CONFIG, 0, &len)) &&
	    len >= offsetof(struct snap_vm_config, guest) + sizeof(cfg.guest)) {
		memcpy(&cfg, p, len < sizeof(cfg) ? len : sizeof(cfg));
		linux_guest = cfg.guest == SNAP_GUEST_LINUX;
	}
	free(buf);
	return linux_guest;
}

struct restore_opts {
	const char *dir, *kvm_path, *console;
	const struct guest_mem_ops *strategy;
	uint64_t timeout_ns;
	bool json, allow_pvm;
	/* a guest with an agent: --exec CMD through it, on --agent-port,
	 * the vsock device on --vsock PATH (else a private socket) */
	const char *exec, *vsock;
	uint64_t agent_port;
	/* --save NEW: after the command, pause and save the guest there,
	 * a diff against DIR with --diff (SNAPSHOT_* flags in save_flags) */
	const char *save;
	bool save_diff;
	unsigned int save_flags;
	enum seccomp_mode seccomp;
	struct jail_opts jail;
	unsigned int sample_flags; /* restore__finish flags, measured runs */
};

static int parse(int argc, char **argv, struct restore_opts *o)
{
	static const struct option opts[] = {
		{ "mem-restore", required_argument, NULL, 'm' },
		{ "timeout", required_argument, NULL, 't' },
		{ "console", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "kvm", required_argument, NULL, 'k' },
		{ "allow-pvm", no_argument, NULL, 'p' },
		{ "seccomp", required_argument, NULL, 's' },
		{ "exec", required_argument, NULL, 'e' },
		{ "vsock", required_argument, NULL, 'v' },
		{ "agent-port", required_argument, NULL, 'a' },
		{ "save", required_argument, NULL, 'S' },
		{ "diff", no_argument, NULL, 'D' },
		{ "force", no_argument, NULL, 'F' },
		JAIL_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	int c, ret = 0;

	*o = (struct restore_opts){ .dir = argv[1],
				    .strategy = mem_restore__strategy("mmap"),
				    .timeout_ns = 60 * SECOND,
				    .seccomp = SECCOMP_KILL };
	jail__init(&o->jail);
	optind = 2;
	opterr = 0;
	while (ret == 0 && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'm')
			ret = mem__choose(mem_restore__strategies(),
					  "--mem-restore", optarg,
					  &o->strategy);
		else if (c == 't')
			ret = args__duration("--timeout", optarg, &o->timeout_ns);
		else if (c == 'c')
			o->console = optarg;
		else if (c == 'j')
			o->json = true;
		else if (c == 'k')
			o->kvm_path = optarg;
		else if (c == 'p')
			o->allow_pvm = true;
		else if (c == 's')
			ret = seccomp__parse_mode(optarg, &o->seccomp);
		else if (c == 'e')
			o->exec = optarg;
		else if (c == 'v')
			o->vsock = optarg;
		else if (c == 'a')
			ret = args__u64("--agent-port", optarg, 1, UINT32_MAX - 1,
					&o->agent_port);
		else if (c == 'S')
			o->save = optarg;
		else if (c == 'D')
			o->save_diff = true;
		else if (c == 'F')
			o->save_flags |= SNAPSHOT_REPLACE;
		else if ((ret = jail__parse_option(&o->jail, c, optarg)) == 1)
			ret = args__bad_option(argv);
	}
	if (ret == 0)
		ret = args__no_operands(argc, argv);
	if (ret == 0)
		ret = jail__check(&o->jail);
	if (ret == 0 && o->save && !o->exec)
		ret = err__set(EINVAL, "--save needs --exec: the guest is "
			       "saved after its command");
	if (ret == 0 && (o->save_diff || o->save_flags) && !o->save)
		ret = err__set(EINVAL, "--diff and --force go with --save");
	if (ret == 0 && o->save && o->save[0] == '\0')
		ret = err__set(EINVAL, "--save: empty directory name");
	if (ret == 0 && o->save && o->jail.dir)
		ret = err__set(EINVAL, "--save and --jail exclude each other: "
			       "the new snapshot is written after the guest "
			       "ran, when the jailed VMM no longer sees the "
			       "host's directories");
	return ret;
}

struct restored {
	struct run_exec x; /* the agent's socket and --exec's command */
	struct snapshot_stats saved; /* --save's */
	uint64_t dirty_pages;
	struct timeline tl;
	enum vm_outcome outcome;
	char reason[512];
	struct boottimer_regs timer;
	struct mem_stats mem;
	uint64_t console_bytes;
};

/* --save: the guest paused after its command and saved, whole or as a
 * diff against the snapshot it was restored from (pages and disk blocks
 * written since the restore). */
static int save_turn(struct vm *vm, struct linux_machine *m,
		     const struct snapshot *snap, const struct restore_opts *o,
		     struct restored *r)
{
	uint64_t words = (vm->mem.size / 4096 + 63) / 64;
	uint64_t *dirty = NULL;
	struct snapshot_id id;
	struct guestdev_save g;
	int ret = vm__pause(vm, 10 * SECOND);

	if (ret < 0)
		return ret;
	timeline__mark(&r->tl, TL_PAUSED);
	guestdev__describe_restored(&g, m, &snap->virtio);
	if (!o->save_diff)
		ret = snapshot__save_guest(vm, &snap->guest, &g.virtio,
					   o->save, o->save_flags, &r->saved);
	else if (!(dirty = calloc(words, sizeof(*dirty))))
		ret = err__set(ENOMEM, "the dirty-page bitmap");
	else if ((ret = vm__dirty_log_get(vm, dirty)) == 0 &&
		 (ret = snapdiff__identity(snap, &id)) == 0)
		ret = snapshot__save_guest_diff(vm, &snap->guest, &g.virtio,
						o->save, o->save_flags, &id,
						dirty, &r->saved);
	for (uint64_t i = 0; dirty && i < words; i++)
		r->dirty_pages += (uint64_t)__builtin_popcountll(dirty[i]);
	free(dirty);
	if (ret == 0)
		timeline__mark(&r->tl, TL_SNAPSHOT_SAVED);
	return ret;
}

/* --exec needs the guest's agent, --vsock its vsock device; a guest with
 * an agent waits for a command (with neither, it would wait until
 * --timeout). -EINVAL naming the mismatch. */
static int check_agent(const struct snapshot *snap,
		       const struct restore_opts *o)
{
	bool agent = guestdev__has_agent(snap);

	if (agent && !o->exec && !o->vsock)
		return err__set(EINVAL, "%s holds a guest that runs commands "
				"through its agent: give --exec CMD, or "
				"--vsock PATH to serve your own client until "
				"--timeout", o->dir);
	if (!snap->virtio.vsock && (o->exec || o->vsock))
		return err__set(EINVAL, "--exec and --vsock: %s holds a guest "
				"without a vsock device (snapshot a --rootfs "
				"guest, or one given --vsock)", o->dir);
	if (!agent && o->exec)
		return err__set(EINVAL, "--exec: %s holds a guest with a vsock "
				"device but no agent (snapshot create --rootfs "
				"records one): nothing would run the command; "
				"--vsock PATH serves your own client", o->dir);
	return 0;
}

/* Restores and runs the guest to its exit, or with an agent, runs
 * --exec's command through it (or serves --vsock's clients until the
 * timeout); with `s` (not NULL), also measures it as restore__once does
 * (restore.h). */
static int restore_run(struct kvm_host *kvm, const struct restore_opts *o,
		       FILE *console, struct restored *r,
		       struct restore_sample *s)
{
	struct linux_machine m;
	/* the guest runs on past its done signal, to its exit */
	struct linux_restore lr = { .m = &m, .console = console,
				   .at_done = BOOTTIMER_CONTINUE,
				   .track_writes = o->save && o->save_diff };
	struct guestdev_restore devs;
	struct snapshot snap;
	struct vm *vm = NULL;
	bool started;
	int ret;

	if (s)
		restore__work_begin(&s->host);
	timeline__mark(&r->tl, TL_RESTORE_START);
	ret = snapshot__open(&snap, o->dir);
	if (ret < 0)
		return ret;
	ret = guestdev__check(&snap);
	if (ret == 0)
		ret = check_agent(&snap, o);
	/* a fault handler's thread enters a jail before the drives open */
	if (ret == 0 && jail__pending())
		ret = guestdev__keep_files(&snap);
	if (ret == 0)
		ret = guestdev__restore(&snap, &devs,
					r->x.vsock[0] ? r->x.vsock : NULL, &lr);
	if (ret == 0 && !r->x.port) /* the port the guest was booted with */
		r->x.port = guestdev__agent_port(&snap);
	if (ret < 0) {
		snapshot__close(&snap);
		return ret;
	}
	timeline__mark(&r->tl, TL_STATE_LOADED);
	ret = snapshot__restore_guest(kvm, &snap, o->strategy, &r->tl,
				      linux_machine__restore_setup, &lr, &vm);
	guestdev__restore_free(&devs); /* the drives have their layers open */
	if (ret < 0) {
		if (lr.made) /* the restore destroyed its VM already */
			linux_machine__destroy(&m);
		snapshot__close(&snap);
		return ret;
	}
	r->x.keep = o->save != NULL;
	ret = vm__start(vm);
	started = ret == 0;
	if (started) {
		if (o->exec)
			run_exec__session(vm, &r->tl, &r->x);
		if (o->save && r->x.ran) {
			ret = save_turn(vm, &m, &snap, o, r);
			if (ret == 0)
				vm__end(vm, VM_COMPLETED, "the command exited "
					"with status %d; saved", r->x.status);
			else
				vm__end(vm, VM_FAILED, "%s", err__last());
		}
		vm__wait(vm, o->timeout_ns);
	}
	vm__stop(vm);
	/* Before mem__settle: a device's thread still writes guest memory
	 * once the vCPUs are gone (the end of a host's connection told to
	 * the guest, a disk request completed), and a page it touches after
	 * a uffd handler stopped is never served: its join waited forever. */
	linux_machine__close_virtio(&m);
	if (started) {
		if (s)
			ret = restore__finish(vm, o->sample_flags, s);
		r->outcome = vm->outcome;
		snprintf(r->reason, sizeof(r->reason), "%s", vm->reason);
		r->timer = m.timer.regs;
		r->console_bytes = m.com1.bytes_out;
		mem__settle(&vm->mem);
		r->mem = vm->mem.stats;
	}
	vm__destroy(vm);
	linux_machine__destroy(&m);
	snapshot__close(&snap); /* lazy strategies read it until here */
	timeline__mark(&r->tl, TL_TEARDOWN_DONE);
	return ret;
}

static double ms_between(const struct timeline *tl, enum tl_event from,
			 enum tl_event to)
{
	double ns = timeline__span_ns(tl, from, to);

	return ns < 0 ? -1 : ns / 1e6;
}

static json_t *saved_json(const struct restore_opts *o,
			  const struct restored *r)
{
	return json_pack("{s:s, s:s*, s:I, s:I, s:I, s:I, s:I}", "dir", o->save,
			 "diff_of", o->save_diff ? o->dir : NULL,
			 "dirty_pages", (json_int_t)r->dirty_pages,
			 "mem_data_bytes", (json_int_t)r->saved.mem_data_bytes,
			 "disk_bytes", (json_int_t)r->saved.disk_bytes,
			 "state_bytes", (json_int_t)r->saved.state_bytes,
			 "save_ns", (json_int_t)r->saved.ns);
}

static void print_restored(const struct restore_opts *o,
			   const struct restored *r)
{
	if (o->json) {
		json_t *doc = json_pack(
			"{s:s, s:s, s:s, s:s, s:o, s:s, s:s, s:i, s:I, "
			"s:{s:I, s:I, s:I, s:I}, s:b}",
			"command", "snapshot restore", "dir", o->dir, "guest",
			"linux", "mem_restore", o->strategy->name,
			"timeline_ns", output__timeline_json(&r->tl), "outcome",
			vm__outcome_name(r->outcome), "reason", r->reason,
			"guest_done_signals", (int)r->timer.done,
			"console_bytes", (json_int_t)r->console_bytes, "memory",
			"setup_ns", (json_int_t)r->mem.setup_ns, "bytes_read",
			(json_int_t)r->mem.bytes_read, "faults",
			(json_int_t)r->mem.faults, "handler_ns",
			(json_int_t)r->mem.handler_ns, "success",
			r->outcome == VM_COMPLETED);

		if (o->exec)
			json_object_set_new(doc, "exec",
					    run_exec__json(&r->x));
		if (o->save && r->tl.t[TL_SNAPSHOT_SAVED])
			json_object_set_new(doc, "saved", saved_json(o, r));
		json_dumpf(doc, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
		json_decref(doc);
		return;
	}
	/* as with run --exec, stdout is the command's alone (--json has
	 * the timeline); what --save did goes to stderr */
	if (o->save && r->tl.t[TL_SNAPSHOT_SAVED])
		fprintf(stderr, "coldstart: saved %s%s%s: memory %.1f MiB "
			"(%" PRIu64 " pages %s), disk blocks %.1f KiB; "
			"paused in %.3f ms, saved in %.3f ms\n", o->save,
			o->save_diff ? ", a diff of " : "",
			o->save_diff ? o->dir : "",
			(double)r->saved.mem_data_bytes / MiB,
			r->dirty_pages, o->save_diff ? "written since the "
			"restore" : "in all", (double)r->saved.disk_bytes /
			1024, ms_between(&r->tl, TL_COMMAND_EXIT, TL_PAUSED),
			(double)r->saved.ns / 1e6);
	if (o->exec)
		return;
	timeline__print(stdout, &r->tl);
	printf("strategy %s: memory ready in %.3f ms, %.1f MiB read\n",
	       o->strategy->name, (double)r->mem.setup_ns / 1e6,
	       (double)r->mem.bytes_read / MiB);
	printf("restore start -> first KVM_RUN %.3f ms, -> guest done %.3f ms, "
	       "-> guest exit %.3f ms\n",
	       ms_between(&r->tl, TL_RESTORE_START, TL_FIRST_RUN),
	       ms_between(&r->tl, TL_RESTORE_START, TL_GUEST_DONE),
	       ms_between(&r->tl, TL_RESTORE_START, TL_GUEST_EXIT));
	printf("guest: %" PRIu64 " console bytes, %u guest-done signal(s)\n",
	       r->console_bytes, r->timer.done);
	printf("outcome: %s%s%s\n", vm__outcome_name(r->outcome),
	       r->reason[0] ? ": " : "", r->reason);
}

/* What the restore ends with: the command's status with --exec;
 * success when --vsock's clients were served until the timeout (or a
 * signal); else the guest's own exit. */
static int exit_code(const struct restore_opts *o, const struct restored *r)
{
	if (o->exec && r->outcome == VM_COMPLETED && r->x.ran)
		return r->x.status;
	if (o->vsock && !o->exec && r->outcome == VM_STOPPED)
		return CLI_OK;
	if (!o->exec && r->outcome == VM_COMPLETED)
		return CLI_OK;
	fprintf(stderr, "coldstart: restored guest failed: %s\n",
		r->reason[0] ? r->reason : vm__outcome_name(r->outcome));
	return CLI_FAIL;
}

/* The restore of a snapshot that opens, its socket prepared. */
static int restore_checked(const struct restore_opts *o, struct restored *r)
{
	struct kvm_host kvm;
	FILE *console;
	int ret, code;

	if (kvm__device_flavour() == KVM_FLAVOUR_PVM && !o->allow_pvm)
		return cli__error(CLI_SKIP, "snapshot restore of %s: %s",
				  o->dir, run_linux__pvm_refusal());
	/* jailed, the VMM is a child that enters the jail once set up */
	if (o->vsock)
		jail__remove_after(o->vsock);
	ret = jail__start(&o->jail, &code);
	if (ret < 0)
		return cli__error(CLI_FAIL, "snapshot restore: %s", err__last());
	if (ret == 1)
		return code;
	ret = run_opts__seccomp_start("snapshot restore", o->seccomp, true);
	if (ret)
		return ret;
	/* with --exec the console is shown only where asked */
	if (run_linux__open_console(o->console, o->json,
				    o->exec && !o->console, &console) < 0)
		return cli__error(CLI_FAIL, "snapshot restore: %s", err__last());
	ret = kvm__open(&kvm, o->kvm_path);
	if (ret < 0) {
		run_linux__close_console(console);
		return cli__error(cli__exit_for(ret), "%s", err__last());
	}
	timeline__mark(&r->tl, TL_KVM_OPENED);
	ret = restore_run(&kvm, o, console, r, NULL);
	kvm__close(&kvm);
	run_linux__close_console(console);
	if (ret < 0)
		return cli__error(ret == -ENOTSUP ? CLI_SKIP : CLI_FAIL,
				  "snapshot: %s", err__last());
	print_restored(o, r);
	run_opts__seccomp_report();
	return exit_code(o, r);
}

/* The options against the snapshot's devices, before /dev/kvm: --exec
 * and --vsock (check_agent). A jailed restore binds --vsock's socket on
 * the host's filesystem at the VM's setup; a userfaultfd strategy starts
 * its handler thread, and so enters the jail, when memory is filled,
 * which comes first (the drives' files are kept open from before it).
 * 0, or -EINVAL (-errno when it does not open). */
static int check_devices(const struct restore_opts *o)
{
	struct snapshot s;
	bool vsock;
	/* its own records: a diff's devices are its base's */
	int ret = snapshot__open_layer(&s, o->dir);

	if (ret < 0)
		return ret == -EINVAL ? -EIO : ret;
	vsock = s.virtio.vsock;
	ret = check_agent(&s, o);
	snapshot__close(&s);
	if (ret < 0)
		return ret;
	if (vsock && o->vsock && o->strategy->settle && o->jail.dir)
		return err__set(EINVAL, "--jail, --vsock and --mem-restore %s: "
				"the socket would be made after the "
				"strategy's fault handler entered the jail; "
				"use a strategy without one (mmap, the "
				"default; eager; populate), or --exec alone",
				o->strategy->name);
	return 0;
}

int snap_linux__restore(int argc, char **argv)
{
	static struct restored r; /* its captured output is large */
	struct restore_opts o;
	int ret, code;

	r = (struct restored){ .tl.t[TL_PROCESS_START] = cli_process_start };
	if (parse(argc, argv, &o) < 0)
		return cli__parse_error("snapshot restore", "snapshot");
	ret = snapshot__check(o.dir); /* before /dev/kvm: on any host */
	if (ret == 0 && (ret = check_devices(&o)) == -EINVAL)
		return cli__error(CLI_USAGE, "snapshot restore: %s",
				  err__last());
	if (ret == 0 && o.save) /* what a killed --save left there */
		tmpdir__clean_stale(o.save, tmpdir__print_stale, NULL);
	if (ret == 0 && (o.exec || o.vsock))
		ret = run_exec__init(&r.x, o.exec, o.vsock,
				     (uint32_t)o.agent_port, o.timeout_ns,
				     o.json);
	if (ret < 0)
		return cli__error(ret == -ENOTSUP ? CLI_SKIP : CLI_FAIL,
				  "snapshot: %s", err__last());
	code = restore_checked(&o, &r);
	run_exec__cleanup(&r.x);
	return code;
}

/* The command's spans and checks: DONE at its first output byte. */
static int exec_sample(const struct restored *r, struct restore_sample *out)
{
	const struct timeline *tl = &r->tl;
	enum tl_event done = tl->t[TL_FIRST_OUTPUT] ? TL_FIRST_OUTPUT
						    : TL_COMMAND_EXIT;
	const struct agent_capture *err = &r->x.captured[1];

	out->ns[RESTORE_FIRST_PROGRESS] = timeline__span_ns(tl, TL_RESTORE_START,
						     TL_AGENT_READY);
	out->ns[RESTORE_DONE] = timeline__span_ns(tl, TL_RESTORE_START, done);
	out->ns[RESTORE_REQUEST] = timeline__span_ns(tl, TL_FIRST_RUN, done);
	if (r->outcome != VM_COMPLETED || !r->x.ran)
		return err__set(EIO, "restored Linux guest failed: %s",
				r->reason);
	if (r->x.status != 0)
		return err__set(EIO, "the command exited with status %d%s%.*s",
				r->x.status, err->len ? ": " : "",
				(int)(err->len < 200 ? err->len : 200),
				err->buf ? err->buf : "");
	return 0;
}

/* A clean run ends with the guest's reset after its one guest-done
 * signal; DONE is that signal. With an agent, the command's status. */
int snap_linux__restore_once(struct kvm_host *kvm, const char *dir,
			     const char *exec, const struct guest_mem_ops *ops,
			     unsigned int flags, struct restore_sample *out)
{
	struct restore_opts o = { .dir = dir, .strategy = ops,
				  .timeout_ns = 60 * SECOND,
				  .sample_flags = flags, .exec = exec };
	struct restored r = { 0 };
	int ret = 0;

	*out = (struct restore_sample){ 0 };
	/* the port is the snapshot's, read by restore_run */
	if (exec && (ret = run_exec__init(&r.x, exec, NULL, 0, o.timeout_ns,
					  true)) < 0)
		return ret;
	ret = restore_run(kvm, &o, NULL, &r, out);
	restore__spans(&r.tl, out);
	if (ret == 0 && exec)
		ret = exec_sample(&r, out);
	else if (ret == 0 && r.outcome != VM_COMPLETED)
		ret = err__set(EIO, "restored Linux guest failed: %s",
			       r.reason);
	else if (ret == 0 && (r.timer.done != 1 || out->ns[RESTORE_DONE] < 0))
		ret = err__set(EIO, "restored Linux guest sent %u guest-done "
			       "signals (one expected)", r.timer.done);
	run_exec__cleanup(&r.x);
	return ret;
}

int snap_linux__turn(struct kvm_host *kvm, const struct snap_turn *t,
		     struct snap_turn_result *res)
{
	struct restore_opts o = { .dir = t->dir, .strategy = t->strategy,
				  .timeout_ns = t->timeout_ns, .exec = t->exec,
				  .save = t->save, .save_diff = t->diff };
	struct restored *r = calloc(1, sizeof(*r));
	int ret;

	memset(res, 0, sizeof(*res));
	if (!r)
		return err__set(ENOMEM, "a session's turn");
	/* the port is the snapshot's, read by restore_run */
	ret = run_exec__init(&r->x, t->exec, t->vsock, 0, t->timeout_ns, true);
	if (ret == 0)
		ret = restore_run(kvm, &o, NULL, r, NULL);
	if (ret == 0 && (r->outcome != VM_COMPLETED || !r->x.ran))
		ret = err__set(EIO, "the restored guest failed: %s", r->reason);
	res->tl = r->tl;
	res->ran = r->x.ran;
	res->status = r->x.status;
	res->saved = r->saved;
	res->dirty_pages = r->dirty_pages;
	for (int i = 0; i < 2; i++) {
		struct agent_capture *c = &r->x.captured[i];
		char *s = malloc(c->len + 1);

		if (s) {
			memcpy(s, c->buf ? c->buf : "", c->len);
			s[c->len] = '\0';
		}
		*(i ? &res->err : &res->out) = s;
	}
	run_exec__cleanup(&r->x);
	free(r);
	if (ret == 0 && (!res->out || !res->err))
		ret = err__set(ENOMEM, "a session's turn: its output");
	if (ret < 0)
		snap_linux__turn_free(res);
	return ret;
}

void snap_linux__turn_free(struct snap_turn_result *res)
{
	free(res->out);
	free(res->err);
	res->out = res->err = NULL;
}
