/* `coldstart bench probes`: what the eBPF probes cost the measured
 * metric. Interleaves `coldstart run --json` children without and with
 * --probes (pair order alternating) and compares the same timeline spans
 * of both: start (KVM opened to READY, the metric coldstart exists for;
 * attaching happens before it), boot (first KVM_RUN to READY) and the
 * VM's whole life (to teardown done; it includes the run's reading of
 * /proc/self/smaps_rollup, which the probes' own mappings slow down). */
#include "bench_probes.h"

#include "args.h"
#include "child.h"
#include "cli.h"
#include "err.h"
#include "probes.h"
#include "stats.h"
#include "sysinfo.h"
#include "units.h"

#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>


#define TARGET_PCT 5.0
#define BOOTSTRAP_RESAMPLES 2000
#define BOOTSTRAP_SEED 1

enum { WITHOUT, WITH, NR_VARIANTS };

enum attach_mode {
	ATTACH_SELF,    /* `run --probes`: loads in the measured process */
	ATTACH_OUTSIDE, /* `probe -- run`: the run waits for the loading */
	ATTACH_MATCHED, /* both runs of a pair wait alike; we load */
};

static const char *const attach_names[] = { "self", "outside", "matched",
					    NULL };
enum { SPAN_START, SPAN_BOOT, SPAN_VM, NR_SPANS };

static const char *const variant_names[NR_VARIANTS] = { "without",
							"with" };
static const struct {
	const char *name, *from, *to;
} spans[NR_SPANS] = {
	[SPAN_START] = { "start", "kvm_opened", "ready" },
	[SPAN_BOOT] = { "boot", "first_run", "ready" },
	[SPAN_VM] = { "vm", "kvm_opened", "teardown_done" },
};

struct bench_probes {
	struct bench_common c; /* count, warmup: pairs */
	uint64_t vcpus;
	char init[32];
	char probes[80]; /* "--probes=SET" */
	unsigned int set;
	enum attach_mode attach;
	double *ns[NR_VARIANTS][NR_SPANS];
	size_t n;
	struct summary sum[NR_VARIANTS][NR_SPANS];
};

/* Runs one child and returns its JSON document, or NULL with
 * *exit_code set. */
