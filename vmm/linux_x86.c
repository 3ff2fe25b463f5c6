/* Linux kernel loading (bzImage, ELF vmlinux), boot planning, vCPU boot
 * state, and the machine's devices. */
#include "linux_x86.h"

#include "acpi_x86.h"
#include "cpu_x86.h"
#include "err.h"
#include "mptable_x86.h"
#include "pagetable_x86.h"
#include "regfile.h"

#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GDT_SLOTS 8u
#define TSS_LIMIT 0x67u
#define PAGE_MASK 0xfffull
#define KERNEL_HIGH_VA 0xffffffff80000000ull /* where x86-64 links vmlinux */

static int open_file(const char *what, const char *path, uint64_t *size)
{
	/* Never blocks on a FIFO; regular files only. */
	int fd = regfile__open(path, size);

	if (fd == -EINVAL)
		return err__set(EINVAL, "%s %s is not a regular file", what,
				path);
	return fd < 0 ? err__sys(-fd, "%s %s", what, path) : fd;
}

/* Prefixes the last message with the file it is about. err__last()'s
 * buffer is the one err__set writes, so it is copied first. */
static int file_error(int errnum, const char *what, const char *path)
{
	char msg[384];

	snprintf(msg, sizeof(msg), "%s", err__last());
	return err__set(errnum, "%s %s: %s", what, path, msg);
}

/* pread until `len` bytes arrived: one read in practice. */
static int read_at(int fd, void *dst, uint64_t len, uint64_t off,
		   const char *what)
{
	uint8_t *p = dst;

	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return err__sys(errno, "reading %s", what);
		if (n == 0)
			return err__set(EIO, "reading %s: file shrank", what);
		p += n;
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return 0;
}

static int open_bzimage(struct linux_kernel *k, const char *path)
{
	size_t head = k->file_size < BZ_HEAD_SIZE ? (size_t)k->file_size
						   : BZ_HEAD_SIZE;
	int ret = read_at(k->fd, k->head, head, 0, path);

	if (ret < 0)
		return ret;
	ret = linux__bz_parse(k->head, head, k->file_size, &k->bz);
	if (ret < 0)
		return file_error(ENOEXEC, "kernel", path);
	k->format = LINUX_BZIMAGE;
	k->entry = k->bz.load_addr + BZ_ENTRY_64;
	k->start = k->bz.load_addr;
	k->end = k->bz.load_addr + k->bz.init_size;
	return 0;
}

static int elf_check_header(Elf *e, GElf_Ehdr *eh)
{
	if (elf_kind(e) != ELF_K_ELF || gelf_getclass(e) != ELFCLASS64 ||
	    !gelf_getehdr(e, eh))
		return err__set(ENOEXEC, "not an ELF64 file");
	if (eh->e_machine != EM_X86_64 || eh->e_type != ET_EXEC)
		return err__set(ENOEXEC, "not an x86-64 executable (machine %u, "
				"type %u)", eh->e_machine, eh->e_type);
	return 0;
}

static int elf_add_segment(struct linux_kernel *k, const GElf_Phdr *ph)
{
	struct linux_segment *s;

	if (ph->p_filesz > ph->p_memsz || ph->p_offset > k->file_size ||
	    ph->p_filesz > k->file_size - ph->p_offset)
		return err__set(ENOEXEC, "segment at offset 0x%llx lies outside "
				"the file", (unsigned long long)ph->p_offset);
	if (ph->p_paddr < LINUX_HIGH_MEM || ph->p_paddr + ph->p_memsz <
						    ph->p_paddr)
		return err__set(ENOEXEC, "segment at physical 0x%llx is below "
				"1 MiB or wraps",
				(unsigned long long)ph->p_paddr);
	if (k->nr_segs == LINUX_MAX_SEGMENTS)
		return err__set(ENOEXEC, "more than %d loadable segments",
				LINUX_MAX_SEGMENTS);
	s = &k->segs[k->nr_segs++];
	*s = (struct linux_segment){ ph->p_offset, ph->p_paddr, ph->p_filesz,
				     ph->p_memsz };
	if (k->nr_segs == 1 || s->gpa < k->start)
		k->start = s->gpa;
	if (s->gpa + s->memsz > k->end)
		k->end = s->gpa + s->memsz;
	return 0;
}

