/* A virtio device's I/O thread: it loads the I/O role's seccomp filter
 * (seccomp.h) before it serves anything, so that a device's work never
 * runs unfiltered. The thread is made with the VM's vCPU threads, or when
 * the device opens, and loads its filter while the VM is set up; under a
 * jail not entered yet (jail.h) it is made at the VM's start, after the
 * jail, so that it is inside it like every thread of the VMM;
 * io_thread__ready(), which vm__start calls through the device's
 * `ready`, makes a filter that failed to load an error before the guest
 * runs, not a silent hang of its disk. */
#ifndef COLDSTART_IO_THREAD_H
#define COLDSTART_IO_THREAD_H

#include <pthread.h>
#include <stdbool.h>

struct io_worker; /* io_thread.c */

struct io_thread {
	struct io_worker *w;
	const char *what; /* the device, in messages */
};

/* Makes `n` spare threads now, which load their filter at once and wait
 * for io_thread__start to hand them a device: vm__create makes them with
 * the vCPU threads (vm_config.io_threads), so that their start and
 * filter overlap the VM's setup rather than delay its first instruction.
 * 0, or -errno with a message (the spares made so far stay). */
int io_thread__prestart(unsigned int n);

/* Ends the spares no device took (vm__destroy does). */
void io_thread__drop_spares(void);

/* Hands fn(arg) to a spare, or to a new thread, which runs it once its
 * filter is loaded; returns at once: 0, or -errno with a message naming
 * `what` when no thread could be made. While a jail is pending the
 * thread is not made yet: io_thread__ready makes it. */
int io_thread__start(struct io_thread *t, const char *what,
		     void (*fn)(void *arg), void *arg);

/* Makes the thread if io_thread__start deferred it (call it after the
 * jail: vm__start does), then waits until it has loaded its filter: 0,
 * or -errno with a message naming `what` when it could not be made or
 * load it (it then ended without running fn; io_thread__join still
 * reaps it). */
int io_thread__ready(struct io_thread *t);

/* Waits for the thread to end (the caller made fn return). */
void io_thread__join(struct io_thread *t);

#endif
