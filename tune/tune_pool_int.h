/* What the files of `coldstart tune pool` share: its options, the SLO,
 * the measured costs, the sweep's candidates and the validation rows, and
 * the functions one file calls in another (tune_pool.c: options and the
 * run; tune_pool_costs.c; tune_pool_sweep.c: the sweep and the
 * validation; tune_pool_report.c: Markdown, JSON, CSV and plot). */
#ifndef COLDSTART_TUNE_POOL_INT_H
#define COLDSTART_TUNE_POOL_INT_H

#include "tune_pool.h"

#include "arrivals.h"
#include "pool_config.h"
#include "poolsim.h"
#include "result.h"

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The most memory a host plausibly has, 2^50 bytes (1 PiB): a larger
 * memory per VM or --memory-budget is refused, and so is a VM of less
 * than a byte; what the report derives from them (VMs that fit) then
 * stays below 2^60 and json_int_t holds the budget. */
#define TP_MAX_BYTES (1ull << 50)
#define MAX_CANDIDATES 512

/* Samples in seconds, and where they came from. */
struct cost {
	double *s;
	size_t n;
	char from[256];
};

struct costs {
	struct cost hit, miss, make;
	double vm_mib;
	double refill_mean_s; /* pool.stats.make_s, 0 if absent */
	double measured_rate; /* pool.offered_rate (arrivals/s), 0 if absent */
	char mem_from[256];
	const char *emulated; /* the label, borrowed from the pool document */
	bool given;	      /* --costs/--cost: given, not measured */
	unsigned int workers;
	bool wait_on_empty;
	/* the pool's configuration as pool.json was measured with */
	struct pool_config stored;
	struct result_doc pool, restore;
	bool have_restore;
	char pool_path[PATH_MAX], restore_path[PATH_MAX];
};

struct cand {
	struct poolsim_config cfg;
	char label[128];
	uint64_t hits, misses, waits;
	double hit_ratio, p[4], idle_vm_s, peak_mib;
	unsigned int peak_pool;
	double metric; /* the SLO's: seconds, or a hit percentage */
	bool meets, frontier;
	/* --holdout: meets on the tuning part (meets: on both parts), and
	 * the outcome on the held-out part */
	bool tune_meets, test_meets;
	double test_metric, test_idle_vm_s, test_hit_ratio;
};

struct sweep {
	struct cand *c;
	size_t n;
	size_t cap;	    /* allocated: grows; 0: c holds MAX_CANDIDATES */
	unsigned int max;   /* the targets' bound of the grid just built */
	unsigned int bound; /* the largest pool the sweep may reach */
	char bound_from[96]; /* what sets it: --max-vms, --memory-budget */
	ssize_t best[POOLSIM_POLICIES]; /* -1: none meets */
	ssize_t rec;
	/* --holdout: arrivals tuned on and held out (n_test 0: none), the
	 * time they part at, and the cheapest on the tuning part alone */
	struct {
		size_t n_tune, n_test;
		double split_s;
		ssize_t rec_tune;
	} ho;
};

struct vrow {
	unsigned int size;
	struct cand sim;
	bool measured;
	double hit_ratio, p99_s; /* measured */
	char note[192];          /* why there is no measurement, or a warning */
	json_t *doc;             /* the measured `bench pool` document */
	/* the same size simulated with the measured run's own costs (its
	 * hits, misses and refills where it has samples): what is left of a
	 * difference is the model's, not a change of the host's costs */
	bool have_own;
	struct cand own;
	double own_make_mean_s; /* the run's refills' mean making time */
};

struct validation {
	size_t n;
	struct vrow r[MAX_VALIDATE];
	char emulated[64]; /* this host's emulated label, "" when native */
};

int tune_pool__load_costs(const struct tp_opts *o, struct costs *c);
/* tune_pool_given.c: --costs FILE or --cost's text as costs, said to be
 * given (c->given); -EINVAL naming the file, key or text. */
int tune_pool__given_costs(const struct tp_opts *o, struct costs *c);
/* tune_pool_holdout.c: the first (1 - share) of a's arrivals, by count,
 * into tune, the rest into test (from 0 on); candidates [from, sw->n) on
 * the held-out part (none: test->n 0), each then meeting the SLO only
 * when it meets it on both (tune_meets: on the tuning part); and the
 * cheapest on the tuning part alone (sw->ho.rec_tune). 0 or -errno. */
