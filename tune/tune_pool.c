/* `coldstart tune pool` (the command: cli/cmd_tune_pool.c): its options,
 * and the run: a sweep of every pool policy's parameters through the
 * simulator, fed with a results directory's measured costs, and the
 * cheapest configuration that meets an SLO. */
#include "tune_pool.h"
#include "tune_pool_int.h"

#include "args.h"
#include "arrivals.h"
#include "child.h"
#include "cli.h"
#include "err.h"
#include "kvm.h"
#include "output.h"
#include "plot.h"
#include "poolsim.h"
#include "report.h"
#include "result.h"
#include "result_new.h"
#include "sysinfo.h"
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* ---- the SLO ---- */

/* "p99=50ms" (any percentile above 0 and below 100, p95 and p99.9
 * among them; a time with its unit) or "hits=99%". */
static int slo_parse(const char *text, struct slo *s)
{
	const char *eq = strchr(text, '='), *v;
	uint64_t ns;
	size_t n;
	char *end;

	memset(s, 0, sizeof(*s));
	if (!eq || strlen(text) >= sizeof(s->text))
		goto bad;
	snprintf(s->text, sizeof(s->text), "%s", text);
	v = eq + 1;
	if (eq - text == 4 && !strncmp(text, "hits", 4)) {
		s->hits = true;
		errno = 0;
		s->goal = strtod(v, &end);
		if (end == v || errno || strcmp(end, "%") || !isfinite(s->goal) ||
		    s->goal < 0 || s->goal > 100 || *v == ' ')
			goto bad;
		return 0;
	}
	if (text[0] != 'p' || !isdigit((unsigned char)text[1]))
		goto bad;
	errno = 0;
	s->pct = strtod(text + 1, &end);
	n = strlen(v);
	/* a unit is required: a bare "50" would silently be seconds */
	if (end != eq || errno || !(s->pct > 0 && s->pct < 100) || !n ||
	    v[n - 1] != 's' || args__duration("--slo", v, &ns) < 0 || ns == 0)
		goto bad;
	s->goal = (double)ns / 1e9;
	return 0;
bad:
	return err__set(EINVAL, "--slo: '%s' is not pXX=TIME (a percentile "
			"above 0 and below 100: p50, p95, p99, p99.9...; e.g. "
			"p99=50ms) or hits=PCT%% (e.g. hits=99%%)", text);
}

/* ---- options ---- */

enum {
	OPT_HOST = 0x300, OPT_ARRIVALS, OPT_DURATION, OPT_SCALE, OPT_SEED,
	OPT_SLO, OPT_POLICIES, OPT_BUDGET, OPT_WORKERS, OPT_JSON, OPT_OUT,
	OPT_VALIDATE, OPT_VSIZES, OPT_KVM, OPT_MAX_VMS, OPT_HOLDOUT,
	OPT_COSTS, OPT_COST,
};

static int parse_policies(const char *text, struct tp_opts *o)
{
	char buf[256], *save = NULL;

	if (strlen(text) >= sizeof(buf))
		return err__set(EINVAL, "--policies: too long");
	snprintf(buf, sizeof(buf), "%s", text);
	memset(o->policy_on, 0, sizeof(o->policy_on));
	for (char *p = strtok_r(buf, ",", &save); p;
	     p = strtok_r(NULL, ",", &save)) {
		int pol;

		if (poolsim__policy_parse(p, &pol) < 0)
			return err__set(EINVAL, "--policies: unknown policy "
					"'%s' (%s)", p, poolsim__policy_names());
		o->policy_on[pol] = true;
	}
	for (int i = 0; i < POOLSIM_POLICIES; i++)
		if (o->policy_on[i])
			return 0;
	return err__set(EINVAL, "--policies: no policy named");
}

static int parse_sizes(const char *text, struct tp_opts *o)
{
	char buf[256], *save = NULL;

	if (strlen(text) >= sizeof(buf))
		return err__set(EINVAL, "--validate-sizes: too long");
	snprintf(buf, sizeof(buf), "%s", text);
	o->nvsizes = 0;
	for (char *p = strtok_r(buf, ",", &save); p;
	     p = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (o->nvsizes == MAX_VALIDATE)
			return err__set(EINVAL, "--validate-sizes: at most %d "
					"sizes", MAX_VALIDATE);
		if (args__u64("--validate-sizes", p, 0, 4096, &v) < 0)
			return -EINVAL;
		o->vsizes[o->nvsizes++] = (unsigned int)v;
	}
	return o->nvsizes ? 0 : err__set(EINVAL, "--validate-sizes: no size");
}

