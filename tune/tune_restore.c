/* `coldstart tune restore`: every memory-restore strategy that applies to
 * one snapshot on this host, timed with the page cache warm and cold, and
 * a verdict that names a winner only when the data can tell. */
#include "tune_restore.h"

#include "args.h"
#include "cli.h"
#include "compare.h"
#include "err.h"
#include "kvm.h"
#include "mem_restore.h"
#include "output.h"
#include "report.h"
#include "restore.h"
#include "result.h"
#include "result_new.h"
#include "snap_linux.h"
#include "snapshot.h"
#include "stats.h"
#include "timeline.h"

#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MiB ((uint64_t)1 << 20)
#define SECOND 1000000000ull
/* Rounds by default: on a 2-core PVM host with a busy neighbour, a third
 * of the samples land in a slow mode, and 20 rounds then missed a 50 %
 * faster strategy in most runs; never below what the test needs
 * (tune_restore__min_samples). */
#define DEFAULT_COUNT 30
#define DEFAULT_BUDGET (60 * SECOND)
#define CI_RESAMPLES 1000
#define CI_SEED 1

/* ---- the verdict (pure) ---- */

const char *tune_restore__outcome_name(enum tune_outcome o)
{
	static const char *const names[] = {
		[TUNE_WINNER] = "winner",
		[TUNE_TIED] = "tied",
		[TUNE_INCONCLUSIVE] = "inconclusive",
	};

	return names[o];
}

const char *tune_restore__status_name(enum tune_status s)
{
	static const char *const names[] = {
		[TUNE_FASTEST] = "fastest",
		[TUNE_SLOWER] = "slower",
		[TUNE_EQUIVALENT] = "equivalent",
		[TUNE_UNDECIDED] = "undecided",
		[TUNE_NO_SAMPLES] = "no samples",
	};

	return names[s];
}

size_t tune_restore__min_samples(size_t k, double alpha)
{
	size_t m = k > 1 ? k - 1 : 0, n = 1;

	if (m == 0)
		return 1;
	/* the bound halves with every sample or so: this ends quickly */
	while (compare__smallest_p(n, n) * (double)m >= alpha && n < 100000)
		n++;
	return n;
}

static int describe(const struct tune_candidate *c, size_t idx,
		    struct tune_rank *r)
{
	int ret;

	*r = (struct tune_rank){ .idx = idx, .p = NAN, .p_holm = NAN,
				 .min_p = NAN, .status = TUNE_NO_SAMPLES };
	if (!c->n)
		return 0;
	ret = stats__median(c->ns, c->n, &r->median);
	if (ret == 0)
		ret = stats__bootstrap_median_ci(c->ns, c->n, CI_RESAMPLES,
						 0.95, CI_SEED, &r->ci_lo,
						 &r->ci_hi);
	return ret < 0 ? err__set(-ret, "the median of %s", c->name) : 0;
}

/* Candidates with samples first, by median (stable: ties keep their
 * order), then those without. */
static void sort_ranks(const struct tune_candidate *c,
		       struct tune_verdict *v)
{
	for (size_t i = 1; i < v->nr; i++) {
		struct tune_rank r = v->rank[i];
		bool has = c[r.idx].n > 0;
		size_t j = i;

		for (; j > 0; j--) {
			const struct tune_rank *q = &v->rank[j - 1];
			bool before = !c[q->idx].n ? !has
						   : !has || q->median <= r.median;

			if (before)
				break;
			v->rank[j] = *q;
		}
		v->rank[j] = r;
	}
}

/* Holm's step-down adjustment of the comparisons' p-values, rank[1..]:
 * the j-th smallest p times (m - j), kept monotone. */
static void holm(struct tune_verdict *v)
{
	size_t m = v->comparisons, order[TUNE_MAX];
	double running = 0;

	for (size_t i = 0; i < m; i++) {
		size_t j = i;

		for (; j > 0 && v->rank[order[j - 1]].p > v->rank[i + 1].p; j--)
			order[j] = order[j - 1];
		order[j] = i + 1;
	}
	for (size_t j = 0; j < m; j++) {
		struct tune_rank *r = &v->rank[order[j]];

		running = fmax(running, fmin(1, (double)(m - j) * r->p));
		r->p_holm = running;
	}
}

static int against_fastest(const struct tune_candidate *c,
			   struct tune_verdict *v)
{
	const struct tune_candidate *f = &c[v->rank[0].idx];
	struct compare_opts o;

	compare__default_opts(&o);
	o.alpha = v->alpha;
	for (size_t i = 1; i < v->ranked; i++) {
		const struct tune_candidate *s = &c[v->rank[i].idx];
		struct compare_row row;
		int ret = compare__samples(f->ns, f->n, s->ns, s->n, false, 0,
					   &o, &row);

		if (ret < 0)
			return ret;
		v->rank[i].p = row.p;
		v->rank[i].min_p = row.min_p;
		v->rank[i].delta = row.delta;
	}
	return 0;
}

static void judge(struct tune_verdict *v)
{
	bool undecided = false, tied = false;

	v->outcome = TUNE_WINNER;
	if (!v->ranked) {
		v->outcome = TUNE_INCONCLUSIVE;
		return;
	}
	v->rank[0].status = TUNE_FASTEST;
	for (size_t i = 1; i < v->ranked; i++) {
		struct tune_rank *r = &v->rank[i];

		if (r->p_holm < v->alpha)
			r->status = TUNE_SLOWER;
		else if (r->min_p * (double)v->comparisons >= v->alpha)
			r->status = TUNE_UNDECIDED;
		else
			r->status = TUNE_EQUIVALENT;
		undecided |= r->status == TUNE_UNDECIDED;
		tied |= r->status == TUNE_EQUIVALENT;
	}
	if (undecided)
		v->outcome = TUNE_INCONCLUSIVE;
	else if (tied)
		v->outcome = TUNE_TIED;
}

