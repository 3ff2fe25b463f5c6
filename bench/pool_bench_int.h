/* What the files of `coldstart bench pool` share (pool_bench.c: options,
 * the open-loop run, the baselines and the driver; pool_bench_doc.c: the
 * result document and its report): the options, the run's state and the
 * document's entry points. Not for use outside the pool benchmark. */
#ifndef COLDSTART_POOL_BENCH_INT_H
#define COLDSTART_POOL_BENCH_INT_H

#include "pool_bench.h"

#include "arrivals.h"
#include "driver.h"
#include "memstat.h"
#include "pool.h"
#include "pool_config.h"
#include "pool_load.h"

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define MAKE_KEPT 4096 /* what the pool keeps of its making times */

struct pb_opts {
	struct bench_common c; /* --json, --out */
	struct pool_config pc;
	struct arrivals_spec spec;
	const char *arrivals_text;
	double duration_s, time_scale;
	uint64_t seed, concurrency, sample_ns, baseline;
};

/* The occupancy over time, sampled. */
struct tick {
	double t;
	unsigned int held, making, target;
	uint64_t arrived;
};

struct run {
	const struct pb_opts *o;
	struct pool *pool;
	const struct arrivals *arr;
	uint64_t start_ns;
	struct pool_load load; /* the requests' outcomes and failures */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	size_t next_due; /* arrivals handed to runners */
	size_t released; /* arrivals whose time has come */
	bool stop;
	struct tick *ticks;
	size_t nticks;
	double *fresh, *shell; /* the baselines, o->baseline each, or NULL */
	double make_ns[MAKE_KEPT]; /* the refills' making times at the end */
	size_t nmake;
};

/* pool_bench_doc.c: the result document of a run (NULL when out of
 * memory), and its Markdown report (result__emit's) */
json_t *pool_bench__document(const struct pb_opts *o, const struct run *r,
			     const struct pool_stats *st,
			     const struct memstat *m0,
			     const struct memstat *m1, unsigned int held_full,
			     double wall_s);
void pool_bench__report(FILE *out, const json_t *doc);

#endif
