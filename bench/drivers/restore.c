/* The restore benchmark: snapshots of the probe guest with every page of
 * its memory dirtied, restored with each memory strategy while the page
 * cache is cold or warm, timed to the first instruction and to DONE, and
 * the same request phase in a VM that never stopped as the baseline;
 * and the restore pieces it shares (restore.h). */
#include "restore.h"

#include "args.h"
#include "cli.h"
#include "err.h"
#include "regfile.h"
#include "mem_restore.h"
#include "memstat.h"
#include "output.h"
#include "result.h"
#include "result_new.h"
#include "runner.h"
#include "snapshot.h"

#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define MiB ((uint64_t)1 << 20)
#define MAX_SIZES 8
#define MAX_STRATEGIES 16
#define TIMEOUT_NS (120ull * 1000000000ull)

static const char *const phase_names[RESTORE_NR_PHASES] = {
	[RESTORE_FIRST_RUN] = "first_run",
	[RESTORE_FIRST_PROGRESS] = "first_progress",
	[RESTORE_DONE] = "done",
	[RESTORE_REQUEST] = "request",
};

struct restore_opts {
	uint64_t count, warmup;
	uint64_t mems[MAX_SIZES], wss[MAX_SIZES];
	size_t nr_mems, nr_wss;
	const struct guest_mem_ops *strategies[MAX_STRATEGIES];
	size_t nr_strategies;
	bool warm, cold;     /* page-cache states to measure */
	bool drop_caches;    /* cold: drop every clean page, not just ours */
	bool baseline;       /* the never-stopped series */
	unsigned int pattern, op;
	bool json;
	const char *out_dir, *snapshot_dir, *kvm_path;
};

/* One strategy under one cache state in one (mem, ws) group. */
struct cell {
	const struct guest_mem_ops *ops;
	double *ns[RESTORE_NR_PHASES];
	size_t n;
	uint64_t faults, bytes_read; /* sums over counted samples */
	struct restore_work host;       /* sums over counted samples */
	double resident_max;         /* cold: worst residency before a sample */
};

struct group {
	uint64_t mem, ws;
	char dir[PATH_MAX];
	struct cell *cells; /* nr_strategies per cache state */
	double *never;      /* never-stopped request phase, count */
	size_t nr_never;
	/* strategies this host cannot do (e.g. no huge pages), and why */
	bool skip[MAX_STRATEGIES];
	char why[MAX_STRATEGIES][200];
};

static void usage(FILE *out)
{
	fputs("Usage: coldstart bench restore [OPTIONS]\n"
	      "Creates snapshots of the probe guest with all of its memory "
	      "dirtied, restores\neach with every memory strategy and times "
	      "restore -> first KVM_RUN, -> first\nguest progress and -> DONE "
	      "of the request phase (which touches the working set),\nwith "
	      "the snapshot files evicted from the page cache (cold) and "
	      "cached (warm),\nbeside the same request phase in a VM that never "
	      "stopped. Strategies are\ninterleaved.\n\n"
	      "  -n, --count N        counted restores per series (default "
	      "10)\n"
	      "  -w, --warmup N       uncounted restores first (default 1)\n"
	      "  --mem LIST           guest memory sizes (default 64M,256M)\n"
	      "  --ws LIST            working-set sizes (default 16M,64M); "
	      "pairs that do not\n                       fit (ws > mem - 2M) "
	      "are skipped\n"
	      "  --strategy LIST      restore strategies (default: all)\n"
	      "  --cache LIST         warm, cold or both (default warm,cold); "
	      "cold is left out\n                       (and recorded) when "
	      "the snapshots are on tmpfs\n"
	      "  --drop-caches        cold by writing /proc/sys/vm/drop_caches "
	      "(root) instead of\n                       "
	      "posix_fadvise(DONTNEED) on the snapshot files\n"
	      "  --no-baseline        skip the never-stopped series\n"
	      "  --pattern NAME       request-phase order: seq or random "
	      "(default random)\n"
	      "  --op NAME            read (default) or write\n"
	      "  --snapshot-dir DIR   where the snapshots are made (default: "
	      "a new directory in\n                       $TMPDIR or /var/tmp); "
	      "removed afterwards\n"
	      "  --json               the result document on stdout\n"
	      "  --out DIR            also write DIR/restore.json and "
	      "DIR/restore.md\n"
	      "  --kvm PATH           KVM device (default /dev/kvm)\n"
	      "Strategies:", out);
	for (const struct guest_mem_ops *const *s = mem_restore__strategies();
	     *s; s++)
		fprintf(out, " %s", (*s)->name);
	fputc('\n', out);
}

/* "64M,256M" into sizes, each a positive multiple of 4 KiB. */
static int parse_sizes(const char *opt, const char *text, uint64_t *out,
		       size_t *n)
{
	char buf[256], *save = NULL, *tok;
	int ret = 0;

	if (snprintf(buf, sizeof(buf), "%s", text) >= (int)sizeof(buf))
		return err__set(EINVAL, "%s: list too long", opt);
	*n = 0;
	for (tok = strtok_r(buf, ",", &save); ret == 0 && tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (*n == MAX_SIZES)
			return err__set(EINVAL, "%s: at most %d sizes", opt,
					MAX_SIZES);
		ret = args__size(opt, tok, &out[*n]);
		if (ret == 0 && (out[*n] == 0 || out[*n] % 4096))
			ret = err__set(EINVAL, "%s: '%s' is not a positive "
				       "multiple of 4 KiB", opt, tok);
		(*n)++;
	}
	if (ret == 0 && *n == 0)
		ret = err__set(EINVAL, "%s: empty list", opt);
	return ret;
}