/* vmlinux's entry is usually physical already; a virtual one is
 * translated through the segment that contains it. */
static int elf_entry(struct linux_kernel *k, Elf *e, uint64_t entry)
{
	GElf_Phdr ph;

	k->entry = entry;
	if (entry < KERNEL_HIGH_VA)
		return 0;
	for (int i = 0; gelf_getphdr(e, i, &ph); i++)
		if (ph.p_type == PT_LOAD && entry >= ph.p_vaddr &&
		    entry - ph.p_vaddr < ph.p_memsz) {
			k->entry = entry - ph.p_vaddr + ph.p_paddr;
			return 0;
		}
	return err__set(ENOEXEC, "entry point 0x%llx is in no loadable "
			"segment", (unsigned long long)entry);
}

static int elf_parse(struct linux_kernel *k, Elf *e)
{
	GElf_Ehdr eh;
	GElf_Phdr ph;
	size_t n;
	int ret = elf_check_header(e, &eh);

	if (ret < 0)
		return ret;
	if (elf_getphdrnum(e, &n) < 0)
		return err__set(ENOEXEC, "unreadable program headers: %s",
				elf_errmsg(-1));
	for (size_t i = 0; ret == 0 && i < n; i++) {
		if (!gelf_getphdr(e, (int)i, &ph))
			return err__set(ENOEXEC, "program header %zu: %s", i,
					elf_errmsg(-1));
		if (ph.p_type == PT_LOAD && ph.p_memsz)
			ret = elf_add_segment(k, &ph);
	}
	if (ret == 0 && k->nr_segs == 0)
		ret = err__set(ENOEXEC, "no loadable segment");
	if (ret == 0)
		ret = elf_entry(k, e, eh.e_entry);
	return ret;
}

static int open_elf(struct linux_kernel *k, const char *path)
{
	Elf *e;
	int ret;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return err__set(EIO, "libelf: %s", elf_errmsg(-1));
	e = elf_begin(k->fd, ELF_C_READ, NULL);
	if (!e)
		return err__set(ENOEXEC, "kernel %s: %s", path, elf_errmsg(-1));
	k->format = LINUX_ELF;
	ret = elf_parse(k, e);
	elf_end(e);
	if (ret < 0)
		return file_error(ENOEXEC, "ELF kernel", path);
	return 0;
}

int linux__open_kernel(struct linux_kernel *k, const char *path)
{
	static const uint8_t elf_magic[4] = { 0x7f, 'E', 'L', 'F' };
	uint8_t magic[4] = { 0 };
	int ret;

	memset(k, 0, sizeof(*k));
	k->fd = open_file("kernel", path, &k->file_size);
	if (k->fd < 0)
		return k->fd;
	ret = k->file_size < sizeof(magic)
		      ? err__set(ENOEXEC, "kernel %s: %llu bytes is no kernel",
				 path, (unsigned long long)k->file_size)
		      : read_at(k->fd, magic, sizeof(magic), 0, path);
	if (ret == 0)
		ret = memcmp(magic, elf_magic, sizeof(magic))
			      ? open_bzimage(k, path)
			      : open_elf(k, path);
	if (ret < 0) {
		close(k->fd);
		k->fd = -1;
	}
	return ret;
}

void linux__close_kernel(struct linux_kernel *k)
{
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
}

static int check_shape(const struct linux_kernel *k, uint64_t mem_size,
		       unsigned int nr_vcpus)
{
	if (mem_size % MEM_ALIGN || mem_size > LINUX_MEM_MAX)
		return err__set(EINVAL, "--mem: a Linux guest takes a multiple "
				"of 2 MiB up to 3 GiB (guest RAM stays below "
				"the boot timer's MMIO page at 3 GiB), not "
				"%llu bytes", (unsigned long long)mem_size);
	if (k->end > mem_size)
		return err__set(EINVAL, "--mem: the kernel needs guest memory "
				"up to 0x%llx (%llu MiB); raise --mem",
				(unsigned long long)k->end,
				(unsigned long long)((k->end + MEM_ALIGN - 1) /
						     MEM_ALIGN * 2));
	_Static_assert(MPTABLE_MAX_CPUS == ACPI_MAX_CPUS, "one CPU limit");
	if (nr_vcpus == 0 || nr_vcpus > MPTABLE_MAX_CPUS)
		return err__set(EINVAL, "--vcpus: a Linux guest takes 1 to %u "
				"vCPUs", MPTABLE_MAX_CPUS);
	return 0;
}

