/* Fuzz target: multi-function traces as `tune host` reads them
 * (arrivals_functions.c), then simulated (hostsim.c). Byte 0: bits 0-1
 * the format (auto, azure2019, azure2021, auto), bits 2-3 the minutes
 * kept (all, 1, 60, all), bits 4-7 the budget in VMs of 64 MiB (0 to
 * 15, at least 1 MiB); then the file. What is read must be consistent
 * (its counts add up to its total, every name is set) and, when small,
 * every policy simulates it within the invocations it holds; anything
 * else aborts, a finding. */
#include "fuzz.h"

#include "arrivals_functions.h"
#include "hostsim.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char path[PATH_MAX];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	snprintf(path, sizeof(path), "%s/trace.csv",
		 fuzz__scratch("host_trace"));
	return 0;
}

static void check(const struct fn_trace *t)
{
	uint64_t sum = 0;

	if (!t->nfn || !t->nmin || !t->count || !t->name || !t->total)
		abort();
	for (size_t i = 0; i < t->nfn; i++)
		if (!t->name[i] || !t->name[i][0])
			abort();
	for (size_t c = 0; c < t->nfn * t->nmin; c++)
		sum += t->count[c];
	if (sum != t->total)
		abort();
}

static void simulate(const struct fn_trace *t, unsigned int vms)
{
	struct hostsim_guest *g = calloc(t->nfn, sizeof(*g));
	struct hostsim_config cfg;
	struct hostsim_result r;

	if (!g)
		abort();
	for (size_t i = 0; i < t->nfn; i++)
		g[i] = (struct hostsim_guest){ .mem_mib = 64, .cold_s = 0.25,
					       .hit_s = 0.002,
					       .idle_weight = 1 };
	for (int p = 0; p < HOSTSIM_POLICIES; p++) {
		hostsim__defaults(&cfg);
		cfg.policy = (enum hostsim_policy)p;
		cfg.budget_mib = vms ? 64.0 * vms : 1;
		cfg.price = 0.01;
		if (hostsim__run(t, g, &cfg, &r, NULL) != 0 ||
		    r.invocations != t->total || r.cold > r.invocations)
			abort();
	}
	free(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum arrivals_format formats[] = {
		ARRIVALS_AUTO, ARRIVALS_AZURE2019, ARRIVALS_AZURE2021,
		ARRIVALS_AUTO };
	static const size_t minutes[] = { 0, 1, 60, 0 };
	struct fn_trace t;

	if (size < 1)
		return 0;
	fuzz__write(path, data + 1, size - 1);
	if (arrivals__functions_read(path, formats[data[0] & 3],
				     minutes[(data[0] >> 2) & 3], &t) != 0)
		return 0;
	check(&t);
	if (t.nfn * t.nmin <= 20000)
		simulate(&t, data[0] >> 4);
	arrivals__functions_free(&t);
	return 0;
}