static int parse_strategies(const char *text, struct restore_opts *o)
{
	char buf[256], *save = NULL, *tok;
	int ret = 0;

	if (snprintf(buf, sizeof(buf), "%s", text) >= (int)sizeof(buf))
		return err__set(EINVAL, "--strategy: list too long");
	o->nr_strategies = 0;
	for (tok = strtok_r(buf, ",", &save); ret == 0 && tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (o->nr_strategies == MAX_STRATEGIES)
			return err__set(EINVAL, "--strategy: too many");
		ret = mem__choose(mem_restore__strategies(), "--strategy", tok,
				  &o->strategies[o->nr_strategies++]);
	}
	if (ret == 0 && o->nr_strategies == 0)
		ret = err__set(EINVAL, "--strategy: empty list");
	return ret;
}

static int parse_cache(const char *text, struct restore_opts *o)
{
	static const char *const names[] = { "warm", "cold", NULL };
	char buf[64], *save = NULL, *tok;
	unsigned int which;
	int ret = 0;

	snprintf(buf, sizeof(buf), "%s", text);
	o->warm = o->cold = false;
	for (tok = strtok_r(buf, ",", &save); ret == 0 && tok;
	     tok = strtok_r(NULL, ",", &save)) {
		ret = args__choice("--cache", tok, names, &which);
		if (ret == 0 && which == 0)
			o->warm = true;
		else if (ret == 0)
			o->cold = true;
	}
	if (ret == 0 && !o->warm && !o->cold)
		ret = err__set(EINVAL, "--cache: empty list");
	return ret;
}

static void default_opts(struct restore_opts *o)
{
	const struct guest_mem_ops *const *s = mem_restore__strategies();

	*o = (struct restore_opts){ .count = 10, .warmup = 1, .warm = true,
				    .cold = true, .baseline = true,
				    .pattern = PROBE_PATTERN_RANDOM,
				    .op = PROBE_OP_READ };
	o->mems[0] = 64 * MiB;
	o->mems[1] = 256 * MiB;
	o->wss[0] = 16 * MiB;
	o->wss[1] = 64 * MiB;
	o->nr_mems = o->nr_wss = 2;
	for (; *s && o->nr_strategies < MAX_STRATEGIES; s++)
		o->strategies[o->nr_strategies++] = *s;
}

enum { OPT_MEM = 256, OPT_WS, OPT_STRATEGY, OPT_CACHE, OPT_DROP,
       OPT_NO_BASELINE, OPT_PATTERN, OPT_OP, OPT_SNAPDIR, OPT_JSON,
       OPT_OUT, OPT_KVM };

static int parse_one(int c, struct restore_opts *o)
{
	static const char *const patterns[] = { "seq", "random", NULL };
	static const char *const ops[] = { "read", "write", NULL };

	switch (c) {
	case 'n': return args__u64("--count", optarg, 1, 1000000, &o->count);
	case 'w': return args__u64("--warmup", optarg, 0, 1000000, &o->warmup);
	case OPT_MEM: return parse_sizes("--mem", optarg, o->mems, &o->nr_mems);
	case OPT_WS: return parse_sizes("--ws", optarg, o->wss, &o->nr_wss);
	case OPT_STRATEGY: return parse_strategies(optarg, o);
	case OPT_CACHE: return parse_cache(optarg, o);
	case OPT_DROP: o->drop_caches = true; return 0;
	case OPT_NO_BASELINE: o->baseline = false; return 0;
	case OPT_PATTERN: return args__choice("--pattern", optarg, patterns,
					      &o->pattern);
	case OPT_OP: return args__choice("--op", optarg, ops, &o->op);
	case OPT_SNAPDIR: o->snapshot_dir = optarg; return 0;
	case OPT_JSON: o->json = true; return 0;
	case OPT_OUT: o->out_dir = optarg; return 0;
	case OPT_KVM: o->kvm_path = optarg; return 0;
	default: return err__set(EINVAL, "unhandled option");
	}
}

static size_t plan_groups(const struct restore_opts *o, struct group *g);
static const char *snapshot_parent(const struct restore_opts *o);

/* Option combinations that cannot work are usage errors, found before
 * anything runs: no (mem, ws) pair fits, or only cold caches asked for on
 * a file system whose page cache cannot be evicted (with warm ones too,
 * the run measures those and records cold as left out). */
static int check_opts(const struct restore_opts *o)
{
	struct group g[MAX_SIZES * MAX_SIZES];
	const char *dir = snapshot_parent(o);

	if (plan_groups(o, g) == 0)
		return err__set(EINVAL, "no memory size fits any working set "
				"(each needs mem >= ws + 2M, mem a multiple of "
				"2M)");
	if (o->cold && !o->warm && restore__in_memory(dir))
		return err__set(EINVAL, "%s is in memory (tmpfs): its page "
				"cache cannot be evicted, so --cache cold means "
				"nothing there; use --snapshot-dir on a disk or "
				"--cache warm", dir);
	return 0;
}

/* 0, 1 for --help, or -EINVAL with a message. */
static int parse(int argc, char **argv, struct restore_opts *o)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "mem", required_argument, NULL, OPT_MEM },
		{ "ws", required_argument, NULL, OPT_WS },
		{ "strategy", required_argument, NULL, OPT_STRATEGY },
		{ "cache", required_argument, NULL, OPT_CACHE },
		{ "drop-caches", no_argument, NULL, OPT_DROP },
		{ "no-baseline", no_argument, NULL, OPT_NO_BASELINE },
		{ "pattern", required_argument, NULL, OPT_PATTERN },
		{ "op", required_argument, NULL, OPT_OP },
		{ "snapshot-dir", required_argument, NULL, OPT_SNAPDIR },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "kvm", required_argument, NULL, OPT_KVM },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, ret = 0;

	default_opts(o);
	optind = 0;
	opterr = 0;
	while (ret == 0 && (c = getopt_long(argc, argv, "n:w:h", opts, NULL)) != -1) {
		if (c == 'h')
			return 1;
		if (c == '?' || c == ':')
			ret = args__bad_option(argv);
		else
			ret = parse_one(c, o);
	}
	if (ret == 0)
		ret = args__no_operands(argc, argv);
	if (ret == 0)
		ret = check_opts(o);
	return ret;
}