int tune_pool__split(const struct arrivals *a, double share,
		     struct arrivals *tune, struct arrivals *test);
int tune_pool__holdout(struct sweep *sw, size_t from,
		       const struct tp_opts *o, const struct arrivals *test,
		       const struct poolsim_costs *pc);
void tune_pool__tuning_choice(struct sweep *sw);
/* Its section of the report (nothing without --holdout) and its JSON. */
void tune_pool__md_holdout(FILE *f, const struct sweep *sw,
			   const struct slo *slo);
json_t *tune_pool__holdout_json(const struct sweep *sw,
				const struct tp_opts *o);
int tune_pool__run_costs(json_t *doc, const char *path,
			 const struct costs *base, struct costs *own);
/* The simulator's view of c (borrowing its samples). */
struct poolsim_costs tune_pool__sim_costs(const struct costs *c);
void tune_pool__costs_free(struct costs *c);
struct cand *tune_pool__add(struct sweep *sw, int pol,
			    const struct costs *c, uint64_t seed);
int tune_pool__simulate(struct sweep *sw, const struct arrivals *a,
			const struct poolsim_costs *pc, const struct slo *slo);
bool tune_pool__cheaper(const struct cand *a, const struct cand *b);
double tune_pool__mean_of(const struct cost *c);
unsigned int tune_pool__pool_max(const struct arrivals *a, double make_s);
void tune_pool__build_grid(struct sweep *sw, const struct tp_opts *o,
			   const struct costs *c);
void tune_pool__choose(struct sweep *sw, const struct slo *slo);
/* tune_pool_extend.c: the sweep goes on past its first grid, each policy
 * that meets no SLO at larger pools up to sw->bound, and the cheapest
 * fixed size is narrowed to the smallest that meets it; then chosen
 * again. With --holdout (test->n) each new one runs on both parts. 0 or
 * -errno. */
int tune_pool__extend(struct sweep *sw, const struct tp_opts *o,
		      const struct costs *c, const struct arrivals *a,
		      const struct arrivals *test,
		      const struct poolsim_costs *pc);
/* The candidate of policy p that comes closest to the SLO (NULL: none
 * simulated). */
const struct cand *tune_pool__closest(const struct sweep *sw, int p,
				      const struct slo *slo);
/* The SLO's percentile of the hit latencies alone: no pool does better
 * (0 for a hit-ratio SLO). */
double tune_pool__hits_floor(const struct costs *c, const struct slo *slo);
/* --validate's measured documents, under --out: VALIDATION_DIR/size-N.json */
#define VALIDATION_DIR "validation"
void tune_pool__md_validation(FILE *f, const struct validation *v,
			      double make_mean_s);
json_t *tune_pool__validation_json(const struct validation *v, bool written);
int tune_pool__write_validation(const char *dir, const struct validation *v);
void tune_pool__validation_free(struct validation *v);
int tune_pool__kvm_usable(const char *path);
int tune_pool__validate(const struct tp_opts *o, const struct costs *c,
			const struct arrivals *a,
			const struct poolsim_costs *pc, const struct sweep *sw,
			struct validation *v);
int tune_pool__outputs(const struct tp_opts *o, const struct costs *c,
		       const struct arrivals *a, const struct sweep *sw,
		       const struct validation *v);

/* tune_pool_config.c: a configuration as the pool's own, from c->stored
 * (pool.json's config, read by tune_pool__stored_config: -EINVAL naming
 * the field); whether the pool has x's policy; the command that runs it
 * (malloc'd; "" when the pool has not the policy; dir: x is the one
 * dir/tune-pool.json holds as "pool_config", else options); its JSON;
 * and a temporary file of it for --validate's children (path[size],
 * removed by the caller). */
int tune_pool__stored_config(struct costs *c);
bool tune_pool__applies(const struct cand *x);
void tune_pool__pool_config(const struct costs *c, const struct cand *x,
			    struct pool_config *pc);
char *tune_pool__command(const struct costs *c, const struct cand *x,
			 const char *dir);
json_t *tune_pool__config_json(const struct costs *c, const struct cand *x);
int tune_pool__config_file(const struct costs *c, const struct cand *x,
			   char *path, size_t size);

#endif
