/* `coldstart run --kernel`: plan, refuse PVM, boot, wait, report. */
#include "run_linux.h"

#include "cli.h"
#include "err.h"
#include "guest/agent_abi.h"
#include "linux_x86.h"
#include "output.h"
#include "run_exec.h"
#include "run_probes.h"
#include "units.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct linux_result {
	struct timeline tl;
	enum vm_outcome outcome;
	char reason[512];
	struct boottimer_regs timer;
	uint64_t console_bytes;
	uint64_t sink_accesses;
	uint64_t unclaimed_io;
	uint64_t exits;
	uint64_t vcpu_exits[PROBE_MAX_VCPUS];
	unsigned int nr_vcpus;
	struct run_exec *exec; /* --exec's command */
};

/* The VM a signal handler stops; set only while one runs. */
static struct vm *volatile active_vm;

static void on_signal(int sig)
{
	struct vm *vm = active_vm;

	(void)sig;
	if (vm)
		vm__interrupt(vm);
}

static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static const char *format_name(enum linux_format f)
{
	return f == LINUX_BZIMAGE ? "bzImage" : "ELF vmlinux";
}

const char *run_linux__cmdline(const struct run_cli *o)
{
	/* --exec shows no console unless asked: the kernel need not write
	 * one (every byte is a VM exit) */
	if (o->cmdline)
		return o->cmdline;
	return o->exec && !o->console ? LINUX_DEFAULT_CMDLINE " quiet"
				      : LINUX_DEFAULT_CMDLINE;
}

const char *run_linux__pvm_refusal(void)
{
	return "this host's /dev/kvm is PVM, which cannot boot an ordinary "
	       "Linux guest: under PVM guest ring-0 code is not run by the "
	       "hardware but interpreted, so a kernel crawls, then fails "
	       "emulation: it cannot boot here. Use a host with VMX or SVM, "
	       "or the emulated SVM host ('coldstart emulate'); --allow-pvm "
	       "tries anyway";
}

int run_linux__check_guest(const char *cmd, const char *kernel,
			   const char *initrd, const char *cmdline,
			   uint64_t mem_size, unsigned int nr_vcpus,
			   bool allow_pvm)
{
	struct linux_boot b = { .initrd_fd = -1 };
	struct linux_kernel k;
	int ret = linux__open_kernel(&k, kernel);

	if (ret == 0) {
		ret = linux__plan(&b, &k, cmdline ? cmdline
						  : LINUX_DEFAULT_CMDLINE,
				  initrd, mem_size, nr_vcpus);
		linux__plan_free(&b);
		linux__close_kernel(&k);
	}
	if (ret < 0)
		return cli__error(CLI_FAIL, "%s: %s", cmd, err__last());
	/* our ring-0 test kernel runs even there: --allow-pvm */
	if (!allow_pvm && kvm__device_flavour() == KVM_FLAVOUR_PVM)
		return cli__error(CLI_SKIP, "%s --kernel: %s", cmd,
				  run_linux__pvm_refusal());
	return CLI_OK;
}

int run_linux__open_console(const char *path, bool json, bool quiet,
			    FILE **out)
{
	int fd;

	if (!path || !strcmp(path, "-")) {
		*out = quiet ? NULL : json ? stderr : stdout;
		return 0;
	}
	/* a log read while the guest runs (and after a kill), so written
	 * in place rather than renamed in at the end; but never through a
	 * link someone left at the name (a device or FIFO named directly
	 * is still opened) */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		  0666);
	if (fd < 0)
		return errno == ELOOP
			       ? err__set(ELOOP, "--console %s is a symbolic "
					  "link; not writing through it", path)
			       : err__sys(errno, "--console %s", path);
	*out = fdopen(fd, "w");
	if (!*out) {
		close(fd);
		return err__sys(errno, "--console %s", path);
	}
	setvbuf(*out, NULL, _IOLBF, 0);
	return 0;
}

void run_linux__close_console(FILE *f)
{
	if (f && f != stdout && f != stderr)
		fclose(f);
}

/* --drive and --vsock: the machine's virtio devices. */
static int add_virtio(const struct run_cli *o, struct vm *vm,
		      struct linux_machine *m)
{
	struct linux_drive d[LINUX_MAX_DRIVES];
	int ret;

	for (unsigned int i = 0; i < o->nr_drives; i++)
		d[i] = (struct linux_drive){
			.path = o->drives[i].path, .mode = o->drives[i].mode,
			.own = o->drives[i].own[0] ? o->drives[i].own : NULL
		};
	ret = linux_machine__add_drives(m, vm, d, o->nr_drives);
	if (ret == 0 && o->has_vsock)
		ret = linux_machine__add_vsock(m, vm, o->vsock_cid,
					       o->vsock[0] ? o->vsock : NULL);
	return ret;
}