int tune_restore__verdict(const struct tune_candidate *c, size_t n,
			  double alpha, struct tune_verdict *v)
{
	int ret = 0;

	if (n > TUNE_MAX)
		return err__set(EINVAL, "at most %d strategies", TUNE_MAX);
	if (!(alpha > 0 && alpha < 1))
		return err__set(EINVAL, "alpha %g is outside (0, 1)", alpha);
	*v = (struct tune_verdict){ .alpha = alpha, .nr = n };
	for (size_t i = 0; ret == 0 && i < n; i++) {
		ret = describe(&c[i], i, &v->rank[i]);
		v->ranked += c[i].n > 0;
	}
	if (ret < 0)
		return ret;
	sort_ranks(c, v);
	v->comparisons = v->ranked ? v->ranked - 1 : 0;
	if (v->ranked)
		v->rank[0].delta = 0;
	ret = against_fastest(c, v);
	if (ret < 0)
		return ret;
	holm(v);
	judge(v);
	return 0;
}

/* ---- options ---- */

struct tune_opts {
	const char *dir, *kvm_path, *out_dir;
	uint64_t count;    /* 0: the default */
	uint64_t budget_ns;
	double alpha;
	const struct guest_mem_ops *strategies[TUNE_MAX];
	size_t nr_strategies;
	bool warm, cold, json, allow_pvm;
};

static void usage(FILE *out)
{
	fputs("Usage: coldstart tune restore SNAPSHOT_DIR [OPTIONS]\n"
	      "Restores SNAPSHOT_DIR (a probe-guest or Linux snapshot) with "
	      "every memory-restore\nstrategy this host and snapshot allow, "
	      "with the page cache warm and cold, all\ninterleaved round by "
	      "round, and times restore start -> DONE (for Linux: the\nguest's "
	      "done signal). Ranks the strategies by median and names a "
	      "winner only\nwhen it is significantly faster than every other "
	      "one: the two-sided\nMann-Whitney U test of `coldstart compare` "
	      "against the fastest, Holm-corrected\nover those comparisons. "
	      "Otherwise says which strategies show no significant\ndifference "
	      "from the fastest. Prints the flag to use (--mem-restore NAME).\n"
	      "\n"
	      "  --budget DURATION    stop sampling once this is spent, in "
	      "whole rounds (default\n                       60s, trial "
	      "restores included)\n"
	      "  --cache LIST         warm, cold or both (default warm,cold); "
	      "cold is left out\n                       (and recorded) on "
	      "tmpfs and for diff snapshots\n"
	      "  -n, --count N        restores per strategy and cache state "
	      "(default 30); raised\n                       to the least with "
	      "which the test can reach --alpha\n"
	      "  --alpha P            significance level (default 0.01, as "
	      "compare)\n"
	      "  --strategy LIST      strategies to try (default: all)\n"
	      "  --allow-pvm          time a Linux snapshot on a PVM host "
	      "(only the ring-0 test\n                       kernel runs there)\n"
	      "  --json               the result document on stdout\n"
	      "  --out DIR            also write DIR/tune-restore.json and "
	      "DIR/tune-restore.md\n"
	      "  --kvm PATH           KVM device (default /dev/kvm)\n"
	      "The prefetch strategies record SNAPSHOT_DIR/wset on their first "
	      "restore when it\nis missing, as `snapshot restore` does.\n"
	      "Exit codes: 0 done (winner or not), 1 a restore failed, 2 usage "
	      "or not a\nsnapshot, 77 this host cannot (no KVM; a Linux "
	      "snapshot on PVM).\nStrategies:", out);
	for (const struct guest_mem_ops *const *s = mem_restore__strategies();
	     *s; s++)
		fprintf(out, " %s", (*s)->name);
	fputc('\n', out);
}

static int parse_strategies(const char *text, struct tune_opts *o)
{
	char buf[256], *save = NULL, *tok;
	int ret = 0;

	if (snprintf(buf, sizeof(buf), "%s", text) >= (int)sizeof(buf))
		return err__set(EINVAL, "--strategy: list too long");
	o->nr_strategies = 0;
	for (tok = strtok_r(buf, ",", &save); ret == 0 && tok;
	     tok = strtok_r(NULL, ",", &save)) {
		const struct guest_mem_ops *ops;

		ret = mem__choose(mem_restore__strategies(), "--strategy", tok,
				  &ops);
		for (size_t i = 0; ret == 0 && i < o->nr_strategies; i++)
			if (o->strategies[i] == ops)
				ret = err__set(EINVAL, "--strategy: %s is named "
					       "twice", tok);
		if (ret == 0)
			o->strategies[o->nr_strategies++] = ops;
	}
	if (ret == 0 && o->nr_strategies == 0)
		ret = err__set(EINVAL, "--strategy: empty list");
	return ret;
}

static int parse_cache(const char *text, struct tune_opts *o)
{
	static const char *const names[] = { "warm", "cold", NULL };
	char buf[64], *save = NULL, *tok;
	unsigned int which;
	int ret = 0;

	if (snprintf(buf, sizeof(buf), "%s", text) >= (int)sizeof(buf))
		return err__set(EINVAL, "--cache: list too long");
	o->warm = o->cold = false;
	for (tok = strtok_r(buf, ",", &save); ret == 0 && tok;
	     tok = strtok_r(NULL, ",", &save)) {
		ret = args__choice("--cache", tok, names, &which);
		if (ret == 0)
			*(which ? &o->cold : &o->warm) = true;
	}
	if (ret == 0 && !o->warm && !o->cold)
		ret = err__set(EINVAL, "--cache: empty list");
	return ret;
}

static void default_opts(struct tune_opts *o)
{
	const struct guest_mem_ops *const *s = mem_restore__strategies();

	*o = (struct tune_opts){ .budget_ns = DEFAULT_BUDGET, .alpha = 0.01,
				 .warm = true, .cold = true };
	for (; *s && o->nr_strategies < TUNE_MAX; s++)
		o->strategies[o->nr_strategies++] = *s;
}

enum { OPT_BUDGET = 256, OPT_CACHE, OPT_ALPHA, OPT_STRATEGY, OPT_PVM,
       OPT_JSON, OPT_OUT, OPT_KVM };

