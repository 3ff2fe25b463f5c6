/* A device's I/O thread that loads its filter first (io_thread.h). */
#include "io_thread.h"

#include "err.h"
#include "seccomp.h"

#include <stdio.h>

static void *main_of(void *arg)
{
	struct io_thread *t = arg;
	int ret = seccomp__install(SECCOMP_IO);

	pthread_mutex_lock(&t->lock);
	t->err = ret;
	if (ret < 0)
		snprintf(t->msg, sizeof(t->msg), "%s", err__last());
	t->started = true;
	pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
	if (ret == 0)
		t->fn(t->arg);
	return NULL;
}

int io_thread__start(struct io_thread *t, const char *what,
		     void (*fn)(void *arg), void *arg)
{
	int ret;

	t->what = what;
	t->fn = fn;
	t->arg = arg;
	t->started = false;
	t->err = 0;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->cond, NULL);
	ret = pthread_create(&t->thread, NULL, main_of, t);
	if (ret == 0)
		return 0;
	pthread_cond_destroy(&t->cond);
	pthread_mutex_destroy(&t->lock);
	return err__sys(ret, "%s: starting its I/O thread", what);
}

int io_thread__ready(struct io_thread *t)
{
	int ret;

	pthread_mutex_lock(&t->lock);
	while (!t->started)
		pthread_cond_wait(&t->cond, &t->lock);
	ret = t->err;
	pthread_mutex_unlock(&t->lock);
	if (ret < 0)
		return err__set(-ret, "%s: %s", t->what, t->msg);
	return 0;
}

void io_thread__join(struct io_thread *t)
{
	pthread_join(t->thread, NULL);
	pthread_cond_destroy(&t->cond);
	pthread_mutex_destroy(&t->lock);
}