int run_linux__plan(struct linux_boot *b, const struct linux_kernel *k,
		    const struct run_cli *o, const char *base, char **cmdline)
{
	struct linux_virtio v = { o->nr_drives, o->has_vsock };

	size_t len;
	int n, ret;

	if (!base)
		base = run_linux__cmdline(o);
	len = strlen(base) + 1 + 64 * LINUX_VIRTIO_SLOTS + 80;
	*cmdline = malloc(len);
	if (!*cmdline) {
		memset(b, 0, sizeof(*b));
		b->initrd_fd = -1; /* linux__plan_free() has nothing to do */
		return err__set(ENOMEM, "out of memory");
	}
	/* the devices' command-line form after the user's own */
	n = snprintf(*cmdline, len, "%s%s", base,
		     v.nr_drives || v.vsock ? " " : "");
	linux__virtio_cmdline(&v, *cmdline + n, len - (size_t)n);
	/* the init's switch to the disk, and the agent's port if not its
	 * default */
	n = (int)strlen(*cmdline);
	if (o->has_rootfs)
		n += snprintf(*cmdline + n, len - (size_t)n,
			      " coldstart.root=/dev/vda");
	if (o->has_rootfs && o->agent_port != AGENT_PORT)
		snprintf(*cmdline + n, len - (size_t)n, " coldstart.agent=%u",
			 (unsigned int)o->agent_port);
	ret = linux__plan(b, k, *cmdline, o->initrd, o->cfg.mem_size,
			  o->cfg.nr_vcpus);
	if (ret == 0)
		b->virtio = v;
	return ret;
}

/* The vCPUs stopped, then the devices' I/O threads, then the memory
 * unmapped: an I/O thread may still be writing to the guest's rings (a
 * host connection closing) after the vCPUs stopped. */
void run_linux__teardown(struct vm *vm, struct linux_machine *m,
			 struct timeline *tl)
{
	vm__stop(vm);
	linux_machine__close_virtio(m);
	vm__destroy(vm);
	timeline__mark(tl, TL_TEARDOWN_DONE);
	linux_machine__destroy(m);
}

int run_linux__create(struct kvm_host *kvm, const struct run_cli *o,
		      const struct linux_boot *b,
		      const struct linux_machine_opts *mo, struct timeline *tl,
		      struct vm **vm, struct linux_machine *m)
{
	struct vm_config cfg = linux__vm_config(b->mem_size, b->nr_vcpus);
	int ret;

	cfg.mem_ops = o->cfg.mem_ops;
	cfg.io_threads = b->virtio.nr_drives + b->virtio.vsock;
	ret = vm__create(kvm, &cfg, tl, vm);
	if (ret < 0)
		return ret;
	ret = linux_machine__create(m, *vm, mo);
	if (ret < 0) {
		vm__destroy(*vm);
		return ret;
	}
	ret = add_virtio(o, *vm, m);
	if (ret < 0)
		run_linux__teardown(*vm, m, NULL);
	return ret;
}

int run_linux__boot_paused(struct kvm_host *kvm, const struct run_cli *o,
			   const struct linux_boot *b, FILE *console,
			   const char *why, struct timeline *tl,
			   struct vm **vm, struct linux_machine *m)
{
	struct linux_machine_opts mo = { console, BOOTTIMER_PAUSE };
	int ret = run_linux__create(kvm, o, b, &mo, tl, vm, m);

	if (ret < 0)
		return ret;
	ret = linux_machine__boot_paused(*vm, m, b, o->cfg.timeout_ns, why);
	if (ret < 0)
		run_linux__teardown(*vm, m, NULL);
	return ret;
}

static void collect(struct linux_result *r, struct vm *vm,
		    const struct linux_machine *m)
{
	r->outcome = vm->outcome;
	snprintf(r->reason, sizeof(r->reason), "%s", vm->reason);
	r->timer = m->timer.regs;
	r->console_bytes = m->com1.bytes_out;
	r->sink_accesses = m->legacy.sink_accesses;
	r->unclaimed_io = vm->io.unclaimed;
	r->nr_vcpus = vm->nr_vcpus;
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		r->vcpu_exits[i] = vm->vcpus[i].exits;
		r->exits += vm->vcpus[i].exits;
	}
}

static enum boottimer_action at_boot(const struct run_cli *o)
{
	return o->stop_at_boot ? BOOTTIMER_STOP : BOOTTIMER_CONTINUE;
}

