/* The request loop that `coldstart pool run` and `coldstart bench pool`
 * share: requests served from a pool, each outcome kept by its index,
 * and the first failure's message; SIGINT and SIGTERM stop it. */
#ifndef COLDSTART_POOL_LOAD_H
#define COLDSTART_POOL_LOAD_H

#include "pool.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Set by SIGINT or SIGTERM once pool_load__catch_signals ran: the pool
 * commands stop serving, drain and exit. */
extern volatile sig_atomic_t pool_load__stop;
void pool_load__catch_signals(void);

/* What an outcome keeps of a command's stdout. */
#define POOL_OUTCOME_OUT 64

/* One request's outcome: ns from its arrival to its VM in hand, to its
 * guest's first instruction and to DONE; a guest with an agent: the
 * command's status, ns to its first output byte (0: none), and its
 * stdout's first bytes and FNV-1a hash (whole as captured). */
struct pool_outcome {
	double acquire_ns, first_ns, done_ns, output_ns;
	bool hit, ok, ran;
	int status;
	uint64_t out_hash;
	char out[POOL_OUTCOME_OUT + 1];
};

struct pool_load {
	struct pool *pool;
	struct pool_outcome *out; /* one per request; owned */
	size_t n;
	pthread_mutex_t lock;
	uint64_t failed;
	char first_error[256];
};

/* Room for n requests served from p: 0 or -ENOMEM with a message. */
int pool_load__init(struct pool_load *l, struct pool *p, size_t n);
void pool_load__free(struct pool_load *l);

/* Serves request i (< n) that arrived at arrival_ns (CLOCK_MONOTONIC,
 * 0: now) and keeps its outcome, or counts its failure; safe from any
 * number of threads, each with its own i. */
void pool_load__serve(struct pool_load *l, size_t i, uint64_t arrival_ns);

/* Serves requests 0 to n - 1 one after another, interval_ns between
 * them, until pool_load__stop. */
void pool_load__closed(struct pool_load *l, uint64_t interval_ns);

#endif