static int parse_one(int c, struct tune_opts *o)
{
	switch (c) {
	case 'n': return args__u64("--count", optarg, 1, 100000, &o->count);
	case OPT_BUDGET:
		if (args__duration("--budget", optarg, &o->budget_ns) < 0)
			return -EINVAL;
		return o->budget_ns ? 0 : err__set(EINVAL, "--budget: must be "
						   "more than 0");
	case OPT_CACHE: return parse_cache(optarg, o);
	case OPT_ALPHA: return args__probability("--alpha", optarg, &o->alpha);
	case OPT_STRATEGY: return parse_strategies(optarg, o);
	case OPT_PVM: o->allow_pvm = true; return 0;
	case OPT_JSON: o->json = true; return 0;
	case OPT_OUT: o->out_dir = optarg; return 0;
	case OPT_KVM: o->kvm_path = optarg; return 0;
	default: return err__set(EINVAL, "unhandled option");
	}
}

/* 0, 1 for --help, or -EINVAL with a message. SNAPSHOT_DIR may come
 * before or after the options. */
static int parse(int argc, char **argv, struct tune_opts *o)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "budget", required_argument, NULL, OPT_BUDGET },
		{ "cache", required_argument, NULL, OPT_CACHE },
		{ "alpha", required_argument, NULL, OPT_ALPHA },
		{ "strategy", required_argument, NULL, OPT_STRATEGY },
		{ "allow-pvm", no_argument, NULL, OPT_PVM },
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
	while (ret == 0 && (c = getopt_long(argc, argv, "n:h", opts, NULL)) != -1) {
		if (c == 'h')
			return 1;
		if (c == '?' || c == ':')
			ret = args__bad_option(argv);
		else
			ret = parse_one(c, o);
	}
	if (ret == 0 && optind >= argc)
		ret = err__set(EINVAL, "SNAPSHOT_DIR missing");
	if (ret == 0)
		o->dir = argv[optind++];
	if (ret == 0)
		ret = args__no_operands(argc, argv);
	return ret;
}

/* ---- the snapshot ---- */

struct snap_info {
	bool linux_guest, compressed, diff;
	uint64_t mem_size, data_bytes;
	uint32_t vcpus;
	char kernel[SNAP_GUEST_PATH_MAX];
	bool in_memory; /* on tmpfs */
	bool had_wset;  /* DIR/wset existed before this run */
};

static bool has_file(const char *dir, const char *name)
{
	char path[PATH_MAX];

	return snprintf(path, sizeof(path), "%s/%s", dir, name) <
		       (int)sizeof(path) &&
	       access(path, F_OK) == 0;
}

/* -EINVAL naming `dir` unless it holds a snapshot this coldstart can
 * restore. */
static int check_snapshot(const char *dir, struct snap_info *info)
{
	struct snapshot s;
	struct stat st;
	char why[512];
	int ret;

	if (stat(dir, &st) < 0)
		return err__sys(errno, "snapshot directory %s", dir);
	if (!S_ISDIR(st.st_mode))
		return err__set(EINVAL, "%s is not a directory (a snapshot is "
				"a directory made by `coldstart snapshot "
				"create`)", dir);
	ret = snapshot__open(&s, dir);
	if (ret < 0) {
		snprintf(why, sizeof(why), "%s", err__last());
		return err__set(EINVAL, "%s is not a snapshot coldstart can "
				"restore: %s", dir, why);
	}
	*info = (struct snap_info){
		.linux_guest = s.cfg.guest == SNAP_GUEST_LINUX,
		.compressed = s.compressed, .diff = s.diff_base,
		.mem_size = s.cfg.mem_size, .data_bytes = s.mem.data_bytes,
		.vcpus = s.cfg.nr_vcpus, .in_memory = restore__in_memory(dir),
		.had_wset = has_file(dir, SNAPSHOT_WSET_FILE),
	};
	if (info->linux_guest)
		snprintf(info->kernel, sizeof(info->kernel), "%s",
			 s.guest.kernel);
	snapshot__close(&s);
	return 0;
}

/* Why cold caches mean nothing for this snapshot, or NULL. */
static const char *cold_meaningless(const struct snap_info *info)
{
	if (info->diff)
		return "a diff snapshot is merged with its base into memory "
		       "(a memfd) at every open, so no restore reads its "
		       "files through the page cache";
	if (info->in_memory)
		return "the snapshot is in memory (tmpfs): its page cache "
		       "cannot be evicted; copy it to a disk to measure cold "
		       "restores";
	return NULL;
}

/* ---- the measurement ---- */

typedef int restore_fn(struct kvm_host *kvm, const char *dir,
		       const struct guest_mem_ops *ops, unsigned int flags,
		       struct restore_sample *out);

/* One strategy under one cache state. */
struct cell {
	const struct guest_mem_ops *ops;
	bool cold;
	struct restore_sample *s; /* count of them */
	size_t n;
	double resident_max; /* cold: the most of the memory file still
			      * cached before a restore */
};

struct tune {
	struct tune_opts o;
	struct snap_info info;
	restore_fn *once;
	struct kvm_host kvm;
	bool skip[TUNE_MAX];
	char why[TUNE_MAX][320];
	struct cell cells[2][TUNE_MAX]; /* [cold][strategy] */
	size_t count, min_count, rounds;
	uint64_t start_ns, elapsed_ns;
	bool budget_spent;
	const char *cold_why; /* cold asked for, left out: why */
};

static const char *cache_name(bool cold)
{
	return cold ? "cold" : "warm";
}

static bool measured(const struct tune *t, bool cold)
{
	return cold ? t->o.cold : t->o.warm;
}

static size_t nr_applicable(const struct tune *t)
{
	size_t k = 0;

	for (size_t i = 0; i < t->o.nr_strategies; i++)
		k += !t->skip[i];
	return k;
}