/* Creates the VM, boots it, waits for its end and tears it down. */
static int boot(struct kvm_host *kvm, const struct run_cli *o,
		const struct linux_boot *b, FILE *console,
		struct linux_result *r)
{
	struct linux_machine_opts mo = { console, at_boot(o) };
	struct linux_machine m;
	struct vm *vm;
	int ret = run_linux__create(kvm, o, b, &mo, &r->tl, &vm, &m);

	if (ret < 0)
		return ret;
	ret = linux__load(vm, b);
	if (ret == 0)
		ret = vm__start(vm);
	if (ret == 0) {
		active_vm = vm;
		if (o->exec)
			run_exec__session(vm, &r->tl, r->exec);
		vm__wait(vm, o->cfg.timeout_ns);
		active_vm = NULL;
		collect(r, vm, &m);
	}
	run_linux__teardown(vm, &m, &r->tl);
	return ret;
}

static void print_boot_signals(const struct linux_result *r)
{
	const char *first = boottimer__variant_name(r->timer.first);

	if (!first) {
		printf("boot signal: none received\n");
		return;
	}
	printf("boot signal: %s", first);
	if (r->timer.seen & ~r->timer.first)
		printf(" (then also %s)",
		       boottimer__variant_name(r->timer.seen & ~r->timer.first));
	printf("; guest-done signals: %u\n", r->timer.done);
}

static void print_human(const struct run_cli *o, const struct linux_kernel *k,
			const struct linux_boot *b,
			const struct linux_result *r)
{
	printf("linux guest: %u vCPU%s, %" PRIu64 " MiB; kernel %s (%s), "
	       "initrd %s", b->nr_vcpus, b->nr_vcpus > 1 ? "s" : "",
	       b->mem_size / MiB, o->kernel, format_name(k->format),
	       o->initrd ? o->initrd : "none");
	if (o->initrd)
		printf(" (%" PRIu64 " KiB at 0x%" PRIx64 ")",
		       b->initrd_size >> 10, b->initrd_gpa);
	printf("\ncmdline: %s\n", b->cmdline);
	timeline__print(stdout, &r->tl);
	print_boot_signals(r);
	printf("outcome: %s%s%s\n", vm__outcome_name(r->outcome),
	       r->reason[0] ? ": " : "", r->reason);
	printf("guest work: %" PRIu64 " console bytes, %" PRIu64 " VM exits "
	       "(", r->console_bytes, r->exits);
	for (unsigned int i = 0; i < r->nr_vcpus; i++)
		printf("%s%" PRIu64, i ? ", " : "vCPUs: ", r->vcpu_exits[i]);
	printf("), %" PRIu64 " legacy-port accesses, %" PRIu64
	       " unclaimed\n", r->sink_accesses, r->unclaimed_io);
}

static json_t *signals_json(uint32_t seen)
{
	json_t *a = json_array();

	for (uint32_t bit = BOOTTIMER_VIA_PORT; bit <= BOOTTIMER_VIA_MMIO;
	     bit <<= 1)
		if (seen & bit)
			json_array_append_new(
				a, json_string(boottimer__variant_name(bit)));
	return a;
}

static json_t *config_json(const struct run_cli *o, const struct linux_kernel *k,
			   const struct linux_boot *b)
{
	return json_pack("{s:s, s:s, s:s, s:s?, s:s, s:I, s:i, s:s, s:I, "
			 "s:I, s:s}",
			 "guest", "linux", "kernel", o->kernel, "kernel_format",
			 format_name(k->format), "initrd", o->initrd, "cmdline",
			 b->cmdline, "mem_bytes", (json_int_t)b->mem_size,
			 "vcpus", (int)b->nr_vcpus, "mem_backend",
			 o->cfg.mem_ops ? o->cfg.mem_ops->name : "anon",
			 "kernel_entry", (json_int_t)k->entry,
			 "timeout_ns", (json_int_t)o->cfg.timeout_ns,
			 "stop_at", o->stop_at_boot ? "boot" : "exit");
}

static json_t *vcpu_exits_json(const struct linux_result *r)
{
	json_t *a = json_array();

	for (unsigned int i = 0; i < r->nr_vcpus; i++)
		json_array_append_new(a, json_integer((json_int_t)r->vcpu_exits[i]));
	return a;
}