static int parse_double(const char *opt, const char *text, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(text, &end);
	if (end == text || *end || errno || !isfinite(*out) || *out <= 0)
		return err__set(EINVAL, "%s: '%s' is not a number above 0", opt,
				text);
	return 0;
}

static int parse_one(int c, char *arg, void *ctx)
{
	struct tp_opts *o = ctx;
	uint64_t v;
	int ret;

	switch (c) {
	case OPT_HOST: o->host = arg; return 0;
	case OPT_ARRIVALS:
		o->arrivals_text = arg;
		return arrivals__parse_spec(arg, &o->spec);
	case OPT_DURATION:
		o->duration_set = true;
		ret = args__duration("--duration", arg, &v);
		o->duration_s = (double)v / 1e9;
		return ret;
	case OPT_SCALE: return parse_double("--time-scale", arg, &o->time_scale);
	case OPT_SEED: return args__u64("--seed", arg, 0, UINT64_MAX, &o->seed);
	case OPT_SLO:
		o->slo_set = true;
		return slo_parse(arg, &o->slo);
	case OPT_POLICIES: return parse_policies(arg, o);
	case OPT_BUDGET:
		o->budget_set = true;
		ret = args__size("--memory-budget", arg, &o->budget);
		if (ret == 0 && (!o->budget || o->budget > TP_MAX_BYTES))
			ret = err__set(EINVAL, "--memory-budget: '%s' is not "
				       "from 1 byte to 1024T (2^50 bytes, more "
				       "than any host has)", arg);
		return ret;
	case OPT_WORKERS:
		ret = args__u64("--workers", arg, 1, POOLSIM_MAX_WORKERS, &v);
		o->workers = (unsigned int)v;
		return ret;
	case OPT_JSON: o->json = true; return 0;
	case OPT_OUT: o->out_dir = arg; return 0;
	case OPT_VALIDATE: o->validate = true; return 0;
	case OPT_VSIZES:
		o->validate = true;
		return parse_sizes(arg, o);
	case OPT_KVM: o->kvm_path = arg; return 0;
	case OPT_MAX_VMS:
		ret = args__u64("--max-vms", arg, 1, POOLSIM_MAX_VMS, &v);
		o->max_vms = (unsigned int)v;
		return ret;
	case OPT_HOLDOUT:
		ret = parse_double("--holdout", arg, &o->holdout);
		if (ret == 0 && !(o->holdout < 1))
			ret = err__set(EINVAL, "--holdout: '%s' is not a share "
				       "of the arrivals above 0 and below 1 "
				       "(e.g. 0.25: the last quarter)", arg);
		return ret;
	case OPT_COSTS: o->costs_file = arg; return 0;
	case OPT_COST: o->cost_text = arg; return 0;
	default: return err__set(EINVAL, "unhandled option");
	}
}

/* 0, 1 for --help, or -EINVAL with a message. */
int tune_pool__parse(int argc, char **argv, struct tp_opts *o)
{
	static const struct option opts[] = {
		{ "host", required_argument, NULL, OPT_HOST },
		{ "arrivals", required_argument, NULL, OPT_ARRIVALS },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "time-scale", required_argument, NULL, OPT_SCALE },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "slo", required_argument, NULL, OPT_SLO },
		{ "policies", required_argument, NULL, OPT_POLICIES },
		{ "memory-budget", required_argument, NULL, OPT_BUDGET },
		{ "workers", required_argument, NULL, OPT_WORKERS },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "validate", no_argument, NULL, OPT_VALIDATE },
		{ "validate-sizes", required_argument, NULL, OPT_VSIZES },
		{ "kvm", required_argument, NULL, OPT_KVM },
		{ "max-vms", required_argument, NULL, OPT_MAX_VMS },
		{ "holdout", required_argument, NULL, OPT_HOLDOUT },
		{ "costs", required_argument, NULL, OPT_COSTS },
		{ "cost", required_argument, NULL, OPT_COST },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ret;

	memset(o, 0, sizeof(*o));
	o->time_scale = 1;
	o->seed = 1;
	o->max_vms = TP_MAX_VMS;
	for (int i = 0; i < POOLSIM_POLICIES; i++)
		o->policy_on[i] = true;
	ret = args__getopt(argc, argv, "h", opts, parse_one, o);
	if (ret == 1)
		return 1;
	if (ret == 0)
		ret = args__no_operands(argc, argv);
	if (ret == 0 && !!o->host + !!o->costs_file + !!o->cost_text != 1)
		ret = err__set(EINVAL, "the costs: give one of --host "
			       "RESULTS_DIR (measured), --costs FILE or --cost "
			       "hit=..,make=..,mem=.. (given)");
	if (ret == 0 && o->validate && !o->host)
		ret = err__set(EINVAL, "--validate runs the pool measured in "
			       "--host RESULTS_DIR; given costs have none");
	if (ret == 0 && !o->arrivals_text)
		ret = err__set(EINVAL, "--arrivals SPEC missing");
	if (ret == 0 && !o->slo_set)
		ret = err__set(EINVAL, "--slo missing (e.g. p99=50ms or "
			       "hits=99%%)");
	if (ret == 0 && !o->duration_set && o->spec.kind != ARRIVALS_TRACE)
		o->duration_s = 3600;
	return ret;
}