static int check_cmdline(const struct linux_kernel *k, const char *cmdline)
{
	size_t len = strlen(cmdline);
	uint64_t max = LINUX_CMDLINE_MAX - 1;

	/* An ELF vmlinux has no header to ask; x86 Linux keeps
	 * COMMAND_LINE_SIZE bytes and silently drops the rest. */
	if (k->format != LINUX_BZIMAGE)
		max = LINUX_ELF_CMDLINE_MAX - 1;
	else if (k->bz.cmdline_size < max)
		max = k->bz.cmdline_size;
	if (len > max)
		return err__set(EINVAL, "--cmdline: %zu bytes, the kernel "
				"accepts at most %llu", len,
				(unsigned long long)max);
	return 0;
}

static int plan_initrd(struct linux_boot *b, const char *path)
{
	const struct linux_kernel *k = b->kernel;
	/* Protocol 2.12+ always states its limit; a vmlinux has none. */
	uint64_t max = k->format == LINUX_BZIMAGE ? k->bz.initrd_addr_max
						  : LINUX_MEM_MAX - 1;
	int fd = open_file("initrd", path, &b->initrd_size);
	int ret;

	if (fd < 0)
		return fd;
	ret = linux__place_initrd(b->mem_size, max, k->end, b->initrd_size,
				  &b->initrd_gpa);
	if (ret < 0) {
		close(fd);
		return file_error(-ret, "initrd", path);
	}
	b->initrd_fd = fd;
	return 0;
}

int linux__plan(struct linux_boot *b, const struct linux_kernel *k,
		const char *cmdline, const char *initrd, uint64_t mem_size,
		unsigned int nr_vcpus)
{
	int ret = check_shape(k, mem_size, nr_vcpus);

	memset(b, 0, sizeof(*b));
	b->initrd_fd = -1;
	b->kernel = k;
	b->cmdline = cmdline;
	b->mem_size = mem_size;
	b->nr_vcpus = nr_vcpus;
	if (ret == 0)
		ret = check_cmdline(k, cmdline);
	if (ret == 0 && initrd)
		ret = plan_initrd(b, initrd);
	return ret;
}

void linux__plan_free(struct linux_boot *b)
{
	if (b->initrd_fd >= 0)
		close(b->initrd_fd);
	b->initrd_fd = -1;
}

struct vm_config linux__vm_config(uint64_t mem_size, unsigned int nr_vcpus)
{
	return (struct vm_config){
		.mem_size = mem_size,
		.nr_vcpus = nr_vcpus,
		.strict_io = false,
		.cpuid = VM_CPUID_HOST,
		.irqchip = true,
	};
}

/* Linux's panic() prints this before it reboots or halts. */
static void watch_console(void *ctx, const char *line)
{
	const char *panic = strstr(line, "Kernel panic - not syncing");

	if (panic)
		vm__end(ctx, VM_FAILED, "guest kernel panic: %s", panic);
}

int linux_machine__create(struct linux_machine *m, struct vm *vm,
			  const struct linux_machine_opts *o)
{
	int ret;

	if (!vm->irqchip)
		return err__set(EINVAL, "a Linux machine needs the in-kernel "
				"irqchip");
	m->nr_blk = 0;
	m->vsock = NULL;
	ret = serial__init_com1(&m->com1, vm, o->console);
	if (ret < 0)
		return ret;
	m->com1.on_line = watch_console;
	m->com1.line_ctx = vm;
	ret = i8042__init(&m->kbc, vm);
	if (ret < 0)
		goto err_serial;
	ret = boottimer__init(&m->timer, vm, o->at_boot);
	if (ret == 0)
		ret = legacy_x86__init(&m->legacy, vm);
	if (ret == 0)
		ret = acpi_pm__init(&m->pm, vm);
	if (ret == 0)
		return 0;
	i8042__destroy(&m->kbc);
err_serial:
	serial__destroy(&m->com1);
	return ret;
}

