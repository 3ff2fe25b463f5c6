/* `coldstart tune host` (the command: cli/cmd_tune_host.c): the trace
 * and guests read, ours swept over its price at the budget, the
 * baselines simulated, and the memory each needs to reach ours's cold
 * starts searched. */
#include "tune_host.h"
#include "tune_host_int.h"

#include "cli.h"
#include "err.h"
#include "output.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void tune_host__defaults(struct th_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->format = ARRIVALS_AUTO;
	o->guest.mem_mib = 256;
	o->guest.cold_s = 0.25;
	o->guest.hit_s = 0.002;
	o->guest.idle_weight = 1;
	o->keepalive = 10;
}

/* 0, then 10^-5 to 10^2 in quarter decades. */
double tune_host__price(int k)
{
	return k == 0 ? 0 : pow(10, -5 + (k - 1) / 4.0);
}

static int simulate(struct th_run *run, enum hostsim_policy p, double budget,
		    double price, struct hostsim_result *r,
		    struct hostsim_fn *per)
{
	struct hostsim_config cfg;

	hostsim__defaults(&cfg);
	cfg.policy = p;
	cfg.budget_mib = budget;
	cfg.keepalive = run->o->keepalive;
	cfg.price = price;
	run->sims++;
	return hostsim__run(&run->t, run->gs.fn, &cfg, r, per);
}

static bool better(const struct hostsim_result *a,
		   const struct hostsim_result *b)
{
	return a->cold < b->cold ||
	       (a->cold == b->cold && a->idle_gib_s < b->idle_gib_s);
}

/* Ours at `budget`: the price of the fewest cold starts (then the least
 * idle memory). */
static int sweep_ours(struct th_run *run, double budget, double *price,
		      struct hostsim_result *best)
{
	struct hostsim_result r;
	int err;

	if (run->o->price_set) {
		*price = run->o->price;
		return simulate(run, HOSTSIM_OURS, budget, *price, best, NULL);
	}
	for (int k = 0; k < TH_PRICES; k++) {
		err = simulate(run, HOSTSIM_OURS, budget, tune_host__price(k),
			       &r, NULL);
		if (err < 0)
			return err;
		if (k == 0 || better(&r, best)) {
			*best = r;
			*price = tune_host__price(k);
		}
	}
	return 0;
}

static int result_at(struct th_run *run, enum hostsim_policy p,
		     double budget, struct hostsim_result *r, double *price)
{
	*price = 0;
	return p == HOSTSIM_OURS ? sweep_ours(run, budget, price, r)
				 : simulate(run, p, budget, 0, r, NULL);
}

/* The least budget (MiB, to 0.5 %) at which policy p has at most
 * `target` cold starts, by bisection (cold starts fall as memory grows,
 * if not always strictly). */
static int memory_for(struct th_run *run, enum hostsim_policy p,
		      uint64_t target, struct th_need *need)
{
	double lo = 0, hi = run->all_mib, pr;
	struct hostsim_result r, at_hi;
	int err = result_at(run, p, hi, &at_hi, &need->price);

	need->mib = need->peak_mib = -1;
	if (err < 0 || at_hi.cold > target)
		return err;
	while (hi - lo > fmax(1, 0.005 * hi)) {
		double mid = (lo + hi) / 2;

		err = result_at(run, p, mid, &r, &pr);
		if (err < 0)
			return err;
		if (r.cold <= target) {
			hi = mid;
			at_hi = r;
			need->price = pr;
		} else {
			lo = mid;
		}
	}
	need->mib = hi;
	need->peak_mib = at_hi.peak_mib;
	return 0;
}

static int compare(struct th_run *run)
{
	struct th_pol *ours = &run->pol[HOSTSIM_OURS];
	int err = sweep_ours(run, run->budget_mib, &ours->price, &ours->r);

	if (err == 0)
		err = simulate(run, HOSTSIM_OURS, run->budget_mib, ours->price,
			       &ours->r, run->per);
	for (int p = 1; err == 0 && p < HOSTSIM_POLICIES; p++)
		err = simulate(run, (enum hostsim_policy)p, run->budget_mib, 0,
			       &run->pol[p].r, NULL);
	ours->need = (struct th_need){ run->budget_mib, ours->r.peak_mib,
				       ours->price };
	for (int p = 1; err == 0 && p < HOSTSIM_POLICIES; p++) {
		output__progress("tune host", (unsigned long)p,
				 HOSTSIM_POLICIES + 1);
		err = memory_for(run, (enum hostsim_policy)p, ours->r.cold,
				 &run->pol[p].need);
	}
	output__progress("tune host", HOSTSIM_POLICIES, HOSTSIM_POLICIES + 1);
	if (err == 0)
		err = memory_for(run, HOSTSIM_OURS,
				 run->pol[HOSTSIM_GREEDY_DUAL].r.cold,
				 &run->ours_for_gd);
	output__progress_done();
	return err;
}

/* What every function's VM, and the busiest minute's busy ones, hold. */
static void memory_bounds(struct th_run *run)
{
	const struct fn_trace *t = &run->t;

	for (size_t i = 0; i < t->nfn; i++)
		run->all_mib += run->gs.fn[i].mem_mib;
	for (size_t m = 0; m < t->nmin; m++) {
		double busy = 0;

		for (size_t i = 0; i < t->nfn; i++)
			if (t->count[i * t->nmin + m])
				busy += run->gs.fn[i].mem_mib;
		if (busy > run->busy_mib)
			run->busy_mib = busy;
	}
}

static int load(struct th_run *run)
{
	const struct th_opts *o = run->o;
	json_error_t je;
	json_t *root;
	int err = arrivals__functions_read(o->trace, o->format,
					   (size_t)o->minutes, &run->t);

	if (err < 0)
		return err;
	if (!o->guests)
		return hostsim__guests_one(&o->guest, &run->t, &run->gs);
	root = output__json_load(o->guests, &je);
	if (!root)
		return err__set(EINVAL, "guests %s: %s", o->guests, je.text);
	err = hostsim__guests_from_json(root, o->guests, &run->t, &run->gs);
	json_decref(root);
	return err;
}

int tune_host__run(const struct th_opts *o, int *code)
{
	struct th_run run = { .o = o };
	struct timespec t0, t1;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	*code = CLI_USAGE;
	err = load(&run);
	if (err < 0)
		goto out;
	*code = CLI_FAIL;
	run.budget_mib = (double)o->budget / (1024.0 * 1024.0);
	memory_bounds(&run);
	run.per = calloc(run.t.nfn, sizeof(*run.per));
	if (!run.per) {
		err = err__set(ENOMEM, "tune host: out of memory");
		goto out;
	}
	err = compare(&run);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	run.elapsed_s = (double)(t1.tv_sec - t0.tv_sec) +
			(double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (err == 0)
		err = tune_host__outputs(&run);
out:
	free(run.per);
	hostsim__guests_free(&run.gs);
	arrivals__functions_free(&run.t);
	return err;
}