static void print_json(const struct run_cli *o, const struct linux_kernel *k,
		       const struct linux_boot *b, const struct linux_result *r,
		       const struct run_probes *rp)
{
	const char *first = boottimer__variant_name(r->timer.first);
	json_t *doc = json_pack(
		"{s:i, s:s, s:o, s:s, s:s, s:o, s:s?, s:o, s:i, s:I, s:I, s:o, "
		"s:I, s:I, s:b}",
		"schema", 1, "command", "run", "config", config_json(o, k, b),
		"outcome", vm__outcome_name(r->outcome), "reason", r->reason,
		"timeline_ns", output__timeline_json(&r->tl), "boot_signal",
		first, "boot_signals", signals_json(r->timer.seen),
		"guest_done_signals", (int)r->timer.done, "console_bytes",
		(json_int_t)r->console_bytes, "exits", (json_int_t)r->exits,
		"vcpu_exits", vcpu_exits_json(r), "legacy_port_accesses",
		(json_int_t)r->sink_accesses, "unclaimed_io",
		(json_int_t)r->unclaimed_io, "success",
		r->outcome == VM_COMPLETED);

	if (o->exec)
		json_object_set_new(doc, "exec", run_exec__json(r->exec));
	run_probes__add_json(rp, &r->tl, doc);
	json_dumpf(doc, stdout, JSON_INDENT(2));
	fputc('\n', stdout);
	json_decref(doc);
}

static int report(const struct run_cli *o, const struct linux_kernel *k,
		  const struct linux_boot *b, const struct linux_result *r,
		  const struct run_probes *rp)
{
	if (o->json) {
		print_json(o, k, b, r, rp);
	} else if (!o->quiet && !o->exec) {
		/* with --exec, stdout is the command's alone */
		print_human(o, k, b, r);
		run_probes__print(rp, &r->tl);
	}
	if (r->outcome == VM_COMPLETED && o->exec && r->exec->ran)
		return r->exec->status;
	if (r->outcome == VM_COMPLETED && o->exec) {
		fprintf(stderr, "coldstart: run failed: the guest ended (%s) "
			"before its agent ran the command\n", r->reason);
		return CLI_FAIL;
	}
	if (r->outcome == VM_COMPLETED)
		return CLI_OK;
	fprintf(stderr, "coldstart: run failed: %s\n", r->reason);
	return CLI_FAIL;
}

/* Opens KVM, boots, reports. Everything before it checked the inputs. */
static int run_checked(const struct run_cli *o, const struct linux_kernel *k,
		       const struct linux_boot *b, FILE *console,
		       struct run_exec *x)
{
	struct linux_result r = { .exec = x };
	struct run_probes rp;
	struct kvm_host kvm;
	int ret;

	r.tl.t[TL_PROCESS_START] = cli_process_start;
	ret = run_probes__attach(o->probes, &rp);
	if (ret < 0)
		return cli__error(cli__exit_for(ret), "run: %s", err__last());
	ret = kvm__open(&kvm, o->kvm_path);
	if (ret < 0) {
		run_probes__free(&rp);
		return cli__error(cli__exit_for(ret), "%s", err__last());
	}
	timeline__mark(&r.tl, TL_KVM_OPENED);
	catch_signals();
	ret = boot(&kvm, o, b, console, &r);
	kvm__close(&kvm);
	run_probes__finish(&rp);
	if (ret < 0) {
		run_probes__free(&rp);
		return cli__error(cli__exit_for(ret), "%s", err__last());
	}
	ret = report(o, k, b, &r, &rp);
	run_probes__free(&rp);
	return ret;
}

static int run_planned(const struct run_cli *o, const struct linux_kernel *k,
		       struct linux_boot *b, struct run_exec *x)
{
	FILE *console;
	int ret;

	if (kvm__device_flavour() == KVM_FLAVOUR_PVM && !o->allow_pvm)
		return cli__error(CLI_SKIP, "run --kernel: %s",
				  run_linux__pvm_refusal());
	/* with --exec the console is shown only where asked */
	if (run_linux__open_console(o->console, o->json,
				    o->quiet || (o->exec && !o->console),
				    &console) < 0)
		return cli__error(CLI_FAIL, "run: %s", err__last());
	ret = run_checked(o, k, b, console, x);
	run_linux__close_console(console);
	return ret;
}

int run_linux(const struct run_cli *given)
{
	static struct run_cli o; /* with --exec's socket path */
	struct run_exec x;
	struct linux_kernel k;
	struct linux_boot b;
	char *cmdline = NULL;
	int ret;

	o = *given;
	ret = run_exec__prepare(&o, &x);
	if (ret < 0)
		return cli__error(CLI_FAIL, "run: %s", err__last());
	ret = linux__open_kernel(&k, o.kernel);
	if (ret < 0) {
		run_exec__cleanup(&x);
		return cli__error(CLI_FAIL, "run: %s", err__last());
	}
	ret = run_linux__plan(&b, &k, &o, NULL, &cmdline);
	if (ret < 0)
		ret = cli__error(CLI_FAIL, "run: %s", err__last());
	else
		ret = run_planned(&o, &k, &b, &x);
	linux__plan_free(&b);
	free(cmdline);
	linux__close_kernel(&k);
	run_exec__cleanup(&x);
	return ret;
}
