/* A virtio device's I/O thread: it loads the I/O role's seccomp filter
 * (seccomp.h) before it serves anything, so that a device's work never
 * runs unfiltered. The thread is made when the device opens and loads its
 * filter while the VM is set up, as vCPU threads do; io_thread__ready(),
 * which vm__start calls through the device's `ready`, makes a filter that
 * failed to load an error before the guest runs, not a silent hang of its
 * disk. */
#ifndef COLDSTART_IO_THREAD_H
#define COLDSTART_IO_THREAD_H

#include <pthread.h>
#include <stdbool.h>

struct io_thread {
	pthread_t thread;
	const char *what; /* the device, in messages */
	void (*fn)(void *arg);
	void *arg;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool started;
	int err;       /* the filter's load: 0 or -errno */
	char msg[256]; /* its message */
};

/* Makes the thread, which loads its filter and then runs fn(arg);
 * returns at once: 0, or -errno with a message naming `what` when the
 * thread could not be made. */
int io_thread__start(struct io_thread *t, const char *what,
		     void (*fn)(void *arg), void *arg);

/* Waits until the thread has loaded its filter: 0, or -errno with a
 * message naming `what` when it could not (it then ended without running
 * fn; io_thread__join still reaps it). */
int io_thread__ready(struct io_thread *t);

/* Waits for the thread to end (the caller made fn return). */
void io_thread__join(struct io_thread *t);

#endif