void linux_machine__destroy(struct linux_machine *m)
{
	linux_machine__close_virtio(m);
	i8042__destroy(&m->kbc);
	serial__destroy(&m->com1);
}

int linux_machine__restore_setup(struct vm *vm, void *ctx)
{
	struct linux_restore *r = ctx;
	struct linux_machine_opts mo = { r->console, BOOTTIMER_CONTINUE };
	int ret = linux_machine__create(r->m, vm, &mo);

	r->made = ret == 0;
	if (ret == 0) /* before any vCPU runs */
		r->m->timer.at_done = r->at_done;
	if (ret == 0 && r->nr_drives)
		ret = linux_machine__add_drives(r->m, vm, r->drives,
						r->nr_drives);
	if (ret == 0 && r->vsock)
		ret = linux_machine__add_vsock(r->m, vm, r->vsock_cid,
					       r->vsock_path);
	if (ret == 0 && r->track_writes)
		ret = vm__dirty_log_start(vm);
	return ret;
}

static int load_kernel(uint8_t *mem, const struct linux_kernel *k)
{
	if (k->format == LINUX_BZIMAGE)
		return read_at(k->fd, mem + k->bz.load_addr, k->bz.kernel_size,
			       k->bz.setup_size, "the kernel");
	for (unsigned int i = 0; i < k->nr_segs; i++) {
		const struct linux_segment *s = &k->segs[i];
		int ret = read_at(k->fd, mem + s->gpa, s->filesz, s->offset,
				  "the kernel");

		if (ret < 0)
			return ret;
		memset(mem + s->gpa + s->filesz, 0, s->memsz - s->filesz);
	}
	return 0;
}

static int write_boot_data(uint8_t *mem, const struct linux_boot *b)
{
	const struct linux_kernel *k = b->kernel;
	struct acpi_virtio virtio[LINUX_VIRTIO_SLOTS];
	unsigned int nr_virtio;
	struct linux_zero_page z = {
		.setup_hdr = k->format == LINUX_BZIMAGE ? k->head + BZ_HDR_OFFSET
							: NULL,
		.hdr_len = k->bz.hdr_len,
		.mem_size = b->mem_size,
		.cmdline_gpa = LINUX_CMDLINE_GPA,
		.initrd_gpa = b->initrd_gpa,
		.initrd_size = b->initrd_fd >= 0 ? b->initrd_size : 0,
		.acpi_rsdp = LINUX_ACPI_GPA,
	};
	int ret;

	ret = linux__virtio_acpi(&b->virtio, virtio);
	if (ret < 0)
		return ret;
	nr_virtio = (unsigned int)ret;
	memcpy(mem + LINUX_CMDLINE_GPA, b->cmdline, strlen(b->cmdline) + 1);
	ret = linux__zero_page((struct boot_params *)(mem +
						      LINUX_ZERO_PAGE_GPA), &z);
	if (ret == 0)
		ret = mptable__build(mem + LINUX_EBDA_GPA,
				     LINUX_HIGH_MEM - LINUX_EBDA_GPA,
				     (uint32_t)LINUX_EBDA_GPA, b->nr_vcpus);
	/* Both: kernels without MP-table support read ACPI, and the reverse. */
	if (ret == 0)
		ret = acpi__build(mem + LINUX_ACPI_GPA,
				  LINUX_HIGH_MEM - LINUX_ACPI_GPA, LINUX_ACPI_GPA,
				  b->nr_vcpus, virtio, nr_virtio);
	if (ret == 0 && b->initrd_fd >= 0)
		ret = read_at(b->initrd_fd, mem + b->initrd_gpa, b->initrd_size,
			      0, "the initrd");
	return ret;
}

static int write_gdt(uint8_t *mem, struct x86_segment *tss)
{
	const struct x86_segment *segs[] = { &x86_kernel_code,
					     &x86_kernel_data, tss };
	uint64_t gdt[GDT_SLOTS] = { 0 };
	int ret;

	*tss = (struct x86_segment){
		.base = LINUX_TSS_GPA, .limit = TSS_LIMIT,
		.selector = X86_KERNEL_TSS_SELECTOR,
		.type = X86_SEG_TYPE_TSS64_BUSY, .present = 1,
	};
	memset(mem + LINUX_TSS_GPA, 0, PT_PAGE_4K);
	ret = x86__gdt_fill(gdt, GDT_SLOTS, segs, 3);
	if (ret == 0)
		memcpy(mem + LINUX_GDT_GPA, gdt, sizeof(gdt));
	return ret;
}