/* ---- snapshots ---- */

static struct run_config group_guest(const struct restore_opts *o,
				     uint64_t mem, uint64_t ws)
{
	return (struct run_config){
		.mem_size = mem,
		.nr_vcpus = 1,
		.probe = { .init_bytes = mem - 2 * MiB, .ws_bytes = ws,
			   .pattern = o->pattern, .op = o->op, .seed = 1 },
		.timeout_ns = TIMEOUT_NS,
		.verify = true,
	};
}

/* Runs the guest to READY (every page of its memory written) and saves
 * it to `dir`. */
static int make_snapshot(struct kvm_host *kvm, const struct run_config *rc,
			 const char *dir)
{
	struct vm_config vcfg = runner__vm_config(rc);
	struct probe_params p = rc->probe;
	struct snapshot_stats st;
	struct probe probe;
	struct vm *vm;
	int ret = vm__create(kvm, &vcfg, NULL, &vm);

	if (ret < 0)
		return ret;
	p.pause_at_ready = true;
	ret = probe__setup(&probe, vm, &p);
	if (ret == 0)
		ret = vm__start(vm);
	if (ret == 0)
		ret = vm__wait_paused(vm, rc->timeout_ns);
	if (ret == 0)
		ret = snapshot__save(vm, &probe, dir, 0, &st);
	vm__end(vm, VM_STOPPED, "snapshot taken");
	vm__destroy(vm);
	return ret;
}

static void join(char *out, const char *dir, const char *name)
{
	snprintf(out, PATH_MAX, "%s/%s", dir, name);
}