/* err__last() prefixed with the strategy and cache state. */
static int annotate(int ret, const struct guest_mem_ops *ops, bool cold)
{
	char why[512];

	snprintf(why, sizeof(why), "%s", err__last());
	return err__set(-ret, "restore with %s, %s cache: %s", ops->name,
			cache_name(cold), why);
}

/* One uncounted restore per strategy, cache warm: prefetch records its
 * working set here, the first-run costs fall outside the samples, and a
 * strategy this host (-ENOTSUP: no huge pages) or this snapshot
 * (-EINVAL: compressed memory, which the strategies that map the file or
 * read regions of it refuse) cannot do is left out with the reason. */
static int trial_restores(struct tune *t)
{
	for (size_t i = 0; i < t->o.nr_strategies; i++) {
		const struct guest_mem_ops *ops = t->o.strategies[i];
		struct restore_sample s;
		int ret = restore__cache(t->o.dir, RESTORE_WARM);

		if (ret == 0)
			ret = t->once(&t->kvm, t->o.dir, ops, 0, &s);
		if (ret == -ENOTSUP || (ret == -EINVAL && t->info.compressed)) {
			t->skip[i] = true;
			snprintf(t->why[i], sizeof(t->why[i]), "%s: %s",
				 ret == -ENOTSUP ? "this host cannot do it"
						 : "this snapshot cannot",
				 err__last());
			continue;
		}
		if (ret < 0)
			return annotate(ret, ops, false);
	}
	return 0;
}

static int alloc_cells(struct tune *t)
{
	for (int cold = 0; cold < 2; cold++)
		for (size_t i = 0; i < t->o.nr_strategies; i++) {
			struct cell *c = &t->cells[cold][i];

			*c = (struct cell){ .ops = t->o.strategies[i],
					    .cold = cold };
			c->s = calloc(t->count, sizeof(*c->s));
			if (!c->s)
				return err__set(ENOMEM, "allocating samples");
		}
	return 0;
}

static void free_cells(struct tune *t)
{
	for (int cold = 0; cold < 2; cold++)
		for (size_t i = 0; i < t->o.nr_strategies; i++)
			free(t->cells[cold][i].s);
}

/* One restore of cell `c`, recorded when `counted`. */
static int sample(struct tune *t, struct cell *c, bool counted)
{
	struct restore_sample scratch;
	double resident = 0;
	int ret = restore__cache(t->o.dir, c->cold ? RESTORE_COLD
						   : RESTORE_WARM);

	if (ret == 0 && c->cold)
		resident = restore__resident_share(t->o.dir);
	if (ret == 0)
		ret = t->once(&t->kvm, t->o.dir, c->ops, RESTORE_HELD,
			      counted ? &c->s[c->n] : &scratch);
	if (ret < 0)
		return annotate(ret, c->ops, c->cold);
	if (!counted)
		return 0;
	c->n++;
	if (resident > c->resident_max)
		c->resident_max = resident;
	return 0;
}

/* Every (cache state, strategy) once, the order rotating each round so
 * none always follows the same neighbour and drift hits all alike. */
static int round_once(struct tune *t, bool counted)
{
	struct cell *order[2 * TUNE_MAX];
	size_t k = 0;
	int ret = 0;

	for (int cold = 0; cold < 2; cold++)
		for (size_t i = 0; measured(t, cold) && i < t->o.nr_strategies;
		     i++)
			if (!t->skip[i])
				order[k++] = &t->cells[cold][i];
	for (size_t j = 0; ret == 0 && j < k; j++)
		ret = sample(t, order[(j + t->rounds) % k], counted);
	return ret;
}

/* An uncounted round first (the trials ran warm only: the first cold
 * restores pay first-run costs), then rounds until `count`, or until the
 * next round (as long as the last one) would end past the budget. */
static int sample_rounds(struct tune *t)
{
	uint64_t deadline = t->start_ns + t->o.budget_ns, last;
	int ret = 0;

	last = timeline__now();
	if (last < deadline)
		ret = round_once(t, false);
	last = timeline__now() - last;
	while (ret == 0 && t->rounds < t->count) {
		uint64_t now = timeline__now();

		if (now + last > deadline) {
			t->budget_spent = true;
			break;
		}
		ret = round_once(t, true);
		last = timeline__now() - now;
		t->rounds++;
		output__progress("tune restore", (unsigned long)t->rounds,
				 (unsigned long)t->count);
	}
	output__progress_done();
	t->elapsed_ns = timeline__now() - t->start_ns;
	return ret;
}

/* "-n 3 raised to 7: ..." when -n asked for fewer samples than the test
 * needs, else "". */
static void raised_text(char *buf, size_t len, const struct tune *t)
{
	size_t k = nr_applicable(t);

	buf[0] = '\0';
	if (t->o.count && t->o.count < t->min_count)
		snprintf(buf, len, "-n %" PRIu64 " raised to %zu: with %zu "
			 "comparisons, fewer samples can never reach alpha %g",
			 t->o.count, t->min_count, k ? k - 1 : 0, t->o.alpha);
}

/* The samples the test needs for the strategies that apply (known after
 * the trials); -n below that is raised, with a note. */
static void plan_count(struct tune *t)
{
	char note[256];

	t->min_count = tune_restore__min_samples(nr_applicable(t),
						 t->o.alpha);
	t->count = t->o.count ? t->o.count : DEFAULT_COUNT;
	raised_text(note, sizeof(note), t);
	if (*note)
		fprintf(stderr, "coldstart: tune restore: %s\n", note);
	if (t->count < t->min_count)
		t->count = t->min_count;
}

/* ---- the result document ---- */