/* vCPU 0 enters the kernel; APs wait for the kernel's INIT/SIPI. Every
 * vCPU gets firmware-like MSRs and LAPIC LINT0/LINT1. */
static int set_vcpus(struct vm *vm, const struct x86_long_mode *lm)
{
	int ret = x86__vcpu_long_mode_kernel(&vm->vcpus[0], lm);

	for (unsigned int i = 0; ret == 0 && i < vm->nr_vcpus; i++) {
		struct vcpu *v = &vm->vcpus[i];

		ret = x86__vcpu_set_msr_defaults(v);
		if (ret == 0)
			ret = x86__vcpu_set_lint(v);
		if (ret == 0)
			ret = x86__vcpu_set_mp_state(v, i == 0);
	}
	return ret;
}

int linux__load(struct vm *vm, const struct linux_boot *b)
{
	uint8_t *mem = vm->mem.host;
	struct x86_long_mode lm = {
		.rip = b->kernel->entry,
		.rsi = LINUX_ZERO_PAGE_GPA,
		.rsp = LINUX_ZERO_PAGE_GPA, /* the kernel sets its own */
		.gdt_base = LINUX_GDT_GPA,
		.gdt_limit = GDT_SLOTS * 8 - 1,
	};
	struct pt_builder pt;
	int ret;

	if (vm->mem.size != b->mem_size || vm->nr_vcpus != b->nr_vcpus)
		return err__set(EINVAL, "the VM's shape differs from the boot "
				"plan");
	ret = load_kernel(mem, b->kernel);
	if (ret == 0)
		ret = write_boot_data(mem, b);
	if (ret == 0)
		ret = write_gdt(mem, &lm.tss);
	if (ret == 0)
		ret = pt__init(&pt, mem, vm->mem.size, LINUX_PT_GPA,
			       LINUX_PT_END);
	if (ret < 0)
		return ret;
	ret = pt__map(&pt, 0, 0, LINUX_IDENTITY_MAP, PT_WRITE);
	lm.cr3 = pt.root;
	if (ret == 0)
		ret = set_vcpus(vm, &lm);
	return ret;
}

/* A guest that pauses itself at its boot-complete write leaves nothing
 * asked of its vCPUs to report, so the errors say what did not happen,
 * and how far the guest got. */
static int boot_paused_error(int ret, struct vm *vm,
			     const struct linux_machine *m,
			     uint64_t timeout_ns, const char *why)
{
	const char *open = why ? " (" : "", *close = why ? ")" : "";

	if (!why)
		why = "";
	if (ret == -ETIMEDOUT)
		return err__set(ETIMEDOUT, "the guest did not signal boot "
				"complete within %.3f s%s%s%s; its vCPUs made "
				"%" PRIu64 " exits and it wrote %" PRIu64
				" bytes to its console",
				(double)timeout_ns / 1e9, open, why, close,
				vm__exits(vm), m->com1.bytes_out);
	/* EIO, not ECANCELED: a caller may take that for its own
	 * cancellation (a pool draining) */
	if (ret == -ECANCELED)
		return err__set(EIO, "the guest ended before it signalled boot "
				"complete%s%s%s: %s", open, why, close,
				vm->reason);
	return ret;
}

int linux_machine__boot_paused(struct vm *vm, struct linux_machine *m,
			       const struct linux_boot *b,
			       uint64_t timeout_ns, const char *why)
{
	int ret;

	if (m->timer.at_boot != BOOTTIMER_PAUSE)
		return err__set(EINVAL, "the machine does not pause at boot "
				"complete");
	ret = linux__load(vm, b);
	if (ret == 0)
		ret = vm__start(vm);
	if (ret == 0)
		ret = vm__wait_paused(vm, timeout_ns);
	if (ret < 0) {
		ret = boot_paused_error(ret, vm, m, timeout_ns, why);
		vm__end(vm, VM_STOPPED, "failed to boot");
	}
	return ret;
}