static json_t *run_child(char *const argv[], int *exit_code)
{
	json_t *doc = NULL;
	int status;

	*exit_code = CLI_FAIL;
	if (child__capture(argv, &doc, &status) < 0) {
		json_decref(doc);
		return NULL;
	}
	if (WIFEXITED(status))
		*exit_code = WEXITSTATUS(status);
	if (*exit_code != 0) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

static double span_ns(json_t *doc, int span)
{
	json_t *tl = json_object_get(doc, "timeline_ns");
	json_int_t from = json_integer_value(json_object_get(tl,
							spans[span].from));
	json_int_t to = json_integer_value(json_object_get(tl,
							spans[span].to));

	return to > from && from > 0 ? (double)(to - from) : -1;
}

static int record(struct bench_probes *b, int variant, json_t *doc,
		  bool counted)
{
	for (int s = 0; counted && s < NR_SPANS; s++) {
		double ns = span_ns(doc, s);

		if (ns < 0)
			return err__set(EIO, "a run lacks its %s span",
					spans[s].name);
		b->ns[variant][s][b->n] = ns;
	}
	return 0;
}

static int one(struct bench_probes *b, int variant, bool counted)
{
	char *exe = (char *)cli__self_exe(), vcpus[24];
	char *run[] = { exe, "run", "--json", "--init", b->init, "--vcpus",
			vcpus, variant == WITH ? b->probes : NULL, NULL };
	/* The child's JSON comes first on stdout, the probe's report after. */
	char *outside[] = { exe, "probe", b->probes, "--", exe, "run",
			    "--json", "--init", b->init, "--vcpus", vcpus,
			    NULL };
	int code, ret;
	json_t *doc;

	snprintf(vcpus, sizeof(vcpus), "%" PRIu64, b->vcpus);
	doc = run_child(variant == WITH && b->attach == ATTACH_OUTSIDE ? outside
								       : run,
			&code);
	if (!doc)
		return code == CLI_SKIP ? -ENOTSUP
					: err__set(EIO, "coldstart run%s "
						   "exited with %d",
						   variant == WITH ? " --probes"
								   : "",
						   code);
	ret = record(b, variant, doc, counted);
	json_decref(doc);
	return ret;
}

/* A `coldstart run --json` child held before exec until released. */
struct held {
	pid_t pid;
	int go, out; /* write a byte to go; its stdout comes out of out */
};

static int hold(char *const argv[], struct held *h)
{
	int go[2], out[2];
	char c;

	if (pipe2(go, O_CLOEXEC))
		return err__sys(errno, "pipe");
	if (pipe2(out, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		return err__sys(errno, "pipe");
	}
	h->pid = fork();
	if (h->pid == 0) {
		if (read(go[0], &c, 1) == 1 && dup2(out[1], STDOUT_FILENO) >= 0)
			execv(argv[0], argv);
		_exit(127);
	}
	close(go[0]);
	close(out[1]);
	h->go = go[1];
	h->out = out[0];
	if (h->pid > 0)
		return 0;
	close(h->go);
	close(h->out);
	return err__sys(errno, "fork");
}

/* Releases the child, or with go = false makes it exit unrun; returns
 * its document (NULL unless it ran and exited 0). */
static json_t *release(struct held *h, bool go, int *code)
{
	FILE *f;
	json_t *doc = NULL;
	int status;

	*code = CLI_FAIL;
	if (go && write(h->go, "g", 1) != 1)
		go = false;
	close(h->go);
	f = fdopen(h->out, "r");
	if (f) {
		doc = json_loadf(f, JSON_DISABLE_EOF_CHECK, NULL);
		fclose(f);
	} else {
		close(h->out);
	}
	waitpid(h->pid, &status, 0);
	if (WIFEXITED(status))
		*code = WEXITSTATUS(status);
	if (!go || *code != 0) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

/* Both children wait before exec while the probes load for one of them;
 * then each runs in turn, the observed one with the probes started. */
static int matched_pair(struct bench_probes *b, int first, bool counted)
{
	char *exe = (char *)cli__self_exe(), vcpus[24];
	char *run[] = { exe, "run", "--json", "--init", b->init, "--vcpus",
			vcpus, NULL };
	struct held h[NR_VARIANTS];
	struct probes *p = NULL;
	int ret, code = 0;

	snprintf(vcpus, sizeof(vcpus), "%" PRIu64, b->vcpus);
	ret = hold(run, &h[WITHOUT]);
	if (ret < 0)
		return ret;
	ret = hold(run, &h[WITH]);
	if (ret < 0) {
		release(&h[WITHOUT], false, &code);
		return ret;
	}
	ret = probes__load(h[WITH].pid, b->set, &p);
	for (int i = 0, v = first; i < NR_VARIANTS; i++, v = !v) {
		json_t *doc;

		if (ret == 0 && v == WITH)
			ret = probes__start(p);
		doc = release(&h[v], ret == 0, &code);
		if (v == WITH) {
			probes__destroy(p);
			p = NULL;
		}
		if (ret == 0 && !doc)
			ret = code == CLI_SKIP ? -ENOTSUP
					       : err__set(EIO, "coldstart run "
							  "exited with %d",
							  code);
		if (ret == 0)
			ret = record(b, v, doc, counted);
		json_decref(doc);
	}
	probes__destroy(p);
	return ret;
}

static int measure(struct bench_probes *b)
{
	uint64_t total = b->c.warmup + b->c.count;
	int ret = 0;

	for (int v = 0; v < NR_VARIANTS; v++)
		for (int s = 0; s < NR_SPANS; s++) {
			b->ns[v][s] = calloc(b->c.count, sizeof(double));
			if (!b->ns[v][s])
				return err__sys(ENOMEM, "samples");
		}
	for (uint64_t i = 0; ret == 0 && i < total; i++) {
		bool counted = i >= b->c.warmup;
		int first = i % 2; /* alternate which variant goes first */

		if (b->attach == ATTACH_MATCHED) {
			ret = matched_pair(b, first, counted);
		} else {
			ret = one(b, first, counted);
			if (ret == 0)
				ret = one(b, !first, counted);
		}
		if (ret == 0 && counted)
			b->n++;
	}
	for (int v = 0; ret == 0 && v < NR_VARIANTS; v++)
		for (int s = 0; ret == 0 && s < NR_SPANS; s++)
			ret = stats__summarize(b->ns[v][s], b->n,
					       &b->sum[v][s]);
	return ret;
}

static double overhead_pct(const struct bench_probes *b, int s)
{
	return (b->sum[WITH][s].p50 / b->sum[WITHOUT][s].p50 - 1) * 100;
}

/* The median of the per-pair ratios as a percentage, with its 95 %
 * bootstrap interval: each pair ran back to back, so drift and other
 * load on the host cancel better than in medians. */
struct paired {
	double pct, lo, hi;
};

static struct paired paired_pct(const struct bench_probes *b, int s)
{
	double *ratio = malloc(b->n * sizeof(*ratio));
	struct paired p = { overhead_pct(b, s), 0, 0 };

	if (!ratio)
		return p;
	for (size_t i = 0; i < b->n; i++)
		ratio[i] = b->ns[WITH][s][i] / b->ns[WITHOUT][s][i];
	if (stats__bootstrap_median_ci(ratio, b->n, BOOTSTRAP_RESAMPLES, 0.95,
				       BOOTSTRAP_SEED, &p.lo, &p.hi) == 0) {
		p.lo = (p.lo - 1) * 100;
		p.hi = (p.hi - 1) * 100;
	}
	qsort(ratio, b->n, sizeof(*ratio), cmp_double);
	p.pct = (stats__percentile_sorted(ratio, b->n, 50) - 1) * 100;
	free(ratio);
	return p;
}

/* Against the target: met when the whole interval is within it, missed
 * when the whole interval is above, otherwise not settled by this run. */
static const char *verdict(struct paired p)
{
	if (p.hi <= TARGET_PCT)
		return "met";
	if (p.lo > TARGET_PCT)
		return "missed";
	return "inconclusive: more pairs or a quieter host";
}

static void print_table(const struct bench_probes *b)
{
	printf("probe overhead: %zu interleaved pairs of `coldstart run "
	       "--init %s --vcpus %" PRIu64 "` without and with %s%s\n",
	       b->n, b->init, b->vcpus, b->probes + strlen("--probes="),
	       b->attach == ATTACH_SELF ? "" :
	       b->attach == ATTACH_OUTSIDE ? " attached by `coldstart probe --`"
					   : " (matched: both held, then one "
					     "observed)");
	printf("%-6s %-16s %10s %10s %10s %10s\n", "span", "probes",
	       "p50 ms", "p90 ms", "mean ms", "stddev");
	for (int s = 0; s < NR_SPANS; s++) {
		for (int v = 0; v < NR_VARIANTS; v++) {
			const struct summary *m = &b->sum[v][s];

			printf("%-6s %-16s %10.3f %10.3f %10.3f %10.3f\n",
			       spans[s].name, variant_names[v], m->p50 / 1e6,
			       m->p90 / 1e6, m->mean / 1e6, m->stddev / 1e6);
		}
		struct paired p = paired_pct(b, s);

		printf("%-6s overhead: %+.1f %% on the medians; median of "
		       "paired ratios %+.1f %% (95 %% CI %+.1f .. %+.1f %%)",
		       spans[s].name, overhead_pct(b, s), p.pct, p.lo, p.hi);
		if (s == SPAN_START)
			printf("; target at most %.0f %%: %s", TARGET_PCT,
			       verdict(p));
		putchar('\n');
	}
}

static json_t *summary_json(const struct summary *m)
{
	return json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f}", "n",
			 (json_int_t)m->n, "min", m->min, "max", m->max,
			 "mean", m->mean, "stddev", m->stddev, "p50", m->p50,
			 "p90", m->p90);
}

static void print_json(const struct bench_probes *b)
{
	json_t *out = json_array(), *doc, *sys;

	for (int s = 0; s < NR_SPANS; s++) {
		struct paired p = paired_pct(b, s);
		json_t *samples[NR_VARIANTS];

		for (int v = 0; v < NR_VARIANTS; v++) {
			samples[v] = json_array();
			for (size_t i = 0; i < b->n; i++)
				json_array_append_new(samples[v],
					json_real(b->ns[v][s][i]));
		}
		json_array_append_new(out, json_pack(
			"{s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:f, s:f, s:[f, f]}",
			"span",
			spans[s].name, "from", spans[s].from, "to",
			spans[s].to, "without_ns", samples[WITHOUT],
			"with_ns", samples[WITH], "without",
			summary_json(&b->sum[WITHOUT][s]), "with",
			summary_json(&b->sum[WITH][s]), "overhead_pct",
			overhead_pct(b, s), "paired_overhead_pct", p.pct,
			"paired_overhead_ci95_pct", p.lo, p.hi));
	}
	doc = json_pack("{s:i, s:s, s:{s:s, s:I, s:s, s:s, s:I}, s:o, s:f}",
			"schema", 1, "bench", "probes", "config", "init",
			b->init, "vcpus", (json_int_t)b->vcpus, "probes",
			b->probes + strlen("--probes="), "attach",
			attach_names[b->attach], "pairs",
			(json_int_t)b->n, "spans", out, "target_pct",
			TARGET_PCT);
	/* host metadata, as every driver's document has (an emulated
	 * host's overheads are not a native one's) */
	if (sysinfo__collect(&sys) < 0)
		sys = json_null();
	json_object_set_new(doc, "sysinfo", sys);
	json_dumpf(doc, stdout, JSON_INDENT(2));
	fputc('\n', stdout);
	json_decref(doc);
}

static int run(void *opts)
{
	struct bench_probes *b = opts;
	int ret;

	if (!cli__self_exe())
		return cli__error(CLI_FAIL, "bench probes: cannot find my "
				  "own binary");
	ret = measure(b);
	if (ret == 0 && b->c.json)
		print_json(b);
	else if (ret == 0)
		print_table(b);
	for (int v = 0; v < NR_VARIANTS; v++)
		for (int s = 0; s < NR_SPANS; s++)
			free(b->ns[v][s]);
	if (ret == -ENOTSUP)
		return cli__error(CLI_SKIP, "bench probes: `coldstart run "
				  "--probes` cannot run here (exit 77)");
	return ret < 0 ? -EIO : CLI_OK; /* a failure, whatever errno */
}

/* ---- options ---- */

static void init(void *opts)
{
	struct bench_probes *b = opts;

	b->c = (struct bench_common){ .count = 20, .warmup = 2,
				      .count_max = 100000,
				      .warmup_max = 100000 };
	b->vcpus = 1;
	snprintf(b->init, sizeof(b->init), "16M");
	snprintf(b->probes, sizeof(b->probes), "--probes=default");
	b->set = PROBES_DEFAULT;
}

static int set_init(void *opts, const char *arg)
{
	struct bench_probes *b = opts;
	uint64_t size;

	snprintf(b->init, sizeof(b->init), "%s", arg);
	return args__size("--init", arg, &size);
}

static int set_vcpus(void *opts, const char *arg)
{
	return args__u64("--vcpus", arg, 1, 64,
			 &((struct bench_probes *)opts)->vcpus);
}

static int set_probes(void *opts, const char *arg)
{
	struct bench_probes *b = opts;

	snprintf(b->probes, sizeof(b->probes), "--probes=%s", arg);
	return probes__parse_set(arg, &b->set);
}

static int set_attach(void *opts, const char *arg)
{
	unsigned int where = 0;
	int ret = args__choice("--attach", arg, attach_names, &where);

	((struct bench_probes *)opts)->attach = where;
	return ret;
}

static const struct opt table[] = {
	{ "init", 0, "SIZE", false, "memory the guest first-touches before "
	  "READY (default 16M)", set_init, NULL },
	{ "vcpus", 0, "N", false, "vCPUs (default 1)", set_vcpus, NULL },
	{ "probes", 0, "SET", false, "the probes to measure (default: "
	  "default)", set_probes, NULL },
	{ "attach", 0, "HOW", false, "self (default): `run --probes`, loading "
	  "in the measured\nprocess; outside: `probe -- run`, the run waits "
	  "before exec\nwhile another process loads; matched: both runs of a "
	  "pair\nwait before exec while this process loads, and only one "
	  "is\nthen observed: the probes' execution cost alone", set_attach,
	  NULL },
	OPT_END,
};

const struct bench_driver probes_driver = {
	.name = "probes",
	.summary = "the eBPF probes' overhead: runs without and with "
		   "--probes",
	.usage = "Usage: coldstart bench probes [OPTIONS]\n"
		 "Measures the eBPF probes' overhead: `coldstart run` children "
		 "without and with\n--probes, interleaved, compared on start "
		 "(KVM opened to READY), boot (first\nKVM_RUN to READY) and "
		 "the VM's whole life (to teardown). Target: at most 5 %\non "
		 "start (reported, not enforced). A sample is a pair of runs, "
		 "one without\nand one with.\n",
	.epilog = "\nExit codes: 0 measured, 1 a run failed, 2 usage error, "
		  "77 no KVM or no probes.\n",
	.common = BENCH_COUNT | BENCH_WARMUP | BENCH_JSON,
	.opts = table,
	.size = sizeof(struct bench_probes),
	.common_at = offsetof(struct bench_probes, c),
	.init = init,
	.run = run,
};