static json_t *config_json(const struct tune *t)
{
	json_t *strategies = json_array(), *cache = json_array(), *c;

	for (size_t i = 0; i < t->o.nr_strategies; i++)
		json_array_append_new(strategies,
				      json_string(t->o.strategies[i]->name));
	for (int cold = 0; cold < 2; cold++)
		if (measured(t, cold))
			json_array_append_new(cache,
					      json_string(cache_name(cold)));
	c = json_pack("{s:s, s:s, s:I, s:i, s:I, s:b, s:b, s:o, s:o, s:o, "
		      "s:I, s:f, s:s, s:s, s:I, s:s, s:s, s:s, s:s, s:s}",
		      "snapshot", t->o.dir, "guest",
		      t->info.linux_guest ? "linux" : "probe", "mem_bytes",
		      (json_int_t)t->info.mem_size, "vcpus", (int)t->info.vcpus,
		      "mem_data_bytes", (json_int_t)t->info.data_bytes,
		      "compressed", t->info.compressed, "diff", t->info.diff,
		      "strategies", strategies, "cache", cache, "count_asked",
		      t->o.count ? json_integer((json_int_t)t->o.count)
				 : json_null(),
		      "budget_ns", (json_int_t)t->o.budget_ns, "alpha",
		      t->o.alpha, "test", "mann-whitney-u, two-sided",
		      "correction", "holm", "count", (json_int_t)t->count,
		      "cold_method", "fsync+posix_fadvise(DONTNEED) of the "
		      "snapshot files before each restore", "warm_method",
		      "every snapshot file read before each restore",
		      "held_method", "/proc/self/smaps of the guest memory "
		      "mapping right after the VM ended, before its memory was "
		      "freed: Rss, Pss, Anonymous",
		      "snapshot_fs", t->info.in_memory ? "tmpfs" : "disk",
		      "wset", t->info.had_wset ? "existing"
			      : has_file(t->o.dir, SNAPSHOT_WSET_FILE)
				      ? "recorded by this run"
				      : "none");
	if (c && t->info.linux_guest)
		json_object_set_new(c, "kernel", json_string(t->info.kernel));
	return c;
}

/* One number of a sample; NAN where it was not measured. */
typedef double sample_value(const struct restore_sample *s);

static double first_run(const struct restore_sample *s)
{
	return s->ns[RESTORE_FIRST_RUN];
}

static double host_faults(const struct restore_sample *s)
{
	return (double)s->host.faults;
}

static double major_faults(const struct restore_sample *s)
{
	return (double)s->host.major;
}

static double disk_read(const struct restore_sample *s)
{
	return s->host.disk_read == RESTORE_NO_IO ? NAN
						  : (double)s->host.disk_read;
}

static double strategy_faults(const struct restore_sample *s)
{
	return (double)s->mem.faults;
}

static double strategy_read(const struct restore_sample *s)
{
	return (double)s->mem.bytes_read;
}

static double guest_rss(const struct restore_sample *s)
{
	return (double)s->held.guest_rss_kib;
}

static double guest_pss(const struct restore_sample *s)
{
	return (double)s->held.guest_pss_kib;
}

static double guest_anon(const struct restore_sample *s)
{
	return (double)s->held.guest_anon_kib;
}

static const struct {
	const char *key;
	sample_value *fn;
} work_values[] = {
	{ "first_run_ns", first_run },
	{ "guest_rss_kib", guest_rss },
	{ "guest_pss_kib", guest_pss },
	{ "guest_anon_kib", guest_anon },
	{ "disk_read_bytes", disk_read },
	{ "host_faults", host_faults },
	{ "major_faults", major_faults },
	{ "strategy_faults", strategy_faults },
	{ "strategy_bytes_read", strategy_read },
};

#define NR_WORK (sizeof(work_values) / sizeof(work_values[0]))

static void values(const struct cell *c, sample_value *fn, double *out)
{
	for (size_t i = 0; i < c->n; i++)
		out[i] = fn(&c->s[i]);
}

/* {"samples": [...], "median", "mean"}; all null when a sample lacks the
 * value (no I/O accounting). */
static json_t *work_json(const double *v, size_t n)
{
	json_t *arr = json_array();
	double median = 0, sum = 0;

	for (size_t i = 0; i < n; i++) {
		if (isnan(v[i])) {
			json_decref(arr);
			return json_pack("{s:n, s:n, s:n}", "samples", "median",
					 "mean");
		}
		json_array_append_new(arr, json_real(v[i]));
		sum += v[i];
	}
	if (n)
		stats__median(v, n, &median);
	return json_pack("{s:o, s:f, s:f}", "samples", arr, "median", median,
			 "mean", n ? sum / (double)n : 0.0);
}

static char *series_name(char *buf, size_t len, const struct cell *c)
{
	snprintf(buf, len, "%s/%s/done", c->ops->name, cache_name(c->cold));
	return buf;
}

static int add_cell(json_t *doc, const struct cell *c, double *tmp)
{
	json_t *s, *work = json_object();
	char name[96];

	for (size_t i = 0; i < c->n; i++)
		tmp[i] = c->s[i].ns[RESTORE_DONE];
	s = result__add_series(doc, series_name(name, sizeof(name), c), "ns",
			       RESULT_LOWER,
			       json_pack("{s:s, s:s, s:s}", "strategy",
					 c->ops->name, "cache",
					 cache_name(c->cold), "phase", "done"),
			       tmp, c->n);
	if (!s || !work) {
		json_decref(work);
		return err__set(ENOMEM, "building the result");
	}
	for (size_t k = 0; k < NR_WORK; k++) {
		values(c, work_values[k].fn, tmp);
		json_object_set_new(work, work_values[k].key,
				    work_json(tmp, c->n));
	}
	json_object_set_new(s, "work", work);
	if (c->cold)
		json_object_set_new(s, "resident_before_max",
				    json_real(c->resident_max));
	if (c->cold && c->resident_max > 0.01)
		result__warn(doc, "%s cold: up to %.0f %% of the memory file "
			     "was still cached before a restore", c->ops->name,
			     100 * c->resident_max);
	return 0;
}

static json_t *name_list(const struct tune_verdict *v,
			 const struct tune_candidate *c, enum tune_status a,
			 enum tune_status b)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < v->ranked; i++)
		if (v->rank[i].status == a || v->rank[i].status == b)
			json_array_append_new(arr,
					      json_string(c[v->rank[i].idx].name));
	return arr;
}

static json_t *number_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

