/* The request loop the pool commands share (pool_load.h). */
#include "pool_load.h"

#include "err.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

volatile sig_atomic_t pool_load__stop;

static void on_signal(int sig)
{
	(void)sig;
	pool_load__stop = 1;
}

void pool_load__catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int pool_load__init(struct pool_load *l, struct pool *p, size_t n)
{
	memset(l, 0, sizeof(*l));
	l->pool = p;
	l->n = n;
	l->out = calloc(n ? n : 1, sizeof(*l->out));
	if (!l->out)
		return err__set(ENOMEM, "allocating %zu requests", n);
	pthread_mutex_init(&l->lock, NULL);
	return 0;
}

void pool_load__free(struct pool_load *l)
{
	if (!l->out)
		return;
	pthread_mutex_destroy(&l->lock);
	free(l->out);
	l->out = NULL;
}

static uint64_t fnv1a(const char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)p[i]) * 0x100000001b3ull;
	return h;
}

void pool_load__serve(struct pool_load *l, size_t i, uint64_t arrival_ns)
{
	struct pool_request req = { .arrival_ns = arrival_ns };
	struct pool_outcome *o = &l->out[i];

	if (pool__serve(l->pool, &req) == 0) {
		const struct agent_capture *out = &req.output[0];
		size_t keep = out->len < POOL_OUTCOME_OUT ? out->len
							  : POOL_OUTCOME_OUT;

		*o = (struct pool_outcome){
			.acquire_ns = (double)(req.acquired_ns -
					       req.arrival_ns),
			.first_ns = (double)(req.first_run_ns - req.arrival_ns),
			.done_ns = (double)(req.done_ns - req.arrival_ns),
			.output_ns = req.first_output_ns
					     ? (double)(req.first_output_ns -
							req.arrival_ns)
					     : 0,
			.hit = req.hit, .ok = true, .ran = req.ran,
			.status = req.status,
			.out_hash = fnv1a(out->buf, out->len),
		};
		if (keep)
			memcpy(o->out, out->buf, keep);
		pool__request_release(&req);
		return;
	}
	pool__request_release(&req);
	pthread_mutex_lock(&l->lock);
	if (!l->failed++)
		snprintf(l->first_error, sizeof(l->first_error), "%s",
			 err__last());
	pthread_mutex_unlock(&l->lock);
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull),
			       (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !pool_load__stop)
		;
}

void pool_load__closed(struct pool_load *l, uint64_t interval_ns)
{
	for (size_t i = 0; i < l->n && !pool_load__stop; i++) {
		if (i && interval_ns)
			sleep_ns(interval_ns);
		pool_load__serve(l, i, 0);
	}
}
