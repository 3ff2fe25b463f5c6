/* A virtio device's I/O thread: started with the I/O role's seccomp
 * filter loaded (seccomp.h) before it serves anything, so that a device's
 * work never runs unfiltered and a filter that fails to load is an error
 * of the device's open, not a silent hang of the guest. */
#ifndef COLDSTART_IO_THREAD_H
#define COLDSTART_IO_THREAD_H

#include <pthread.h>
#include <stdbool.h>

struct io_thread {
	pthread_t thread;
	void (*fn)(void *arg);
	void *arg;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool started;
	int err;       /* the filter's load: 0 or -errno */
	char msg[256]; /* its message */
};

/* Starts fn(arg) on a new thread once it has loaded its filter; returns
 * 0, or -errno with a message naming `what` (the thread could not be
 * made, or its filter not loaded: it then ended without running fn). */
int io_thread__start(struct io_thread *t, const char *what,
		     void (*fn)(void *arg), void *arg);

/* Waits for fn to return (the caller made it return). */
void io_thread__join(struct io_thread *t);

#endif