static json_t *ranking_json(const struct tune_verdict *v,
			    const struct tune_candidate *c)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < v->nr; i++) {
		const struct tune_rank *r = &v->rank[i];
		bool has = r->status != TUNE_NO_SAMPLES;

		json_array_append_new(arr, json_pack(
			"{s:s, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:s}",
			"strategy", c[r->idx].name, "n", (json_int_t)c[r->idx].n,
			"median_ns", has ? json_real(r->median) : json_null(),
			"ci95_median_ns",
			has ? json_pack("[f, f]", r->ci_lo, r->ci_hi)
			    : json_null(),
			"delta_vs_fastest", has ? json_real(r->delta)
						: json_null(),
			"p", number_or_null(r->p), "p_holm",
			number_or_null(r->p_holm), "min_p",
			number_or_null(r->min_p), "status",
			tune_restore__status_name(r->status)));
	}
	return arr;
}

/* The verdict in words, for the report and the document. */
static void verdict_text(char *buf, size_t len, const struct tune *t,
			 const struct tune_verdict *v,
			 const struct tune_candidate *c)
{
	const char *fastest = v->ranked ? c[v->rank[0].idx].name : NULL;
	FILE *f = fmemopen(buf, len, "w");
	const char *sep = "";

	if (!f) {
		snprintf(buf, len, "%s", tune_restore__outcome_name(v->outcome));
		return;
	}
	if (!v->ranked)
		fputs("Nothing was measured: the budget was spent before the "
		      "first counted round (the trial restores and one "
		      "uncounted round come first).", f);
	else if (v->outcome == TUNE_WINNER && v->ranked == 1)
		fprintf(f, "%s is the only strategy that ran.", fastest);
	else if (v->outcome == TUNE_WINNER)
		fprintf(f, "%s wins: significantly faster than every other "
			"strategy (Mann-Whitney U, Holm-corrected, alpha %g).",
			fastest, v->alpha);
	else if (v->outcome == TUNE_TIED) {
		fprintf(f, "No single winner: ");
		for (size_t i = 0; i < v->ranked; i++)
			if (v->rank[i].status == TUNE_FASTEST ||
			    v->rank[i].status == TUNE_EQUIVALENT) {
				fprintf(f, "%s%s", sep, c[v->rank[i].idx].name);
				sep = ", ";
			}
		fprintf(f, " show no significant difference (Mann-Whitney U, "
			"Holm-corrected, alpha %g); %s has the smallest median.",
			v->alpha, fastest);
	} else
		fprintf(f, "Undecided: with %zu restores per strategy the test "
			"cannot reach alpha %g over %zu comparisons (it needs "
			"%zu)%s; %s has the smallest median.", t->rounds,
			v->alpha, v->comparisons, t->min_count,
			t->budget_spent ? ", and the budget ran out" : "",
			fastest);
	fclose(f);
}

static json_t *cache_verdict_json(const struct tune *t, bool cold)
{
	struct tune_candidate c[TUNE_MAX];
	struct tune_verdict v;
	size_t k = 0;
	char text[1024], flag[64] = "";
	const char *winner = NULL;
	json_t *j;

	for (size_t i = 0; i < t->o.nr_strategies; i++) {
		const struct cell *cell = &t->cells[cold][i];
		double *ns;

		if (t->skip[i])
			continue;
		ns = malloc((cell->n ? cell->n : 1) * sizeof(double));
		if (!ns)
			goto nomem;
		for (size_t s = 0; s < cell->n; s++)
			ns[s] = cell->s[s].ns[RESTORE_DONE];
		c[k++] = (struct tune_candidate){ cell->ops->name, ns, cell->n };
	}
	if (tune_restore__verdict(c, k, t->o.alpha, &v) < 0)
		goto nomem;
	if (v.outcome == TUNE_WINNER && v.ranked)
		winner = c[v.rank[0].idx].name;
	if (v.ranked)
		snprintf(flag, sizeof(flag), "--mem-restore %s",
			 c[v.rank[0].idx].name);
	verdict_text(text, sizeof(text), t, &v, c);
	j = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:o, s:s}",
		      "outcome", tune_restore__outcome_name(v.outcome),
		      "winner", winner ? json_string(winner) : json_null(),
		      "fastest", v.ranked ? json_string(c[v.rank[0].idx].name)
					  : json_null(),
		      "equivalent", name_list(&v, c, TUNE_FASTEST,
					      TUNE_EQUIVALENT),
		      "undecided", name_list(&v, c, TUNE_UNDECIDED,
					     TUNE_UNDECIDED),
		      "flag", *flag ? json_string(flag) : json_null(),
		      "ranking", ranking_json(&v, c), "samples_needed",
		      (json_int_t)t->min_count, "comparisons",
		      json_integer((json_int_t)v.comparisons), "text", text);
	/* the fastest alone is equivalent to nothing */
	if (json_array_size(json_object_get(j, "equivalent")) < 2)
		json_array_clear(json_object_get(j, "equivalent"));
	for (size_t i = 0; i < k; i++)
		free((double *)c[i].ns);
	return j;
nomem:
	for (size_t i = 0; i < k; i++)
		free((double *)c[i].ns);
	return NULL;
}

static json_t *verdict_json(const struct tune *t)
{
	json_t *v = json_pack("{s:s, s:s, s:s, s:f}", "metric",
			      "restore start -> DONE", "test",
			      "mann-whitney-u, two-sided, against the fastest "
			      "median", "correction", "holm", "alpha",
			      t->o.alpha);

	for (int cold = 0; v && cold < 2; cold++) {
		json_t *c;

		if (!measured(t, cold))
			continue;
		c = cache_verdict_json(t, cold);
		if (!c) {
			json_decref(v);
			return NULL;
		}
		json_object_set_new(v, cache_name(cold), c);
	}
	return v;
}

static void add_skipped(json_t *doc, const struct tune *t)
{
	char what[64];

	if (t->cold_why)
		result__skip(doc, "cold cache", "%s", t->cold_why);
	for (size_t i = 0; i < t->o.nr_strategies; i++) {
		if (!t->skip[i])
			continue;
		snprintf(what, sizeof(what), "strategy %s",
			 t->o.strategies[i]->name);
		result__skip(doc, what, "%s", t->why[i]);
	}
}