/* Removes a snapshot directory this driver created (its known files). */
static void remove_snapshot(const char *dir)
{
	static const char *const files[] = { SNAPSHOT_STATE_FILE,
					     SNAPSHOT_MEMORY_FILE,
					     SNAPSHOT_WSET_FILE };
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		join(path, dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

/* ---- page-cache state ---- */

static int for_each_file(const char *dir, int (*fn)(int fd, const char *path))
{
	static const char *const files[] = { SNAPSHOT_STATE_FILE,
					     SNAPSHOT_MEMORY_FILE,
					     SNAPSHOT_WSET_FILE };
	char path[PATH_MAX];
	int ret = 0;

	for (size_t i = 0; ret == 0 && i < sizeof(files) / sizeof(files[0]); i++) {
		int fd;

		join(path, dir, files[i]);
		fd = regfile__open(path, NULL); /* a FIFO must not block */
		if (fd == -ENOENT)
			continue;
		if (fd < 0)
			return fd;
		ret = fn(fd, path);
		close(fd);
	}
	return ret;
}

static int evict_file(int fd, const char *path)
{
	int ret;

	if (fsync(fd) < 0)
		return err__sys(errno, "fsync of %s", path);
	ret = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	return ret ? err__sys(ret, "posix_fadvise(DONTNEED) of %s", path) : 0;
}

static int read_file(int fd, const char *path)
{
	static char buf[1 << 20];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	return n < 0 ? err__sys(errno, "reading %s", path) : 0;
}

static int drop_caches(void)
{
	int fd, ret = 0;

	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return err__sys(errno, "--drop-caches: opening "
				"/proc/sys/vm/drop_caches (needs root)");
	if (write(fd, "1", 1) != 1)
		ret = err__sys(errno, "--drop-caches: writing "
			       "/proc/sys/vm/drop_caches");
	close(fd);
	return ret;
}

double restore__resident_share(const char *dir)
{
	char path[PATH_MAX];
	struct stat st;
	unsigned char *vec;
	size_t pages, in = 0;
	void *p;
	int fd;

	join(path, dir, SNAPSHOT_MEMORY_FILE);
	fd = regfile__open(path, NULL);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	pages = ((size_t)st.st_size + 4095) / 4096;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	vec = malloc(pages);
	if (p != MAP_FAILED && vec && mincore(p, (size_t)st.st_size, vec) == 0)
		for (size_t i = 0; i < pages; i++)
			in += vec[i] & 1;
	free(vec);
	if (p != MAP_FAILED)
		munmap(p, (size_t)st.st_size);
	return (double)in / (double)pages;
}

int restore__cache(const char *dir, enum restore_cache c)
{
	if (c == RESTORE_WARM)
		return for_each_file(dir, read_file);
	return c == RESTORE_COLD_DROP ? drop_caches()
				      : for_each_file(dir, evict_file);
}

bool restore__in_memory(const char *dir)
{
	struct statfs sf;

	return statfs(dir, &sf) == 0 && (sf.f_type == TMPFS_MAGIC ||
					 sf.f_type == RAMFS_MAGIC);
}

static int prepare_cache(const struct restore_opts *o, const char *dir,
			 bool cold)
{
	if (!cold)
		return restore__cache(dir, RESTORE_WARM);
	return restore__cache(dir, o->drop_caches ? RESTORE_COLD_DROP
						  : RESTORE_COLD);
}

/* ---- one restore ---- */

static uint64_t io_read_bytes(void)
{
	long long v = memstat__file_number("/proc/self/io", "read_bytes:");

	return v < 0 ? RESTORE_NO_IO : (uint64_t)v;
}

void restore__work_begin(struct restore_work *w)
{
	struct rusage ru = { 0 };

	getrusage(RUSAGE_SELF, &ru);
	w->major = (uint64_t)ru.ru_majflt;
	w->faults = (uint64_t)ru.ru_minflt + w->major;
	w->disk_read = io_read_bytes();
}

/* *w = now - *w: the host's work since restore__work_begin(w). */
static void work_since(struct restore_work *w)
{
	struct restore_work now;

	restore__work_begin(&now);
	w->faults = now.faults - w->faults;
	w->major = now.major - w->major;
	w->disk_read = now.disk_read == RESTORE_NO_IO ||
				       w->disk_read == RESTORE_NO_IO
			       ? RESTORE_NO_IO
			       : now.disk_read - w->disk_read;
}

int restore__finish(struct vm *vm, unsigned int flags,
		    struct restore_sample *out)
{
	work_since(&out->host);
	/* a uffd handler may still be accounting its last fault */
	mem__settle(&vm->mem);
	out->mem = vm->mem.stats;
	if (!(flags & RESTORE_HELD))
		return 0;
	return memstat__self(&out->held, vm->mem.host);
}

static double span(const struct timeline *tl, enum tl_event a, enum tl_event b)
{
	return tl->t[a] && tl->t[b] ? (double)(tl->t[b] - tl->t[a]) : -1;
}

void restore__spans(const struct timeline *tl, struct restore_sample *out)
{
	out->ns[RESTORE_FIRST_RUN] = span(tl, TL_RESTORE_START, TL_FIRST_RUN);
	out->ns[RESTORE_FIRST_PROGRESS] = span(tl, TL_RESTORE_START,
					       TL_FIRST_PROGRESS);
	out->ns[RESTORE_DONE] = span(tl, TL_RESTORE_START, TL_GUEST_DONE);
	out->ns[RESTORE_REQUEST] = span(tl, TL_FIRST_RUN, TL_GUEST_DONE);
}

static int check_outcome(const struct vm *vm, const struct probe *probe,
			 const struct snapshot *snap)
{
	struct probe_state ps;

	probe__save_state(probe, &ps);
	if (vm->outcome != VM_COMPLETED)
		return err__set(EIO, "restored guest did not complete: %s",
				vm->reason);
	if (ps.checksum != probe__expected_checksum(&snap->params,
						    snap->cfg.nr_vcpus))
		return err__set(EIO, "restored guest reported a wrong "
				"checksum");
	return 0;
}

/* The host's work is counted from just before restore start to the VM's
 * end right after DONE, before its memory is freed. */
int restore__once(struct kvm_host *kvm, const char *dir,
		  const struct guest_mem_ops *ops, unsigned int flags,
		  struct restore_sample *out)
{
	struct timeline tl = { 0 };
	struct snapshot snap;
	struct probe probe;
	struct vm *vm = NULL;
	int ret;

	*out = (struct restore_sample){ 0 };
	restore__work_begin(&out->host);
	timeline__mark(&tl, TL_RESTORE_START);
	ret = snapshot__open(&snap, dir);
	if (ret < 0)
		return ret;
	ret = snapshot__restore(kvm, &snap, ops, &tl, &vm, &probe);
	if (ret == 0)
		ret = vm__start(vm);
	if (ret == 0) {
		vm__wait(vm, TIMEOUT_NS);
		ret = restore__finish(vm, flags, out);
		if (ret == 0)
			ret = check_outcome(vm, &probe, &snap);
	}
	vm__destroy(vm);
	snapshot__close(&snap);
	restore__spans(&tl, out);
	if (ret == 0 && out->ns[RESTORE_DONE] < 0)
		ret = err__set(EIO, "restore with %s: no DONE timestamp",
			       ops->name);
	return ret;
}

/* ---- the measurement ---- */

static int alloc_group(struct group *g, const struct restore_opts *o)
{
	size_t nc = 2 * o->nr_strategies;

	g->cells = calloc(nc, sizeof(*g->cells));
	g->never = calloc(o->count, sizeof(double));
	if (!g->cells || !g->never)
		return err__set(ENOMEM, "allocating samples");
	for (size_t i = 0; i < nc; i++) {
		g->cells[i].ops = o->strategies[i % o->nr_strategies];
		for (int p = 0; p < RESTORE_NR_PHASES; p++) {
			g->cells[i].ns[p] = calloc(o->count, sizeof(double));
			if (!g->cells[i].ns[p])
				return err__set(ENOMEM, "allocating samples");
		}
	}
	return 0;
}

static void free_group(struct group *g, const struct restore_opts *o)
{
	for (size_t i = 0; g->cells && i < 2 * o->nr_strategies; i++)
		for (int p = 0; p < RESTORE_NR_PHASES; p++)
			free(g->cells[i].ns[p]);
	free(g->cells);
	free(g->never);
}

static void record(struct cell *c, const struct restore_sample *s,
		   double resident)
{
	for (int p = 0; p < RESTORE_NR_PHASES; p++)
		c->ns[p][c->n] = s->ns[p];
	c->n++;
	c->faults += s->mem.faults;
	c->bytes_read += s->mem.bytes_read;
	c->host.faults += s->host.faults;
	c->host.major += s->host.major;
	if (s->host.disk_read == RESTORE_NO_IO ||
	    c->host.disk_read == RESTORE_NO_IO)
		c->host.disk_read = RESTORE_NO_IO;
	else
		c->host.disk_read += s->host.disk_read;
	if (resident > c->resident_max)
		c->resident_max = resident;
}

/* Every strategy once per round, the order rotating each round so none
 * always follows the same neighbour. */
static int measure_cache(struct kvm_host *kvm, const struct restore_opts *o,
			 struct group *g, bool cold)
{
	struct cell *cells = g->cells + (cold ? o->nr_strategies : 0);
	uint64_t total = o->warmup + o->count;
	char what[96];
	int ret = 0;

	snprintf(what, sizeof(what), "restore mem %" PRIu64 "M ws %" PRIu64
		 "M %s", g->mem / MiB, g->ws / MiB, cold ? "cold" : "warm");
	for (uint64_t i = 0; ret == 0 && i < total; i++) {
		for (size_t k = 0; ret == 0 && k < o->nr_strategies; k++) {
			size_t idx = (k + i) % o->nr_strategies;
			struct cell *c = &cells[idx];
			struct restore_sample s;
			double resident = 0;

			if (g->skip[idx])
				continue;
			ret = prepare_cache(o, g->dir, cold);
			if (ret == 0 && cold)
				resident = restore__resident_share(g->dir);
			if (ret == 0)
				ret = restore__once(kvm, g->dir, c->ops, 0, &s);
			if (ret == 0 && i >= o->warmup)
				record(c, &s, resident);
		}
		output__progress(what, (unsigned long)(i + 1),
				 (unsigned long)total);
	}
	output__progress_done();
	return ret;
}

/* The request phase (READY -> DONE) of a VM that never stopped: the
 * same guest, memory and working set, no snapshot. */
static int measure_never_stopped(struct kvm_host *kvm,
				 const struct restore_opts *o, struct group *g)
{
	struct run_config rc = group_guest(o, g->mem, g->ws);
	uint64_t total = o->warmup + o->count;

	for (uint64_t i = 0; i < total; i++) {
		struct run_result res = { 0 };
		int ret = runner__probe(kvm, &rc, &res);

		if (ret == 0 && !runner__succeeded(&rc, &res))
			ret = err__set(EIO, "never-stopped guest failed: %s",
				       res.reason);
		if (ret < 0)
			return ret;
		if (i >= o->warmup)
			g->never[g->nr_never++] =
				span(&res.tl, TL_GUEST_READY, TL_GUEST_DONE);
		output__progress("never-stopped baseline",
				 (unsigned long)(i + 1), (unsigned long)total);
	}
	output__progress_done();
	return 0;
}

/* One uncounted restore per strategy: prefetch records its working set
 * here, before anything counts; a strategy this host cannot do (-ENOTSUP,
 * e.g. huge pages not reserved) is skipped with the reason. */
static int trial_restores(struct kvm_host *kvm, const struct restore_opts *o,
			  struct group *g)
{
	for (size_t i = 0; i < o->nr_strategies; i++) {
		struct restore_sample s;
		int ret = restore__once(kvm, g->dir, o->strategies[i], 0,
				       &s);

		if (ret == -ENOTSUP) {
			g->skip[i] = true;
			snprintf(g->why[i], sizeof(g->why[i]), "%s", err__last());
			continue;
		}
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int measure_group(struct kvm_host *kvm, const struct restore_opts *o,
			 const char *base, struct group *g)
{
	struct run_config rc = group_guest(o, g->mem, g->ws);
	int ret;

	if (snprintf(g->dir, sizeof(g->dir), "%s/mem%" PRIu64 "M-ws%" PRIu64
		     "M", base, g->mem / MiB, g->ws / MiB) >= (int)sizeof(g->dir))
		return err__set(ENAMETOOLONG, "snapshot directory %s: path "
				"too long", base);
	ret = make_snapshot(kvm, &rc, g->dir);
	if (ret == 0)
		ret = trial_restores(kvm, o, g);
	if (ret == 0 && o->warm)
		ret = measure_cache(kvm, o, g, false);
	if (ret == 0 && o->cold)
		ret = measure_cache(kvm, o, g, true);
	if (ret == 0 && o->baseline)
		ret = measure_never_stopped(kvm, o, g);
	remove_snapshot(g->dir);
	return ret;
}

/* ---- the result ---- */

static json_t *sizes_json(const uint64_t *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_integer((json_int_t)v[i]));
	return a;
}

static json_t *config_json(const struct restore_opts *o, const char *fs)
{
	json_t *strategies = json_array(), *cache = json_array();

	for (size_t i = 0; i < o->nr_strategies; i++)
		json_array_append_new(strategies,
				      json_string(o->strategies[i]->name));
	if (o->warm)
		json_array_append_new(cache, json_string("warm"));
	if (o->cold)
		json_array_append_new(cache, json_string("cold"));
	return json_pack("{s:s, s:i, s:o, s:o, s:o, s:o, s:s, s:s, s:s, s:s, "
			 "s:I, s:I, s:s}",
			 "guest", "probe", "vcpus", 1, "mem_bytes",
			 sizes_json(o->mems, o->nr_mems), "ws_bytes",
			 sizes_json(o->wss, o->nr_wss), "strategies",
			 strategies, "cache", cache, "cold_method",
			 o->drop_caches ? "drop_caches"
					: "fsync+posix_fadvise(DONTNEED)",
			 "warm_method", "read every snapshot file",
			 "pattern", o->pattern ? "random" : "seq", "op",
			 o->op ? "write" : "read", "count",
			 (json_int_t)o->count, "warmup", (json_int_t)o->warmup,
			 "snapshot_fs", fs);
}

static double mean_of(uint64_t sum, size_t n)
{
	return n ? (double)sum / (double)n : 0;
}

/* What the strategy did itself (userfaults it served, bytes it read) and
 * what the host did for the process (page faults, storage reads). */
static void add_work(json_t *s, const struct cell *c)
{
	json_object_set_new(s, "faults_mean", json_real(mean_of(c->faults,
								c->n)));
	json_object_set_new(s, "bytes_read_mean",
			    json_real(mean_of(c->bytes_read, c->n)));
	json_object_set_new(s, "host_faults_mean",
			    json_real(mean_of(c->host.faults, c->n)));
	json_object_set_new(s, "major_faults_mean",
			    json_real(mean_of(c->host.major, c->n)));
	json_object_set_new(s, "disk_read_bytes_mean",
			    c->host.disk_read == RESTORE_NO_IO
				    ? json_null()
				    : json_real(mean_of(c->host.disk_read,
							c->n)));
}

static int add_cell(json_t *doc, const struct group *g, const struct cell *c,
		    const char *cache)
{
	for (int p = 0; p < RESTORE_NR_PHASES; p++) {
		char name[160];
		json_t *s, *params = json_pack(
			"{s:s, s:I, s:I, s:s, s:s}", "strategy", c->ops->name,
			"mem_bytes", (json_int_t)g->mem, "ws_bytes",
			(json_int_t)g->ws, "cache", cache, "phase",
			phase_names[p]);

		snprintf(name, sizeof(name), "%s/mem%" PRIu64 "M/ws%" PRIu64
			 "M/%s/%s", c->ops->name, g->mem / MiB, g->ws / MiB,
			 cache, phase_names[p]);
		s = result__add_series(doc, name, "ns", RESULT_LOWER, params,
				       c->ns[p], c->n);
		if (!s)
			return -ENOMEM;
		add_work(s, c);
		if (!strcmp(cache, "cold"))
			json_object_set_new(s, "resident_before_max",
					    json_real(c->resident_max));
	}
	if (!strcmp(cache, "cold") && c->resident_max > 0.01)
		result__warn(doc, "%s mem %" PRIu64 "M ws %" PRIu64 "M cold: up "
			     "to %.0f %% of the memory file was still cached "
			     "before a restore", c->ops->name, g->mem / MiB,
			     g->ws / MiB, 100 * c->resident_max);
	return 0;
}

static double median_of(const double *v, size_t n)
{
	double m = 0;

	return n && stats__median(v, n, &m) == 0 ? m : 0;
}

static const struct cell *find_cell(const struct restore_opts *o,
				    const struct group *g, const char *name,
				    bool cold)
{
	const struct cell *cells = g->cells + (cold ? o->nr_strategies : 0);

	for (size_t i = 0; i < o->nr_strategies; i++)
		if (!strcmp(cells[i].ops->name, name) && cells[i].n)
			return &cells[i];
	return NULL;
}

/* The working-set strategies that the REAP targets apply to. */
static const char *const prefetchers[] = { "prefetch", "prefetch-thp" };

/* The last entry of arr gets `key` null: no measurement, no ratio. */
static void null_last(json_t *arr, const char *key)
{
	json_object_set_new(json_array_get(arr, json_array_size(arr) - 1), key,
			    json_null());
}

/* Working-set strategy `name` against the never-stopped VM and mmap, per
 * cache state where it was measured (keys keep their prefetch_ prefix
 * for every prefetcher; "strategy" names it). */
static void add_ratios(json_t *arr, const struct restore_opts *o,
		       const struct group *g, const char *name)
{
	double never = median_of(g->never, g->nr_never);

	for (int cold = 0; cold < 2; cold++) {
		const struct cell *pf = find_cell(o, g, name, cold);
		const struct cell *mm = find_cell(o, g, "mmap", cold);
		double p = pf ? median_of(pf->ns[RESTORE_DONE], pf->n) : 0;
		double m = mm ? median_of(mm->ns[RESTORE_DONE], mm->n) : 0;

		if (!pf)
			continue;
		json_array_append_new(arr, json_pack(
			"{s:s, s:I, s:I, s:s, s:f, s:f, s:f, s:f, s:f, s:f}",
			"strategy", name, "mem_bytes", (json_int_t)g->mem,
			"ws_bytes", (json_int_t)g->ws, "cache",
			cold ? "cold" : "warm", "prefetch_done_ns", p,
			"prefetch_request_ns",
			median_of(pf->ns[RESTORE_REQUEST], pf->n), "mmap_done_ns", m,
			"never_stopped_request_ns", never,
			"prefetch_vs_never_stopped", never > 0 ? p / never : 0,
			"prefetch_speedup_over_mmap", p > 0 ? m / p : 0));
		if (never <= 0)
			null_last(arr, "prefetch_vs_never_stopped");
		if (!mm)
			null_last(arr, "prefetch_speedup_over_mmap");
	}
}

/* Each prefetcher against the never-stopped VM and against mmap, per
 * group and cache state, from medians of restore -> DONE. */
static json_t *ratios_json(const struct restore_opts *o,
			   const struct group *groups, size_t ng)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < ng; i++)
		for (size_t k = 0; k < 2; k++)
			add_ratios(arr, o, &groups[i], prefetchers[k]);
	return arr;
}

/* What the run left out: cold caches (cold_why, "" when measured) and
 * strategies the host cannot do, once per strategy and reason. */
static void add_skipped(json_t *doc, const struct restore_opts *o,
			const struct group *groups, size_t ng,
			const char *cold_why)
{
	char what[64];

	if (*cold_why)
		result__skip(doc, "cold cache", "%s", cold_why);
	for (size_t i = 0; i < ng; i++)
		for (size_t k = 0; k < o->nr_strategies; k++) {
			if (!groups[i].skip[k])
				continue;
			snprintf(what, sizeof(what), "strategy %s",
				 o->strategies[k]->name);
			result__skip(doc, what, "this host cannot do it: %s",
				     groups[i].why[k]);
		}
}

static json_t *result_json(const struct restore_opts *o,
			   const struct group *groups, size_t ng,
			   const char *fs, const char *cold_why)
{
	json_t *doc = result__new("restore", config_json(o, fs));

	if (doc)
		add_skipped(doc, o, groups, ng, cold_why);

	for (size_t i = 0; doc && i < ng; i++) {
		const struct group *g = &groups[i];
		char name[96];

		for (size_t k = 0; k < 2 * o->nr_strategies; k++)
			if (g->cells[k].n)
				add_cell(doc, g, &g->cells[k],
					 k < o->nr_strategies ? "warm" : "cold");
		if (!g->nr_never)
			continue;
		snprintf(name, sizeof(name), "never-stopped/mem%" PRIu64
			 "M/ws%" PRIu64 "M/request", g->mem / MiB, g->ws / MiB);
		result__add_series(doc, name, "ns", RESULT_LOWER, json_pack(
			"{s:s, s:I, s:I, s:s}", "strategy", "never-stopped",
			"mem_bytes", (json_int_t)g->mem, "ws_bytes",
			(json_int_t)g->ws, "phase", "request"),
			g->never, g->nr_never);
	}
	if (doc)
		json_object_set_new(doc, "ratios", ratios_json(o, groups, ng));
	return doc;
}

/* ---- text and Markdown ---- */

/* The host's storage reads per restore as text: "-" without I/O
 * accounting. */
static void disk_text(char *buf, size_t len, const struct cell *c)
{
	if (c->host.disk_read == RESTORE_NO_IO)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f", mean_of(c->host.disk_read, c->n) /
					     (double)MiB);
}

