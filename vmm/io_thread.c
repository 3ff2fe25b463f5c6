/* A device's I/O thread that loads its filter first (io_thread.h). The
 * threads are workers: made by io_thread__start, or ahead of time as
 * spares that load their filter and wait to be handed a device. */
#include "io_thread.h"

#include "err.h"
#include "jail.h"
#include "seccomp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

struct io_worker {
	pthread_t thread;
	bool made;     /* the thread exists (not yet: it waits for a jail) */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool loaded;   /* the filter's load ended */
	int err;       /* its result: 0 or -errno */
	char msg[256]; /* its message */
	bool handed;   /* fn given (NULL: the spare must end) */
	void (*fn)(void *arg);
	void *arg;
	struct io_worker *next; /* among the spares */
};

/* Spares for the process's next devices (one VM with devices a
 * process). */
static pthread_mutex_t spares_lock = PTHREAD_MUTEX_INITIALIZER;
static struct io_worker *spares;

static void *worker_main(void *arg)
{
	struct io_worker *w = arg;
	int ret = seccomp__install(SECCOMP_IO);
	void (*fn)(void *arg);

	pthread_mutex_lock(&w->lock);
	w->err = ret;
	if (ret < 0)
		snprintf(w->msg, sizeof(w->msg), "%s", err__last());
	w->loaded = true;
	pthread_cond_broadcast(&w->cond);
	while (!w->handed)
		pthread_cond_wait(&w->cond, &w->lock);
	fn = w->fn;
	arg = w->arg;
	pthread_mutex_unlock(&w->lock);
	if (ret == 0 && fn)
		fn(arg);
	return NULL;
}

static struct io_worker *worker_alloc(void)
{
	struct io_worker *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	return w;
}

static void worker_free(struct io_worker *w)
{
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

/* 0 or the error number of pthread_create. */
static int worker_run(struct io_worker *w)
{
	int ret = pthread_create(&w->thread, NULL, worker_main, w);

	w->made = ret == 0;
	return ret;
}

/* 0 or the error number of pthread_create (ENOMEM). */
static int worker_new(struct io_worker **out)
{
	struct io_worker *w = worker_alloc();
	int ret = w ? worker_run(w) : ENOMEM;

	if (ret) {
		if (w)
			worker_free(w);
		return ret;
	}
	*out = w;
	return 0;
}

static void hand(struct io_worker *w, void (*fn)(void *arg), void *arg)
{
	pthread_mutex_lock(&w->lock);
	w->fn = fn;
	w->arg = arg;
	w->handed = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

static void worker_end(struct io_worker *w)
{
	if (w->made)
		pthread_join(w->thread, NULL);
	worker_free(w);
}

int io_thread__prestart(unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		struct io_worker *w;
		int ret = worker_new(&w);

		if (ret)
			return err__sys(ret, "starting a spare I/O thread");
		pthread_mutex_lock(&spares_lock);
		w->next = spares;
		spares = w;
		pthread_mutex_unlock(&spares_lock);
	}
	return 0;
}

void io_thread__drop_spares(void)
{
	struct io_worker *w, *next;

	pthread_mutex_lock(&spares_lock);
	w = spares;
	spares = NULL;
	pthread_mutex_unlock(&spares_lock);
	for (; w; w = next) {
		next = w->next;
		hand(w, NULL, NULL);
		worker_end(w);
	}
}

int io_thread__start(struct io_thread *t, const char *what,
		     void (*fn)(void *arg), void *arg)
{
	struct io_worker *w;
	int ret;

	pthread_mutex_lock(&spares_lock);
	w = spares;
	if (w)
		spares = w->next;
	pthread_mutex_unlock(&spares_lock);
	/* a jail not entered yet: the thread would stay outside it (its
	 * namespaces, root and capabilities are its own), so it is made
	 * by io_thread__ready, which vm__start calls after the jail */
	if (!w && jail__pending()) {
		w = worker_alloc();
		if (!w)
			return err__sys(ENOMEM, "%s: its I/O thread", what);
	} else if (!w) {
		ret = worker_new(&w);
		if (ret)
			return err__sys(ret, "%s: starting its I/O thread",
					what);
	}
	t->w = w;
	t->what = what;
	hand(w, fn, arg);
	return 0;
}

int io_thread__ready(struct io_thread *t)
{
	struct io_worker *w = t->w;
	int ret = w->made ? 0 : worker_run(w);

	if (ret)
		return err__sys(ret, "%s: starting its I/O thread", t->what);
	pthread_mutex_lock(&w->lock);
	while (!w->loaded)
		pthread_cond_wait(&w->cond, &w->lock);
	ret = w->err;
	pthread_mutex_unlock(&w->lock);
	if (ret < 0)
		return err__set(-ret, "%s: %s", t->what, w->msg);
	return 0;
}

void io_thread__join(struct io_thread *t)
{
	worker_end(t->w);
	t->w = NULL;
}