static json_t *budget_json(const struct tune *t)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:b}", "budget_ns",
			 (json_int_t)t->o.budget_ns, "elapsed_ns",
			 (json_int_t)t->elapsed_ns, "rounds",
			 (json_int_t)t->rounds, "rounds_planned",
			 (json_int_t)t->count, "spent", t->budget_spent);
}

static int fill_doc(json_t *doc, const struct tune *t)
{
	double *tmp = malloc((t->count ? t->count : 1) * sizeof(double));
	json_t *verdict;
	char note[256];
	int ret = tmp ? 0 : err__set(ENOMEM, "building the result");

	add_skipped(doc, t);
	raised_text(note, sizeof(note), t);
	if (*note)
		result__warn(doc, "%s", note);
	if (t->budget_spent)
		result__warn(doc, "the --budget of %.1f s was spent after %zu "
			     "of %zu rounds", (double)t->o.budget_ns / 1e9,
			     t->rounds, t->count);
	for (int cold = 0; ret == 0 && cold < 2; cold++)
		for (size_t i = 0; ret == 0 && measured(t, cold) &&
				   i < t->o.nr_strategies; i++)
			if (!t->skip[i])
				ret = add_cell(doc, &t->cells[cold][i], tmp);
	free(tmp);
	if (ret < 0)
		return ret;
	verdict = verdict_json(t);
	if (!verdict)
		return err__set(ENOMEM, "building the verdict");
	json_object_set_new(doc, "verdict", verdict);
	json_object_set_new(doc, "budget", budget_json(t));
	return 0;
}

/* ---- the report (from the document alone) ---- */

static const json_t *find_series(const json_t *doc, const char *name)
{
	const json_t *s;
	size_t i;

	json_array_foreach(json_object_get(doc, "series"), i, s)
		if (!strcmp(json_string_value(json_object_get(s, "name")),
			    name))
			return s;
	return NULL;
}

static double work_median(const json_t *series, const char *key)
{
	return json_number_value(json_object_get(
		json_object_get(json_object_get(series, "work"), key),
		"median"));
}

/* "1.2" (MiB) from a work value's median, "-" when unmeasured. */
static void mib_text(char *buf, size_t len, const json_t *series,
		     const char *key, double per_mib)
{
	const json_t *m = json_object_get(
		json_object_get(json_object_get(series, "work"), key), "median");

	if (json_is_number(m))
		snprintf(buf, len, "%.1f", json_number_value(m) / per_mib);
	else
		snprintf(buf, len, "-");
}

/* "1.234" ms of an ns value; "-" when it is not a number. */
static void ms_text(char *buf, size_t len, const json_t *ns)
{
	if (json_is_number(ns))
		snprintf(buf, len, "%.3f", json_number_value(ns) / 1e6);
	else
		snprintf(buf, len, "-");
}

static void rank_row(FILE *out, const json_t *doc, const json_t *r,
		     const char *cache, size_t pos)
{
	const char *name = json_string_value(json_object_get(r, "strategy"));
	const json_t *ci = json_object_get(r, "ci95_median_ns");
	const json_t *ph = json_object_get(r, "p_holm");
	char sname[96], med[32], lo[32], hi[32];
	char vs[32] = "-", p[32] = "-", rss[32], pss[32], anon[32], disk[32];
	const json_t *s;

	snprintf(sname, sizeof(sname), "%s/%s/done", name, cache);
	s = find_series(doc, sname);
	ms_text(med, sizeof(med), json_object_get(r, "median_ns"));
	ms_text(lo, sizeof(lo), json_array_get(ci, 0));
	ms_text(hi, sizeof(hi), json_array_get(ci, 1));
	if (pos > 0 && json_is_number(ph)) {
		snprintf(vs, sizeof(vs), "%+.1f %%", 100 * json_number_value(
			json_object_get(r, "delta_vs_fastest")));
		snprintf(p, sizeof(p), "%.2g", json_number_value(ph));
	}
	mib_text(rss, sizeof(rss), s, "guest_rss_kib", 1024);
	mib_text(pss, sizeof(pss), s, "guest_pss_kib", 1024);
	mib_text(anon, sizeof(anon), s, "guest_anon_kib", 1024);
	mib_text(disk, sizeof(disk), s, "disk_read_bytes", (double)MiB);
	fprintf(out, "| %zu | %s | %" JSON_INTEGER_FORMAT " | %s | %s-%s | "
		"%s | %s | %s | %s | %s | %s | %s | %.0f |\n", pos + 1, name,
		json_integer_value(json_object_get(r, "n")), med, lo, hi, vs, p,
		json_string_value(json_object_get(r, "status")), rss, pss, anon,
		disk, work_median(s, "host_faults"));
}

static const char *flag_caveat(const char *outcome)
{
	if (!strcmp(outcome, "tied"))
		return " (the smallest median; the strategies equivalent to "
		       "it do as well)";
	if (!strcmp(outcome, "inconclusive"))
		return " (provisional: the smallest median so far)";
	return "";
}

static void cache_report(FILE *out, const json_t *doc, const char *cache)
{
	const json_t *v = json_object_get(json_object_get(doc, "verdict"),
					  cache);
	const json_t *ranking = json_object_get(v, "ranking"), *r;
	const json_t *flag = json_object_get(v, "flag");
	size_t i;

	if (!v)
		return;
	fprintf(out, "\n## %s cache\n\n**Verdict:** %s\n\n", cache,
		json_string_value(json_object_get(v, "text")));
	if (json_is_string(flag))
		fprintf(out, "Use: `%s`%s\n\n", json_string_value(flag),
			flag_caveat(json_string_value(json_object_get(
				v, "outcome"))));
	fputs("| rank | strategy | n | DONE ms (median) | 95 % CI ms | "
	      "vs fastest | p (Holm) | status | RSS MiB | PSS MiB | anon MiB "
	      "| disk MiB | host faults |\n|--:|---|--:|--:|--:|--:|--:|---|"
	      "--:|--:|--:|--:|--:|\n", out);
	json_array_foreach(ranking, i, r)
		rank_row(out, doc, r, cache, i);
}