static void print_cell(FILE *out, const struct cell *c, const char *cache,
		       bool md)
{
	struct summary d = { 0 };
	char disk[32];

	stats__summarize(c->ns[RESTORE_DONE], c->n, &d);
	disk_text(disk, sizeof(disk), c);
	fprintf(out, md ? "| %s | %s | %.3f | %.3f | %.3f | %.3f | %.0f | %.1f "
			  "| %.0f | %.0f | %s |\n"
			: "%-10s %-5s %10.3f %10.3f %10.3f %10.3f %8.0f %8.1f "
			  "%8.0f %6.0f %8s\n", c->ops->name, cache,
		median_of(c->ns[RESTORE_FIRST_RUN], c->n) / 1e6, d.p50 / 1e6,
		d.p90 / 1e6, median_of(c->ns[RESTORE_REQUEST], c->n) / 1e6,
		mean_of(c->faults, c->n),
		mean_of(c->bytes_read, c->n) / (double)MiB,
		mean_of(c->host.faults, c->n), mean_of(c->host.major, c->n),
		disk);
}

/* One table per group; the work columns are means per restore: uffd
 * faults and MiB read by the strategy itself, then the host's page
 * faults (all, major) and storage reads for the whole process. */
static void print_group(FILE *out, const struct restore_opts *o,
			const struct group *g, bool md)
{
	double never = median_of(g->never, g->nr_never);

	fprintf(out, md ? "\n### mem %" PRIu64 " MiB, working set %" PRIu64
			  " MiB\n\n| strategy | cache | first KVM_RUN ms | "
			  "DONE ms (median) | DONE p90 ms | request ms | "
			  "uffd faults | MiB read | host faults | major faults "
			  "| disk MiB |\n|---|---|--:|--:|--:|--:|--:|--:|--:|"
			  "--:|--:|\n"
			: "\nmem %" PRIu64 " MiB, ws %" PRIu64 " MiB\n"
			  "%-10s %-5s %10s %10s %10s %10s %8s %8s %8s %6s "
			  "%8s\n",
		g->mem / MiB, g->ws / MiB, "strategy", "cache", "first_run",
		"DONE", "DONE p90", "request", "uffd_flt", "MiB read",
		"host_flt", "major", "disk MiB");
	for (size_t k = 0; k < 2 * o->nr_strategies; k++)
		if (g->cells[k].n)
			print_cell(out, &g->cells[k],
				   k < o->nr_strategies ? "warm" : "cold", md);
	if (g->nr_never)
		fprintf(out, md ? "\nNever stopped (same request phase, READY -> "
				  "DONE): %.3f ms median.\n"
				: "never stopped: request phase %.3f ms median\n",
			never / 1e6);
}

