/* Fuzz target: `tune host --guests` documents (hostsim_guests.c), the
 * input the JSON text, mapped onto a trace of three functions (f0, f1,
 * f2). What is accepted must give every function a guest type whose
 * values the simulator takes; anything else aborts, a finding. */
#include "fuzz.h"

#include "arrivals_functions.h"
#include "hostsim.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char n0[] = "f0", n1[] = "f1", n2[] = "f2";
	static char *names[] = { n0, n1, n2 };
	static uint32_t counts[3] = { 1, 0, 2 };
	struct fn_trace t = { .nfn = 3, .nmin = 1, .name = names,
			      .count = counts, .total = 3 };
	struct hostsim_guests gs;
	json_error_t je;
	json_t *root = json_loadb((const char *)data, size, 0, &je);

	if (!root)
		return 0;
	if (hostsim__guests_from_json(root, "fuzz", &t, &gs) == 0) {
		size_t listed = 0;

		for (size_t i = 0; i < t.nfn; i++) {
			const struct hostsim_guest *g = &gs.fn[i];

			if (gs.fn_type[i] >= gs.ntype ||
			    !(g->mem_mib > 0 && g->hit_s <= g->cold_s &&
			      g->idle_weight > 0 && isfinite(g->cold_s)))
				abort();
		}
		for (size_t k = 0; k < gs.ntype; k++)
			listed += gs.type[k].nfn;
		if (listed != t.nfn)
			abort();
		hostsim__guests_free(&gs);
	}
	json_decref(root);
	return 0;
}