static void report(FILE *out, const json_t *doc)
{
	const json_t *cfg = json_object_get(doc, "config");
	const json_t *b = json_object_get(doc, "budget");
	const json_t *v = json_object_get(doc, "verdict");

	fprintf(out, "# coldstart tune restore\n\nSnapshot `%s` (%s guest, "
		"%" JSON_INTEGER_FORMAT " MiB, %" JSON_INTEGER_FORMAT
		" vCPU). Each strategy restored it and ran it to DONE%s; "
		"the page cache warm (the snapshot files read before each "
		"restore) or cold (fsync + posix_fadvise(DONTNEED) of them "
		"before each), every (cache, strategy) once per round, the "
		"order rotating: %" JSON_INTEGER_FORMAT " of %"
		JSON_INTEGER_FORMAT " rounds in %.1f s (budget %.1f s%s). A "
		"winner is named only when it is significantly faster than "
		"every other strategy: two-sided Mann-Whitney U test against "
		"the fastest median (as `coldstart compare`), p-values "
		"Holm-corrected over those comparisons, alpha %g. Memory "
		"held: the guest memory mapping right after the VM ended "
		"(/proc/self/smaps, medians): RSS, PSS, and anon, the pages "
		"this VM owns (copied or written); the rest of RSS is page "
		"cache of the memory file, shared by every VM restored from "
		"it. Disk MiB: what the process read from storage per "
		"restore (/proc/self/io read_bytes, median); host faults: "
		"its minor + major page faults per restore (getrusage, "
		"median).\n",
		json_string_value(json_object_get(cfg, "snapshot")),
		json_string_value(json_object_get(cfg, "guest")),
		json_integer_value(json_object_get(cfg, "mem_bytes")) >> 20,
		json_integer_value(json_object_get(cfg, "vcpus")),
		strcmp(json_string_value(json_object_get(cfg, "guest")),
		       "linux") ? "" : " (its done signal)",
		json_integer_value(json_object_get(b, "rounds")),
		json_integer_value(json_object_get(b, "rounds_planned")),
		(double)json_integer_value(json_object_get(b, "elapsed_ns")) /
			1e9,
		(double)json_integer_value(json_object_get(b, "budget_ns")) /
			1e9,
		json_is_true(json_object_get(b, "spent")) ? ", spent" : "",
		json_number_value(json_object_get(v, "alpha")));
	cache_report(out, doc, "warm");
	cache_report(out, doc, "cold");
	result__print_skipped(out, doc, true);
	result__md_warnings(out, doc);
	fputs("\nRaw samples, per-restore work and host metadata: "
	      "tune-restore.json.\n", out);
}

/* ---- the command ---- */

/* The budget's clock starts before the trial restores. */
static int measure(struct tune *t)
{
	int ret = kvm__open(&t->kvm, t->o.kvm_path);

	if (ret < 0)
		return ret;
	t->start_ns = timeline__now();
	ret = trial_restores(t);
	if (ret == 0) {
		plan_count(t);
		ret = alloc_cells(t);
	}
	if (ret == 0)
		ret = sample_rounds(t);
	kvm__close(&t->kvm);
	return ret;
}

/* Exit codes for what can be known before any restore: 2 for the
 * snapshot, 77 for a Linux guest on PVM; CLI_OK to go on. */
static int check_run(struct tune *t)
{
	if (check_snapshot(t->o.dir, &t->info) < 0)
		return cli__error(CLI_USAGE, "tune restore: %s", err__last());
	t->cold_why = t->o.cold ? cold_meaningless(&t->info) : NULL;
	if (t->cold_why && !t->o.warm)
		return cli__error(CLI_USAGE, "tune restore: --cache cold means "
				  "nothing here: %s", t->cold_why);
	if (t->cold_why) {
		fprintf(stderr, "coldstart: tune restore: cold cache left out: "
			"%s\n", t->cold_why);
		t->o.cold = false;
	}
	if (t->info.linux_guest && !t->o.allow_pvm &&
	    kvm__device_flavour() == KVM_FLAVOUR_PVM)
		return cli__error(CLI_SKIP, "tune restore of %s (a Linux "
				  "snapshot): %s", t->o.dir,
				  snap_linux__pvm_refusal());
	t->once = t->info.linux_guest ? snap_linux__restore_once
				      : restore__once;
	return CLI_OK;
}

static int emit(struct tune *t)
{
	json_t *doc = result__new("tune-restore", config_json(t));
	int ret = doc ? 0 : -ENOMEM;

	if (ret == 0)
		ret = fill_doc(doc, t);
	if (ret == 0)
		ret = result__emit(doc, t->o.json, t->o.out_dir, report);
	if (ret == 0 && t->o.out_dir)
		report__join("tune restore", t->o.out_dir, t->o.json);
	json_decref(doc);
	return ret;
}

static int run(struct tune *t)
{
	int ret = check_run(t);

	if (ret != CLI_OK)
		return ret;
	ret = measure(t);
	if (ret == 0)
		ret = emit(t);
	free_cells(t);
	if (ret < 0)
		return cli__error(cli__exit_for(ret), "tune restore: %s",
				  err__last());
	if (t->budget_spent)
		fprintf(stderr, "coldstart: tune restore: the --budget was "
			"spent after %zu of %zu rounds; the verdict uses what "
			"was measured\n", t->rounds, t->count);
	return CLI_OK;
}

int cmd_tune_restore(int argc, char **argv)
{
	struct tune *t = calloc(1, sizeof(*t));
	int ret;

	if (!t)
		return cli__error(CLI_FAIL, "tune restore: out of memory");
	ret = parse(argc, argv, &t->o);
	ret = ret != 0 ? cli__parsed(ret, "tune restore", usage) : run(t);
	free(t);
	return ret;
}