static void print_ratios(FILE *out, const json_t *ratios, bool md)
{
	const json_t *r;
	size_t i;

	json_array_foreach(ratios, i, r) {
		const json_t *vs = json_object_get(r, "prefetch_vs_never_stopped");
		const json_t *sp = json_object_get(r, "prefetch_speedup_over_mmap");

		fprintf(out, "%s%s, mem %" JSON_INTEGER_FORMAT " MiB ws %"
			JSON_INTEGER_FORMAT " MiB %s: restore -> DONE %.3f ms",
			md ? "- " : "",
			json_string_value(json_object_get(r, "strategy")),
			json_integer_value(json_object_get(r, "mem_bytes")) >> 20,
			json_integer_value(json_object_get(r, "ws_bytes")) >> 20,
			json_string_value(json_object_get(r, "cache")),
			json_number_value(json_object_get(r, "prefetch_done_ns")) / 1e6);
		if (json_is_number(vs))
			fprintf(out, " = %.2fx the never-stopped request phase "
				"(target <= 1.2x)", json_number_value(vs));
		if (json_is_number(sp))
			fprintf(out, ", speedup over mmap %.2fx (target >= 3x)",
				json_number_value(sp));
		fputc('\n', out);
	}
}

static char *markdown(const struct restore_opts *o, const struct group *g,
		      size_t ng, const json_t *doc)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	fprintf(f, "# coldstart restore benchmark\n\nSnapshots of the probe "
		"guest (1 vCPU) with every page of guest memory written, "
		"restored with each strategy; the request phase touches the "
		"working set (%s %s). Restore -> first KVM_RUN and -> DONE; "
		"cold = snapshot files evicted from the page cache (%s), warm = "
		"read once before. %" PRIu64 " counted restores per series "
		"after %" PRIu64 " warmup, strategies interleaved. Work per "
		"restore (means, restore start -> DONE): uffd faults and MiB "
		"read are what the strategy did itself (userfaults served, "
		"bytes it read from the memory file); host faults (minor + "
		"major) and major faults are every page fault of the process "
		"(getrusage), disk MiB what the process fetched from storage "
		"(/proc/self/io read_bytes: 0 when the page cache served "
		"it).\n",
		o->pattern ? "random" : "seq", o->op ? "write" : "read",
		o->drop_caches ? "drop_caches" : "fsync + posix_fadvise DONTNEED",
		o->count, o->warmup);
	for (size_t i = 0; i < ng; i++)
		print_group(f, o, &g[i], true);
	fputs("\n## prefetch and prefetch-thp against the baselines\n\n", f);
	print_ratios(f, json_object_get(doc, "ratios"), true);
	result__print_skipped(f, doc, true);
	result__md_warnings(f, doc);
	fputs("\nRaw samples and host metadata: restore.json.\n", f);
	fclose(f);
	return text;
}