/* The largest pool the sweep may reach: --max-vms, or the VMs a memory
 * budget holds when fewer. */
static void set_bound(const struct tp_opts *o, const struct costs *c,
		      struct sweep *sw)
{
	double fit = o->budget_set ? floor((double)o->budget / (double)MiB /
					   c->vm_mib)
				   : INFINITY;

	sw->bound = o->max_vms;
	snprintf(sw->bound_from, sizeof(sw->bound_from), "--max-vms %u",
		 o->max_vms);
	if (fit < sw->bound) {
		sw->bound = fit >= 1 ? (unsigned int)fit : 1;
		snprintf(sw->bound_from, sizeof(sw->bound_from),
			 "--memory-budget: %u VMs of %.2f MiB", sw->bound,
			 c->vm_mib);
	}
}

/* The sweep over `a` (the tuning part with --holdout), then the held-out
 * part's verdict on it. */
static int sweep(const struct tp_opts *o, const struct costs *c,
		 const struct arrivals *a, const struct arrivals *test,
		 struct sweep *sw)
{
	struct poolsim_costs pc = tune_pool__sim_costs(c);
	unsigned int max = tune_pool__pool_max(a, tune_pool__mean_of(&c->make));
	int ret;

	set_bound(o, c, sw);
	sw->max = max < sw->bound ? max : sw->bound;
	sw->cap = MAX_CANDIDATES;
	sw->c = calloc(sw->cap, sizeof(*sw->c));
	if (!sw->c)
		return err__set(ENOMEM, "allocating the sweep");
	tune_pool__build_grid(sw, o, c);
	ret = tune_pool__simulate(sw, a, &pc, &o->slo);
	if (ret == 0)
		ret = tune_pool__extend(sw, o, c, a, test, &pc);
	sw->ho.n_tune = a->n;
	sw->ho.n_test = test->n;
	sw->ho.split_s = a->span_s;
	tune_pool__tuning_choice(sw);
	return ret;
}

int tune_pool__run(const struct tp_opts *o, int *code)
{
	struct costs c;
	struct arrivals a = { 0 }, tune = { 0 }, test = { 0 };
	struct sweep sw = { 0 };
	struct poolsim_costs pc;
	struct validation *v = NULL;
	int ret = o->host ? tune_pool__load_costs(o, &c)
			  : tune_pool__given_costs(o, &c);

	*code = CLI_USAGE;

	if (ret == 0 && o->validate) {
		ret = tune_pool__kvm_usable(o->kvm_path);
		*code = ret < 0 ? cli__exit_for(ret) : *code;
		v = ret == 0 ? calloc(1, sizeof(*v)) : NULL;
		if (ret == 0 && !v)
			ret = err__set(ENOMEM, "allocating the validation");
	}
	if (ret == 0)
		ret = arrivals__make(&o->spec, o->duration_s, o->time_scale,
				     o->seed, &a);
	if (ret == 0 && o->holdout)
		ret = tune_pool__split(&a, o->holdout, &tune, &test);
	if (ret < 0)
		goto out;
	*code = CLI_FAIL;
	pc = tune_pool__sim_costs(&c);
	ret = sweep(o, &c, o->holdout ? &tune : &a, &test, &sw);
	if (ret == 0 && v)
		ret = tune_pool__validate(o, &c, &a, &pc, &sw, v);
	if (ret == -ENOTSUP)
		*code = CLI_SKIP;
	if (ret == 0)
		ret = tune_pool__outputs(o, &c, &a, &sw, v);
	if (ret == 0)
		ret = sw.rec >= 0;
out:
	tune_pool__validation_free(v);
	free(sw.c);
	arrivals__free(&a);
	arrivals__free(&tune);
	arrivals__free(&test);
	tune_pool__costs_free(&c);
	return ret;
}