static int emit(const struct restore_opts *o, const struct group *g,
		size_t ng, const char *fs, const char *cold_why)
{
	json_t *doc = result_json(o, g, ng, fs, cold_why);
	char *md = NULL;
	int ret = 0;

	if (!doc)
		return -ENOMEM;
	if (o->json) {
		result__print_json(stdout, doc);
	} else {
		for (size_t i = 0; i < ng; i++)
			print_group(stdout, o, &g[i], false);
		print_ratios(stdout, json_object_get(doc, "ratios"), false);
		result__print_skipped(stdout, doc, false);
	}
	if (o->out_dir) {
		md = markdown(o, g, ng, doc);
		ret = md ? result__save(doc, o->json, o->out_dir, md)
			 : err__set(ENOMEM, "building restore.md");
	}
	free(md);
	json_decref(doc);
	return ret;
}

/* ---- the command ---- */

/* Where the snapshot directory is made. */
static const char *snapshot_parent(const struct restore_opts *o)
{
	const char *tmp = getenv("TMPDIR");

	if (o->snapshot_dir)
		return o->snapshot_dir;
	return tmp && *tmp ? tmp : "/var/tmp";
}

/* A fresh directory for the snapshots (check_opts refused cold caches
 * on tmpfs); *fs names its file system kind for the config. */
static int snapshot_base(const struct restore_opts *o, char *base,
			 const char **fs)
{
	snprintf(base, PATH_MAX, "%s/coldstart-restore-XXXXXX",
		 snapshot_parent(o));
	if (!mkdtemp(base))
		return err__sys(errno, "creating a snapshot directory %s", base);
	*fs = restore__in_memory(base) ? "tmpfs" : "disk";
	return 0;
}

static size_t plan_groups(const struct restore_opts *o, struct group *g)
{
	size_t n = 0;

	for (size_t i = 0; i < o->nr_mems; i++)
		for (size_t j = 0; j < o->nr_wss; j++) {
			if (o->mems[i] % (2 * MiB) ||
			    o->wss[j] + 2 * MiB > o->mems[i])
				continue;
			g[n].mem = o->mems[i];
			g[n++].ws = o->wss[j];
		}
	return n;
}

/* Cold caches on tmpfs mean nothing (no page cache to evict): the run
 * measures warm ones alone and says why in cold_why (check_opts refused
 * cold alone). */
static void drop_cold_on_tmpfs(struct restore_opts *o, const char *fs,
			       const char *base, char *cold_why, size_t len)
{
	cold_why[0] = '\0';
	if (!o->cold || strcmp(fs, "tmpfs"))
		return;
	o->cold = false;
	snprintf(cold_why, len, "the snapshot directory %s is in memory "
		 "(tmpfs): its page cache cannot be evicted, so only warm "
		 "restores were measured; use --snapshot-dir on a disk", base);
}

static int run(const struct restore_opts *asked)
{
	struct group groups[MAX_SIZES * MAX_SIZES] = { 0 };
	struct restore_opts opts = *asked, *o = &opts;
	size_t ng = plan_groups(o, groups);
	char base[PATH_MAX], cold_why[PATH_MAX + 200];
	const char *fs = "disk";
	struct kvm_host kvm;
	int ret;

	ret = kvm__open(&kvm, o->kvm_path);
	if (ret < 0)
		return ret;
	ret = snapshot_base(o, base, &fs);
	if (ret < 0) {
		kvm__close(&kvm);
		return ret;
	}
	drop_cold_on_tmpfs(o, fs, base, cold_why, sizeof(cold_why));
	if (*cold_why)
		fprintf(stderr, "coldstart: bench restore: %s\n", cold_why);
	for (size_t i = 0; ret == 0 && i < ng; i++) {
		ret = alloc_group(&groups[i], o);
		if (ret == 0)
			ret = measure_group(&kvm, o, base, &groups[i]);
	}
	rmdir(base);
	kvm__close(&kvm);
	if (ret == 0)
		ret = emit(o, groups, ng, fs, cold_why);
	for (size_t i = 0; i < ng; i++)
		free_group(&groups[i], o);
	return ret;
}

int cmd_bench_restore(int argc, char **argv)
{
	struct restore_opts o;
	int ret = parse(argc, argv, &o);

	if (ret != 0)
		return cli__parsed(ret, "bench restore", usage);
	ret = run(&o);
	/* options were checked by parse(): whatever fails now is the run's */
	if (ret < 0)
		return cli__error(cli__exit_for(ret), "bench restore: %s",
				  err__last());
	return CLI_OK;
}
